"""Construct cases: signatures, argument passing, calls, recursion.  Format: construct_cases.py."""

CASES = []


def case(id, src, calls, min_version=(3, 8), func="f", driver=None):
    CASES.append(dict(id=id, src=src, calls=calls, min_version=min_version, func=func,
                      driver=driver))


def kw(*args, **kwargs):
    return {"args": args, "kwargs": kwargs}


case("sig_positional_defaults", r"""
def f(a, b=2, c=3):
    return [a, b, c]
""", [(1,), (1, 5), (1, 5, 6), kw(1, c=9), kw(a=0, b=0), (), (1, 2, 3, 4), kw(1, d=4)])

case("sig_keyword_only", r"""
def f(a, *, b, c=10):
    return (a, b, c)
""", [kw(1, b=2), kw(1, b=2, c=3), kw(b=1, a=2), (1,), (1, 2)])

case("sig_positional_only", r"""
def f(a, b, /, c, *, d=4):
    return a - b + c * d
""", [(1, 2, 3), kw(1, 2, c=3, d=5), kw(1, 2, 3, d=0), kw(1, b=2, c=3), (1, 2)])

case("sig_positional_only_defaults", r"""
def f(a, b=5, /, c=6, *, d):
    return (a, b, c, d)
""", [kw(1, d=0), kw(1, 2, d=0), kw(1, 2, 3, d=4), kw(1, c=7, d=8), (1, 2, 3)])

case("sig_star_args", r"""
def f(*args):
    if not args:
        return "empty"
    return (len(args), args[0], args[-1], args)
""", [(), (1,), (1, 2, 3), kw(x=1)])

case("sig_star_kwargs", r"""
def f(**kwargs):
    return sorted(kwargs.items())
""", [(), kw(a=1, b=2), kw(z=0, **{"with space": 1}), (1,)])

case("sig_everything", r"""
def f(a, b=1, /, c=2, *args, d, e=5, **kwargs):
    return (a, b, c, args, d, e, sorted(kwargs.items()))
""", [kw(0, d=1), kw(0, 1, 2, 3, 4, d=5, e=6, g=7), kw(0, c=9, d=1, b=3), kw(0, d=1, a=2), (0,)])

case("sig_star_args_then_keyword_only", r"""
def f(*args, sep="-", end=""):
    return sep.join(str(a) for a in args) + end
""", [(), (1, 2, 3), kw(1, 2, sep="+", end="!"), kw(sep=":")])

case("sig_keyword_only_mixed_defaults", r"""
def f(*, a=1, b, c=3, d):
    return [a, b, c, d]
""", [kw(b=2, d=4), kw(d=0, c=0, b=0, a=0), kw(b=1), ()])

case("sig_nested_annotations", r"""
def f():
    def g(a: int, b: "str" = "x", *args: float, c: bool = True, **kw: "dict") -> list:
        return [a, b, args, c, kw]
    names = {}
    for key, value in g.__annotations__.items():
        names[key] = getattr(value, "__name__", value)
    return names, g(1), g.__defaults__, g.__kwdefaults__
""", [()])

case("sig_future_annotations", r"""
from __future__ import annotations

def f(x):
    def g(a: List[int], b: undefined_name = 1, *, c: x.y = 2) -> Dict[str, int]:
        return a
    return sorted(g.__annotations__.items()), g([x])
""", [(1,)])

case("sig_mutable_default_shared", r"""
def f(x):
    def g(a, *, b=x * 2, acc=[]):
        acc.append(a)
        return (a, b, len(acc))
    return [g(1), g(2, b=0), g(3), g(4, acc=[])]
""", [(1,), ("s",)])

case("sig_default_evaluation_order", r"""
def f():
    log = []
    def d(v):
        log.append(v)
        return v
    def g(a=d(1), b=d(2), *, c=d(3), e=d(4)):
        return a + b + c + e
    return list(log), g(), g(10, e=0)
""", [()])

case("sig_none_sentinel_default", r"""
def f(x=None, y=None):
    if x is None:
        x = []
    if y is not None:
        x.append(y)
    return x
""", [(), ([1],), kw(y=2), ([0], 5)])

case("sig_kwargs_named_like_positional_only", r"""
def f(a, /, **kw):
    return a, sorted(kw.items())
""", [(1,), kw(1, a=2, b=3), kw(a=1)])

case("sig_lambda_signature", r"""
def f(x):
    g = lambda a, b=2, *c, d=4, **e: (a, b, c, d, sorted(e.items()))
    h = lambda *, k: k * 2
    return [g(x), g(x, 1, 2, 3, d=0, z=9), h(k=x)]
""", [(1,), ("s",)])

