"""One stack value, two consumers: hand-made bytecode where a ``COPY`` (``DUP_TOP`` on <= 3.10)
duplicates a value the way Dynamo's generated code does, on every supported Python.

The compiler never leaves such code, so each test compiles a function whose value goes through
a local (``t = <value>; ...; return [t, t]``) and then rewrites the instructions between the
value and the final ``BUILD_LIST`` into the stack form (``<value>; COPY 1; ...``), padded with
``NOP`` so offsets, line table and exception table stay valid.  The decompiled function must
evaluate the value once -- one call, one list object -- and behave like the patched bytecode.
"""
import dis
import sys
import types

import pytest

import pellucid

PY = sys.version_info[:2]
OP = dis.opmap


def _copy1():
    return (OP["COPY"], 1) if PY >= (3, 11) else (OP["DUP_TOP"], 0)


def _patch(func, after_op, new_ops):
    """``func`` with the instructions after the first ``after_op`` up to the last ``BUILD_LIST``
    replaced by ``new_ops`` ((opcode, arg) pairs, no caches) and NOPs."""
    code = func.__code__
    instrs = [i for i in dis.get_instructions(code)]
    start = next(i for i in instrs if i.opname.startswith(after_op))
    end = [i for i in instrs if i.opname == "BUILD_LIST"][-1]
    first = start.offset + 2 + 2 * _caches(start.opname)
    room = (end.offset - first) // 2
    assert len(new_ops) <= room, "not enough room to patch"
    raw = bytearray(code.co_code)
    ops = list(new_ops) + [(OP["NOP"], 0)] * (room - len(new_ops))
    for k, (op, arg) in enumerate(ops):
        raw[first + 2 * k] = op
        raw[first + 2 * k + 1] = arg
    new = code.replace(co_code=bytes(raw))
    return types.FunctionType(new, func.__globals__, func.__name__, func.__defaults__, func.__closure__)


def _caches(opname):
    if PY < (3, 11):
        return 0
    from opcode import _inline_cache_entries  # type: ignore[attr-defined]
    entries = _inline_cache_entries
    if hasattr(entries, "keys"):  # by name: 3.13 a dict, 3.15 a frozendict
        return entries.get(opname, 0)
    return entries[OP[opname]]


def _recompiled(func):
    text = pellucid.decompile(func)
    assert "__pellucid_fallback__" not in text, text
    new = types.FunctionType(pellucid.recompile(func), func.__globals__, func.__name__,
                             func.__defaults__, func.__closure__)
    return text, new


def _call_twice_source(g, y):
    t = g()
    u = y  # noqa: F841  (room for the patch)
    return [t, t]


def test_copied_call_result_is_evaluated_once():
    f = _patch(_call_twice_source, "CALL", [_copy1()])
    calls = []

    def g():
        calls.append(1)
        return len(calls)
    assert f(g, 0) == [1, 1] and len(calls) == 1
    text, new = _recompiled(f)
    calls.clear()
    assert new(g, 0) == [1, 1], text
    assert len(calls) == 1, text


def _list_source(x, y):
    t = [x]
    u = y  # noqa: F841  (room for the patch)
    return [t, t]


def test_copied_display_stays_one_list():
    f = _patch(_list_source, "BUILD_LIST", [_copy1()])
    r = f(1, 2)
    assert r == [[1], [1]] and r[0] is r[1]
    text, new = _recompiled(f)
    r = new(1, 2)
    assert r == [[1], [1]] and r[0] is r[1], text


def test_append_to_copied_display_changes_both_uses():
    # [x]; COPY 1; LOAD y; LIST_APPEND 1 -- the copy that is appended to is the same list.
    f = _patch(_list_source, "BUILD_LIST", [_copy1(), (OP["LOAD_FAST"], 1), (OP["LIST_APPEND"], 1)])
    r = f(1, 2)
    assert r == [[1, 2], [1, 2]] and r[0] is r[1]
    text, new = _recompiled(f)
    r = new(1, 2)
    assert r == [[1, 2], [1, 2]] and r[0] is r[1], text
    assert "append" in text


