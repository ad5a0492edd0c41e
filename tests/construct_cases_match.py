"""Construct cases: structural pattern matching (Python 3.10+).  Format: see construct_cases.py."""

CASES = []


def case(id, src, calls, min_version=(3, 10), func="f", driver=None):
    CASES.append(dict(id=id, src=src, calls=calls, min_version=min_version, func=func,
                      driver=driver))


case("match_literals", r"""
def f(x):
    match x:
        case None:
            return "none"
        case True:
            return "true"
        case False:
            return "false"
        case 0:
            return "zero"
        case 1 | 2:
            return "one or two"
        case "hello":
            return "greeting"
        case -1:
            return "minus one"
        case 2.5:
            return "two and a half"
        case b"raw":
            return "bytes"
        case _:
            return "other"
""", [(0,), (1,), (2,), ("hello",), (None,), (True,), (False,), (-1,), (2.5,), (b"raw",),
      (3,), ("x",), (0.0,), (1.0,)])

case("match_capture_and_wildcard", r"""
def f(x):
    match x:
        case 0:
            return "zero"
        case other:
            return ("captured", other)
""", [(0,), (5,), ([1],)])

case("match_sequence_patterns", r"""
def f(x):
    match x:
        case []:
            return "empty"
        case [a]:
            return ("one", a)
        case [a, b]:
            return ("two", a, b)
        case [first, *_, last]:
            return ("many", first, last)
        case _:
            return "not a sequence"
""", [([],), ([1],), ((1, 2),), ([1, 2, 3, 4],), ("ab",), (5,), ({1: 2},)])

case("match_sequence_star_captures", r"""
def f(x):
    match x:
        case [0, *rest]:
            return ("zero-led", rest)
        case [*init, 0]:
            return ("zero-ended", init)
        case (a, b, *mid, c):
            return ("at least three", a, b, mid, c)
        case _:
            return None
""", [([0],), ([0, 1, 2],), ([1, 0],), ((1, 2, 3),), ((1, 2, 3, 4, 5),), ([1],), ([1, 2],)])

case("match_mapping_patterns", r"""
def f(x):
    match x:
        case {"type": "point", "x": px, "y": py}:
            return ("point", px, py)
        case {"type": "circle", "r": r, **rest}:
            return ("circle", r, sorted(rest))
        case {"type": _}:
            return "unknown type"
        case {}:
            return "some mapping"
        case _:
            return "not a mapping"
""", [({"type": "point", "x": 1, "y": 2, "z": 3},), ({"type": "circle", "r": 5, "color": "red"},),
      ({"type": "square"},), ({"x": 1},), ({},), ([],)])

case("match_mapping_value_keys_and_rest_guard", r"""
class K:
    NAME = "name"

def f(d):
    match d:
        case {K.NAME: name, **rest} if not rest:
            return ("only name", name)
        case {K.NAME: name, "age": int(age), **rest}:
            return ("person", name, age, sorted(rest))
        case {1: one, None: n}:
            return ("odd keys", one, n)
    return "no match"
""", [({"name": "x"},), ({"name": "y", "age": 3, "z": 1},), ({1: "a", None: "b"},),
      ({"name": "y", "age": "3"},)])

case("match_class_positional", r"""
class Point:
    __match_args__ = ("x", "y")
    def __init__(self, x, y):
        self.x = x
        self.y = y

def f(x, y):
    p = Point(x, y)
    match p:
        case Point(0, 0):
            return "origin"
        case Point(0, yy):
            return ("on y axis", yy)
        case Point(xx, 0):
            return ("on x axis", xx)
        case Point(a, b) if a == b:
            return ("diagonal", a)
        case Point():
            return "elsewhere"
""", [(0, 0), (0, 5), (3, 0), (2, 2), (1, 2)])

