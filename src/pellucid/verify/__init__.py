"""Is a recompiled code object equivalent to the original?  Translation validation.

:func:`check_equivalent` executes both code objects symbolically in lockstep over pellucid's
version-neutral instructions (:mod:`pellucid.bytecode`) and compares everything observable:
the order of operations that can run user code and their operands, values stored to the
original's variables, exceptions raised and which handler receives them, values returned and
yielded.  Layout (line numbers, jumps, temporaries named ``__pellucid*``) does not matter.

The check is conservative: anything it does not model gives ``ok=False`` with a reason, so a
``Verdict(ok=True)`` is a proof (within the model described in ``machine.py``), and ``ok=False``
only means "not shown equivalent".  Never raises for valid code objects.  Each pair of code
objects gets a budget linear in their size (``STEPS_*``, ``STATES_*`` below); when it runs out
the verdict is "not proven: too large to verify", never a hang.

The model assumes what CPython programs almost always allow (the decompiler's fallback relies on
it, see ``pellucid.verify.idioms``): an exception's ``__context__``/``__traceback__`` are
BaseException's own; a context manager's type provides ``__enter__``/``__exit__`` the ordinary
way; ``builtins.__import__`` is CPython's own; no user code uses names starting with
``__pellucid``.  Tracebacks and line numbers are not compared.
"""
import types
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from pellucid.bytecode.features import CO_HAS_DOCSTRING

__all__ = ["Verdict", "check_equivalent", "check_blaming"]

MAX_DEPTH = 8
# The budget of one comparison of two code objects, linear in their size (instructions of
# both): symbolic steps, and states explored (each costs about as much as a few steps times
# the number of variables).  Measured on the stdlib (bench/stdlib_sweep.py), code the compiler
# made needs at most about a tenth of it; beyond it the verdict is "not proven".
STEPS_BASE = 20000
STEPS_PER_INSTRUCTION = 100
STATES_BASE = 2000
STATES_PER_INSTRUCTION = 12
_KIND_FLAGS = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200


class Verdict(NamedTuple):
    """Result of :func:`check_equivalent`: ``ok`` and an explanation."""

    ok: bool
    reason: str


def check_equivalent(original: types.CodeType, candidate: types.CodeType,
                     bindings: Optional[Mapping[str, Any]] = None) -> Verdict:
    """Whether ``candidate`` behaves observably like ``original`` (see the module docstring).

    ``bindings`` (optional) is the namespace ``pellucid.recompile`` put the constants without a
    literal form in (the function's globals): the candidate's loads of those reserved
    ``__pellucid_const_*`` names are then read as the constants they stand for.

    >>> def f(x): return g(x) + 1
    >>> def h(x):
    ...     __pellucid_t = g(x)
    ...     return __pellucid_t + 1
    >>> check_equivalent(f.__code__, h.__code__).ok
    True
    >>> check_equivalent(f.__code__, (lambda x: g(x) + 2).__code__).ok
    False
    """
    return check_blaming(original, candidate, bindings)[0]


def check_blaming(original: types.CodeType, candidate: types.CodeType,
                  bindings: Optional[Mapping[str, Any]] = None
                  ) -> Tuple[Verdict, List[types.CodeType]]:
    """:func:`check_equivalent`, and the code objects of ``original`` (itself or nested ones)
    whose comparison failed first: for each failing code object, its failing nested code objects
    if it has any (a nested failure also fails the code that makes it), else itself.  (Which
    code objects :func:`pellucid.recompile` retries in the fallback form.)

    >>> def f(x):
    ...     return [y for y in x]
    >>> check_blaming(f.__code__, f.__code__)[1]
    []
    """
    blamed: List[types.CodeType] = []
    try:
        consts = {k: v for k, v in (bindings or {}).items()
                  if isinstance(k, str) and k.startswith("__pellucid_const_")}
        verdict = _check(original, candidate, 0, consts, blamed)
    except RecursionError:
        return Verdict(False, "not verified: nesting too deep"), [original]
    except Exception as exc:  # a checker bug must never reach the caller
        return (Verdict(False, "not verified: internal error %s: %s" % (type(exc).__name__, exc)),
                [original])
    if verdict.ok:
        return verdict, []
    return verdict, blamed or [original]


def _layout(code: types.CodeType) -> Dict[str, object]:
    flags = code.co_flags
    nargs = code.co_argcount + code.co_kwonlyargcount + bool(flags & 0x04) + bool(flags & 0x08)
    return {
        "co_argcount": code.co_argcount,
        "co_posonlyargcount": getattr(code, "co_posonlyargcount", 0),
        "co_kwonlyargcount": code.co_kwonlyargcount,
        "argument names": code.co_varnames[:nargs],
        "kind flags": flags & _KIND_FLAGS,
        "co_freevars": code.co_freevars,
        "co_cellvars": tuple(sorted(code.co_cellvars)),
    }


