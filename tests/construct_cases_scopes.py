"""Construct cases: scopes -- global/nonlocal, closures and cells, decorators, classes defined
inside functions, imports, type parameters.

Format: see construct_cases.py.  Module-level state (globals) persists across the calls of one
case, in the same order for the original and the recompiled function.
"""

CASES = []


def case(id, src, calls, min_version=(3, 8), func="f", driver=None):
    CASES.append(dict(id=id, src=src, calls=calls, min_version=min_version, func=func,
                      driver=driver))


def kw(*args, **kwargs):
    return {"args": args, "kwargs": kwargs}


# ----------------------------------------------------------------------------- global / nonlocal

case("global_read_write", r"""
COUNTER = 0

def f(k):
    global COUNTER
    COUNTER += k
    return COUNTER
""", [(1,), (2,), (0,), ("x",)])

case("global_declared_in_nested_function", r"""
VALUE = "module"

def f(new):
    def setter():
        global VALUE
        old = VALUE
        VALUE = new
        return old
    def reader():
        return VALUE
    seen_before = reader()
    return seen_before, setter(), reader()
""", [("a",), ("b",)])

case("global_create_and_delete", r"""
def f(mode):
    global CREATED
    if mode == "create":
        CREATED = [1]
        return CREATED
    if mode == "delete":
        del CREATED
        return "deleted"
    return CREATED
""", [("read",), ("create",), ("read",), ("delete",), ("read",), ("delete",)])

case("global_shadowing_builtin", r"""
def f(xs):
    global len
    result = [len(xs)]
    len = lambda obj: -1
    result.append(len(xs))
    del len
    result.append(len(xs))
    return result
""", [([1, 2],), ([],)])

case("nonlocal_counter_factory", r"""
def f(n):
    def make():
        count = 0
        def inc(step=1):
            nonlocal count
            count += step
            return count
        return inc
    a, b = make(), make()
    return [a() for _ in range(n)], b(10), a(0)
""", [(0,), (3,)])

case("nonlocal_two_levels", r"""
def f(x):
    outer = x
    def middle():
        def inner():
            nonlocal outer
            outer = outer * 2
            return outer
        first = inner()
        return first, inner()
    result = middle()
    return result, outer
""", [(1,), ("ab",)])

case("nonlocal_updated_in_loop", r"""
def f(n):
    total = 0
    def add(v):
        nonlocal total
        total += v
        return total
    partial = [add(i) for i in range(n)]
    return total, partial
""", [(0,), (5,)])

case("nonlocal_and_global_mixed", r"""
G = 100

def f(x):
    local = 1
    def inner():
        global G
        nonlocal local
        G += x
        local += x
        return G, local
    return inner(), inner(), local
""", [(1,), (5,)])

# ----------------------------------------------------------------------------- closures and cells

case("closure_late_binding_in_loop", r"""
def f(n):
    funcs = []
    for i in range(n):
        def g():
            return i * 10
        funcs.append(g)
    i = -1
    return [g() for g in funcs]
""", [(0,), (3,)])

case("closure_sees_later_assignment", r"""
def f(x):
    def get():
        return value
    value = x
    first = get()
    value = x * 2
    return first, get()
""", [(1,), ("s",)])

case("closure_unbound_free_variable", r"""
def f(early):
    def get():
        return value
    if early:
        return get()
    value = "set"
    return get()
""", [(0,), (1,)])

case("closure_over_arguments", r"""
def f(a, b=2, *args, k=3, **kw):
    def show():
        return a, b, args, k, sorted(kw)
    a = a + 1
    return show()
""", [(1,), kw(1, 5, 6, k=0, z=1)])

case("closure_shared_between_functions", r"""
def f(n):
    items = []
    def push(x):
        items.append(x)
        return len(items)
    def pop():
        return items.pop() if items else None
    for i in range(n):
        push(i)
    return pop(), pop(), list(items)
""", [(0,), (1,), (4,)])

case("closure_cell_deleted", r"""
def f(x):
    v = x
    def get():
        return v
    first = get()
    if x:
        del v
    try:
        return first, get()
    except NameError as e:
        return first, type(e).__name__
""", [(0,), (1,)])