case("match_class_keyword", r"""
class Node:
    def __init__(self, kind, value=None, children=()):
        self.kind = kind
        self.value = value
        self.children = children

def f(kind, value, n):
    node = Node(kind, value, [Node("leaf", i) for i in range(n)])
    match node:
        case Node(kind="leaf", value=v):
            return ("leaf", v)
        case Node(kind="branch", children=[]):
            return "empty branch"
        case Node(kind="branch", children=[Node(value=first), *others]):
            return ("branch", first, len(others))
        case Node(kind=k):
            return ("other", k)
""", [("leaf", 1, 0), ("branch", None, 0), ("branch", None, 3), ("root", None, 0)])

case("match_dataclass_mixed_arguments", r"""
import dataclasses

@dataclasses.dataclass
class Item:
    name: str
    qty: int = 0
    tags: tuple = ()

def f(name, qty, tags):
    match Item(name, qty, tags):
        case Item("free", qty=0):
            return "free empty"
        case Item(n, q, tags=("sale", *_)) if q > 0:
            return ("sale", n, q)
        case Item(n, 0):
            return ("out of stock", n)
        case Item(name=n, qty=q):
            return ("plain", n, q)
""", [("free", 0, ()), ("free", 1, ("sale",)), ("x", 0, ("sale",)), ("y", 3, ())])

case("match_builtin_class_patterns", r"""
def f(x):
    match x:
        case bool(b):
            return ("bool", b)
        case int(n) if n < 0:
            return ("negative int", n)
        case int():
            return "int"
        case str() as s:
            return ("str", s.upper())
        case list([a, b]):
            return ("pair list", a, b)
        case tuple((a, *_)):
            return ("tuple starting", a)
        case float(v) | complex(real=v):
            return ("number", v)
        case _:
            return type(x).__name__
""", [(True,), (-3,), (4,), ("ab",), ([1, 2],), ([1],), ((9, 8),), (1.5,), (2j,), (None,), ((),)])

case("match_guards", r"""
def f(x, limit):
    match x:
        case [a, b] if a + b > limit:
            return "big pair"
        case [a, b] if a == b:
            return "twin pair"
        case [a, b]:
            return "pair"
        case n if isinstance(n, int) and n > limit:
            return "big int"
        case _:
            return "other"
""", [([5, 6], 10), ([2, 2], 10), ([1, 2], 10), (11, 10), (3, 10), ("s", 0)])

case("match_or_patterns", r"""
def f(cmd):
    match cmd.split():
        case ["go", ("north" | "south" | "east" | "west") as direction]:
            return ("go", direction)
        case ["quit"] | ["exit"] | ["q"]:
            return "quit"
        case ["look"] | ["look", "around"]:
            return "look"
        case [("drop" | "throw"), *items] if items:
            return ("drop", items)
        case _:
            return "unknown"
""", [("go north",), ("go up",), ("exit",), ("look around",), ("drop a b",), ("throw",), ("",)])

case("match_or_patterns_binding", r"""
def f(x):
    match x:
        case (1, y) | (y, 1):
            return ("has one", y)
        case [y] | {"only": y}:
            return ("single", y)
        case _:
            return None
""", [((1, 5),), ((7, 1),), ([3],), ({"only": 4},), ((2, 2),)])

case("match_as_patterns", r"""
def f(x):
    match x:
        case [(1 | 2) as small, *rest] as whole:
            return ("small first", small, rest, whole)
        case {"k": [_, _] as pair} as mapping:
            return ("pair under k", pair, len(mapping))
        case (str() | bytes()) as text:
            return ("text", len(text))
        case _ as anything:
            return ("anything", anything)
""", [([1, 9],), ([2],), ({"k": [0, 0]},), ({"k": [0]},), ("abc",), (b"",), (7,)])

case("match_value_patterns_dotted", r"""
import enum

class Color(enum.Enum):
    RED = 1
    GREEN = 2
    BLUE = 3

class Limits:
    LOW = 0
    HIGH = 100

def f(value, color_value):
    color = Color(color_value)
    match color:
        case Color.RED:
            c = "red"
        case Color.GREEN | Color.BLUE:
            c = "cool"
    match value:
        case Limits.LOW:
            v = "low"
        case Limits.HIGH:
            v = "high"
        case _:
            v = "mid"
    return c, v
""", [(0, 1), (100, 2), (50, 3), (0, 4)])

