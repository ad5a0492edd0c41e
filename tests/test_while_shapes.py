"""``while`` loops come back as ``while <test>:``, on every version.

3.10+ compile ``while c: body`` as a guard ``if c:`` around a loop that re-tests ``c`` at its
end; where the re-test shared a block with the body's last statement (the usual case), the
decompiler wrote ``if c: while True: body; if c: continue; break``: equivalent, compiled to
the same bytecode, and unreadable.  Each case here must decompile to a ``while`` whose test is
the one written, and behave the same after the round trip.
"""
import ast
import textwrap

import pytest

import pellucid

CASES = {
    "plain_name": ("""
        def f(x):
            while x:
                x -= 1
            return x
        """, "x", [(0,), (3,)]),
    "compare_then_call": ("""
        def f(x):
            out = []
            while x > 0:
                x -= 1
                out.append(x)
            return out
        """, "x > 0", [(0,), (4,)]),
    "and_condition": ("""
        def f(x, y):
            n = 0
            while x > n and y:
                n += 1
            return n
        """, "x > n and y", [(3, 1), (3, 0), (0, 1)]),
    "or_condition_at_function_end": ("""
        def f(xs):
            while xs or len(xs) > 3:
                xs.pop()
        """, "xs or len(xs) > 3", [([],), ([1, 2, 3],)]),
    "chained_comparison": ("""
        def f(a, b, d):
            n = 0
            while a < b < 10 < d:
                n += 1
                a += 2
            return n
        """, "a < b < 10 < d", [(1, 5, 11), (6, 5, 11), (1, 5, 9), (-5, 5, 20)]),
    "chained_comparison_unbound_middle": ("""
        def f(a, b, d, bind):
            if bind:
                c = 5
            n = 0
            while a < b < c < d:
                n += 1
                a += 3
            return n
        """, "a < b < c < d", [(1, 0, 9, False), (1, 2, 9, True), (1, 2, 3, True), (-9, 9, 9, True)]),
    "walrus_test": ("""
        def f(xs):
            out = []
            while (n := len(xs)) > 1:
                out.append(xs.pop() * n)
            return out
        """, "(n := len(xs)) > 1", [([],), ([1, 2, 3],)]),
    "in_finally": ("""
        def f(a):
            n = 0
            try:
                n += 1
            finally:
                while a > 0:
                    a -= 1
                    n += 1
            return n
        """, "a > 0", [(0,), (3,), ("x",)]),
    "break_then_code_after": ("""
        def f(xs, limit):
            n = 0
            while xs:
                v = xs.pop()
                if v > limit:
                    break
                n += v
            if n == limit:
                n = -n
            return n
        """, "xs", [([], 0), ([1, 2, 3], 2), ([5, 1], 6), ([1, 1], 2)]),
    "nested_in_for": ("""
        def f(rows):
            total = 0
            for r in rows:
                while r > 1:
                    r //= 2
                    total += 1
            return total
        """, "r > 1", [([],), ([1, 8, 5],)]),
}


def _run(fn, args):
    try:
        return ("ok", fn(*[list(a) if isinstance(a, list) else a for a in args]))
    except Exception as exc:  # the exception type is part of the behaviour compared
        return ("raised", type(exc).__name__)


@pytest.mark.parametrize("name", sorted(CASES))
def test_while_is_written_as_while(name):
    src, test, calls = CASES[name]
    namespace = {}
    exec(compile(textwrap.dedent(src), "<%s>" % name, "exec"), namespace)
    fn = namespace["f"]
    out = pellucid.decompile(fn)
    loops = [n for n in ast.walk(ast.parse(out)) if isinstance(n, ast.While)]
    assert len(loops) == 1, out
    assert ast.dump(loops[0].test) == ast.dump(ast.parse(test, mode="eval").body), out
    expected = [_run(fn, args) for args in calls]
    fn.__code__ = pellucid.recompile(fn)
    assert [_run(fn, args) for args in calls] == expected