case("closure_recursive_inner_function", r"""
def f(n):
    def walk(k, acc):
        if k == 0:
            return acc
        return walk(k - 1, acc + [k])
    return walk(n, [])
""", [(0,), (4,)])

case("closure_three_levels_reading", r"""
def f(a):
    b = a * 2
    def level1():
        c = b + 1
        def level2():
            return lambda: (a, b, c)
        return level2()()
    return level1()
""", [(1,), (10,)])

# ----------------------------------------------------------------------------- decorators

case("decorator_defined_inside", r"""
def f(x):
    calls = []
    def trace(fn):
        def wrapper(*args, **kwargs):
            calls.append((fn.__name__, args))
            return fn(*args, **kwargs)
        return wrapper
    @trace
    def double(v):
        return v * 2
    @trace
    def add(a, b=1):
        return a + b
    return double(x), add(x), add(x, b=x), calls, double.__name__
""", [(1,), ("s",)])

case("decorators_stacked_with_arguments", r"""
def f(x):
    order = []
    def tag(name):
        order.append("make " + name)
        def deco(fn):
            order.append("apply " + name)
            def wrapper(*a):
                return name + "(" + str(fn(*a)) + ")"
            return wrapper
        return deco
    @tag("outer")
    @tag("inner")
    def base(v):
        return v + 1
    return base(x), order
""", [(1,), (10,)])

case("decorator_dotted_name", r"""
def f(x):
    class Registry:
        def __init__(self):
            self.items = []
        def register(self, fn):
            self.items.append(fn.__name__)
            return fn
    reg = Registry()
    @reg.register
    def one(v):
        return v + 1
    @reg.register
    def two(v):
        return v * 2
    return one(x), two(x), reg.items
""", [(1,), ("s",)])

case("decorator_arbitrary_expressions", r"""
def f(x):
    decos = {"twice": lambda fn: lambda v: fn(fn(v))}
    @decos["twice"]
    def two(v):
        return v * 3
    @(lambda fn: fn)
    def three(v):
        return -v
    @decos["twice"] if x > 1 else (lambda fn: fn)
    def four(v):
        return v + 4
    return two(x), three(x), four(x)
""", [(1,), (2,)], min_version=(3, 9))

case("class_decorators_inside_function", r"""
def f(x):
    registry = []
    def register(cls):
        registry.append(cls.__name__)
        cls.registered = True
        return cls
    def add_method(cls):
        cls.triple = lambda self: self.v * 3
        return cls
    @register
    @add_method
    class Thing:
        def __init__(self, v):
            self.v = v
    t = Thing(x)
    return t.triple(), Thing.registered, registry, Thing.__qualname__
""", [(1,), ("ab",)])

case("builtin_method_decorators_in_class", r"""
def f(x):
    class Temperature:
        scale = "C"
        def __init__(self, degrees):
            self._degrees = degrees
        @property
        def degrees(self):
            return self._degrees
        @degrees.setter
        def degrees(self, value):
            if value < -273:
                raise ValueError("below absolute zero")
            self._degrees = value
        @staticmethod
        def convert(c):
            return c * 9 / 5 + 32
        @classmethod
        def freezing(cls):
            return cls(0)
    t = Temperature.freezing()
    t.degrees = x
    return t.degrees, Temperature.convert(t.degrees), t.scale
""", [(100,), (-40,), (-300,)])

# ----------------------------------------------------------------------------- classes inside functions

case("nested_class_methods_and_attributes", r"""
def f(x):
    class Counter:
        start = 10
        instances = 0
        def __init__(self, step):
            self.value = self.start
            self.step = step
            Counter.instances += 1
        def bump(self, times=1):
            for _ in range(times):
                self.value += self.step
            return self.value
        def describe(self):
            return "value=" + str(self.value)
    c = Counter(x)
    c.bump(2)
    d = Counter(1)
    d.bump()
    return c.value, d.describe(), Counter.instances, Counter.__name__
""", [(1,), (5,)])

