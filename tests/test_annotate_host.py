"""3.14+ ``__annotate__`` functions recompiled on their own (pellucid.decompiler.annotate_host).

Their format check raises the builtin NotImplementedError (``LOAD_COMMON_CONSTANT``), which no
statement compiles to: the recompiled code must be the one CPython makes for the annotations
again, the same instructions, and behave as the original (also where a global shadows the name
``NotImplementedError``)."""
import dis
import sys
import textwrap
import types

import pytest

import pellucid

pytestmark = pytest.mark.skipif(sys.version_info < (3, 14), reason="PEP 649 __annotate__: 3.14+")

CASES = {
    "function": """
        def f(a: int, b: "list[str]" = None) -> dict[str, int]:
            pass
        target = f.__annotate__
    """,
    "method": """
        class C:
            def m(self, n: int = -1, *, key: Later) -> str:
                pass
        target = C.m.__annotate__
    """,
    "class body": """
        class C:
            x: int
            y: list[Later] = []
            _C__private: str
            def m(self): pass
        target = C.__annotate__
    """,
    "generic class method": """
        class Box[T]:
            def get(self, default: T | None) -> T:
                pass
        target = Box.get.__annotate__
    """,
    "generic class body": """
        class Pair[K, V]:
            key: K
            value: tuple[K, V]
        target = Pair.__annotate__
    """,
    "generic function": """
        def first[T](items: list[T], *rest: T, **kw: int) -> T:
            pass
        target = first.__annotate__
    """,
    "star annotation": """
        def g[*Ts](*args: *Ts, after: int) -> tuple[*Ts]:
            pass
        target = g.__annotate__
    """,
    "closure variable": """
        def outer():
            T = int
            def h(a: T, b: T = 0) -> T:
                pass
            return h
        target = outer().__annotate__
    """,
    "closure in class": """
        def outer():
            T = int
            class D:
                def h(self, a: T) -> Later:
                    pass
                attr: T
            return D
        target = outer().h.__annotate__
    """,
}


MODULE_ANNOTATIONS = """
x: int = 1
if x:
    y: list[Later]
    z: "str"
w: dict[str, int]
"""


def test_module_annotate_recompiles_to_the_same_instructions():
    ns = {"Later": float, "__name__": "annotate_case"}
    exec(compile(MODULE_ANNOTATIONS, "<annotate module>", "exec"), ns)
    target = ns["__annotate__"]
    text = pellucid.decompile(target)
    assert "NOT verified" not in text and "__pellucid_fallback__" not in text, text
    new = pellucid.recompile(target)
    assert _ops(new) == _ops(target.__code__), text
    fn = types.FunctionType(new, ns, "__annotate__")
    assert fn(1) == target(1) == {"x": int, "y": list[float], "z": "str", "w": dict[str, int]}
    ns["__conditional_annotations__"].discard(1)  # (as if ``y``'s statement had not run)
    assert fn(1) == target(1) and "y" not in fn(1)


def _namespace(source):
    ns = {"Later": float, "__name__": "annotate_case"}
    exec(compile(textwrap.dedent(source), "<annotate case>", "exec"), ns)
    return ns


def _ops(code):
    skip = {"NOP", "RESUME", "CACHE", "EXTENDED_ARG"}
    return [(i.opname.replace("_BORROW", ""), i.argrepr if i.opname.startswith("LOAD_FAST") else i.argval)
            for i in dis.get_instructions(code) if i.opname not in skip]


@pytest.mark.parametrize("name", sorted(CASES))
def test_annotate_recompiles_to_the_same_instructions(name):
    ns = _namespace(CASES[name])
    target = ns["target"]
    text = pellucid.decompile(target)
    assert "NOT verified" not in text and "__pellucid_fallback__" not in text, text
    new = pellucid.recompile(target)
    old = target.__code__
    assert _ops(new) == _ops(old), text
    assert new.co_freevars == old.co_freevars and new.co_qualname == old.co_qualname
    fn = types.FunctionType(new, target.__globals__, "__annotate__", None, target.__closure__)
    assert fn(1) == target(1)
    # the format check raises the builtin, also where a global shadows its name
    target.__globals__["NotImplementedError"] = ValueError
    try:
        with pytest.raises(NotImplementedError):
            fn(3)
    finally:
        del target.__globals__["NotImplementedError"]


