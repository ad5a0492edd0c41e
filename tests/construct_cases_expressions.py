"""Construct cases: expressions -- f-strings, comparisons, boolean logic, operators, constants,
slicing, augmented assignment, unpacking, del, evaluation order.

Format: see construct_cases.py.
"""

CASES = []


def case(id, src, calls, min_version=(3, 8), func="f", driver=None):
    CASES.append(dict(id=id, src=src, calls=calls, min_version=min_version, func=func,
                      driver=driver))


# ----------------------------------------------------------------------------- f-strings

case("fstring_basic", r"""
def f(name, n):
    return f"hello {name}, you have {n} item{'s' if n != 1 else ''} {{literal}}"
""", [("bob", 1), ("ann", 3)])

case("fstring_conversions", r"""
def f(s):
    return [f"{s!r}", f"{s!s}", f"{s!a}", f"{s}", f"{s!r:>12}", f"{s!a:*<14}"]
""", [("plain",), ("\u00fcn\u00ef",), ("quote'\"",), (5,)])

case("fstring_format_specs", r"""
def f(x, n):
    return [f"{x:8.3f}", f"{x:<10.2e}", f"{n:,}", f"{n:#x}", f"{n:08b}", f"{n:+d}", f"{x:%}", f"{'mid':^9}", f"{n:_>6}"]
""", [(3.14159, 1234567), (-0.5, -42), (1.0, "s")])

case("fstring_nested_format_spec", r"""
def f(x, width, precision, align):
    return f"{x:{align}{width}.{precision}f}|", f"{x:{'>' if width > 8 else '<'}{width}}"
""", [(3.14159, 10, 2, "^"), (2.5, 4, 0, "<")])

case("fstring_expressions_inside", r"""
def f(d, items):
    return f"{d['k'] + 1} {len(items)} {items[-1] if items else None} {d.get('z', 'dflt')!r} {sum(i * i for i in items)} {(lambda v: v * 2)(len(d))}"
""", [({"k": 1}, []), ({"k": 2, "z": "v"}, [1, 2, 3]), ({}, [])])

case("fstring_format_protocol", r"""
class Money:
    def __init__(self, cents):
        self.cents = cents
    def __format__(self, spec):
        return "<" + spec + ":" + str(self.cents) + ">"
    def __str__(self):
        return "str"
    def __repr__(self):
        return "repr"

def f(c):
    m = Money(c)
    return f"{m}", f"{m:usd}", f"{m!s}", f"{m!r:>6}", format(m, "x"), f"{m:{c}}", f"{m:{c}.{c}}"
""", [(5,), (120,)])

case("fstring_implicit_concatenation_and_multiline", r"""
def f(a, b):
    s = (f"{a}"
         "-plain-"
         f"{b!r}"
         'tail')
    t = f'''{a}
{b}\t{a!s:>3}'''
    return s, t, f"" + f"{a}" "" f"{{}}"
""", [(1, "x"), ("\u00e9", None)])

case("string_percent_and_format_methods", r"""
def f(name, n, x):
    return "%s has %d items (%.2f%%)" % (name, n, x), "%(a)s-%(b)r" % {"a": name, "b": n}, "{0}/{1:>6}/{name}".format(n, x, name=name), "%5s|%-5s|" % (name, n)
""", [("ann", 3, 0.5), ("b", -1, 12.3456), ("c", "x", 1.0)])

# ----------------------------------------------------------------------------- comparisons

case("chained_comparisons", r"""
def f(a, b, c):
    return [a < b < c, a < b > c, a == b != c, a <= b >= c, a < b < c < 10, not a < b, (a < b) < c, a is b is not c, a in [b, c] not in [[]]]
""", [(1, 2, 3), (3, 2, 1), (0, 0, 0), (1, 1, 2), (5, 7, 6)])

case("chained_comparison_side_effects", r"""
def f(a, b, c):
    log = []
    def v(tag, x):
        log.append(tag)
        return x
    r1 = v("a", a) < v("b", b) < v("c", c)
    r2 = v("a", a) == v("b", b) == v("c", c) == v("d", 0)
    return r1, r2, log
""", [(1, 2, 3), (3, 2, 1), (0, 0, 0), (1, 1, 2)])