case("nested_class_super_calls", r"""
def f(x):
    class Base:
        def __init__(self, v):
            self.log = ["Base.__init__"]
            self.v = v
        def describe(self):
            return "base:" + str(self.v)
    class Child(Base):
        def __init__(self, v):
            super().__init__(v * 2)
            self.log.append("Child.__init__")
        def describe(self):
            return "child/" + super().describe()
    class Grand(Child):
        def describe(self):
            return "grand/" + super(Grand, self).describe()
    g = Grand(x)
    return g.describe(), g.log, [k.__name__ for k in Grand.__mro__]
""", [(1,), ("s",)])

case("nested_class_closure_over_function_locals", r"""
def f(prefix, n):
    suffix = "!"
    class Greeter:
        greeting = prefix * n
        def greet(self, who):
            return self.greeting + " " + who + suffix
        def rebind(self):
            nonlocal suffix
            suffix = "?"
    g = Greeter()
    before = g.greet("bob")
    g.rebind()
    return before, g.greet("amy"), suffix
""", [("hi", 1), ("yo", 2)])

case("class_private_names_mangled", r"""
def f(n):
    class _Node:
        __slots__ = ("__value", "__next")
        def __init__(self, value, nxt=None):
            self.__value = value
            self.__next = nxt
            self._Node__spelled = "mangled by hand"  # 3.13 records names as written
        @staticmethod
        def __check(v):
            return v >= 0
        @property
        def __total(self):
            return self.__value + (self.__next.__total if self.__next else 0)
        def total(self):
            return self.__total if self.__check(self.__value) else None
        class __Meta:
            __depth = 2
        def depth(self):
            return self.__Meta._Meta__depth
        __private = staticmethod(lambda: "lambda")
    node = None
    for k in range(n):
        node = _Node(k, node)
    return (node.total() if node else None, node.depth() if node else None, _Node._Node__private(),
            sorted(x for x in vars(_Node) if "__" in x and not x.startswith("__")))
""", [(0,), (1,), (3,)])

case("class_body_scoping_rules", r"""
def f(x):
    y = "function y"
    class C:
        y = "class y"
        z = y + "/" + str(x)
        w = x * 2
        def method(self):
            return y
    return C.y, C.z, C.w, C().method(), sorted(k for k in vars(C) if not k.startswith("__"))
""", [(1,), ("s",)])

case("nested_class_dunder_protocols", r"""
def f(items):
    class Seq:
        def __init__(self, data):
            self.data = list(data)
        def __len__(self):
            return len(self.data)
        def __iter__(self):
            return iter(self.data)
        def __getitem__(self, i):
            return self.data[i]
        def __eq__(self, other):
            return isinstance(other, Seq) and self.data == other.data
        def __repr__(self):
            return "Seq(%r)" % (self.data,)
        __hash__ = None
    s = Seq(items)
    return len(s), list(s), s[0] if s else None, s == Seq(items), repr(s), bool(s), s[-1]
""", [([],), ([1, 2],)])

case("nested_class_inherits_builtin", r"""
def f(pairs):
    class Default(dict):
        def __missing__(self, key):
            value = self[key] = len(key)
            return value
    d = Default(pairs)
    return d["abc"], d["x"], sorted(d.items()), isinstance(d, dict), d[1] if pairs else "skip"
""", [([],), ([("x", 9)],)])

case("nested_class_with_metaclass_keyword", r"""
def f(tag):
    class Meta(type):
        def __new__(mcls, name, bases, ns, **kwargs):
            ns["tag"] = kwargs.get("tag", "none")
            return super().__new__(mcls, name, bases, ns)
        def __init__(cls, name, bases, ns, **kwargs):
            super().__init__(name, bases, ns)
    class Base:
        pass
    class Tagged(Base, metaclass=Meta, tag=tag):
        pass
    class Untagged(metaclass=Meta):
        pass
    return Tagged.tag, Untagged.tag, [b.__name__ for b in Tagged.__bases__]
""", [("red",), (None,)])

case("method_using_super_and_class_cell", r"""
class Base:
    def f(self, x):
        return ["Base", x]

class Child(Base):
    def f(self, x):
        result = super().f(x * 2)
        result.append(__class__.__name__)
        return result

def drive(method, x):
    return method(Child(), x)
""", [(1,), ("a",)], func="Child.f", driver="drive")

# ----------------------------------------------------------------------------- imports

