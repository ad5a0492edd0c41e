"""Public entry points: :func:`decompile` and :func:`recompile`.

Nothing unproven leaves them.  :func:`recompile` hands back a code object only once
:func:`pellucid.verify.check_equivalent` has accepted it (``verified``): the structured form
first; when the verifier does not accept it, the documented fallback (a state machine over the
basic blocks) for the code objects it blamed, then for all of them; when no form is accepted it
raises :class:`~pellucid.errors.DecompileError` with the verdict.  :func:`decompile` shows the
text of the form that was accepted, and says in a comment when none was.
"""
import inspect
import sys
import time
import types
from typing import Any, Callable, List, NamedTuple, Optional, Tuple, TypeVar

from pellucid.decompiler.inputs import code_of
from pellucid.errors import DecompileError


_T = TypeVar("_T")
_TOO_DEEP = "nested too deeply for the structured decompiler (RecursionError)"
# Names that the structured decompiler inlines as expressions: they have no fallback form of
# their own, the code that makes them falls back instead.
_INLINED = ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>")
_REASON_CHARS = 240  # of a verdict, in a fallback marker or a comment


def _flat_if_too_deep(name: str, make: Callable[[], _T]) -> _T:
    """``make()``; if it hits the recursion limit, ``make()`` again with the fallback.

    Bytecode can nest expressions far deeper than source can (the stack is just a list), and
    the passes after structuring (``ast`` visitors, unparse, CPython's own compiler) recurse
    per level.  The fallback writes one flat statement per instruction, which they handle at
    any depth; if even that is too deep, the error says so instead of a RecursionError.
    """
    try:
        return make()
    except RecursionError:
        pass  # retried below, once the stack has unwound
    try:
        from pellucid.decompiler.fallback import force_fallback

        with force_fallback(_TOO_DEEP):
            return make()
    except RecursionError:
        pass
    raise DecompileError(
        "%s is nested too deeply to decompile within Python's recursion limit (%d), even flat; "
        "raise it with sys.setrecursionlimit() and retry" % (name, sys.getrecursionlimit())
    )


# --------------------------------------------------------------------------- verified forms

class Attempt(NamedTuple):
    """One form :func:`checked_recompile` built and checked.

    ``form``: ``"structured"``, ``"fallback for <names>"`` or ``"fallback"``; ``ok``: the
    verifier accepted it; ``reason``: the verdict's reason; ``seconds``: the verifier's CPU time
    (what it costs, whatever else the machine is running)."""

    form: str
    ok: bool
    reason: str
    seconds: float


class Checked(NamedTuple):
    """What :func:`checked_recompile` found: the accepted result (None when no form was
    accepted), the forced code objects that produced it (None: none forced, ``[]``: all of
    them), and every attempt in order."""

    result: Any  # pellucid.decompiler.recompile.Recompiled or None
    forced: Optional[List[types.CodeType]]
    attempts: List[Attempt]

    def refusal(self, name: str) -> str:
        """Why no form was accepted, for :class:`DecompileError`."""
        return "%s: no recompiled form was verified equivalent (%s)" % (name, "; ".join(
            "%s: %s" % (a.form, _short(a.reason)) for a in self.attempts))