def test_extend_copied_display():
    # [x]; COPY 1; LOAD y; LIST_EXTEND 1 (LIST_EXTEND exists from 3.9)
    if PY < (3, 9):
        pytest.skip("no LIST_EXTEND before 3.9")
    f = _patch(_list_source, "BUILD_LIST", [_copy1(), (OP["LOAD_FAST"], 1), (OP["LIST_EXTEND"], 1)])
    r = f(1, (2, 3))
    assert r == [[1, 2, 3], [1, 2, 3]] and r[0] is r[1]
    text, new = _recompiled(f)
    r = new(1, (2, 3))
    assert r == [[1, 2, 3], [1, 2, 3]] and r[0] is r[1], text


def _store_before_code_source(x, y):
    t = x
    u = -y
    v = y  # noqa: F841  (room for the patch)
    return [t, u]


def test_copied_store_happens_before_code_that_runs_next():
    # x; COPY 1; STORE_FAST t; -y (runs y.__neg__); STORE_FAST u; LOAD_FAST u; BUILD_LIST 2:
    # t is bound while __neg__ runs, though the copy of x is only used by the list.  (Dynamo's
    # ``COPY; STORE_FAST tmp_N`` keeps values on the stack this way across calls.)
    names = _store_before_code_source.__code__.co_varnames
    t, u = names.index("t"), names.index("u")
    f = _patch(_store_before_code_source, "LOAD_FAST", [
        _copy1(), (OP["STORE_FAST"], t), (OP["LOAD_FAST"], 1), (OP["UNARY_NEGATIVE"], 0),
        (OP["STORE_FAST"], u), (OP["LOAD_FAST"], u)])

    class Y:
        def __neg__(self):
            return sys._getframe(1).f_locals.get("t", "unbound")
    assert f("x", Y()) == ["x", "x"]
    text, new = _recompiled(f)
    assert new("x", Y()) == ["x", "x"], text


def _read_pending_source(x, y):
    t = []
    u = t
    v = y  # noqa: F841  (room for the patch)
    return [t, u]


def test_statement_reading_a_copied_store_runs_after_it():
    # []; COPY 1; STORE_FAST t; LOAD_FAST t; STORE_FAST u; LOAD_FAST u; BUILD_LIST 2: ``u = t``
    # runs no code, yet reads t, which the bytecode bound before (the store of the copy, kept
    # for the list's walrus, must not move after it).  Dynamo's ``COPY; STORE_FAST tmp_N`` for
    # a list it passes to a call and also rebuilds the stack with (reformer's forward).
    names = _read_pending_source.__code__.co_varnames
    t, u = names.index("t"), names.index("u")
    f = _patch(_read_pending_source, "BUILD_LIST", [
        _copy1(), (OP["STORE_FAST"], t), (OP["LOAD_FAST"], t), (OP["STORE_FAST"], u), (OP["LOAD_FAST"], u)])
    r = f(1, 2)
    assert r == [[], []] and r[0] is r[1]
    text, new = _recompiled(f)
    r = new(1, 2)
    assert r == [[], []] and r[0] is r[1], text


def test_statement_writing_a_copied_store_runs_after_it():
    # []; COPY 1; STORE_FAST t; <x>; STORE_FAST t; LOAD_FAST t; BUILD_LIST 2: the second store
    # of t comes last, so t ends as x (a pending first store made at the list would undo it).
    names = _read_pending_source.__code__.co_varnames
    t = names.index("t")
    f = _patch(_read_pending_source, "BUILD_LIST", [
        _copy1(), (OP["STORE_FAST"], t), (OP["LOAD_FAST"], 0), (OP["STORE_FAST"], t), (OP["LOAD_FAST"], t)])
    assert f(1, 2) == [[], 1]
    text, new = _recompiled(f)
    assert new(1, 2) == [[], 1], text