case("imports_inside_function", r"""
def f(parts):
    import os.path as osp
    import collections.abc
    import json, math
    from math import sqrt as root, floor
    from collections import OrderedDict as OD, namedtuple
    P = namedtuple("P", "x y")
    return osp.join(*parts), isinstance(parts, collections.abc.Sequence), json.dumps(OD(a=1)), root(16.0), floor(2.7), math.pi > 3, P(1, 2).y
""", [(["a", "b"],), (["x"],), ([],)])

case("import_failure_fallbacks", r"""
def f(name):
    try:
        import pellucid_case_module_that_does_not_exist as mod
    except ImportError as e:
        mod = None
        kind = type(e).__name__
    try:
        from math import this_name_is_missing
    except ImportError as e:
        missing = type(e).__name__
    return mod, kind, missing, __import__(name).__name__
""", [("math",), ("string",), ("pellucid_no_such_module",)])

case("import_binds_top_level_package", r"""
def f():
    import importlib.util
    import xml.etree.ElementTree as ET
    import email.mime.text, json.decoder
    return importlib.util.__name__, ET.__name__, email.mime.text.__name__, json.decoder.__name__, sorted(dir())
""", [()])

# ----------------------------------------------------------------------------- type parameters (3.12+)

case("type_params_generic_function_and_class", r"""
def f(xs):
    def first[T](items: list[T]) -> T:
        return items[0]
    class Box[T]:
        def __init__(self, item: T):
            self.item = item
    return [p.__name__ for p in first.__type_params__], [p.__name__ for p in Box.__type_params__], Box(xs).item, first(xs)
""", [([1, 2],), ([],)], min_version=(3, 12))

case("type_alias_statement", r"""
def f(n):
    type Pair = tuple[int, int]
    type Nested[T] = list[T | Pair]
    return Pair.__name__, repr(Pair.__value__), Nested.__name__, [p.__name__ for p in Nested.__type_params__], n
""", [(1,)], min_version=(3, 12))

case("type_param_defaults", r"""
def f():
    def g[T = int, U = str]():
        return T.__default__, U.__default__
    class C[K = bytes]:
        pass
    return [d.__name__ for d in g()], C.__type_params__[0].__default__.__name__
""", [()], min_version=(3, 13))

case("type_params_bounds_constraints_tuple_paramspec", r"""
def f(x):
    def g[T: int, S: (str, bytes), *Ts, **P](a: T, *args: *Ts, **kw: P.kwargs) -> S:
        return a
    params = g.__type_params__
    described = [(type(p).__name__, p.__name__) for p in params]
    return described, params[0].__bound__ is int, params[1].__constraints__, g.__annotations__["a"] is params[0], g(x)
""", [(1,), ("s",)], min_version=(3, 12))

case("type_params_generic_method_in_generic_class", r"""
def f(v):
    class Box[T]:
        def __init__(self, item: T) -> None:
            self.item = item
        def pair[U](self, other: U) -> tuple[T, U]:
            return (self.item, other)
        @staticmethod
        def make[K](k: K) -> "Box[K]":
            return Box(k)
    b = Box.make(v)
    (t,) = Box.__type_params__
    (u,) = Box.pair.__type_params__
    return b.pair("x"), t.__name__, u.__name__, Box.pair.__annotations__["return"] == tuple[t, u], Box.__mro__[1:]
""", [(1,), ([2],)], min_version=(3, 12))

case("type_params_class_bases_and_keywords", r"""
class Meta(type):
    def __new__(mcls, name, bases, ns, **kw):
        cls = super().__new__(mcls, name, bases, ns)
        cls.flags = sorted(kw.items())
        return cls

class Base:
    def hello(self):
        return "base"

def f(extra):
    class A[T](Base, metaclass=Meta, tag="a"):
        x: T
        def m(self) -> T:
            return self.hello()
    class B[T, U](A[T], metaclass=Meta, **extra):
        "a doc"
    return A().m(), A.flags, B.flags, B.__doc__, [p.__name__ for p in B.__type_params__], [c.__name__ for c in B.__mro__], A.__annotations__
""", [({"k": 1},), ({},)], min_version=(3, 12))

