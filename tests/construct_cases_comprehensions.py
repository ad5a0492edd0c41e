"""Construct cases: comprehensions, generator expressions, lambdas, assignment expressions.

Format: see construct_cases.py.
"""

CASES = []


def case(id, src, calls, min_version=(3, 8), func="f", driver=None):
    CASES.append(dict(id=id, src=src, calls=calls, min_version=min_version, func=func,
                      driver=driver))


case("listcomp_basic", r"""
def f(xs):
    return [x * 2 for x in xs]
""", [([],), ([1, 2, 3],), ("ab",), (None,)])

case("listcomp_multiple_filters", r"""
def f(xs):
    return [x for x in xs if x % 3 if x > 2], [x for x in xs if x % 2 == 0 or x < 0]
""", [([],), (list(range(-2, 10)),)])

case("listcomp_nested_fors", r"""
def f(n):
    return [(x, y) for x in range(n) for y in range(x) if (x + y) % 2]
""", [(0,), (1,), (5,)])

case("listcomp_filters_at_each_level", r"""
def f(words):
    return [ch for w in words if w for ch in w if ch not in "aeiou"]
""", [([],), (["hello", "", "sky"],)])

case("listcomp_nested_comprehension", r"""
def f(matrix):
    return [[row[i] for row in matrix] for i in range(len(matrix[0]))]
""", [([[1, 2, 3], [4, 5, 6]],), ([[1]],), ([],)])

case("setcomp_basic", r"""
def f(xs, k):
    return {x % k for x in xs}, {x for x in xs if x > k}
""", [([], 3), ([1, 2, 3, 4, 5, 6, 7], 3), ([1], 0)])

case("dictcomp_basic", r"""
def f(pairs):
    return {k: v for k, v in pairs if v}, {x: x ** 2 for x in range(len(pairs))}
""", [([],), ([("a", 1), ("b", 0), ("c", 3)],)])

case("dictcomp_duplicate_keys_and_conditional_values", r"""
def f(xs):
    return {k % 3: ("even" if k % 2 == 0 else "odd", k) for k in xs}
""", [([],), ([1, 2, 3, 4, 5, 6, 7],)])

case("genexp_reductions", r"""
def f(xs):
    return sum(x for x in xs), any(x > 2 for x in xs), all(x for x in xs), max((x for x in xs if x < 3), default=None), tuple(x - 1 for x in xs)
""", [([],), ([1, 2, 3],), ([0, 5],)])

case("genexp_reduction_over_a_boolean_iterable", r"""
def f(self_value, waiters, items):
    # 3.14 inlines any/all/tuple of a generator: the iterable's own jump (``or``) is on both
    # paths (asyncio.locks.Semaphore.locked)
    return self_value == 0 or any(not w for w in (waiters or ())), all(x for x in (items and items[1:]) or [1]), tuple(v for v in (waiters if items else ()))
""", [(0, None, []), (1, None, []), (1, [0, 1], [1, 2]), (1, [1], [0, 0]), (2, [], [5])])

case("genexp_is_lazy", r"""
def f(xs):
    log = []
    def seen(x):
        log.append(x)
        return x
    g = (seen(x) * 2 for x in xs)
    log.append("created")
    first = next(g, None)
    log.append("first")
    rest = list(g)
    return first, rest, log
""", [([],), ([1, 2, 3],)])

case("genexp_first_iterable_is_eager", r"""
def f(xs):
    try:
        g = (x for x in xs)
    except TypeError as e:
        return "eager error: " + type(e).__name__
    return list(g)
""", [([1],), (None,), ("ab",)])

case("comprehension_closure_variables", r"""
def f(xs, k):
    offset = k * 10
    scale = lambda v: v * k
    return [scale(x) + offset for x in xs], {x: [x + k for _ in range(2)] for x in xs}
""", [([], 1), ([1, 2], 3)])

case("comprehension_variable_does_not_leak", r"""
def f(xs):
    x = "outer"
    ys = [x for x in xs]
    zs = {x: 1 for x in xs}
    return x, ys, zs
""", [([],), ([1, 2],)])

case("comprehension_late_binding_lambdas", r"""
def f(n):
    late = [lambda: i for i in range(n)]
    bound = [lambda i=i: i for i in range(n)]
    return [g() for g in late], [g() for g in bound]
""", [(0,), (3,)])

case("comprehension_unpacking_targets", r"""
def f(rows):
    return [a * b for a, b in rows], [rest for _, *rest in rows], {k: v for (k, v) in rows}
""", [([],), ([(1, 2), (3, 4)],), ([(1, 2, 3)],)])

case("comprehension_raises_inside", r"""
def f(xs):
    return [10 // x for x in xs]
""", [([1, 2],), ([1, 0],), ([],)])

case("comprehension_params_shadow_builtins", r"""
def f(list, x):
    return [x for x in list], x, [list for list in range(2)], list
""", [([1, 2], "x"), ((), 0)])

