"""``pellucid.recompile`` and ``pellucid.decompile`` hand back only what the verifier accepted.

* a form the verifier accepts is returned (the structured one when it is accepted);
* when it refuses the structured form, the fallback form is tried -- for the nested code objects
  it blamed first, then for all -- and returned when accepted (``decompile`` shows that text);
* when it accepts none, ``recompile`` raises DecompileError naming the verdicts, and
  ``decompile`` shows the structured text under a comment saying it is not verified;
* the issue-15 programs, which the structurer gets wrong, never come back wrong.
"""
import sys

import pytest

import pellucid
import pellucid.verify
from pellucid.decompiler.api import _checked_for
from pellucid.decompiler.fallback import MARKER
from pellucid.verify import Verdict

PY = sys.version_info[:2]


def _outer(xs):
    def inner(y):
        return [v + y for v in xs]
    return inner(1) + [len(xs)]


def _simple(x, y=2):
    if x > y:
        return x - y
    return [i * y for i in range(x)]


def _refusing(monkeypatch, refuse):
    """Make the verifier refuse the pairs of code objects (original, candidate) -- outermost or
    nested -- that ``refuse`` picks, and answer as usual for the others."""
    real = pellucid.verify._check_one

    def check_one(original, candidate, depth, consts, blamed):
        if refuse(original, candidate):
            return Verdict(False, "differs: refused by the test")
        return real(original, candidate, depth, consts, blamed)

    monkeypatch.setattr(pellucid.verify, "_check_one", check_one)


def _is_fallback(code):
    return MARKER in code.co_varnames


def test_structured_form_is_returned_when_verified():
    checked = _checked_for(_simple.__code__, _simple)
    assert [(a.form, a.ok) for a in checked.attempts] == [("structured", True)]
    new = pellucid.recompile(_simple)
    assert MARKER not in new.co_varnames
    f = type(_simple)(new, _simple.__globals__, "f", _simple.__defaults__)
    assert [f(x) for x in range(5)] == [_simple(x) for x in range(5)]


def test_refused_structured_form_falls_back(monkeypatch):
    _refusing(monkeypatch, lambda o, c: not _is_fallback(c))
    new = pellucid.recompile(_simple)
    assert MARKER in new.co_varnames  # the fallback, accepted
    f = type(_simple)(new, _simple.__globals__, "f", _simple.__defaults__)
    assert [f(x) for x in range(5)] == [_simple(x) for x in range(5)]
    text = pellucid.decompile(_simple)
    assert "__pellucid_fallback__ = 'StructureError: structured form not verified equivalent: " \
           "differs: refused by the test'" in text
    assert not text.startswith("# pellucid: NOT verified")


def test_only_the_blamed_nested_code_falls_back(monkeypatch):
    inner_name = "inner"

    def refuse(original, candidate):
        return original.co_name == inner_name and MARKER not in candidate.co_varnames

    _refusing(monkeypatch, refuse)
    checked = _checked_for(_outer.__code__, _outer)
    assert [a.form for a in checked.attempts][:2] == ["structured", "fallback for " + (
        "_outer.<locals>.inner" if PY >= (3, 11) else "inner")]
    assert checked.attempts[1].ok
    text = pellucid.decompile(_outer)
    assert MARKER in text.split("def inner")[1]  # inner is the fallback...
    assert MARKER not in text.split("def inner")[0]  # ... _outer is structured
    assert text.rstrip().splitlines()[-1].strip().startswith("return")
    new = pellucid.recompile(_outer)
    f = type(_outer)(new, _outer.__globals__)
    assert f([1, 2]) == _outer([1, 2])


def test_nothing_verified_raises_and_decompile_says_so(monkeypatch):
    _refusing(monkeypatch, lambda o, c: True)
    with pytest.raises(pellucid.DecompileError) as info:
        pellucid.recompile(_simple)
    message = str(info.value)
    assert "no recompiled form was verified equivalent" in message
    assert "structured: differs: refused by the test" in message
    assert "fallback: differs: refused by the test" in message
    text = pellucid.decompile(_simple)
    assert text.startswith("# pellucid: NOT verified equivalent to the bytecode")
    assert "def _simple(x, y=2):" in text  # the structured text, with its defaults
    lam = pellucid.decompile(lambda q: q + 1)
    assert lam.splitlines()[0].startswith("# pellucid: NOT verified")
    assert lam.splitlines()[1] in ("lambda q: q + 1", "(lambda q: (q + 1))")  # (3.8's unparser)


