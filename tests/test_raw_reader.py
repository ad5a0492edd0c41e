"""The raw bytecode reader makes the very records ``dis.get_instructions`` makes (less 3.11's
``CACHE`` entries), field by field and of the same types, on whole stdlib modules."""
import dis
import importlib.util
import types

import pytest

from pellucid.bytecode.raw_reader import READER

MODULES = ["argparse", "dataclasses", "enum", "json.decoder", "email.feedparser", "re._parser",
           "asyncio.tasks", "test.test_patma", "test.test_coroutines", "test.test_grammar"]


def _codes(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


@pytest.mark.skipif(READER is None, reason="dis is used directly on this Python")
@pytest.mark.parametrize("module", MODULES)
def test_reader_matches_dis(module):
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        pytest.skip("no source for %s" % module)
    with open(spec.origin, encoding="utf-8") as f:
        top = compile(f.read(), spec.origin, "exec")
    for code in _codes(top):
        ours = READER(code)
        theirs = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
        assert ours == theirs, code.co_name
        for a, b in zip(ours, theirs):
            assert type(a) is type(b)
            assert [type(v) for v in a] == [type(v) for v in b], (code.co_name, a, b)