def _doc(code: types.CodeType) -> Optional[str]:
    c = code.co_consts
    if CO_HAS_DOCSTRING and not code.co_flags & CO_HAS_DOCSTRING:
        return None  # (3.14+: a generator expression's first constant may be any string)
    return c[0] if c and isinstance(c[0], str) else None


# Code objects whose function is made and called at once, then dropped: no user code can reach
# the function object, so its ``__doc__`` (the first constant when it is a str, a quirk of
# MAKE_FUNCTION) is not observable.
_COMPREHENSIONS = ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>")


def _nested_layout(code: types.CodeType) -> Dict[str, object]:
    out = _layout(code)
    out["co_name"] = code.co_name
    out["co_qualname"] = getattr(code, "co_qualname", None)
    out["docstring"] = _doc(code) if code.co_name not in _COMPREHENSIONS else None
    return out


def _pair_codes(original: types.CodeType, candidate: types.CodeType, depth: int,
                consts: Dict[str, Any], blamed: List[types.CodeType]
                ) -> Tuple[Dict[int, tuple], Dict[int, tuple], List[str]]:
    """Give each nested code object of both programs a shared key when they are equivalent.

    Nested codes are paired by name, in order of appearance among codes of that name.
    """
    keys_o: Dict[int, tuple] = {}
    keys_c: Dict[int, tuple] = {}
    problems: List[str] = []
    cand_by_name: Dict[str, List[types.CodeType]] = {}
    for c in candidate.co_consts:
        if isinstance(c, types.CodeType):
            cand_by_name.setdefault(c.co_name, []).append(c)
    for i, o in enumerate(x for x in original.co_consts if isinstance(x, types.CodeType)):
        key = ("code", depth, i)
        keys_o[id(o)] = key
        pool = cand_by_name.get(o.co_name)
        if not pool:
            continue
        c = pool.pop(0)
        lo, lc = _nested_layout(o), _nested_layout(c)
        if lo != lc:
            diff = [k for k in lo if lo[k] != lc[k]]
            problems.append("nested %s: %s differ" % (o.co_name, ", ".join(diff)))
            blamed.append(o)
            continue
        v = _check(o, c, depth + 1, consts, blamed)
        if v.ok:
            keys_c[id(c)] = key
        else:
            problems.append("nested %s: %s" % (o.co_name, v.reason))
    return keys_o, keys_c, problems


def _check(original: types.CodeType, candidate: types.CodeType, depth: int,
           consts: Dict[str, Any], blamed: List[types.CodeType]) -> Verdict:
    """Compare one pair of code objects (and, first, their nested ones); when the verdict is
    not ok, ``blamed`` gets ``original`` unless a nested code object was blamed already."""
    mark = len(blamed)
    verdict = _check_one(original, candidate, depth, consts, blamed)
    if not verdict.ok and len(blamed) == mark:
        blamed.append(original)
    return verdict


def _check_one(original: types.CodeType, candidate: types.CodeType, depth: int,
               consts: Dict[str, Any], blamed: List[types.CodeType]) -> Verdict:
    from pellucid.verify.lockstep import Explorer, Mismatch, TooLarge
    from pellucid.verify.machine import Side, Unsupported

    if depth > MAX_DEPTH:
        return Verdict(False, "not verified: code objects nested too deeply")
    lo, lc = _layout(original), _layout(candidate)
    if lo != lc:
        diff = [k for k in lo if lo[k] != lc[k]]
        return Verdict(False, "signature differs: %s" % ", ".join(
            "%s %r vs %r" % (k, lo[k], lc[k]) for k in diff))
    keys_o, keys_c, problems = _pair_codes(original, candidate, depth, consts, blamed)
    for value in consts.values():
        # A code object recompile bound as a constant (Dynamo hands its nested comprehension
        # code to ``_create_nested_fn``) that is the original's own nested code object: the
        # very same object, so the same key.
        if isinstance(value, types.CodeType) and id(value) in keys_o:
            keys_c[id(value)] = keys_o[id(value)]
    try:
        orig = Side(original, keys_o)
        cand = Side(candidate, keys_c, consts)
        size = len(orig.instrs) + len(cand.instrs)
        ex = Explorer(orig, cand, STEPS_BASE + STEPS_PER_INSTRUCTION * size,
                      STATES_BASE + STATES_PER_INSTRUCTION * size)
        ex.explore()
    except Mismatch as exc:
        note = ("; " + "; ".join(problems)) if problems else ""
        return Verdict(False, "differs: %s%s" % (exc, note))
    except TooLarge as exc:
        return Verdict(False, str(exc))
    except Unsupported as exc:
        return Verdict(False, "not verified: %s" % exc)
    if ex.paths == 0:
        # Every path was cut as "already covered": nothing was actually compared.
        return Verdict(False, "not verified: no complete path was explored")
    if problems:
        # Every nested code the original can create was compared by its effects already; an
        # unused unequal one would still be reachable via co_consts, so stay conservative.
        return Verdict(False, "differs: " + "; ".join(problems))
    return Verdict(True, "%d paths, %d effects compared (%d steps, %d states)"
                   % (ex.paths, ex.effects, ex.steps[0], ex.states))
