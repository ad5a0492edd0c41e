"""The readability rewrites of decompiled code (copy_propagation.py, known_lists.py).

Each case is a function written with pellucid's temporaries (``__pellucid_tN``), as the
decompiler leaves them.  The pass must rewrite it to the expected text -- or leave it exactly as
it was, for the cases where a rewrite would change what the function does -- and the rewritten
function must behave like the original: :func:`pellucid.verify.check_equivalent` accepts it, and
running both on the same inputs gives the same results, exceptions and order of side effects.
For the cases left alone, the naive rewrite is shown to behave differently (so the refusal is
needed, not just conservative).  (The verifier observes every variable of the code given first,
so it is given the side without pellucid's names; the torch tests check the rewrites of Dynamo's
real bytecode, where the original has none.)
"""
import ast
import sys
import textwrap

import pytest

from pellucid.decompiler.copy_propagation import fold_temporaries, plain_temporaries
from pellucid.decompiler.unparse import unparse
from pellucid.verify import check_equivalent


def _folded(source):
    tree = ast.parse(textwrap.dedent(source))
    return unparse(fold_temporaries(tree))


def _function(source, name="f"):
    namespace = {}
    exec(compile(textwrap.dedent(source), "<case>", "exec"), _env(namespace), namespace)
    return namespace[name]


class _Log:
    """Side effects the cases' helpers record, in order."""

    def __init__(self):
        self.events = []


def _env(namespace):
    log = _Log()
    namespace["log"] = log

    def g(*args):
        log.events.append(("g", args))
        return len(log.events)

    def h(*args):
        log.events.append(("h", args))
        return -len(log.events)

    class Obj:
        def __getattr__(self, name):
            log.events.append(("getattr", name))
            return name

    def boom(x):
        log.events.append(("boom", x))
        if x:
            raise ValueError(x)
        return x

    def peek(name):
        value = sys._getframe(1).f_locals.get(name)
        log.events.append(("peek", name, value))
        return value

    namespace.update(g=g, h=h, Obj=Obj, obj=Obj(), boom=boom, peek=peek)
    return namespace


def _run(fn, args):
    try:
        result = ("ok", fn(*args))
    except Exception as exc:  # compared like a result
        result = ("raised", type(exc).__name__)
    return result, list(fn.__globals__["log"].events)


def _same_behaviour(before, after, calls):
    for args in calls:
        f1, f2 = _function(before), _function(after)
        assert _run(f1, args) == _run(f2, args), (before, after, args)
    if "__pellucid" not in after:
        # The verifier observes every variable of the code it is given first: the side
        # without pellucid's names is that one (as Dynamo's code is in use).
        verdict = check_equivalent(_function(after).__code__, _function(before).__code__)
        assert verdict.ok, verdict.reason


def _differs(before, after, calls):
    """``after`` (the rewrite the pass must not make) is observably different."""
    outcomes = []
    for args in calls:
        f1, f2 = _function(before), _function(after)
        outcomes.append(_run(f1, args) != _run(f2, args))
    assert any(outcomes)