case("chained_comparison_in_conditions", r"""
def f(x, lo, hi):
    if lo <= x < hi:
        return "in"
    elif x < lo < hi:
        return "below"
    while lo < x <= hi + 3:
        x -= 1
    return x
""", [(5, 0, 10), (-1, 0, 10), (12, 0, 10), (20, 0, 10), (1, 5, 2)])

# 3.10+ copies a small exit (``return None``) into the cleanup that drops a chained comparison's
# duplicated operand, so the first tests and the last one jump to different copies.  Read as two
# targets, the middle operand was loaded before the first test ran (UnboundLocalError below when
# ``a < b`` is false and ``c`` unbound) and again, as a statement, on the short-circuit path.
case("chained_comparison_four_operands_if_copied_exit", r"""
record = []

def f(a, b, d, bind):
    if bind:
        c = 5
    if a < b < c < d:
        record.append("in")

def drive(func, *args):
    del record[:]
    return func(*args), list(record)
""", [(1, 0, 9, False), (1, 2, 9, True), (1, 2, 3, True), (1, 9, 9, True), (1, 2, 9, False)],
     driver="drive")

case("chained_comparison_four_operands_while_copied_exit", r"""
def f(a, b, d, bind):
    if bind:
        c = 5
    n = 0
    while a < b < c < d:
        n += 1
        a += 3
    return n
""", [(1, 0, 9, False), (1, 2, 9, True), (1, 2, 3, True), (-9, 9, 9, True), (1, 2, 9, False)])

case("chained_comparison_values_copied_tails", r"""
def f(a, b, c, d):
    x = a < b < c < d
    return x

def g(a, b, c, d):
    return a < b < c < d

def h(a, b, c):
    return a < b < c

def k(a, b, c):
    y = a == b != c
    return y

def m(c):
    return (0 <= c <= 5) or (7 <= c <= 9)

def run(*args):
    return f(*args), g(*args), h(*args[:3]), k(*args[:3]), m(args[0]), m(args[3])
""", [(1, 2, 3, 4), (1, 2, 3, 0), (1, 2, 0, 4), (2, 1, 3, 4), (1, 1, 2, 2), (1, "x", 2, 3), (-1, 2, 3, 8)], func="run")

case("comparison_operators_all", r"""
def f(a, b):
    return [a == b, a != b, a < b, a <= b, a > b, a >= b]
""", [(1, 2), (2, 2), ("b", "a"), ((1, 2), (1, 3)), (1, "x")])

case("identity_and_membership", r"""
def f(x, container):
    return [x is None, x is not None, x in container, x not in container, not x in container, container is container, (x in "abc") if isinstance(x, str) else None]
""", [(None, []), (1, [1, 2]), ("b", "xbx"), ("z", {"z": 1}), (3, (1, 2)), (1, 5)])

case("custom_comparison_and_contains", r"""
class Bag:
    def __init__(self, items):
        self.items = items
        self.log = []
    def __contains__(self, x):
        self.log.append(("contains", x))
        return x in self.items
    def __eq__(self, other):
        self.log.append("eq")
        return isinstance(other, Bag) and other.items == self.items
    def __lt__(self, other):
        self.log.append("lt")
        return len(self.items) < len(other.items)
    __hash__ = None

def f(a, b):
    x, y = Bag(a), Bag(b)
    r = [1 in x, 2 not in x, x == y, x != y, x < y, y > x]
    return r, x.log, y.log
""", [([1], [1]), ([2, 3], [1])])

# ----------------------------------------------------------------------------- boolean logic

case("and_or_return_operands", r"""
def f(a, b):
    return [a and b, a or b, a and b or "c", a or b and "c", (a or b) and "d", not a or b, a and not b]
""", [(0, ""), (0, "x"), (1, ""), ([1], [2]), (None, 0)])

case("and_or_nested_conditions", r"""
def f(a, b, c, d):
    out = []
    if (a or b) and (c or d):
        out.append(1)
    if a and b or c and d:
        out.append(2)
    if not (a and (b or (c and not d))):
        out.append(3)
    while a and not out:
        out.append(4)
    return out
""", [(a, b, c, d) for a in (0, 1) for b in (0, 1) for c in (0, 1) for d in (0, 1)])

case("and_or_short_circuit_side_effects", r"""
def f(a, b, c):
    log = []
    def t(tag, v):
        log.append(tag)
        return v
    x = t("a", a) and t("b", b) or t("c", c)
    y = t("a", a) or (t("b", b) and t("c", c))
    return x, y, log
""", [(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)])

