"""Construct cases: syntax new in 3.14 and 3.15 -- template strings (PEP 750), deferred
annotations (PEP 649/749), ``except A, B:`` (PEP 758), unpacking in comprehensions (PEP 798).
(Lazy imports, PEP 810, are module-level only: tests/test_module_code.py.)  Format:
construct_cases.py."""

CASES = []


def case(id, src, calls, min_version=(3, 8), func="f", driver=None):
    CASES.append(dict(id=id, src=src, calls=calls, min_version=min_version, func=func,
                      driver=driver))


case("tstring_fields_conversions_and_specs", r"""
def f(a, b, width):
    def parts(t):
        return (t.strings, [(i.value, i.expression, i.conversion, i.format_spec)
                            for i in t.interpolations])
    return [parts(t"hi {a!r:>{width}} and {b=}"), parts(t""), parts(t"{a}{b}"),
            parts(t"plain {{braces}}"), parts(t"{a + b:{width}.{width}}!"),
            parts(t"{a!s}" t"{b!a}"), type(t"x").__name__]
""", [(1, 2, 5), ("x", "y", 3), (1.5, None, 0), ([1], (2,), 2)], min_version=(3, 14))

case("tstring_in_loop_and_branches", r"""
def f(xs, loud):
    out = []
    for x in xs:
        t = t"{x:>4}" if loud else t"<{x!r}>"
        out.append((t.strings, tuple(i.value for i in t.interpolations),
                    [i.format_spec for i in t.interpolations]))
        if x == 0:
            break
    return out, [t"{y}".interpolations[0].value for y in xs]
""", [([1, 2], True), ([1, 0, 3], False), ([], True), (["a"], 0)], min_version=(3, 14))

case("deferred_annotations_of_functions", r"""
def f(x):
    def g(a: int, b: "str" = "s", *args: Later, c: list[x] = None, **kw: dict) -> Later | None:
        return a
    def h(p, /, q: x, *, r: x.missing = 0) -> (x if x else int):
        return q
    class Later:
        pass
    out = [g.__annotations__, g(1)]
    try:
        out.append(h.__annotations__)
    except AttributeError as e:
        out.append(("raised", type(e).__name__))
    import annotationlib
    out.append(annotationlib.get_annotations(h, format=annotationlib.Format.STRING))
    return out
""", [(1,), (0,), ("",), (int,)], min_version=(3, 14))

case("deferred_annotations_of_classes", r"""
def f(flag, xs):
    class C:
        z: int
        w: list[int] = []
        if flag:
            q: str = "a"
        else:
            r: Undefined
        for k in xs:
            s: k = k
        try:
            t: tuple[int, ...] = (1,)
        except Exception:
            u: float
        def m(self) -> C:
            return self
    try:
        ann = C.__annotations__
    except NameError as e:
        ann = ("NameError", str(e))
    import annotationlib
    return (ann, annotationlib.get_annotations(C, format=annotationlib.Format.FORWARDREF).keys(),
            C.w, sorted(k for k in vars(C) if not k.startswith("__")), C.m.__annotations__)
""", [(True, []), (False, [1, 2]), (True, ["a"]), (0, ())], min_version=(3, 14))

case("deferred_annotations_class_names_shadowing", r"""
def f(v):
    int = "local"
    class C:
        str = "class attribute"
        a: int
        b: str
        c: v
        def m(self, p: str, q: int) -> v:
            return p
    return C.__annotations__, C.m.__annotations__, C().m(v, 0)
""", [(1,), ("x",), (None,)], min_version=(3, 14))

case("except_without_parentheses", r"""
def f(kind):
    try:
        if kind == "v":
            raise ValueError("v")
        if kind == "t":
            raise TypeError("t")
        if kind == "k":
            raise KeyError("k")
        return "none"
    except ValueError, TypeError:
        return "value or type"
    except KeyError, IndexError:
        return "lookup"
""", [("v",), ("t",), ("k",), ("x",)], min_version=(3, 14))

case("except_star_without_parentheses", r"""
def f(excs):
    got = []
    try:
        raise ExceptionGroup("g", excs)
    except* ValueError, TypeError:
        got.append("vt")
    except* KeyError:
        got.append("k")
    return got
""", [([ValueError()],), ([TypeError(), KeyError()],), ([KeyError()],), ([OSError()],)],
     min_version=(3, 14))

case("comprehension_unpacking", r"""
def f(xss, ds):
    a = [*xs for xs in xss]
    b = {*xs for xs in xss if xs}
    c = {**d for d in ds}
    e = [*[x, len(x)] for x in ds]
    return a, sorted(b, key=repr), c, e
""", [([[1, 2], [3]], [{1: 2}, {3: 4, 1: 5}]), ([], []), ([[]], [{}]), ([(1,), "ab"], [{"k": 0}])],
     min_version=(3, 15))

case("generator_unpacking", r"""
def f(xss):
    g = (*xs for xs in xss)
    return list(g), sum(*ys for ys in xss if ys)
""", [([[1, 2], [3]],), ([],), ([[], [4]],)], min_version=(3, 15))
