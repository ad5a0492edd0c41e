"""Recompiled code keeps the original's line numbers (``pellucid.recompile`` without a path).

The recompiled code keeps the original ``co_filename``, so tracebacks, ``frame.f_lineno`` and
``inspect`` read the original file: they must find the original lines there.  Each test runs a
function defined in this file and a copy of it whose code is ``pellucid.recompile(f)``, and
compares what the two report.  With a ``path`` the lines point into the written file instead.
"""
import importlib.util
import os
import sys
import traceback
import types
from typing import Any, Callable, List, Tuple

import pytest

import pellucid

HERE = os.path.dirname(os.path.abspath(__file__))


def swapped(fn: Any) -> Any:
    """A copy of ``fn`` running recompiled code (the original is left alone)."""
    new = types.FunctionType(pellucid.recompile(fn), fn.__globals__, fn.__name__,
                             fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def frames_of(fn: Callable[..., Any], *args: Any) -> List[Tuple[Any, ...]]:
    """Name, line number, source line (and 3.11+ columns) of each frame of ``fn(*args)``."""
    try:
        fn(*args)
    except Exception as exc:
        frames = traceback.extract_tb(exc.__traceback__)[1:]
        return [(f.name, f.lineno, f.line, getattr(f, "colno", None), getattr(f, "end_colno", None))
                for f in frames]
    raise AssertionError("did not raise")


# --------------------------------------------------------------------------- functions under test

def raising(a, b):
    total = a + b
    if total > 10:
        raise ValueError(
            "too big",
            total,
        )
    parts = [
        a,
        b // (a - b),
    ]
    return parts


def generator(n):
    yield n
    n += 1
    yield n
    for k in range(n):
        yield k
    raise KeyError(
        n)


def call_over_lines(values, key):
    result = sorted(
        values,
        key=lambda v: v[key],
    )
    return dict(
        first=result[0],
        rest=result[1:],
    )


def subscript_over_lines(table, key):
    return table[
        key.upper()]


def outer(limit):
    seen = []

    def inner(x):
        seen.append(x)
        if len(seen) > limit:
            raise RuntimeError(seen)
        return x

    return inner


def current_lines():
    here = sys._getframe().f_lineno
    there = (
        sys._getframe().f_lineno)
    return here, there


def loops_and_handlers(items):
    out = []
    for item in items:
        try:
            out.append(10 // item)
        except ZeroDivisionError:
            out.append(None)
            if len(out) > 2:
                raise LookupError(out)
    return out


# --------------------------------------------------------------------------- tests

@pytest.mark.parametrize("args", [(7, 8), (1, 1)])
def test_traceback_lines_are_the_originals(args):
    fn = swapped(raising)
    assert fn(3, 2) == raising(3, 2)
    assert frames_of(fn, *args) == frames_of(raising, *args)


def test_first_line_is_the_originals():
    assert pellucid.recompile(raising).co_firstlineno == raising.__code__.co_firstlineno
    assert pellucid.recompile(generator).co_firstlineno == generator.__code__.co_firstlineno


def test_generator_lines_are_the_originals():
    def run(fn: Any) -> List[Tuple[int, int]]:
        gen = fn(2)
        return [(next(gen), gen.gi_frame.f_lineno) for _ in range(5)]

    copy = swapped(generator)
    assert run(copy) == run(generator)
    assert [value for value, _ in run(copy)] == [2, 3, 0, 1, 2]
    assert frames_of(list, copy(2)) == frames_of(list, generator(2))


def test_multi_line_statement_lines_are_the_originals():
    fn = swapped(call_over_lines)
    data = [{"k": 2}, {"k": 1}]
    assert fn(data, "k") == call_over_lines(data, "k")
    # the lambda (nested code, part of the decompiled source) raises inside sorted(...)
    assert frames_of(fn, data, "missing") == frames_of(call_over_lines, data, "missing")
    assert frames_of(fn, [], "k") == frames_of(call_over_lines, [], "k")
    index = swapped(subscript_over_lines)
    assert frames_of(index, {}, 1) == frames_of(subscript_over_lines, {}, 1)


def test_nested_function_lines_are_the_originals():
    made, made_by_copy = outer(1), swapped(outer)(1)
    made(1)
    made_by_copy(1)
    assert frames_of(made_by_copy, 2) == frames_of(made, 2)
    assert made_by_copy.__code__.co_firstlineno == made.__code__.co_firstlineno


def test_closure_recompiled_on_its_own_keeps_lines():
    made = outer(0)
    copy = swapped(made)  # free variables: compiled inside pellucid's closure wrapper
    assert copy.__code__.co_firstlineno == made.__code__.co_firstlineno
    assert frames_of(copy, 5) == frames_of(outer(0), 5)


def test_f_lineno_is_the_originals():
    assert swapped(current_lines)() == current_lines()
    first = current_lines.__code__.co_firstlineno
    assert current_lines() == (first + 1, first + 3)


def test_loop_and_handler_lines_are_the_originals():
    fn = swapped(loops_and_handlers)
    assert fn([1, 0, 5]) == loops_and_handlers([1, 0, 5])
    assert frames_of(fn, [0, 0, 0]) == frames_of(loops_and_handlers, [0, 0, 0])


@pytest.mark.parametrize("fn, args", [(raising, (7, 8)), (raising, (1, 1)), (current_lines, ())])
def test_fallback_lines_are_the_originals(fn, args):
    """The state-machine fallback (one statement per instruction) keeps the lines too."""
    from pellucid.decompiler.fallback import MARKER, force_fallback

    with force_fallback("test"):
        assert MARKER in pellucid.decompile(fn)
        copy = swapped(fn)
    if fn is current_lines:
        assert copy() == fn()
        return
    ours, theirs = frames_of(copy, *args), frames_of(fn, *args)
    assert [frame[:3] for frame in ours] == [frame[:3] for frame in theirs]


def test_with_a_path_lines_point_into_the_written_file(tmp_path):
    path = str(tmp_path / "raising.py")
    code = pellucid.recompile(raising, path)
    fn = types.FunctionType(code, raising.__globals__, "raising")
    assert code.co_filename == os.path.abspath(path)
    frames = frames_of(fn, 7, 8)
    with open(path, encoding="utf-8") as handle:
        text = handle.read().splitlines()
    (name, lineno, line, _, _), = frames
    assert name == "raising"
    assert text[lineno - 1].strip() == line
    assert line.startswith("raise ValueError(")


# --------------------------------------------------------------------------- every construct

def _load_catalogue() -> Any:
    spec = importlib.util.spec_from_file_location(
        "_pellucid_construct_cases_lines", os.path.join(HERE, "construct_cases.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _lines(code: types.CodeType) -> set:
    import dis

    found = {line for _, line in dis.findlinestarts(code) if line is not None}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _lines(const)
    return found


def test_constructs_only_use_lines_of_the_original():
    """Over the construct catalogue, recompiled code only names lines the original has.

    (A line of the original may be missing: ``pass``, ``try:`` or ``break`` can compile to
    nothing in the recompiled code.)"""
    catalogue = _load_catalogue()
    checked = 0
    foreign = []
    for case in catalogue.load_all():
        if sys.version_info[:2] < case.min_version:
            continue
        namespace: dict = {}
        exec(compile(case.src, "<case %s>" % case.id, "exec"), namespace)
        fn: Any = namespace
        for part in case.func.split("."):
            fn = fn[part] if isinstance(fn, dict) else getattr(fn, part)
        try:
            new = pellucid.recompile(fn)
        except Exception:
            continue  # known failures are the construct tests' business
        checked += 1
        extra = _lines(new) - _lines(fn.__code__) - {fn.__code__.co_firstlineno}
        if extra:
            foreign.append((case.id, sorted(extra)))
        if new.co_firstlineno != fn.__code__.co_firstlineno:
            foreign.append((case.id, "co_firstlineno"))
    assert checked > 150
    assert foreign == []


def try_on_its_own_line(a, b):
    try:
        return (a.real == b.real
                and a.imag == b.imag)
    except AttributeError:
        return NotImplemented


def test_try_keeps_its_own_line_and_exception_table():
    # (3.11+ keeps a NOP on the ``try:`` line; without it 3.14 draws the exception table
    # differently: one range over the body's NOT_TAKEN instead of two around it)
    import dis
    new = pellucid.recompile(try_on_its_own_line)
    lines = sorted({ins.positions.lineno for ins in dis.get_instructions(new)
                    if ins.positions is not None and ins.positions.lineno}) \
        if sys.version_info >= (3, 11) else None
    if lines is not None:
        old = sorted({ins.positions.lineno for ins in dis.get_instructions(try_on_its_own_line)
                      if ins.positions is not None and ins.positions.lineno})
        assert lines == old
        parse = dis._parse_exception_table  # type: ignore[attr-defined]
        assert [(e.depth, e.lasti) for e in parse(new)] == \
            [(e.depth, e.lasti) for e in parse(try_on_its_own_line.__code__)]
        assert len(list(parse(new))) == len(list(parse(try_on_its_own_line.__code__)))
    fn = swapped(try_on_its_own_line)
    assert fn(1, 1) is True and fn(1, object()) is NotImplemented