case("type_params_lazy_bound_refers_to_later_name", r"""
def f(flag):
    def g[T: Later, *Ts, U: (Later, int)]() -> T:
        pass
    class Later:
        pass
    (t, ts, u) = g.__type_params__
    return t.__bound__ is Later, u.__constraints__[0] is Later, ts.__name__, flag
""", [(1,)], min_version=(3, 12))

case("type_params_nested_generic_closure", r"""
def f(base):
    scale = [base]
    def outer[T](x: T) -> list[T]:
        def inner[U](y: U) -> tuple[T, U]:
            scale[0] += 1
            return (x, y, base, scale[0])
        return [inner(1), inner("z"), [p.__name__ for p in inner.__type_params__]]
    return outer(base * 2), scale, [p.__name__ for p in outer.__type_params__]
""", [(1,), (3,)], min_version=(3, 12))

case("type_alias_with_parameters_used_at_runtime", r"""
def f(n):
    type Pair[T] = tuple[T, T]
    type Json = dict[str, Json] | list[Json] | int
    type Call[**P, R] = Callable[P, R]
    type Shaped[*Ts] = tuple[int, *Ts]
    from typing import Callable
    p = Pair[int]
    return (Pair.__name__, [t.__name__ for t in Pair.__type_params__], p.__origin__ is Pair, p.__args__,
            repr(Json.__value__), repr(Call.__value__), [type(t).__name__ for t in Call.__type_params__],
            repr(Shaped.__value__), n)
""", [(1,)], min_version=(3, 12))

case("type_params_generic_with_defaults_and_decorator", r"""
def f(k):
    def deco(fn):
        fn.tagged = True
        return fn
    @deco
    def g[T](a: T = 1, *, b: T = k) -> T:
        return (a, b)
    @deco
    class C[T]:
        pass
    return g(), g(5, b=6), g.__defaults__, g.__kwdefaults__, g.tagged, C.tagged, C.__type_params__[0].__name__
""", [(2,), ("x",)], min_version=(3, 12))

case("type_param_defaults_all_kinds", r"""
def f(n):
    def g[T: int = bool, *Ts = *tuple[int, str], **P = [int, str]]():
        pass
    class C[K = bytes, V: (int, str) = int](dict):
        pass
    type A[X = int, *Y = *tuple[X]] = list[X]
    t, ts, p = g.__type_params__
    return (t.__default__, repr(ts.__default__), p.__default__, t.has_default(),
            [repr(q.__default__) for q in C.__type_params__], [repr(q.__default__) for q in A.__type_params__], n)
""", [(1,)], min_version=(3, 13))

case("type_params_class_super_private_alias_conditional_annotation", r"""
def f(xs):
    class C[T](list):
        type A = list[T]
        def m(self):
            return super().__len__()
        async def am[U](self, u: U = xs) -> T:
            return u
        def __p[V](self) -> V:
            return 1
        def q(self):
            return self.__p()
    def g[T](x=lambda: xs, *, y: T | None = None) -> list[T] if xs else T:
        return x()
    class D[T](C[T]):
        pass
    (t,) = C.__type_params__
    return (C([1, 2]).m(), C().q(), C.A.__value__ == list[t], g(), g.__annotations__["return"] == (list[g.__type_params__[0]] if xs else g.__type_params__[0]),
            sorted(n for n in vars(C) if "p" in n), C.am.__defaults__, [c.__name__ for c in D.__mro__])
""", [([1],), ([],)], min_version=(3, 12))

case("type_params_star_bases_in_loop_try_and_branches", r"""
class Base:
    pass

def f(xs, bases, kw):
    out = []
    for x in xs:
        try:
            def g[T](a: T = x) -> T:
                if a == 2:
                    raise ValueError(a)
                return a
            out.append(g())
        except ValueError:
            class E[T](Base, *bases, **kw):
                pass
            out.append([c.__name__ for c in E.__mro__])
        finally:
            type Z[Q] = list[Q]
            out.append(Z.__type_params__[0].__name__)
    if xs:
        class K[T]:
            pass
    else:
        def K[T]():
            pass
    return out, type(K).__name__, K.__type_params__[0].__name__
""", [([1, 2], (), {}), ([2], (dict,), {}), ([], (), {})], min_version=(3, 12))
