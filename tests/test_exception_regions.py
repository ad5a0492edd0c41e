"""The exception-table entry per instruction (3.11+): one sweep must give what the interpreter's
lookup gives -- the table's first entry whose range holds the offset -- for every instruction."""
import dis
import random
import sys
import types

import pytest

from pellucid.bytecode.exception_regions import handlers_by_offset, table_entry_per_instruction

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="exception tables are 3.11+")


def _codes(module):
    work = [f.__code__ for f in vars(module).values() if isinstance(f, types.FunctionType)]
    for cls in vars(module).values():
        if isinstance(cls, type):
            work += [f.__code__ for f in vars(cls).values() if isinstance(f, types.FunctionType)]
    while work:
        code = work.pop()
        yield code
        work += [c for c in code.co_consts if isinstance(c, types.CodeType)]


def _scan(code, raw):
    entries = dis._parse_exception_table(code)
    return [next((e for e in entries if e.start <= r.offset < e.end), None) for r in raw]


@pytest.mark.parametrize("name", ["tarfile", "asyncio.base_events", "subprocess", "email.feedparser"])
def test_one_sweep_is_the_interpreters_lookup(name):
    module = __import__(name, fromlist=["_"])
    covered = 0
    for code in _codes(module):
        raw = list(dis.get_instructions(code))
        expected = _scan(code, raw)
        assert table_entry_per_instruction(code, raw) == expected, code.co_qualname
        # raw in any order: the answer follows raw's order
        shuffled = raw[:]
        random.Random(code.co_firstlineno).shuffle(shuffled)
        assert table_entry_per_instruction(code, shuffled) == _scan(code, shuffled), code.co_qualname
        covered += sum(e is not None for e in expected)
        handlers = handlers_by_offset(code, raw)
        assert set(handlers) == {r.offset for r, e in zip(raw, expected) if e is not None}
    assert covered > 10  # the modules do have try statements


def test_no_table_no_entries():
    def f(x):
        return x + 1
    raw = list(dis.get_instructions(f))
    assert table_entry_per_instruction(f.__code__, raw) == [None] * len(raw)