APPLIES = [
    # a copy of a local nothing rebinds before the last use
    ("copy", """
     def f(x):
         __pellucid_t1 = x
         g()
         return __pellucid_t1
     """, """
     def f(x):
         g()
         return x""", [(1,)]),
    # a copy across a loop that does not bind the name
    ("copy across a loop", """
     def f(x, n):
         y = g(x)
         __pellucid_t1 = y
         for i in range(n):
             h(i)
         return __pellucid_t1
     """, """
     def f(x, n):
         y = g(x)
         for i in range(n):
             h(i)
         return y""", [(1, 3), (2, 0)]),
    # a walrus copy: the name holds the value from there on
    ("walrus copy", """
     def f(x):
         __pellucid_t1 = (y := g(x))
         h(y)
         return __pellucid_t1
     """, """
     def f(x):
         y = g(x)
         h(y)
         return y""", [(1,)]),
    # spilled call arguments written back as the call's arguments
    ("spilled arguments", """
     def f(x):
         k = g
         __pellucid_t1 = g(x)
         __pellucid_t2 = h(x)
         return k(__pellucid_t1, __pellucid_t2)
     """, """
     def f(x):
         k = g
         return k(g(x), h(x))""", [(1,)]),
    # the callee, a global, is read before the arguments either way
    ("spilled arguments of a global callee", """
     def f(x):
         __pellucid_t1 = g
         __pellucid_t2 = g(x)
         __pellucid_t3 = h(x)
         return __pellucid_t1(__pellucid_t2, __pellucid_t3)
     """, """
     def f(x):
         return g(g(x), h(x))""", [(1,)]),
    # ... but not across a call that could rebind it
    ("global callee read before a call", """
     def f(x):
         __pellucid_t1 = g
         h(x)
         return __pellucid_t1(x)
     """, """
     def f(x):
         __pellucid_t1 = g
         h(x)
         return __pellucid_t1(x)""", [(1,)]),
    # a statement between the values and the call: one tuple, unpacked into the call
    ("packed arguments", """
     def f(x):
         __pellucid_t1 = obj.a
         __pellucid_t2 = obj.b
         __pellucid_t3 = obj.c
         g('between')
         return h(x, __pellucid_t1, __pellucid_t2, __pellucid_t3)
     """, """
     def f(x):
         __pellucid_args = (obj.a, obj.b, obj.c)
         g('between')
         return h(x, *__pellucid_args)""", [(1,)]),
    # a result stored to a variable after deletions that cannot fail
    ("store moved up", """
     def f(x):
         u = x
         v = x
         __pellucid_t1 = g(x)
         del u
         del v
         y = __pellucid_t1
         return y
     """, """
     def f(x):
         u = x
         v = x
         y = g(x)
         del u, v
         return y""", [(1,)]),
    # an unused temporary: its value is still computed
    ("unused", """
     def f(x):
         __pellucid_t1 = g(x)
         __pellucid_t2 = [()]
         return x
     """, """
     def f(x):
         g(x)
         return x""", [(1,)]),
    # Dynamo's stack shuffle through fresh lists
    ("known lists", """
     def f(x, y):
         __pellucid_t6 = obj.graph_break
         __pellucid_t3 = [g(x)][0:1]
         __pellucid_t3.extend([y])
         (__pellucid_t7 := [__pellucid_t3])[0][0:0] = [h(__pellucid_t6)]
         __pellucid_t9 = [__pellucid_t7[0]]
         __pellucid_t10 = [[()][0]]
         __pellucid_t8 = __pellucid_t9[0]
         __pellucid_t8[1:] = [__pellucid_t8[2], __pellucid_t8[1]]
         __pellucid_t11 = g
         __pellucid_t12 = __pellucid_t9[-1]
         del __pellucid_t9[-1]
         return __pellucid_t11([], __pellucid_t9, *__pellucid_t12)
     """, None, [(1, 2), (3, 4)]),
]


@pytest.mark.parametrize("name,before,expected,calls", APPLIES, ids=[c[0] for c in APPLIES])
def test_rewrite_applies(name, before, expected, calls):
    after = _folded(before)
    if expected is not None:
        assert after == textwrap.dedent(expected).strip("\n")
    else:
        assert after.count("\n") < textwrap.dedent(before).strip("\n").count("\n") - 3
    _same_behaviour(before, after, calls)