case("match_nested_patterns", r"""
def f(event):
    match event:
        case {"kind": "click", "pos": (x, y), "buttons": [*_, "left"]}:
            return ("left click", x, y)
        case {"kind": "key", "keys": [("ctrl" | "cmd"), str(key)]}:
            return ("shortcut", key)
        case {"kind": "batch", "events": [{"kind": k1}, {"kind": k2}]}:
            return ("batch of two", k1, k2)
        case {"kind": kind}:
            return ("unhandled", kind)
""", [({"kind": "click", "pos": (1, 2), "buttons": ["right", "left"]},),
      ({"kind": "click", "pos": [1, 2], "buttons": ["right"]},),
      ({"kind": "key", "keys": ["cmd", "s"]},), ({"kind": "key", "keys": ["alt", "s"]},),
      ({"kind": "batch", "events": [{"kind": "a"}, {"kind": "b"}]},), ({"nokind": 1},)])

case("match_in_loop_with_break_continue", r"""
def f(items):
    out = []
    for item in items:
        match item:
            case "skip":
                continue
            case "stop":
                break
            case int(n) if n % 2:
                out.append(n * 10)
            case _:
                out.append(item)
    else:
        out.append("exhausted")
    return out
""", [([],), ([1, "skip", 2, "x"],), ([3, "stop", 5],)])

case("match_no_case_matches", r"""
def f(x):
    result = "unset"
    match x:
        case 1:
            result = "one"
        case [1, *_]:
            result = "list"
    return result
""", [(1,), ([1, 2],), (2,), ("1",)])

case("match_tuple_subject", r"""
def f(a, b):
    match a, b:
        case (0, 0):
            return "both zero"
        case (0, _) | (_, 0):
            return "one zero"
        case (int(), int()) if a < 0 < b:
            return "neg-pos"
        case (x, y):
            return x * y
""", [(0, 0), (0, 3), (4, 0), (-1, 2), (2, 3), ("ab", 2)])

case("match_signed_and_complex_literals", r"""
def f(x):
    match x:
        case -1.5:
            return "minus one and a half"
        case 1 + 2j:
            return "complex"
        case -3 - 4j:
            return "negative complex"
        case -0:
            return "zero"
        case "a" "b":
            return "concatenated"
    return "none"
""", [(-1.5,), (1 + 2j,), (-3 - 4j,), (0,), ("ab",), (1,)])

case("match_capture_then_guard_fails", r"""
def f(x):
    match x:
        case [a, *_] if a > 0:
            pass
        case [*_]:
            a = "seq"
        case _:
            a = "none"
    return a
""", [([1, 2],), ([-1],), ([],), (5,)])

case("match_return_from_nested_function", r"""
def f(values):
    def classify(v):
        match v:
            case int() | float() if v < 0:
                return "negative"
            case int() | float():
                return "number"
            case [*items]:
                return [classify(i) for i in items]
        return "unknown"
    return [classify(v) for v in values]
""", [([],), ([1, -2.5, [3, "x", [-1]], None],)])

# An or-pattern as the last item of the last case's sequence pattern, the match followed by a
# short exit (``_pyrepl.utils.is_soft_keyword_used``, 3.15): the compiler copies the exit, and
# the last alternative fails to a copy of its own.
case("match_or_pattern_last_in_sequence", r"""
from collections import namedtuple
TI = namedtuple("TI", "type string")

def f(*tokens):
    match tokens:
        case (None | TI(1), TI(string="lazy"), TI(string="import") | TI(string="from")):
            return True
        case _:
            return False
""", [(None, ("x", "lazy"), ("x", "from")), (("x", "y"), ("x", "lazy"), ("x", "import")),
      ((1, "z"), ("x", "lazy"), ("x", "import")), (None, ("x", "lazy"), ("x", "to")), (1, 2), ()])

case("match_or_pattern_last_in_sequence_values", r"""
def f(t):
    match t:
        case (1, 2 | 3):
            return True
    return False
""", [((1, 2),), ((1, 3),), ((1, 4),), ([1, 3],), ((2, 2),), (7,), ("ab",)])
