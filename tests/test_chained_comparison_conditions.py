"""Chained comparisons as operands of ``and``/``or`` conditions, in every statement that tests.

3.10+ end ``a <= x <= b or c`` with the last comparison jumping over the ``POP_TOP`` the
earlier ones go to when false (both then reach ``c``'s test).  That test was not taken as one
more operand: ``if`` read as nested ``if``s, and ``while`` (whose guard and latch both re-test
the condition) sent the structurer round the loop until it gave up or ran out of stack -- the
fallback, a state machine, for ordinary code such as PyYAML's ``Scanner.scan_anchor``.

Each generated function must decompile to a structured form (no fallback marker) that the
verifier proves, and behave like the original over a grid of inputs.
"""
import builtins
import itertools
import sys
import types

import pytest

from pellucid.decompiler.api import checked_recompile
from pellucid.decompiler.fallback import MARKER
from pellucid.decompiler.recompile import recompile_full

CONDITIONS = [
    "lo <= x <= hi or flag",
    "flag or lo <= x <= hi",
    "lo <= x <= hi and flag",
    "lo <= x <= hi or mid < x < hi or x == 7",
    "lo <= x <= hi or flag or mid <= x < hi",
    "(lo <= x <= hi or flag) and x != mid",
    "not lo < x < hi or flag",
    "lo < x < mid < hi or flag",
    "lo <= x <= hi or flag and x > mid",
    "lo <= x <= mid or mid < x <= hi and flag",
]

SHAPES = {
    "if": """
def f(x, lo, mid, hi, flag):
    out = []
    if {c}:
        out.append(1)
    out.append(2)
    return out
""",
    "if_else": """
def f(x, lo, mid, hi, flag):
    if {c}:
        y = 'yes'
    else:
        y = 'no'
    return y
""",
    "elif": """
def f(x, lo, mid, hi, flag):
    if x == 0:
        return 'zero'
    elif {c}:
        return 'in'
    return 'out'
""",
    "while": """
def f(x, lo, mid, hi, flag):
    n = 0
    while {c}:
        n += 1
        x += 1
        if n > 12:
            return 'limit', x
    return n, x
""",
    "while_else_break": """
def f(x, lo, mid, hi, flag):
    n = 0
    while {c}:
        n += 1
        x += 2
        if x == 9:
            break
        if n > 12:
            return 'limit', x
    else:
        n = -n
    return n, x
""",
    "for_if_continue": """
def f(x, lo, mid, hi, flag):
    out = []
    for x in range(x, x + 6):
        if {c}:
            continue
        out.append(x)
    return out
""",
    "value": """
def f(x, lo, mid, hi, flag):
    v = {c}
    return v
""",
    "return": """
def f(x, lo, mid, hi, flag):
    return {c}
""",
    "ternary": """
def f(x, lo, mid, hi, flag):
    return 'a' if {c} else 'b'
""",
    "comprehension": """
def f(x, lo, mid, hi, flag):
    return [x for x in range(x - 3, x + 3) if {c}]
""",
    "assert": """
def f(x, lo, mid, hi, flag):
    try:
        assert {c}, x
    except AssertionError as e:
        return 'failed', e.args
    return 'ok'
""",
}

INPUTS = [(x, lo, 4, hi, flag) for x, lo, hi, flag in itertools.product(
    (-1, 0, 2, 4, 7, 9, 12), (0, 3), (6, 10), (False, True, [], [0]))]


def _run(func, args):
    try:
        return ("ok", func(*args))
    except Exception as exc:  # a behaviour to compare like any other
        return ("raised", type(exc).__name__, str(exc))


# Up to 3.11 ``v = (lo <= x <= hi or flag) and ...`` keeps the chain's value and tests it again
# (bool() of its first comparison runs twice when it is false): the structurer read the chain as
# a test (bool() once), which the verifier refused (fallback), until and/or values were read once
# (the conditional expression whose arms share a tail, value_chains): value-5 and return-5.


CASES = ["%s-%d" % (shape, i) for shape in SHAPES for i in range(len(CONDITIONS))]


@pytest.mark.parametrize("case_id", CASES)
def test_chained_comparison_in_condition(case_id):
    shape, i = case_id.rsplit("-", 1)
    src = SHAPES[shape].format(c=CONDITIONS[int(i)])
    ns = {"__name__": "chain_case", "__builtins__": builtins}
    exec(compile(src, "<%s>" % case_id, "exec", dont_inherit=True), ns)
    func = ns["f"]
    checked = checked_recompile(func.__code__, lambda: recompile_full(
        func.__code__, None, func.__qualname__, write=False))
    first = checked.attempts[0]
    assert first.form == "structured"
    assert first.ok, "structured form not verified: %s\n%s" % (first.reason, src)
    assert MARKER not in checked.result.source, "fell back:\n" + checked.result.source
    glob = dict(ns)
    glob.update(checked.result.bindings)
    new = types.FunctionType(checked.result.code, glob, "f")
    for args in INPUTS:
        assert _run(new, args) == _run(func, args), args


@pytest.mark.skipif(sys.version_info < (3, 10), reason="the jump over the cleanup is 3.10+")
@pytest.mark.parametrize("shape", ["if", "while"])
def test_chained_comparison_or_reads_as_one_condition(shape):
    """Not nested ``if``s, nor an ``if`` around a ``while True``: one test, written once."""
    src = SHAPES[shape].format(c=CONDITIONS[0])
    ns = {"__name__": "chain_case", "__builtins__": builtins}
    exec(compile(src, "<readable>", "exec", dont_inherit=True), ns)
    result = recompile_full(ns["f"].__code__, None, "f", write=False)
    assert result.source.count("lo <= x <= hi or flag") == 1, result.source
    assert ("while lo <= x <= hi or flag:" in result.source) == (shape == "while"), result.source