case("boolean_not_forms", r"""
def f(x):
    a = not x
    if not x:
        b = "falsy"
    else:
        b = "truthy"
    c = not (x and x > 1)
    d = [not v for v in (x, not x)]
    return a, b, c, d
""", [(0,), (1,), (5,)])

case("conditional_expressions", r"""
def f(x):
    sign = "neg" if x < 0 else "zero" if x == 0 else "pos"
    parity = ("even" if x % 2 == 0 else "odd") if isinstance(x, int) else None
    return sign, parity, (x if x else -1) + 1, [x, "y"][0 if x else 1]
""", [(-3,), (0,), (4,), (2.5,)])

case("conditional_expression_side_effects", r"""
def f(c):
    log = []
    def t(tag):
        log.append(tag)
        return tag
    r = t("then") if t("cond") and c else t("else")
    return r, log
""", [(0,), (1,)])

# ----------------------------------------------------------------------------- operators

case("binary_operators_int", r"""
def f(a, b):
    return [a + b, a - b, a * b, a / b, a // b, a % b, a ** 2, a << 2, a >> 1, a & b, a | b, a ^ b, b ** -1]
""", [(7, 2), (-7, 3), (0, 5), (1, 0)])

case("binary_operators_float_complex_sequences", r"""
def f(x, z):
    return [x + 0.5, x * 2.25, x / 4, x // 0.5, x % 0.75, -x ** 0.5 if x >= 0 else None, z * 1j, z + (2 - 3j), abs(z), "ab" * 2, [0] * 3, (1,) + (2,)]
""", [(2.0, 3), (-1.5, 1j)])

case("matmul_operator", r"""
class M:
    def __init__(self, v):
        self.v = v
    def __matmul__(self, other):
        return M(("@", self.v, other.v if isinstance(other, M) else other))
    def __rmatmul__(self, other):
        return M(("r@", other, self.v))
    def __imatmul__(self, other):
        self.v = ("i@", self.v, other.v)
        return self

def f(a, b):
    x, y = M(a), M(b)
    r1 = (x @ y).v
    r2 = (a @ y).v
    x @= y
    r3 = (x @ y @ 5).v
    return r1, r2, x.v, r3
""", [(1, 2), ("p", "q")])

case("unary_operators", r"""
def f(x):
    return [-x, +x, ~x, not x, - -x, -(-x), ~~x, not not x, -x ** 2, (-x) ** 2, +-x]
""", [(0,), (3,), (-5,), (1.5,)])

case("operator_precedence_and_parentheses", r"""
def f(a, b, c):
    return [a - (b - c), (a - b) - c, a - b - c, a ** b ** c, (a ** b) ** c, -a ** b, (-a) ** b,
            a * (b + c), a * b + c, (a + b) * c, a / (b * c), a / b * c, a % (b % c), a // b * c,
            a << b + c, (a << b) + c, a | b & c, (a | b) & c, a ^ b | c, not a == b, (not a) == b,
            a if b else c if a else b, (a if b else c) if a else b, -(a + b), ~(a | b), (a, b)[a > b]]
""", [(2, 3, 2), (5, 1, 2), (3, 2, 3)])

case("custom_operators_and_reflection", r"""
class V:
    def __init__(self, name, log):
        self.name = name
        self.log = log
    def __add__(self, other):
        self.log.append(("add", self.name))
        return NotImplemented
    def __radd__(self, other):
        self.log.append(("radd", self.name))
        return "radd:" + self.name
    def __sub__(self, other):
        self.log.append(("sub", self.name))
        return self.name + "-" + getattr(other, "name", str(other))
    def __neg__(self):
        self.log.append(("neg", self.name))
        return "neg:" + self.name
    def __invert__(self):
        return "inv:" + self.name
    def __bool__(self):
        self.log.append(("bool", self.name))
        return len(self.name) > 1

def f(n1, n2, same_type_add):
    log = []
    a, b = V(n1, log), V(n2, log)
    results = ["s" + a, a - b, 1 + b, -a, ~b, not a, bool(a and b), bool(a or b)]
    if same_type_add:
        results.append(a + b)
    return results, log
""", [("x", "yy", False), ("long", "s", False), ("x", "y", True)])

