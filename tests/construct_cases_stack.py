"""Construct cases: values the bytecode keeps on the stack and uses twice (``COPY``/``DUP_TOP``)
or across a branch -- each must still be evaluated once, in its original order.

The compiler idioms behind them (chained comparisons, augmented assignment on attributes and
subscripts, ``a = b = v``, walrus, conditional expressions whose ``return`` 3.10+ copies into
both arms) are where the decompiler's handling of duplicated and live stack values shows; the
helpers log every evaluation so a duplicated or reordered one changes the result.

Format: see construct_cases.py.
"""

CASES = []


def case(id, src, calls, min_version=(3, 8), func="f", driver=None):
    CASES.append(dict(id=id, src=src, calls=calls, min_version=min_version, func=func,
                      driver=driver))


_LOG = r"""
def v(log, x):
    log.append(x)
    return x

def w(log, x, tag):
    log.append(tag)
    return x
"""

case("stack_chained_compare_call_middle", _LOG + r"""
def f(log, a, b, c):
    if v(log, a) < v(log, b) <= v(log, c):
        log.append("in")
    return v(log, a) < v(log, b) < v(log, c), log
""", [([], 1, 2, 3), ([], 3, 2, 1), ([], 1, 3, 2)])

case("stack_augassign_call_operands", _LOG + r"""
class Box:
    def __init__(self):
        self.n = 0
        self.d = {"k": 1}

def f(log):
    b = Box()
    boxes = [b]
    w(log, boxes, "boxes")[0].n += v(log, 2)
    w(log, b.d, "d")[v(log, "k")] += v(log, 3)
    return b.n, b.d, log
""", [([],)])

case("stack_chain_assign_one_object", r"""
def f(x):
    a = b = [x]
    a.append(1)
    c = (d := [x, x])
    d.append(2)
    return a, b, a is b, c is d, c
""", [(1,), ("s",)])

case("stack_ifexp_in_returned_tuple_order", _LOG + r"""
def f(log, x):
    return (v(log, "a"), v(log, "b") if v(log, x) else v(log, "c"), v(log, "d")), log
""", [([], 0), ([], 1)])

case("stack_ifexp_in_call_args_order", _LOG + r"""
def f(log, x):
    r = [v(log, 1), v(log, 2) if x else v(log, 3)]
    return max(v(log, 4), v(log, 5) if x > 1 else v(log, 6)), r, log
""", [([], 0), ([], 1), ([], 2)])

case("stack_walrus_in_comparison_chain", _LOG + r"""
def f(log, xs):
    out = []
    for x in xs:
        if 0 < (y := v(log, x * 2)) < 10:
            out.append(y)
    return out, log
""", [([], [1, 3, 7]), ([], [])])