def test_conditional_class_annotations_get_no_host():
    from pellucid.decompiler.annotate_host import annotate_host_tree
    from pellucid.decompiler.constants import ConstantPool

    ns = _namespace("""
        class C:
            if Later:
                x: int
            y: str
        target = C.__annotate__
    """)
    # (which annotations exist depends on the class body having run: no host says that)
    assert annotate_host_tree(ns["target"].__code__, ConstantPool()) is None
    text = pellucid.decompile(ns["target"])
    assert "class C" not in text


def test_a_name_the_host_class_would_mangle_gets_no_host():
    from pellucid.decompiler.annotate_host import annotate_host_tree
    from pellucid.decompiler.constants import ConstantPool

    # (class ``_`` mangles nothing: its annotation names ``__hidden`` as written)
    ns = _namespace("""
        __hidden = int
        class _:
            def m(self, a: __hidden): pass
        target = _.m.__annotate__
    """)
    assert ns["target"](1) == {"a": int}
    assert annotate_host_tree(ns["target"].__code__, ConstantPool()) is None


LAZY_CASES = {
    "type alias": """
        type Alias = list[int] | None
        target = Alias.evaluate_value
    """,
    "generic type alias": """
        type Pairs[K, V] = dict[K, list[V]]
        target = Pairs.evaluate_value
    """,
    "type alias in a class": """
        class C:
            type Inner = dict[str, Later]
        target = C.Inner.evaluate_value
    """,
    "type alias in a generic class": """
        class G[T]:
            type Inner = list[T]
        target = G.Inner.evaluate_value
    """,
    "bound": """
        def f[B: Later](x: B) -> B:
            return x
        target = f.__type_params__[0].evaluate_bound
    """,
    "bound using another parameter": """
        def f[T, S: list[T]](x: S) -> S:
            return x
        target = f.__type_params__[1].evaluate_bound
    """,
    "constraints": """
        class K[T: (int, str)]:
            pass
        target = K.__type_params__[0].evaluate_constraints
    """,
    "closure variable": """
        def outer():
            Base = int
            type Local = list[Base]
            return Local
        target = outer().evaluate_value
    """,
}


@pytest.mark.parametrize("name", sorted(LAZY_CASES))
def test_lazy_value_recompiles_to_the_same_instructions(name):
    ns = _namespace(LAZY_CASES[name])
    target = ns["target"]
    text = pellucid.decompile(target)
    assert "NOT verified" not in text and "__pellucid_fallback__" not in text, text
    new = pellucid.recompile(target)
    old = target.__code__
    assert _ops(new) == _ops(old), text
    assert new.co_freevars == old.co_freevars and new.co_qualname == old.co_qualname
    fn = types.FunctionType(new, target.__globals__, old.co_name, target.__defaults__, target.__closure__)
    assert fn(1) == target(1)
    target.__globals__["NotImplementedError"] = ValueError
    try:
        with pytest.raises(NotImplementedError):
            fn(3)
    finally:
        del target.__globals__["NotImplementedError"]


def test_class_shows_its_annotations_not_its_annotate_function():
    ns = _namespace("""
        class C:
            x: int
            y: list[Later] = []
            def m(self, a: int) -> str:
                return str(a)
    """)
    text = pellucid.decompile(ns["C"])
    assert "NOT verified" not in text and "__annotate" not in text, text
    assert "    x: int\n" in text and "    y: list[Later]" in text and "def m(self, a: int) -> str:" in text
    ns2 = {"Later": float}
    exec(compile(text, "<class text>", "exec"), ns2)
    assert ns2["C"].__annotations__ == ns["C"].__annotations__