def test_decompile_without_verifying_never_asks(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("the verifier was asked")

    monkeypatch.setattr(pellucid.verify, "check_blaming", never)
    assert "def _simple" in pellucid.decompile(_simple, verify=False)


def test_recompile_with_a_path_writes_the_accepted_form(tmp_path, monkeypatch):
    _refusing(monkeypatch, lambda o, c: not _is_fallback(c))
    path = tmp_path / "out.py"
    new = pellucid.recompile(_simple, str(path))
    assert new.co_filename == str(path)
    assert MARKER in path.read_text()


# The programs of issue 15 that the structurer gets wrong: recompile must give back code that
# behaves like the original (the fallback, where the verifier accepts it) or raise.
def g(src, out):
    try:
        while True:
            data = src.pop() if src else None
            if not data:
                break
            out.append(data)
        out.append("after")
    finally:
        out.append("closed")


def t(mode, items, out):
    try:
        if mode == "a":
            while True:
                out.append("seek")
                try:
                    out.append(items.pop())
                except IndexError:
                    out.append("eof")
                    break
                except KeyError as e:
                    raise ValueError(str(e))
        if mode in ("a", "w"):
            out.append("loaded")
    except:  # noqa: E722
        out.append("closed")
        raise


@pytest.mark.parametrize("func,args", [(g, ([1, 2, 3], [])), (t, ("a", [1, 2], [])),
                                       (t, ("w", [], []))])
def test_issue_15_programs_never_come_back_wrong(func, args):
    import copy

    want_args = copy.deepcopy(args)
    want = func(*want_args)
    try:
        new = pellucid.recompile(func)
    except pellucid.DecompileError as exc:
        assert "no recompiled form was verified equivalent" in str(exc)
        return
    f = type(func)(new, func.__globals__)
    got_args = copy.deepcopy(args)
    assert (f(*got_args), got_args) == (want, want_args)


class _Holder:
    def make(self, x):
        def inner(y):
            return x + y

        class Local:
            "a local class"
            base = x
        return inner, Local


def test_bare_method_code_keeps_nested_qualnames():
    # A bare code object (no function, no qualname given): up to 3.10 the code does not know its
    # qualified name, so it is read from the constants of the functions and classes it makes.
    # Taken from the code's own name alone, 'make.<locals>.inner' differed and was refused.
    code = _Holder.make.__code__
    new = pellucid.recompile(code)
    f = type(_Holder.make)(new, globals(), "make")
    inner, local = f(None, 3)
    want_inner, want_local = _Holder().make(3)
    assert inner.__qualname__ == want_inner.__qualname__ == "_Holder.make.<locals>.inner"
    assert local.__qualname__ == want_local.__qualname__ == "_Holder.make.<locals>.Local"
    assert (inner(4), local.base, local.__doc__) == (want_inner(4), want_local.base,
                                                     want_local.__doc__)


_ASSERTING_MODULE = """
x = 1
assert x, "module"
class C:
    assert x, "class"
    y = x + 1
assert not x, "fails"
"""


def test_module_and_class_body_asserts_recompile():
    # 3.8 loads AssertionError with LOAD_GLOBAL where module code and class bodies otherwise use
    # LOAD_NAME: that load is an assert statement's, even with no local of that name.
    code = compile(_ASSERTING_MODULE, "<asserting>", "exec")
    new = pellucid.recompile(code)
    outcomes = []
    for c in (code, new):
        # (3.8's assert reads the global AssertionError, 3.9+'s the builtin: the same for both)
        for shadow in ({}, {"AssertionError": KeyError}):
            ns = dict(shadow)
            with pytest.raises(Exception) as info:
                exec(c, ns)
            outcomes.append((type(info.value), str(info.value), ns["C"].y))
    assert outcomes[:2] == outcomes[2:]
    assert outcomes[0] == (AssertionError, "fails", 2)


def test_dataclasses_hash_add_recompiles_structured():
    """``dataclasses._hash_add`` (a comprehension filtered by a conditional expression) had no
    verified form on any Python (3.8-3.15): its structured form is verified now."""
    import dataclasses
    import types

    fn = dataclasses._hash_add
    text = pellucid.decompile(fn)
    assert MARKER not in text and "NOT verified" not in text, text
    assert " if (" in text and " else " in text, text
    code = pellucid.recompile(fn)
    assert pellucid.verify.check_equivalent(fn.__code__, code).ok

    # Run with the helpers it hands the chosen fields to replaced by recorders (their names
    # and the last argument differ between versions).
    def run(code, fields):
        seen = []
        env = dict(fn.__globals__, _tuple_str=lambda name, flds: seen.append(flds) or "",
                   _hash_fn=lambda flds, g: seen.append(flds), _set_qualname=lambda c, f: f)
        types.FunctionType(code, env, fn.__name__)(object, fields, _Builder())
        return seen

    fields = [_Field(True, None), _Field(False, None), _Field(False, True), _Field(True, False),
              _Field(True, 1)]
    assert run(code, fields) == run(fn.__code__, fields) == [[fields[0], fields[2], fields[4]]]


class _Field:
    def __init__(self, compare, hash):
        self.compare, self.hash = compare, hash


class _Builder:
    def add_fn(self, *args, **kwargs):
        pass