case("comprehension_over_nested_generator", r"""
def f(items):
    return {name.strip().lower(): (int(v) if v.isdigit() else v) for name, v in (item.split("=", 1) for item in items if "=" in item)}
""", [([],), ([" A =1", "b=x", "junk", "C= 22 "],)])

case("comprehension_walrus_binds_enclosing", r"""
def f(xs):
    ys = [y for x in xs if (y := x * 2) > 3]
    try:
        return ys, y
    except NameError as e:
        return ys, type(e).__name__
""", [([],), ([1, 2, 3],)])

case("comprehension_walrus_accumulator", r"""
def f(xs):
    total = 0
    running = [(total := total + x) for x in xs]
    return running, total, (last := xs[-1] if xs else None), last
""", [([],), ([1, 2, 3],)])

case("comprehension_walrus_in_condition_with_side_effects", r"""
def f(n):
    calls = []
    def source():
        calls.append("source")
        return range(n)
    result = {i: sq for i in source() if (sq := i * i) % 2 == 0}
    return result, calls, sq if n else None
""", [(0,), (5,)])

case("walrus_in_if_and_elif", r"""
def f(d, key):
    if (value := d.get(key)) is not None:
        return ("found", value)
    elif (n := len(d)) > 2:
        return ("big", n)
    return ("missing", value, n)
""", [({"a": 1}, "a"), ({"a": 1, "b": 2, "c": 3}, "z"), ({}, "z")])

case("walrus_in_while", r"""
def f(data, size):
    chunks = []
    i = 0
    while chunk := data[i:i + size]:
        chunks.append(chunk)
        i += size
    return chunks
""", [("", 2), ("abcde", 2), ([1, 2, 3], 3)])

case("walrus_in_call_arguments_and_nested", r"""
def f(x):
    r = max(a := x + 1, b := a * 2)
    if (c := (d := x) > 0) and d:
        return r, a, b, c, d
    return "nonpositive", c
""", [(0,), (3,)])

case("lambda_closures_and_composition", r"""
def f(k):
    add = lambda x: x + k
    compose = lambda g, h: lambda x: g(h(x))
    double = lambda x: x * 2
    return add(1), compose(add, double)(3), compose(double, add)(3)
""", [(0,), (10,)])

case("lambda_as_key_map_filter", r"""
def f(words):
    return sorted(words, key=lambda w: (-len(w), w)), list(map(lambda w: w.upper() if len(w) > 2 else w, words)), list(filter(lambda w: w, words))
""", [([],), (["bb", "a", "", "ccc", "aa"],)])

case("lambda_defaults_capture_loop_values", r"""
def f(n):
    fs = []
    for i in range(n):
        fs.append(lambda x, i=i, *, scale=n: (x + i) * scale)
    return [g(1) for g in fs]
""", [(0,), (3,)])

case("lambda_returning_lambda_with_varargs", r"""
def f(*base):
    maker = lambda *a, **k: lambda *b: (a + b, sorted(k))
    return maker(*base, z=1)(9)
""", [(), (1, 2)])

case("lambda_with_side_effect_expression", r"""
def f(n):
    state = {"count": 0}
    bump = lambda: state.__setitem__("count", state["count"] + 1) or state["count"]
    return [bump() for _ in range(n)], state
""", [(0,), (3,)])

case("genexp_returned_closes_over_arguments", r"""
def drive(f, *args):
    return list(f(*args))

def f(xs, k):
    return (x * k for x in xs if x)
""", [([], 2), ([0, 1, 2], 3), ([1], None)], driver="drive")

# ``a or (b and c)`` as a filter: the nested ``and`` folds first; 3.12+ gives each way the
# condition fails its own ``continue`` jump (enum.EnumType.__new__ on 3.13).
case("listcomp_filter_or_of_and", r"""
def f(order, m, names):
    tag = lambda o: (o, len(m))  # a cell: on 3.13 the fallback cannot take over
    return [tag(o) for o in order if o not in m or o in m and o in names]
""", [([], {}, ()), ([1, 2, 3], {1: 0, 2: 0}, (2,)), ([1, [2]], {1: 0}, ())])

# enum.EnumType.__new__: a filter that is an ``or`` of an ``and`` group (and the other way
# round); 3.12+ inlines the loop, where each failing test jumps back on its own.
case("listcomp_filter_with_nested_groups", r"""
def f(xs, m, n):
    return ([o for o in xs if o not in m or (o in m and o in n)],
            [o for o in xs if (o in m and o in n) or o > 2],
            [o for o in xs if (o in m or o in n) and (o > 2 or o < -2)])
""", [([], [], []), ([1, 2, 3, -3, 4], [1, 2, -3], [2, 4, -3]), ([1], None, []), ([1, "s"], [], [])])