# (name, source, the rewrite the pass must not make, calls)
REFUSED = [
    ("copy of a name rebound before the use", """
     def f(x):
         __pellucid_t1 = x
         x = g(x)
         return __pellucid_t1
     """, """
     def f(x):
         x = g(x)
         return x""", [(10,)]),
    ("copy of a name deleted before the use", """
     def f(x):
         __pellucid_t1 = x
         del x
         return __pellucid_t1
     """, """
     def f(x):
         del x
         return x""", [(1,)]),
    ("copy of a name rebound in a loop", """
     def f(x, n):
         __pellucid_t1 = x
         for i in range(n):
             g(__pellucid_t1)
             x = i
         return 0
     """, """
     def f(x, n):
         for i in range(n):
             g(x)
             x = i
         return 0""", [(1, 3)]),
    ("copy of a name that may be unbound", """
     def f(c):
         if c:
             y = 1
         __pellucid_t1 = y
         g()
         return __pellucid_t1
     """, """
     def f(c):
         if c:
             y = 1
         g()
         return y""", [(0,), (1,)]),
    ("value moved past a call", """
     def f(x):
         __pellucid_t1 = g(x)
         h(x)
         return __pellucid_t1
     """, """
     def f(x):
         h(x)
         return g(x)""", [(1,)]),
    # (peek reads its caller's variables, as a debugger or a profiler can)
    ("value moved past a store to a variable", """
     def f(x):
         y = 1
         __pellucid_t1 = peek('y')
         y = 2
         return h(y, __pellucid_t1)
     """, """
     def f(x):
         y = 1
         y = 2
         return h(y, peek('y'))""", [(1,)]),
    ("value moved into a conditional use", """
     def f(x, c):
         __pellucid_t1 = g(x)
         return c and __pellucid_t1
     """, """
     def f(x, c):
         return c and g(x)""", [(1, 0), (1, 1)]),
    ("value moved into a loop", """
     def f(x, n):
         __pellucid_t1 = g(x)
         for i in range(n):
             h(__pellucid_t1)
         return 0
     """, """
     def f(x, n):
         for i in range(n):
             h(g(x))
         return 0""", [(1, 2), (1, 0)]),
    ("value moved into a try", """
     def f(x):
         __pellucid_t1 = boom(x)
         try:
             h(__pellucid_t1)
         except Exception:
             return 'caught'
         return 'done'
     """, """
     def f(x):
         try:
             h(boom(x))
         except Exception:
             return 'caught'
         return 'done'""", [(0,), (1,)]),
    ("store moved up past a deletion that can fail", """
     def f(x, c):
         if c:
             u = 1
         __pellucid_t1 = g(x)
         del u
         y = __pellucid_t1
         return y
     """, None, [(1, 0), (1, 1)]),
    ("temporary read in a nested scope", """
     def f(x):
         __pellucid_t1 = x
         x = 5
         return (lambda: __pellucid_t1)()
     """, """
     def f(x):
         x = 5
         return (lambda: x)()""", [(1,)]),
    ("list still referred to when it reaches other code", """
     def f(x):
         __pellucid_t1 = [x]
         __pellucid_t2 = __pellucid_t1
         __pellucid_t3 = g(__pellucid_t1)
         __pellucid_t2.append(2)
         return h(__pellucid_t2, __pellucid_t3)
     """, """
     def f(x):
         __pellucid_t3 = g([x])
         return h([x, 2], __pellucid_t3)""", [(1,)]),
]


@pytest.mark.parametrize("name,before,naive,calls", REFUSED, ids=[c[0] for c in REFUSED])
def test_rewrite_refused(name, before, naive, calls):
    source = textwrap.dedent(before).strip("\n")
    after = _folded(source)
    if naive is not None:
        assert _folded(textwrap.dedent(naive).strip("\n")) != after
        assert textwrap.dedent(naive).strip("\n") != after
    _same_behaviour(source, after, calls)
    if naive is not None:
        _differs(source, textwrap.dedent(naive).strip("\n"), calls)


def test_consecutive_deletes_are_one_statement():
    source = "def f():\n    a = b = c = 1\n    del a\n    del b\n    del c\n    return 1"
    after = _folded(source)
    assert after.splitlines()[2].strip() == "del a, b, c"
    assert _function(source).__code__.co_code == _function(after).__code__.co_code


def test_plain_temporaries_turns_the_pass_off():
    source = "def f(x):\n    __pellucid_t1 = x\n    return __pellucid_t1"
    with plain_temporaries():
        assert _folded(source) == source
    assert _folded(source) == "def f(x):\n    return x"


def test_transformed_code_falls_back_to_the_plain_form(tmp_path):
    """A rewritten form the verifier refuses is not used: the form without the rewrites is
    built and checked instead, and it is what the file shows."""
    from pellucid.decompiler import copy_propagation
    from pellucid.dynamo import transformed_code

    def f(x):
        return g(x) + 1  # noqa: F821

    seen = []

    def verify(original, new, bindings):
        seen.append(copy_propagation.enabled())
        return (len(seen) > 1, "refused on purpose")

    written = {}
    t = transformed_code.build("0/0", f.__code__, f.__code__, str(tmp_path / "t.py"),
                               lambda p, text: written.__setitem__(p, text), {}, verify)
    assert seen == [True, False]
    assert t.replacement is not None and t.rejected is None
    assert "code that runs" in written[str(tmp_path / "t.py")]