# ----------------------------------------------------------------------------- augmented assignment

case("augmented_assignment_names", r"""
def f(x, y):
    a = x
    a += y
    b = x
    b -= y
    c = x
    c *= y
    d = x
    d //= y
    e = x
    e %= y
    g = x
    g **= 2
    h = x
    h <<= 1
    i = x
    i >>= 1
    j = x
    j &= y
    k = x
    k |= y
    m = x
    m ^= y
    n = x
    n /= y
    return [a, b, c, d, e, g, h, i, j, k, m, n]
""", [(10, 3), (-7, 2), (5, 0)])

case("augmented_assignment_attributes", r"""
class Obj:
    def __init__(self):
        self.count = 0
        self.name = "n"
        self.items = []

def f(k):
    o = Obj()
    o.count += k
    o.count *= 2
    o.name += "!" * k
    o.items += [k]
    o.items *= 2
    if k < 0:
        o.missing += 1
    return o.count, o.name, o.items
""", [(0,), (2,), (-1,)])

case("augmented_assignment_subscripts_order", r"""
class Logged:
    def __init__(self, log):
        self.data = {}
        self.log = log
    def __getitem__(self, key):
        self.log.append(("get", key))
        return self.data.get(key, 0)
    def __setitem__(self, key, value):
        self.log.append(("set", key, value))
        self.data[key] = value

def f(k, v):
    log = []
    def key(x):
        log.append(("key", x))
        return x
    def val(x):
        log.append(("val", x))
        return x
    c = Logged(log)
    c[key(k)] += val(v)
    c[key(k)] *= val(3)
    lst = [1, 2, 3]
    lst[k] -= v
    d = {"x": [1]}
    d["x"][0] += 5
    return log, lst, d
""", [(0, 1), (2, 10), (5, 1)])

case("augmented_assignment_slices", r"""
def f(xs, ys, n):
    a = list(xs)
    a[1:3] += ys
    c = list(xs)
    c[:] += [0]
    s = "abcdef"
    t = s
    t += s[::-2]
    b = list(xs)
    b[::2] *= n
    return a, b, c, t, s
""", [([1, 2, 3, 4], [9], 1), ([], [], 1), ([1, 2, 3, 4], [9], 2)])

case("augmented_assignment_aliasing", r"""
def f(xs):
    a = b = list(xs)
    a += [1]
    c = d = tuple(xs)
    c += (1,)
    e = g = list(xs)
    e = e + [1]
    return a, b, c, d, e, g, a is b, c is d
""", [([],), ([5, 6],)])

# ----------------------------------------------------------------------------- constants

case("constants_numbers", r"""
def f():
    return [0, -1, 1_000_000, 2 ** 100, 0x1F, 0o17, 0b101, 1.5, -0.0, 0.0, 1e300, 1e-300, 2.5e-3, float("inf"), 3j, 1 + 2j, -2.5j, 10 ** 20 * 1.0, 0.1 + 0.2, 1e16, 123456789.123456789]
""", [()])

case("constants_strings_escapes", r"""
def f():
    return ["", "plain", 'single\'quote', "double\"quote", "tab\there", "new\nline", "back\\slash", "\x00\x7f\u00e9\u20ac\U0001F600", "\N{GREEK SMALL LETTER ALPHA}", r"raw\d+", '''triple 'quoted' "mixed"''', "\r\x0b\x0c", "'\"'", "a" "b" 'c']
""", [()])

case("constants_bytes", r"""
def f(x):
    data = b"\x00\xffab\n\\'\""
    return [data, b"", bytes(3), data[1], data[2:4], b"A" + bytes([x]), x in b"\x01\x02", bytearray(b"xy") + b"z", rb"\d"]
""", [(1,), (65,), (256,)])

case("constants_none_ellipsis_tuple_frozenset", r"""
def f(x):
    t = (1, ("nested", None), ..., True, False, 2.5)
    return [t, x in {1, 2, 3}, x in frozenset({"a", "b"}), x not in (None, ...), ... is Ellipsis, None, (), ((),), frozenset(), x in {"a": 1}]
""", [(1,), ("a",), (None,), (Ellipsis,), ([],)])

case("constants_nested_containers", r"""
def f():
    return (tuple(range(3)), [1, [2, [3, [4]]]], {"a": (1, 2), "b": {"c": [None]}}, {1, 2, 3}, ("x",) * 3, [[]] * 2, {"k": ()}, (1, (2, (3, ()))))
""", [()])