def _short(text: str, limit: int = _REASON_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _blame_targets(code: types.CodeType, blamed: List[types.CodeType]) -> List[types.CodeType]:
    """The code objects to decompile with the fallback for ``blamed``: an inlined comprehension
    has no fallback of its own, the code object that makes it takes its place."""
    parents = {}
    stack = [code]
    while stack:
        c = stack.pop()
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                parents[id(k)] = c
                stack.append(k)
    out: List[types.CodeType] = []
    for b in blamed:
        while b.co_name in _INLINED and id(b) in parents:
            b = parents[id(b)]
        if not any(b is o for o in out):
            out.append(b)
    return out


def checked_recompile(code: types.CodeType, build: Callable[[], Any],
                      verify: Optional[Callable[..., Any]] = None) -> Checked:
    """Build ``code``'s recompiled form with ``build()`` (a ``Recompiled``) and check it; when
    it is not accepted, build and check the fallback forms (see the module docstring).

    ``verify(original, candidate, bindings)`` gives ``(Verdict, blamed code objects)``; by
    default :func:`pellucid.verify.check_blaming`.  A :class:`DecompileError` from the
    structured form is raised (nothing was built to check); one from a fallback form is an
    attempt that failed.

    >>> from pellucid.decompiler.recompile import recompile_full
    >>> def f(x): return x + 1
    >>> checked = checked_recompile(f.__code__, lambda: recompile_full(f.__code__))
    >>> [(a.form, a.ok) for a in checked.attempts]
    [('structured', True)]
    """
    from pellucid.decompiler.fallback import force_fallback

    if verify is None:
        from pellucid.verify import check_blaming as verify
    attempts: List[Attempt] = []

    def check(form: str, result: Any) -> Tuple[bool, List[types.CodeType]]:
        start = time.process_time()
        verdict, blamed = verify(code, result.code, result.bindings)
        attempts.append(Attempt(form, bool(verdict.ok), str(verdict.reason),
                                time.process_time() - start))
        return bool(verdict.ok), blamed

    result = _flat_if_too_deep(code.co_name, build)
    ok, blamed = check("structured", result)
    if ok:
        return Checked(result, None, attempts)
    reason = "structured form not verified equivalent: %s" % _short(attempts[-1].reason)
    targets = _blame_targets(code, blamed)
    tried: List[Optional[List[types.CodeType]]] = []
    if targets and not any(t is code for t in targets):
        tried.append(targets)
    tried.append(None)
    for codes in tried:
        form = "fallback" if codes is None else "fallback for %s" % ", ".join(
            getattr(c, "co_qualname", c.co_name) for c in codes)
        try:
            with force_fallback(reason, codes):
                result = build()
        except (DecompileError, RecursionError) as exc:
            attempts.append(Attempt(form, False, "could not build it: %s" % exc, 0.0))
            continue
        ok, _ = check(form, result)
        if ok:
            return Checked(result, codes if codes is not None else [], attempts)
    return Checked(None, None, attempts)


def _with_forced(checked: Checked, make: Callable[[], _T]) -> _T:
    """``make()`` with the fallback forced as it was for ``checked``'s accepted form."""
    if checked.forced is None:
        return make()
    from pellucid.decompiler.fallback import force_fallback

    reason = "structured form not verified equivalent: %s" % _short(checked.attempts[0].reason)
    with force_fallback(reason, checked.forced or None):
        return make()


def _function_of(obj: Any, code: types.CodeType) -> Any:
    return obj if getattr(obj, "__code__", None) is code else getattr(obj, "__func__", None)


def _checked_for(code: types.CodeType, func: Any, path: Optional[str] = None) -> Checked:
    from pellucid.decompiler.recompile import recompile_full

    qualname = getattr(func, "__qualname__", None)
    return checked_recompile(
        code, lambda: recompile_full(code, path, qualname, write=False))


# --------------------------------------------------------------------------- public API

def decompile(obj: Any, verify: bool = True) -> str:
    """Return Python source equivalent to the bytecode of ``obj``.

    ``obj`` may be a function, method, lambda, generator/coroutine function, code object or
    module code object.  A class gives a ``class`` statement holding its decompiled methods
    (see :mod:`pellucid.decompiler.classes`); one without Python methods raises
    :class:`~pellucid.errors.DecompileError` saying why.

    With ``verify`` (the default) the text shown is the form :func:`recompile` would hand back:
    compiled back and checked equivalent by :func:`pellucid.verify.check_equivalent`.  When the
    verifier does not accept the structured form, the text is the fallback form it accepted
    (its marker ``__pellucid_fallback__`` says why); when it accepts none, the text starts with
    a ``# pellucid: NOT verified ...`` comment giving the verdict.  ``verify=False`` skips the
    check (faster; the text is the structured form, unchecked).

    >>> print(decompile(lambda x: x + 1))
    lambda x: x + 1
    """
    if inspect.isclass(obj):
        from pellucid.decompiler.classes import render_class

        return _flat_if_too_deep(getattr(obj, "__qualname__", "class"),
                                 lambda: render_class(obj, verify))
    code = code_of(obj)
    return render_checked(code, _function_of(obj, code), None, verify)


def render_checked(code: types.CodeType, func: Any = None, name: Optional[str] = None,
                   verify: bool = True) -> str:
    """The source :func:`decompile` shows for ``code`` (``func``: its function object, for
    defaults; ``name``: see :func:`pellucid.decompiler.render.render_code`)."""
    def make() -> str:
        # (imported here, under _flat_if_too_deep: the first call may come from a stack near
        # the recursion limit, and loading the decompiler's modules recurses too)
        from pellucid.decompiler.render import render_code

        return render_code(code, func, name)

    def render() -> str:
        return _flat_if_too_deep(code.co_name, make)

    if not verify:
        return render()
    try:
        checked = _checked_for(code, func)
    except Exception as exc:  # (the text may still be rendered: say why it is not checked)
        checked = Checked(None, None, [Attempt("structured", False, "could not be recompiled: "
                                               "%s: %s" % (type(exc).__name__, exc), 0.0)])
    if checked.result is not None:
        return _with_forced(checked, render)
    text = render()
    lead = "" if text.startswith("\n") else "\n"
    return "# pellucid: NOT verified equivalent to the bytecode, may behave differently: %s%s%s" % (
        _short("; ".join("%s: %s" % (a.form, a.reason) for a in checked.attempts), 600),
        lead, text)


def recompile(obj: Any, path: Optional[str] = None) -> types.CodeType:
    """Decompile ``obj``, compile the source back, and return a code object that can replace it.

    The code object is checked equivalent to the original by
    :func:`pellucid.verify.check_equivalent` (nested functions, classes and comprehensions
    included) before it is returned.  When the structured form is not accepted, the fallback
    form is built and checked, first for the code objects the verifier blamed, then for all;
    when no form is accepted, :class:`~pellucid.errors.DecompileError` names the verdicts.

    Without ``path`` the code keeps the original's ``co_filename`` and line numbers, so
    tracebacks and debuggers show the original source; with ``path`` the source of the accepted
    form is written there and becomes the code's ``co_filename`` (lines point into that file).
    Constants that have no literal form are bound, under reserved names, in the function's
    globals.

    >>> def f(x): return x * 2
    >>> f.__code__ = recompile(f)
    >>> f(21)
    42
    """
    code = code_of(obj)
    func = _function_of(obj, code)
    checked = _checked_for(code, func, path)
    result = checked.result
    if result is None:
        raise DecompileError(checked.refusal(code.co_name))
    if result.bindings:
        func = obj if hasattr(obj, "__globals__") else getattr(obj, "__func__", None)
        if func is None or not hasattr(func, "__globals__"):
            raise DecompileError("%s has constants without a literal form; recompile a function "
                                 "(whose globals can hold them) instead of a bare code object"
                                 % code.co_name)
        func.__globals__.update(result.bindings)
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(result.source + "\n")
    return result.code

