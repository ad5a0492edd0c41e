"""3.14+ raw bytecode read into the neutral instructions: bytecode/hidden_slots.py and
bytecode/inlined_calls.py (their behaviour end to end is in the construct and swap tests)."""
import dis
import os
import sys
import types

import pytest

from pellucid.bytecode import hidden_slots as HS
from pellucid.bytecode.normalize import normalize
from pellucid.bytecode.stack_depth import entry_depths

pytestmark = pytest.mark.skipif(not HS.ACTIVE, reason="bytecode without hidden slots (before 3.14)")

# Pseudo-instructions never in a code object, and what the interpreter adds at run time.
_NOT_IN_CODE = {"ENTER_EXECUTOR", "RESERVED", "INSTRUMENTED_LINE", "INSTRUMENTED_INSTRUCTION"}


def _real_opcodes():
    return sorted(name for name, op in dis.opmap.items()
                  if op < 256 and not name.startswith("INSTRUMENTED") and name not in _NOT_IN_CODE)


@pytest.mark.parametrize("name", _real_opcodes())
def test_effect_table_agrees_with_dis(name):
    """The pass's (pops, pushes) of every real opcode give CPython's own stack effect."""
    op = dis.opmap[name]
    for arg in (range(0, 9) if op >= dis.HAVE_ARGUMENT else [None]):
        counts = HS.effect(name, arg)
        assert counts is not None, "%s is not in the table" % name
        pops, pushes = counts
        assert pushes - pops == dis.stack_effect(op, arg), (name, arg, counts)


def _code_objects(code):
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _code_objects(c)


SOURCE = '''
import contextlib
def f(m, xs, ys):
    with m as a, open(a) as b:
        for x in xs:
            try:
                with m:
                    if x:
                        return [y for y in ys if y]
                    continue
            except (KeyError, ValueError) as e:
                break
            finally:
                print(x)
    return all(x for x in xs), any(y for y in ys), tuple(x for x in xs), (z for z in ys)
async def g(m, xs):
    async with m as a:
        async for x in xs:
            await a
            yield [y async for y in x]
    yield from_ if False else None
def h(xs):
    yield from xs
    for x in xs:
        for y in x:
            if y:
                return y
'''


def test_compiler_output_is_fully_modelled():
    """Compiler output never meets an instruction the pass cannot model, the neutral depths
    are never negative, and no raw-only opcode (the with prologue's LOAD_SPECIAL, the inline
    call's LOAD_COMMON_CONSTANT of a builtin) is left."""
    lib = os.path.dirname(os.__file__)
    modules = [compile(SOURCE, "<hidden slots>", "exec")]
    for name in ("contextlib.py", "tempfile.py", "asyncio/tasks.py", "dataclasses.py"):
        with open(os.path.join(lib, name), encoding="utf-8") as f:
            modules.append(compile(f.read(), name, "exec"))
    for module in modules:
        for code in _code_objects(module):
            instrs = normalize(code)
            bad = [i for i in instrs if i.op in ("UNSUPPORTED", "LOAD_SPECIAL")]
            assert not bad, (module.co_filename, code.co_name, bad)
            depths = entry_depths(code)
            assert depths and min(depths.values()) >= 0, (module.co_filename, code.co_name)


def test_with_reads_as_one_slot_for_exit():
    def f(m):
        with m as x:
            return x
    ops = [(i.op, i.arg) for i in normalize(f.__code__)]
    assert ("BEFORE_WITH", None) in ops
    calls = [a for op, a in ops if op == "CALL"]
    # ``__exit__(None, None, None)``: the bound method's call of two arguments, as up to 3.13
    assert calls and all(c[0] == 2 and c[2] for c in calls), calls
    handlers = {i.handler.depth for i in normalize(f.__code__) if i.handler is not None}
    assert 1 in handlers, handlers  # (the with's handler sees __exit__ alone below it)


def test_inlined_builtin_calls_read_as_calls():
    def f(xs):
        return all(x for x in xs), any(x for x in xs), tuple(x for x in xs)
    ops = [i.op for i in normalize(f.__code__)]
    assert "FOR_ITER" not in ops and "UNSUPPORTED" not in ops, ops
    assert ops.count("CALL") == 6, ops  # each builtin call and each generator's


@pytest.mark.skipif(not HS.ITER_PAIRS, reason="3.15+: two-slot iterators")
def test_two_slot_iterators_read_as_one():
    def f(xs):
        for x in xs:
            try:
                g(x)
            except E:
                break
    instrs = normalize(f.__code__)
    assert all(i.op != "UNSUPPORTED" for i in instrs)
    # the except clause's handler sees the loop's iterator alone below it, and the break
    # pops one slot for it
    first = next(i.handler for i in instrs if i.op == "CALL")
    assert first.depth == 1
    k = next(k for k, i in enumerate(instrs) if i.op == "POP_EXCEPT")
    assert [i.op for i in instrs[k:k + 3]][:2] == ["POP_EXCEPT", "POP_TOP"] \
        and instrs[k + 2].op != "POP_TOP", instrs[k:k + 3]