case("big_integers_and_builtins", r"""
def f(n):
    big = 2 ** n
    return big, big.bit_length(), divmod(big, 7), (-big) // 3, (-big) % 3, int("1" * 3, 2), hex(big)[:6], round(n / 3, 2), abs(-n), pow(3, n, 7)
""", [(0,), (70,), (200,)])

# ----------------------------------------------------------------------------- subscripts, slices, attributes

case("slicing_with_steps", r"""
def f(s, a, b):
    return [s[::2], s[::-1], s[1:-1:3], s[:a], s[b:], s[:], s[a:b], s[b:a:-1], s[-a:], s[::a or 1], s[a]]
""", [("abcdefgh", 2, 6), ([1, 2, 3], 0, 1), ("", 1, 2), ("abc", 0, 1)])

case("slicing_extended_keys", r"""
class Key:
    def __getitem__(self, key):
        return repr(key)

def f(n):
    k = Key()
    return [k[1:2], k[::3], k[1:2, ::n], k[..., 0], k[:, None], k[n], k[n:], k[(1, 2)], k[()], k[1:2:3, 4], k[n:n + 1:-n]]
""", [(1,), (-1,)])

case("subscripts_and_attributes", r"""
class NS:
    pass

def f(key):
    d = {"a": [{"b": 1}], (1, 2): "tuple key", None: "none"}
    o = NS()
    o.inner = NS()
    o.inner.values = [10, 20]
    o.inner.values[1] = d["a"][0]["b"] + o.inner.values[0]
    setattr(o, "dyn", key)
    return d["a"][0]["b"], d[1, 2], d[None], o.inner.values, o.dyn, getattr(o, "missing", "dflt"), d[key]
""", [("a",), (None,), ("zz",)])

case("attribute_error_and_method_lookup", r"""
def f(obj, name):
    method = getattr(obj, name)
    parts = [method(), obj.__class__.__name__]
    if not parts[0]:
        parts.append(obj.missing_attribute)
    return parts
""", [("abc", "upper"), ([3, 1], "copy"), ([], "copy"), (1, "nope")])

# ----------------------------------------------------------------------------- unpacking

case("unpacking_assignment_forms", r"""
def f(x, y):
    a, b = x, y
    a, b = b, a
    (c, d), e = (a, b), x
    [g, h] = [y, x]
    i = j = k = x + y
    m, = [x]
    n, (o, [p, q]) = 1, (2, [3, 4])
    return a, b, c, d, e, g, h, i, j, k, m, n, o, p, q
""", [(1, 2), ("s", "t")])

case("unpacking_repeated_target_name", r"""
def f(rows):
    # 3.13 compiles the first of two stores to one name as POP_TOP
    out = []
    for tag, _, _, _, _ in rows:
        out.append(tag)
    a, _, _ = rows[0][:3]
    b, (c, _, _), _ = rows[0][0], rows[0][1:4], rows[0][4]
    return out, a, b, c, _, any(t == "x" for t, _, _, _, _ in rows)
""", [([("x", 1, 2, 3, 4), ("y", 5, 6, 7, 8)],)])

case("unpacking_star_assignment", r"""
def f(xs):
    first, *rest = xs
    *init, last = xs
    a, *middle, z = xs
    (p, *q), r = xs[:2], xs[-1]
    return first, rest, init, last, a, middle, z, p, q, r
""", [([1, 2],), ("abcde",), ([1],), ([],)])

case("unpacking_errors", r"""
def f(xs, mode):
    if mode == 0:
        a, b = xs
        return a, b
    if mode == 1:
        a, b, *c = xs
        return c
    [a] = xs
    return a
""", [([1, 2], 0), ([1, 2, 3], 0), ([1], 0), ([1], 1), ([1, 2], 1), ([7], 2), (5, 2)])

case("starred_displays", r"""
def f(a, b):
    return [*a, *b], (*a, 0, *b), {*a, *b}, [*a], (*b,), [0, *a, 1], {*range(2)}, [*a, *"xy"]
""", [([], ()), ([1, 2], (2, 3)), ("ab", [9]), (1, [])])