case("sig_lambda_positional_only", r"""
def f(x):
    g = lambda a, /, b=3: a * b
    return g(x), g(x, 2), g(b=1, a=2) if x == 0 else None
""", [(2,), ("ab",), (0,)])

case("call_star_args_kwargs", r"""
def f(a, k):
    def g(*p, **q):
        return p, sorted(q.items())
    return g(*a, **k)
""", [((), {}), ((1, 2), {"x": 1}), ([3], {"y": 2, "z": 3}), (1, {}), ((), [1])])

case("call_mixed_star_and_keywords", r"""
def f(a, k):
    def g(*p, **q):
        return p, sorted(q.items())
    return [g(1, *a, x=2, **k), g(*a, 0, *a), g(**k, w=1), g(*a, *a, **k, **{"v": 5})]
""", [((), {}), ((1, 2), {"y": 3}), ([7], {"x": 1})])

case("call_forwarding_to_module_function", r"""
def target(a, b=0, *rest, key=None, **extra):
    return (a, b, rest, key, sorted(extra.items()))

def f(*args, **kwargs):
    return target(*args, **kwargs)
""", [(1,), (1, 2, 3, 4), kw(1, key="k", other=3), (), kw(b=1)])

case("call_evaluation_order", r"""
def f(n):
    log = []
    def rec(tag, value=None):
        log.append(tag)
        return value
    def g(*a, **k):
        log.append("call")
        return len(a) + len(k)
    result = rec("func", g)(rec("a1", 1), *rec("star", [n] * n), k=rec("kw", 2), **rec("dstar", {"z": n}))
    return result, log
""", [(0,), (2,)])

case("call_keyword_arguments_on_methods", r"""
def f(words, n):
    joined = "-".join(sorted(words, key=len, reverse=True))
    parts = joined.split(sep="-", maxsplit=n)
    d = dict(zip(words, range(len(words))), extra=n)
    return joined, parts, sorted(d.items()), "{a}{b}".format(b=n, a=len(words))
""", [(["aa", "b", "cccc"], 1), ([], 0), (["x"], -1)])

case("call_method_chain", r"""
def f(text):
    return text.strip().replace("a", "b", 1).upper().center(9, "*").encode(encoding="ascii", errors="replace")
""", [("  banana ",), ("",), ("\u00e9 a",), (3,)])

case("return_tuple_and_starred", r"""
def f(a, b):
    if a:
        return a, b
    rest = [b, b]
    return *rest, a
""", [(0, 1), (1, 2)])

case("recursion_factorial", r"""
def f(n):
    if n <= 1:
        return 1
    return n * f(n - 1)
""", [(0,), (1,), (5,), (20,)])

case("recursion_memo_default_dict", r"""
def f(n, memo=None):
    if memo is None:
        memo = {}
    if n in memo:
        return memo[n]
    if n < 2:
        result = n
    else:
        result = f(n - 1, memo) + f(n - 2, memo)
    memo[n] = result
    return result
""", [(0,), (1,), (10,), (60,)])

case("recursion_nested_mutual", r"""
def f(n):
    def is_even(k):
        return True if k == 0 else is_odd(k - 1)
    def is_odd(k):
        return False if k == 0 else is_even(k - 1)
    return is_even(n), is_odd(n)
""", [(0,), (1,), (7,), (10,)])

case("recursion_tree_sum", r"""
def f(tree):
    if isinstance(tree, list):
        total = 0
        for child in tree:
            total += f(child)
        return total
    return tree
""", [(1,), ([],), ([1, [2, [3, [4]]], 5],), ([1, "x"],)])

case("call_double_star_custom_mapping", r"""
import collections.abc

class Config(collections.abc.Mapping):
    def __init__(self, n):
        self._data = {"k%d" % i: i for i in range(n)}
    def __getitem__(self, key):
        return self._data[key]
    def __iter__(self):
        return iter(self._data)
    def __len__(self):
        return len(self._data)

def f(n):
    def g(*args, **kwargs):
        return args, sorted(kwargs.items())
    return g(*Config(n), **Config(n), extra=1)
""", [(0,), (2,)])

case("nested_function_defaults_from_arguments", r"""
def f(a, b=10):
    def g(x=a, *, y=b, z=a + b):
        return x, y, z
    a = "rebound"
    return g(), g(0), g(y=0), g.__defaults__, sorted(g.__kwdefaults__.items())
""", [(1,), (1, 2), ("s", "t")])
