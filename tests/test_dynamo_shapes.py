"""Bytecode shapes Dynamo emits on newer Python and torch releases, built by hand (no torch).

* 3.13 assembles ``LOAD_CLOSURE`` as ``LOAD_FAST`` of the cell's slot.  Dynamo (torch 2.15)
  builds closure tuples that way and passes them along as values (to the functions that make
  its resume functions), not to ``MAKE_FUNCTION``: ``LOAD_FAST x; BUILD_TUPLE 1; BUILD_LIST 1``.
  The cell itself must reach the callee, not the variable's value.
* Dynamo's resume functions (torch 2.15, 3.12+) may have several local slots with one name
  (one per inlined comprehension over that name in the resumed function), unused.

Each case runs the hand-made code and its recompiled form and compares what they return
(cells by identity), and checks the verifier finds them equivalent.
"""
import dis
import sys
import types

import pytest

import pellucid
from pellucid.decompiler.recompile import recompile_full
from pellucid.verify import check_equivalent

needs_313 = pytest.mark.skipif(sys.version_info < (3, 13),
                               reason="3.13+ reads a closure slot's cell with LOAD_FAST")


def _deref_to_fast(code, name):
    """``code`` with each ``LOAD_DEREF name`` made ``LOAD_FAST`` (3.11+ index both into the
    same slots): it pushes the variable's cell instead of its value."""
    raw = bytearray(code.co_code)
    for ins in dis.get_instructions(code):
        if ins.opname == "LOAD_DEREF" and ins.argval == name:
            raw[ins.offset] = dis.opmap["LOAD_FAST"]
    return code.replace(co_code=bytes(raw))


def _recompiled(code, keep_locals=False):
    result = recompile_full(code, keep_locals=keep_locals, write=False)
    verdict = check_equivalent(code, result.code, result.bindings)
    assert verdict.ok, verdict.reason
    return result


def _free_cell_function():
    box = [1]

    def f():
        return (box,)
    return f


def _own_cell_function():
    def f():
        box = [1]
        get = lambda: box  # noqa: E731 - a nested scope makes ``box`` a cell
        return (box, get)
    return f


@needs_313
@pytest.mark.parametrize("force_fallback", [False, True])
def test_closure_tuple_of_a_free_variable_as_a_value(monkeypatch, force_fallback):
    if force_fallback:
        monkeypatch.setenv("PELLUCID_FORCE_FALLBACK", "1")
    f = _free_cell_function()
    code = _deref_to_fast(f.__code__, "box")
    made = types.FunctionType(code, f.__globals__, "f", None, f.__closure__)
    (cell,) = made()
    assert cell is f.__closure__[0]  # (the hand-made code does push the cell)
    result = _recompiled(code)
    assert "__closure__" in result.source
    (got,) = types.FunctionType(result.code, dict(f.__globals__, **result.bindings), "f", None,
                                f.__closure__)()
    assert got is cell


@needs_313
def test_closure_tuple_of_an_own_cell_as_a_value():
    code = _deref_to_fast(_own_cell_function().__code__, "box")
    cell, get = types.FunctionType(code, globals())()
    assert get.__closure__[0] is cell
    result = _recompiled(code)
    cell2, get2 = types.FunctionType(result.code, dict(globals(), **result.bindings))()
    assert get2.__closure__[0] is cell2 and cell2.cell_contents == [1]


def _hidden_cell(x, ys):
    before = x
    fs = [lambda: x for x in ys]
    return before, x, [f() for f in fs]


def test_a_cell_only_inside_an_inlined_comprehension_is_read_as_a_value():
    # (3.12+: outside the comprehension ``x`` is a plain local read with LOAD_FAST)
    result = _recompiled(_hidden_cell.__code__)
    again = types.FunctionType(result.code, dict(globals(), **result.bindings))
    assert again(5, [1, 2]) == _hidden_cell(5, [1, 2]) == (5, 5, [2, 2])


def _padded(a):
    b = a + 1
    return b
    v = w = None  # noqa: F841 - never runs; gives the code two more local slots
    return v, w


@pytest.mark.skipif(sys.version_info < (3, 10),
                    reason="keep_locals declares slots in never-run code, which gets slots from 3.10 on")
def test_repeated_slot_names_are_kept_when_unused():
    code = _padded.__code__
    assert code.co_varnames == ("a", "b", "v", "w")
    repeated = code.replace(co_varnames=("a", "b", "v", "v"))
    result = _recompiled(repeated, keep_locals=True)
    assert result.code.co_varnames[:4] == ("a", "b", "v", "v")
    assert types.FunctionType(result.code, {})(1) == 2


def test_a_used_repeated_slot_name_is_refused():
    repeated = _padded.__code__.replace(co_varnames=("a", "b", "b", "w"))
    with pytest.raises(pellucid.DecompileError, match="another slot"):
        recompile_full(repeated, keep_locals=True, write=False)