case("dict_displays_with_unpacking", r"""
def f(a, b):
    return {**a, "k": 1}, {"k": 0, **a}, {**a, **b}, {**b, "x": 2, **a, "y": 3}, dict(**a), {1: "one", **{2: "two"}}
""", [({}, {}), ({"k": 5, "z": 1}, {"z": 2}), ({"x": 0}, {"y": 1, "k": 2}), ([1], {})])

# (a dict display as the call's ``**`` lets later keys win; call keywords refuse a repeat:
# ``g(**{**a, **b})`` was written ``g(**a, **b)``, pygments' LatexEmbeddedLexer.__init__)
case("call_with_dict_display_kwargs", r"""
def f(a, b, k1, k2):
    def g(*args, **kw):
        return args, sorted(kw.items())
    out = [g(**{**a, **b}), g(0, **{**a, "x": 1}), g(*b, **{k1: 1, k2: 2}), g(**{"x": 1, "x": 2})]
    try:
        out.append(g(**{**a}, **b))
    except TypeError as exc:
        out.append(type(exc).__name__)
    try:
        out.append(g(y=0, **{**a, **{"x": 5}}))
    except TypeError as exc:
        out.append(type(exc).__name__)
    return out
""", [({}, {}, "p", "q"), ({"x": 1}, {"x": 2}, "p", "p"), ({"z": 0}, {"y": 1}, "y", "z")])

# ----------------------------------------------------------------------------- del

case("del_names", r"""
def f(x):
    a = x
    b = [a]
    del a
    try:
        a
    except NameError as e:
        state = type(e).__name__
    c, d = 1, 2
    del c, d
    del b[0]
    if x:
        del b
        return state, "b deleted"
    return state, b
""", [(0,), (1,)])

case("del_attributes_subscripts_slices", r"""
class O:
    pass

def f(xs, k):
    o = O()
    o.a = 1
    o.b = 2
    del o.a
    lst = list(xs)
    del lst[0]
    del lst[::2]
    d = {"x": 1, "y": 2, "z": 3}
    del d["x"], d[k]
    nested = [[1, 2, 3]]
    del nested[0][1:]
    return sorted(vars(o)), lst, d, nested
""", [([1, 2, 3, 4, 5], "y"), ([0], "z"), ([1, 2], "x"), ([], "y")])

case("del_twice_raises", r"""
def f(mode):
    x = 1
    if mode == 1:
        del x
        del x
    if mode == 2:
        del x
        return "deleted"
    return x
""", [(0,), (1,), (2,)])

# ----------------------------------------------------------------------------- evaluation order and statements

case("assignment_evaluation_order", r"""
def f():
    log = []
    def t(x):
        log.append(repr(x))
        return x
    target = {}
    holder = [None, None]
    t(target)[t("key")] = t("value")
    t(holder)[t(0)], t(holder)[t(1)] = t("a"), t("b")
    a = t([1])[t(0)] = t(5)
    return target, holder, a, log
""", [()])

case("operand_evaluation_order", r"""
def f():
    log = []
    def t(x):
        log.append(x)
        return x
    r = t(1) + t(2) * t(3) - t(4) ** t(0)
    s = [t("a"), t("b")][t(0)]
    u = t("-").join([t("x"), t("y")]) if t(True) else t(None)
    v = {t("k1"): t("v1"), t("k2"): t("v2"), **t({"k3": "v3"}), t("k1"): t("v4")}
    return r, s, u, v, log
""", [()])

case("tuples_and_parentheses", r"""
def f(x):
    empty = ()
    single = (x,)
    also_single = x,
    nested = ((x,), ())
    gen_arg = sum(i for i in range(x))
    tuple_in_call = len((x, x))
    return empty, single, also_single, nested, gen_arg, tuple_in_call
""", [(0,), (3,)])

case("expression_statements", r"""
def f(xs):
    xs.append(1)
    xs[0]
    len(xs)
    xs.pop() if len(xs) > 2 else None
    [xs.append(i) for i in range(2)]
    ...
    "a string statement in the middle"
    xs and xs.append("and")
    return xs
""", [([5],), ([5, 6],), ([],)])

case("docstrings_of_nested_functions", r"""
def f(x):
    "The docstring of f."
    def g():
        '''Nested doc.'''
        return g.__doc__
    def h():
        return h.__doc__
    class C:
        "Class doc."
    return f.__doc__, g(), h(), C.__doc__, x
""", [(1,)])
