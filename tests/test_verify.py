"""Tests of ``pellucid.verify.check_equivalent`` (translation validation of recompiled code).

* every construct case whose recompile succeeds must verify, except the listed ones;
* pairs of functions that differ observably must be rejected (including edits of real
  decompiled source);
* layout-only differences (inverted conditions, ``__pellucid`` temporaries) must be accepted;
* with torch installed (3.11), code Dynamo produced is checked against its recompiled form.
"""
import builtins
import importlib.util
import os
import sys
import textwrap
import types

import pytest

from op_comparisons import ops_compared  # (tests/ is on sys.path under pytest)

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "%d.%d" % sys.version_info[:2]

import pellucid  # noqa: E402
import pellucid.decompiler.recompile  # noqa: E402
from pellucid.verify import Verdict, check_equivalent  # noqa: E402


def _load_catalogue():
    spec = importlib.util.spec_from_file_location("_pellucid_verify_cases",
                                                  os.path.join(HERE, "construct_cases.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load_all()


def _resolve(namespace, dotted):
    parts = dotted.split(".")
    obj = namespace[parts[0]]
    for part in parts[1:]:
        obj = obj.__dict__[part] if isinstance(obj, type) else getattr(obj, part)
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    return obj


# Construct cases not verified on some Python, and why (measured; keep in sync).
EXPECTED_NOT_VERIFIED = {
    # Real decompiler bugs the check finds (behaviour differs, see the final report):
    "comprehension_walrus_in_condition_with_side_effects": "cell loads reordered (3.10, 3.12+)",
    # Fallback (state machine) translations of exception handling / with: not modelled.
    "break_in_finally_swallows": "fallback exception emulation",
    "continue_in_finally_swallows": "fallback exception emulation",
    "try_except_else_finally_paths": "fallback exception emulation",
    "try_inside_except_handler": "fallback exception emulation",
    "try_nested_rethrow_different": "fallback exception emulation",
    "break_in_try_finally_with_branching_finally": "fallback exception emulation (3.11+)",
    "break_from_except_clause_with_code": "fallback exception emulation (3.11+)",
    "break_through_nested_finally": "fallback exception emulation (3.12)",
    "break_from_with_inside_try_finally": "decompiler sets attributes on a nested function; 3.12 fallback",
    # (recompiled at all only since the 3.11+ fallback enters a handler with the state of the
    # last instruction that can raise; the construct round trip checks their behaviour)
    "gen_yield_in_except_and_finally": "fallback exception emulation (3.11+)",
    "try_in_loop_else_finally_break": "fallback exception emulation (3.11+)",
    "with_break_from_while_true": "fallback with-statement emulation",
    "with_inside_loop_break_continue": "fallback with-statement emulation",
    "with_nested_inner_suppresses": "fallback with-statement emulation",
    "regr_return_from_try_in_clause_in_with": "fallback with-statement emulation (no structured "
                                              "form on 3.8-3.11 yet)",
    # Differences the model does not see through.
    "async_with_multiple_items": "3.10 handler stack shapes",
    "asyncgen_asend_athrow_aclose": "3.10 handler stack shapes",
    "dict_displays_with_unpacking": "3.8 BUILD_MAP vs BUILD_CONST_KEY_MAP",
    "expression_statements": "3.10 fallback",
    "except_star_basic": "except* (3.11+ CHECK_EG_MATCH / 3.12 intrinsics) not modelled",
    "except_star_naked_exception_is_wrapped": "except* not modelled",
    "except_star_else_finally": "except* not modelled",
    "except_star_bare_raise_merges": "except* not modelled",
    "except_star_unhandled_propagates": "except* not modelled",
    "except_star_without_parentheses": "except* not modelled",
    # (round-trips everywhere; verified on 3.13, not on 3.14/3.15: the candidate's finally
    # copy is reached through the exception path, the original's inline)
    "try_finally_around_while_true_break": "finally reached by another path (3.14+)",
    "lambda_as_key_map_filter": "decompiler sets attributes on the lambda's function",
    "for_else_swap_assignment_reading_targets": "`if c not in s: break` written as `if c in s: "
                                                "continue` + `break`; the model compares operators",
    "while_else_break_inside_while_true_with_try_break": "fallback exception emulation (3.12+)",
    "gen_pair_collector_nested_loops_or_value": "inner loop's first pass written out before "
                                                "it (peeled); the model's unrolling does not pair them",
    "regr_return_chained_comparison_side_effect": "decompiler sets attributes on a function",
}
MIN_SHARE = 0.88


def test_construct_corpus_verifies():
    verified, failures, unexpected = 0, [], []
    for case in _load_catalogue():
        if sys.version_info[:2] < case.min_version:
            continue
        ns = {"__name__": "construct_case_" + case.id, "__builtins__": builtins}
        exec(compile(case.src, "<%s>" % case.id, "exec", dont_inherit=True), ns)
        func = _resolve(ns, case.func)
        try:
            new = pellucid.recompile(func)
        except Exception:
            continue  # only cases where recompile succeeds
        verdict = check_equivalent(func.__code__, new, func.__globals__)
        assert isinstance(verdict, Verdict)
        if verdict.ok:
            verified += 1
        else:
            failures.append((case.id, verdict.reason))
            if case.id not in EXPECTED_NOT_VERIFIED:
                unexpected.append("%s: %s" % (case.id, verdict.reason))
    total = verified + len(failures)
    share = verified / float(total)
    print("\nverified %d of %d construct cases (%.1f%%) on Python %s" % (verified, total, 100 * share, PY))
    for case_id, reason in failures:
        print("  not verified: %s: %s" % (case_id, reason[:300]))
    assert not unexpected, "construct cases unexpectedly not verified:\n" + "\n".join(unexpected)
    assert share >= MIN_SHARE


# --------------------------------------------------------------------------- negative pairs

def _code(src, name="f", env=None):
    ns = dict(env or {})
    exec(compile(textwrap.dedent(src), "<test>", "exec", dont_inherit=True), ns)
    return ns[name].__code__


# (torch 2.15's ``if profiler enabled`` tests around a graph call, see SAME)
PROFILER_TESTS = "def f(a, h, k, m):\n    t = None\n    if a:\n        t = h()\n    if t is not None:\n        h(t)\n"

DIFFERENT = [
    ("star tuple in another order", "def f(g, a, b):\n    return g(*(a, b))\n",
     "def f(g, a, b):\n    return g(b, a)\n"),
    ("star tuple with keywords vs plain call", "def f(g, a, b):\n    return g(*(a,), b=b)\n",
     "def f(g, a, b):\n    return g(a, b)\n"),
    ("swapped call order", "def f(a, b):\n    a()\n    b()\n", "def f(a, b):\n    b()\n    a()\n"),
    ("different constant", "def f(g):\n    return g(1)\n", "def f(g):\n    return g(2)\n"),
    ("int vs bool constant", "def f(g):\n    return g(1)\n", "def f(g):\n    return g(True)\n"),
    ("float sign", "def f(g):\n    return g(0.0)\n", "def f(g):\n    return g(-0.0)\n"),
    ("different attribute", "def f(x):\n    return x.foo\n", "def f(x):\n    return x.bar\n"),
    ("store to a different local", "def f(x):\n    a = x()\n    b = 0\n    x(a)\n",
     "def f(x):\n    b = x()\n    a = 0\n    x(b)\n"),
    ("missing side effect", "def f(x):\n    x.a()\n    return 1\n", "def f(x):\n    return 1\n"),
    ("different branch direction", "def f(x, a, b):\n    if x:\n        a()\n    else:\n        b()\n",
     "def f(x, a, b):\n    if x:\n        b()\n    else:\n        a()\n"),
    ("different exception handler",
     "def f(g):\n    try:\n        g()\n    except ValueError:\n        return 1\n    return 2\n",
     "def f(g):\n    try:\n        g()\n    except TypeError:\n        return 1\n    return 2\n"),
    ("handler body differs",
     "def f(g, h):\n    try:\n        g()\n    except ValueError:\n        h(1)\n",
     "def f(g, h):\n    try:\n        g()\n    except ValueError:\n        h(2)\n"),
    ("try removed", "def f(g):\n    try:\n        g()\n    except Exception:\n        pass\n",
     "def f(g):\n    g()\n"),
    ("returning a different value", "def f(a, b):\n    return a\n", "def f(a, b):\n    return b\n"),
    ("loop body differs in the 2nd iteration only",
     "def f(xs, g):\n    first = True\n    for x in xs:\n        g(x)\n        first = False\n",
     "def f(xs, g):\n    first = True\n    for x in xs:\n        g(x if first else 0)\n        first = False\n"),
    ("extra call inside a loop", "def f(xs, g):\n    for x in xs:\n        g(x)\n",
     "def f(xs, g):\n    for x in xs:\n        g(x)\n        g(x)\n"),
    ("while loop count", "def f(n, g):\n    i = 0\n    while i < n:\n        g(i)\n        i += 1\n",
     "def f(n, g):\n    i = 0\n    while i < n:\n        g(i)\n        i += 2\n"),
    ("operator differs", "def f(a, b):\n    return a + b\n", "def f(a, b):\n    return a - b\n"),
    ("operand order", "def f(a, b):\n    return a + b\n", "def f(a, b):\n    return b + a\n"),
    ("truth test dropped", "def f(x, g):\n    if x and False:\n        g()\n    g()\n",
     "def f(x, g):\n    x\n    g()\n"),
    ("yielded value", "def f(x):\n    yield x\n    yield 1\n", "def f(x):\n    yield 1\n    yield x\n"),
    ("raise instead of return", "def f(x):\n    return x\n", "def f(x):\n    raise x\n"),
    ("keyword name", "def f(g, x):\n    return g(a=x)\n", "def f(g, x):\n    return g(b=x)\n"),
    ("global vs local read", "def f(x):\n    return len(x)\n", "def f(x):\n    return x.__len__()\n"),
    ("nested function body", "def f():\n    def g(y):\n        return y + 1\n    return g\n",
     "def f():\n    def g(y):\n        return y + 2\n    return g\n"),
    ("break moved", "def f(xs, g):\n    for x in xs:\n        if g(x):\n            break\n        g(0)\n",
     "def f(xs, g):\n    for x in xs:\n        g(0)\n        if g(x):\n            break\n"),
    ("with body outside", "def f(cm, g):\n    with cm:\n        g()\n",
     "def f(cm, g):\n    with cm:\n        pass\n    g()\n"),
    ("list mutated", "def f(g):\n    a = []\n    a.append(1)\n    return g(a)\n",
     "def f(g):\n    a = []\n    return g(a)\n"),
    ("or keeps the value, not its bool", "def f(x, y):\n    return x or y\n",
     "def f(x, y):\n    return bool(x) or y\n"),
    ("is None inverted", "def f(x, g):\n    if x is None:\n        g()\n",
     "def f(x, g):\n    if x is not None:\n        g()\n"),
    # Exact lists (see machine.py, "Lists"): only lists built here are known.
    (".extend on an unknown object is not LIST_EXTEND",
     "def f(x, v):\n    c = x[0:1]\n    c.extend(v)\n    return c\n",
     "def f(x, v):\n    c = [*x[0:1], *v]\n    return c\n"),
    ("list() may be shadowed or a subclass", "def f(v):\n    c = list()\n    c.extend(v)\n    return c\n",
     "def f(v):\n    c = [*v]\n    return c\n"),
    (".append is not LIST_EXTEND", "def f(v):\n    c = [1]\n    c.append(v)\n    return c\n",
     "def f(v):\n    c = [1, *v]\n    return c\n"),
    ("list items in a different order", "def f(a, b, g):\n    c = [a]\n    c.extend([b])\n    return g(c)\n",
     "def f(a, b, g):\n    c = [b, a]\n    return g(c)\n"),
    ("slice bounds", "def f(a, g):\n    c = [a]\n    return g(c[1:])\n",
     "def f(a, g):\n    c = [a]\n    return g(c[0:])\n"),
    ("index out of range raises", "def f(a):\n    c = [a]\n    return c[1]\n",
     "def f(a):\n    c = [a]\n    return c[0]\n"),
    ("one list passed twice vs two lists", "def f(g):\n    a = []\n    return g(a, a)\n",
     "def f(g):\n    a = []\n    return g(a, [])\n"),
    ("mutation after user code saw the list",
     "def f(g):\n    a = [1]\n    g(a)\n    a.append(2)\n    return g(a)\n",
     "def f(g):\n    a = [1]\n    g(a)\n    return g(a)\n"),
    ("slice assignment", "def f(a, b, g):\n    c = [a, b]\n    c[0:1] = [b]\n    return g(c)\n",
     "def f(a, b, g):\n    c = [a, b]\n    c[1:2] = [a]\n    return g(c)\n"),
    # Dicts with str constant keys (machine.py, "Lists"), passed as ``**kwargs``.
    ("**{} after user code saw the dict",
     "def f(g, h, a):\n    d = {}\n    h(d)\n    return g(*a, **d)\n",
     "def f(g, h, a):\n    d = {}\n    h(d)\n    return g(*a)\n"),
    ("**dict stored into first", "def f(g, a, b):\n    d = {}\n    d['k'] = b\n    return g(*a, **d)\n",
     "def f(g, a, b):\n    return g(*a)\n"),
    ("**dict with another value", "def f(g, a, b):\n    return g(*(a,), **{'k': b})\n",
     "def f(g, a, b):\n    return g(a, k=a)\n"),
    ("**dict with another key", "def f(g, a, b):\n    return g(*a, **{'k': b})\n",
     "def f(g, a, b):\n    return g(*a, **{'j': b})\n"),
    ("**dict changed after the call",
     "def f(g, a, b):\n    d = {'k': b}\n    r = g(*(a,), **d)\n    d['j'] = a\n    return r, d\n",
     "def f(g, a, b):\n    d = {'k': b}\n    r = g(a, k=b)\n    return r, d\n"),
    ("repeated key keeps the last value", "def f(g, a, b):\n    return g(*(), **{'k': a, 'k': b})\n",
     "def f(g, a, b):\n    return g(k=a)\n"),
    ("closure of a lambda over another cell",
     "def f():\n    x = 1\n    y = 2\n    def g():\n        return x + y\n    return (lambda: x).__closure__[0]\n",
     "def f():\n    x = 1\n    y = 2\n    def g():\n        return x + y\n    return (lambda: y).__closure__[0]\n"),
    ("index into a lambda's closure out of range",
     "def f():\n    x = 1\n    return (lambda: x).__closure__[0]\n",
     "def f():\n    x = 1\n    return (lambda: x).__closure__[-2]\n"),
    # Lists built after paths met, kept across a join (see lockstep._join_keeping_lists).
    ("a list built where paths met, with other contents",
     PROFILER_TESTS + "    return m([], k())\n",
     PROFILER_TESTS + "    __pellucid_t = k()\n    return m([a], __pellucid_t)\n"),
    ("a list built where paths met, aliased vs two lists",
     PROFILER_TESTS + "    c = []\n    return m(c, k(), c)\n",
     PROFILER_TESTS + "    c = []\n    __pellucid_t = k()\n    return m(c, __pellucid_t, [])\n"),
    ("a list built where paths met, changed by the candidate alone",
     PROFILER_TESTS + "    c = [a]\n    return m(c, k())\n",
     PROFILER_TESTS + "    c = [a]\n    __pellucid_t = k()\n    c.append(a)\n    return m(c, __pellucid_t)\n"),
    ("a list built where paths met, different on one path",
     "def f(a, h, k, m):\n    t = None\n    c = []\n    if a:\n        t = h()\n        c.append(t)\n"
     "    if t is not None:\n        h(t)\n    return m(c, k())\n",
     "def f(a, h, k, m):\n    t = None\n    c = []\n    if a:\n        t = h()\n"
     "    if t is not None:\n        h(t)\n    return m(c, k())\n"),
    # The variable holds the same list term on both sides; only its known contents differ, and
    # only while user code runs (then both hold [2]).
    ("a variable's list differs only in its contents, only during a call",
     "def f(g):\n    a = [1]\n    g()\n    a[0] = 2\n    return a\n",
     "def f(g):\n    a = [2]\n    g()\n    return a\n"),
]


@pytest.mark.parametrize("what,a,b", DIFFERENT, ids=[d[0] for d in DIFFERENT])
def test_observable_differences_are_rejected(what, a, b):
    ca, cb = _code(a), _code(b)
    assert check_equivalent(ca, ca).ok, check_equivalent(ca, ca).reason
    verdict = check_equivalent(ca, cb)
    assert not verdict.ok, what
    assert verdict.reason
    assert not check_equivalent(cb, ca).ok


def _sample(log, xs, limit):
    total = 0
    for x in xs:
        if x > limit:
            log.append(("big", x))
            total += x
        else:
            log.append("small")
    try:
        log.append(total // len(xs))
    except ZeroDivisionError:
        log.append("empty")
    return total


EDITS = [
    ("'big'", "'BIG'"),          # a different constant
    ("total += x", "total -= x"),  # a different operator
    ("x > limit", "x >= limit"),   # a different comparison
    ("except ZeroDivisionError", "except ArithmeticError"),  # a different handler
    ("return total", "return limit"),  # returning a different value
]


@pytest.mark.parametrize("old,new", EDITS, ids=[e[0] for e in EDITS])
def test_edited_decompiled_source_is_rejected(old, new):
    source = pellucid.decompile(_sample)
    assert old in source, source
    original = _code(source, "_sample")
    assert check_equivalent(_sample.__code__, original).ok, \
        check_equivalent(_sample.__code__, original).reason
    edited = _code(source.replace(old, new, 1), "_sample")
    verdict = check_equivalent(_sample.__code__, edited)
    assert not verdict.ok
    assert "offset" in verdict.reason or "nested" in verdict.reason


# --------------------------------------------------------------------------- positive pairs

SAME = [
    ("call with a star tuple vs plain call", "def f(g, a, b):\n    return g(*(a, b))\n",
     "def f(g, a, b):\n    return g(a, b)\n"),
    ("call with 40 arguments (the compiler uses CALL_FUNCTION_EX on 3.11+)",
     "def f(g, a):\n    return g(%s)\n" % ", ".join(["a"] * 40),
     "def f(g, a):\n    return g(*(%s,))\n" % ", ".join(["a"] * 40)),
    ("inverted if", "def f(x, a, b):\n    if not x:\n        a()\n    else:\n        b()\n",
     "def f(x, a, b):\n    if x:\n        b()\n    else:\n        a()\n"),
    ("temporary", "def f(f1, g):\n    return g(f1())\n",
     "def f(f1, g):\n    __pellucid_t1 = f1()\n    return g(__pellucid_t1)\n"),
    ("several temporaries", "def f(a, b):\n    return a.x + b.y\n",
     "def f(a, b):\n    __pellucid_a = a.x\n    __pellucid_b = b.y\n    return __pellucid_a + __pellucid_b\n"),
    ("is None spelled differently", "def f(x, g):\n    if x is None:\n        g()\n",
     "def f(x, g):\n    if not (x is not None):\n        g()\n"),
    ("constant tuple vs built", "def f(g):\n    return g((1, 2))\n",
     "def f(g):\n    __pellucid_a = 1\n    return g((__pellucid_a, 2))\n"),
    ("for loop with temps", "def f(xs, g):\n    for x in xs:\n        g(x)\n    return 1\n",
     "def f(xs, g):\n    for x in xs:\n        __pellucid_t = x\n        g(__pellucid_t)\n    return 1\n"),
    ("elif vs nested else", "def f(x, g):\n    if x:\n        g(1)\n    elif g:\n        g(2)\n",
     "def f(x, g):\n    if x:\n        g(1)\n    else:\n        if g:\n            g(2)\n"),
    # How the decompiler writes Dynamo's list manipulations (machine.py, "Lists").
    ("list.extend vs display", "def f(a, v):\n    return [a, *v]\n",
     "def f(a, v):\n    __pellucid_t = [a]\n    __pellucid_t.extend(v)\n    return __pellucid_t\n"),
    ("list.append vs display", "def f(a, b, g):\n    return g([a, b])\n",
     "def f(a, b, g):\n    __pellucid_t = [a]\n    __pellucid_t.append(b)\n    return g(__pellucid_t)\n"),
    ("slice of a known list is an exact list",
     "def f(a, b, v):\n    c = [a, b][0:1]\n    c.extend(v)\n    return c\n",
     "def f(a, b, v):\n    c = [a]\n    c.extend(v)\n    return c\n"),
    ("subscript stores and deletes on a known list",
     "def f(a, b, g):\n    c = [a, b]\n    c[0:1] = [b]\n    del c[-1]\n    return g(c)\n",
     "def f(a, b, g):\n    c = [b]\n    return g(c)\n"),
    ("star call with a list vs a tuple", "def f(g, a, b):\n    return g(*[a, b])\n",
     "def f(g, a, b):\n    __pellucid_t = [a]\n    __pellucid_t.extend((b,))\n    return g(*(*__pellucid_t,))\n"),
    ("dead list manipulation", "def f(g):\n    [].extend([])\n    return g()\n",
     "def f(g):\n    return g()\n"),
    ("star call with **{} (Dynamo writes it)", "def f(g, a):\n    return g(*a, **{})\n",
     "def f(g, a):\n    return g(*a)\n"),
    ("keywords through a str-keyed dict", "def f(g, a, b):\n    return g(*(a,), **{'k': b, 'j': a})\n",
     "def f(g, a, b):\n    return g(a, k=b, j=a)\n"),
    ("** copies the dict it is given", "def f(g, a, b):\n    d = {'k': b}\n    return g(*(a,), **d), d\n",
     "def f(g, a, b):\n    d = {'k': b}\n    return g(a, k=b), d\n"),
    ("repeated dict key", "def f(g, a, b):\n    return g(*(), **{'k': a, 'k': b})\n",
     "def f(g, a, b):\n    return g(k=b)\n"),
    ("dict display returned", "def f(a, b):\n    return {'k': a, 'j': b}\n",
     "def f(a, b):\n    __pellucid_t = b\n    return {'k': a, 'j': __pellucid_t}\n"),
    ("constant-key dict", "def f(a, b, g):\n    return g({1: a, 'k': b})\n",
     "def f(a, b, g):\n    __pellucid_t = a\n    return g({1: __pellucid_t, 'k': b})\n"),
    # Torch 2.15 tests ``if profiler enabled`` before and after each graph call: three paths meet
    # at every later event, each with the lists it built after the tests under other names.
    ("a list built where paths met, before an effect, in the original only",
     PROFILER_TESTS + "    return m([], k())\n",
     PROFILER_TESTS + "    __pellucid_t = k()\n    return m([], __pellucid_t)\n"),
    ("lists built where paths met, aliased and nested",
     PROFILER_TESTS + "    c = [a]\n    return m(c, [c, a], k(), c)\n",
     PROFILER_TESTS + "    c = [a]\n    __pellucid_t = k()\n    return m(c, [c, a], __pellucid_t, c)\n"),
]


@pytest.mark.parametrize("what,a,b", SAME, ids=[s[0] for s in SAME])
def test_layout_differences_are_accepted(what, a, b):
    if sys.version_info < (3, 9) and what in ("list.extend vs display", "star call with a list vs a tuple"):
        pytest.skip("3.8 builds these with BUILD_LIST_UNPACK / BUILD_TUPLE_UNPACK")
    if sys.version_info < (3, 9) and what == "** copies the dict it is given":
        pytest.skip("3.8 passes the dict itself (which a C callable could keep): not shown equal")
    verdict = check_equivalent(_code(a), _code(b))
    assert verdict.ok, verdict.reason
    assert "compared" in verdict.reason


def _shadowing_code():
    """A function whose local slot is named like its free variable and used (Dynamo's resume
    functions have such a slot, unused): ``return x + y`` with the local ``y`` renamed ``x``."""
    def outer():
        x = 1

        def f():
            y = 2
            return x + y
        return f
    code = outer().__code__
    return code.replace(co_varnames=("x",))


def test_local_named_like_a_free_variable_is_refused():
    code = _shadowing_code()
    assert code.co_varnames == code.co_freevars == ("x",)
    verdict = check_equivalent(code, code)
    assert not verdict.ok
    assert "named like a free variable" in verdict.reason
    with pytest.raises(pellucid.DecompileError):
        pellucid.decompiler.recompile.recompile_full(code, keep_locals=True, write=False)


def test_never_raises():
    def gen(x):
        yield from x
    assert isinstance(check_equivalent(gen.__code__, _sample.__code__), Verdict)
    assert not check_equivalent(gen.__code__, _sample.__code__).ok
    assert not check_equivalent(compile("x = 1", "m", "exec"), _sample.__code__).ok


def test_exported_from_package():
    assert pellucid.check_equivalent is check_equivalent


# --------------------------------------------------------------------------- Dynamo

@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="Dynamo sample for 3.11 only")
def test_dynamo_transformed_code():
    torch = pytest.importorskip("torch")
    from torch._dynamo.convert_frame import register_bytecode_hook

    captured = []
    handle = register_bytecode_hook(lambda old, new: captured.append((old, new)))
    try:
        def fn(x, y):
            a = x.sin() + y
            if a.sum() > 0:
                b = a * 2
            else:
                b = a - 1
            print("graph break")
            return b.cos()

        torch._dynamo.reset()
        compiled = torch.compile(fn, backend="eager")
        compiled(torch.ones(3), torch.ones(3))
        compiled(-torch.ones(3), torch.ones(3))
    finally:
        handle.remove()
    assert captured
    results = []
    for old, new in captured:
        # As prepare_debug does (pellucid.dynamo.transformed_code.build).
        result = pellucid.decompiler.recompile.recompile_full(new, keep_locals=True, write=False)
        verdict = check_equivalent(new, result.code, result.bindings)
        results.append((new.co_name, verdict.ok, verdict.reason))
        # Not a tautology: Dynamo's code is not equivalent to the function it came from.
        assert not check_equivalent(old, new).ok
    print("\nDynamo code objects:")
    for name, ok, reason in results:
        print("  %s: %s %s" % (name, "verified" if ok else "NOT verified", reason[:400]))
    assert all(ok for _, ok, _ in results), results


def test_the_ops_step_dispatches_on_are_exactly_its_tested_ops():
    # _step sends an op that is not in _STEP_OPS straight to the effect code, skipping its own
    # branches: the set must name every op a branch of _step tests, and only those.
    from pellucid.verify import machine

    assert ops_compared(machine._step, machine, "_STEP_OPS") == set(machine._STEP_OPS)


def test_the_ops_list_step_answers_first_are_exactly_its_tested_ops():
    # _list_step answers False at once for an op not in _LIST_STEP_OPS, skipping its branches:
    # the set must name every op a branch of _list_step tests, and only those.
    from pellucid.verify import machine

    assert ops_compared(machine._list_step, machine, "_LIST_STEP_OPS") == set(machine._LIST_STEP_OPS)


def test_first_target_is_where_the_straight_line_from_the_start_ends():
    # Side.first_target: events before it are reached once (explore keeps no state there), so
    # it must not be past any index control can reach other than by falling through.
    from pellucid.verify import machine

    def f(x):
        y = g(x)  # noqa: F821
        if y:
            return h(y)  # noqa: F821
        try:
            return k(y)  # noqa: F821
        except ValueError:
            return None

    side = machine.Side(f.__code__, {})
    targets = {i.target for i in side.instrs if i.target is not None}
    targets |= {i.handler.target for i in side.instrs if i.handler is not None}
    assert side.first_target() == min(targets)
    assert "CALL" in [i.op for i in side.instrs[:side.first_target()]] or sys.version_info < (3, 11)
    straight = machine.Side((lambda x: g(x) + 1).__code__, {})  # noqa: F821
    assert straight.first_target() == len(straight.instrs)
    # decisions and effects on the straight line: both outcomes still compared
    assert check_equivalent(f.__code__, f.__code__).ok

    def f2(x):
        y = g(x)  # noqa: F821
        if y:
            return h(y)  # noqa: F821
        try:
            return k(x)  # noqa: F821
        except ValueError:
            return None
    assert not check_equivalent(f.__code__, f2.__code__).ok
