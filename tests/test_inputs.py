"""What pellucid accepts as input (code_of) and the errors for things it cannot decompile."""
import asyncio
import functools
import importlib.util
import json
import math
import sys
import types

import pytest

import pellucid
from pellucid.decompiler.inputs import code_of
from pellucid.errors import DecompileError

# The decompiler core (pellucid.decompiler.render) is still being written; tests that go
# through pellucid.decompile()/recompile() need it even for bad inputs, because api.decompile
# imports the core before it validates its argument. They are skipped until the core exists.
needs_core = pytest.mark.skipif(
    importlib.util.find_spec("pellucid.decompiler.render") is None,
    reason="decompiler core (pellucid.decompiler.render) not written yet",
)


def plain(x):
    return x + 1


async def coroutine_function():
    return 1


async def async_generator_function():
    yield 1


def generator_function():
    yield 1


class WithMethods:
    def method(self):
        return 1

    @staticmethod
    def static():
        return 2

    @classmethod
    def klass(cls):
        return 3

    @property
    def prop(self):
        return 4

    @functools.cached_property
    def cached(self):
        return 5


class Empty:
    pass


class CallableInstance:
    def __call__(self):
        return 1


class ExplodingGetattr:
    def __getattr__(self, name):
        raise RuntimeError("boom")


class EndlessProxy:
    """Makes up a new object for every attribute, __wrapped__ included."""

    def __getattr__(self, name):
        return EndlessProxy()


def wrapped_cycle():
    a = types.SimpleNamespace()
    b = types.SimpleNamespace(__wrapped__=a)
    a.__wrapped__ = b
    return a


# ---------------------------------------------------------------------------------------------
# things that have bytecode


def test_code_object_is_returned_as_is():
    code = plain.__code__
    assert code_of(code) is code


@pytest.mark.parametrize(
    "obj, name",
    [
        (plain, "plain"),
        (lambda: 0, "<lambda>"),
        (WithMethods().method, "method"),
        (WithMethods.method, "method"),
        (WithMethods.static, "static"),
        (WithMethods.__dict__["static"], "static"),
        (WithMethods.klass, "klass"),
        (WithMethods.__dict__["klass"], "klass"),
        (WithMethods.prop, "prop"),
        (WithMethods.__dict__["cached"], "cached"),
        (functools.lru_cache()(plain), "plain"),
        (functools.wraps(plain)(lambda *a: plain(*a)), "<lambda>"),  # the wrapper itself
        (sys._getframe(), "<module>"),  # the frame importing this test module
    ],
)
def test_things_with_code(obj, name):
    assert code_of(obj).co_name == name


def test_generators_coroutines_async_generators():
    gen = generator_function()
    assert code_of(gen) is generator_function.__code__
    coro = coroutine_function()
    try:
        assert code_of(coro) is coroutine_function.__code__
    finally:
        coro.close()
    agen = async_generator_function()
    assert code_of(agen) is async_generator_function.__code__
    asyncio.run(agen.aclose())


# ---------------------------------------------------------------------------------------------
# things that have not


def check(obj, *fragments):
    with pytest.raises(DecompileError) as info:
        code_of(obj)
    message = str(info.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


def test_int_exact_message():
    # The message documented in pellucid.errors.DecompileError.
    assert check(42) == "int object has no bytecode to decompile"


def test_none():
    assert check(None) == "NoneType object has no bytecode to decompile"


def test_builtin_len():
    assert check(len) == "builtin function len is implemented in C and has no Python bytecode"


def test_math_sqrt_names_its_module():
    assert check(math.sqrt) == (
        "builtin function math.sqrt is implemented in C and has no Python bytecode"
    )


def test_method_descriptor_str_join():
    assert check(str.join) == "method str.join is implemented in C and has no Python bytecode"


@pytest.mark.parametrize(
    "obj, name",
    [
        ([].append, "list.append"),
        ("".join, "str.join"),
        (dict.fromkeys, "dict.fromkeys"),
        (dict.__dict__["fromkeys"], "dict.fromkeys"),
        (object.__init__, "object.__init__"),
        ((1).__add__, "int.__add__"),
        (int.real, "int.real"),
        (types.FunctionType.__dict__["__globals__"], "function.__globals__"),
    ],
)
def test_other_c_callables(obj, name):
    check(obj, name, "implemented in C and has no Python bytecode")


def test_c_function_behind_a_bound_method():
    check(types.MethodType(len, object()), "builtin function len is implemented in C")


def test_functools_partial():
    assert check(functools.partial(plain, 1)) == (
        "functools.partial object has no bytecode of its own; decompile its .func instead"
    )


def test_functools_partialmethod():
    check(functools.partialmethod(plain, 1), "functools.partialmethod", ".func")


def test_class_says_to_decompile_its_methods():
    message = check(WithMethods, "class WithMethods has no single code object")
    assert "decompile its methods" in message
    assert "WithMethods.method" in message


def test_class_without_methods():
    assert check(Empty) == (
        "class Empty has no single code object and defines no methods with Python bytecode"
    )


def test_builtin_class():
    assert check(int) == "class int is implemented in C and has no Python bytecode"


def test_module_implemented_in_c():
    check(math, "module math has no Python bytecode")


def test_python_module():
    check(json, "module json keeps no code object", "pellucid decompile json")


def test_source_text():
    check("x = 1", "str object is source text, not bytecode", "compile(")


@pytest.mark.parametrize("obj", [b"\x00", bytearray(b"\x00"), memoryview(b"\x00")])
def test_bytes_like(obj):
    check(obj, f"{type(obj).__name__} object has no bytecode", "pellucid.load_pyc")


def test_property_without_getter():
    check(property(), "property has no getter")


def test_callable_instance_points_to_dunder_call():
    check(CallableInstance(), "CallableInstance.__call__")


def test_getattr_that_raises_does_not_escape():
    assert check(ExplodingGetattr()) == "ExplodingGetattr object has no bytecode to decompile"


def test_endless_wrapped_chain_terminates():
    check(EndlessProxy(), "gave up after following")


def test_wrapped_cycle_terminates():
    check(wrapped_cycle(), "gave up after following")


@pytest.mark.parametrize("obj", [1.5, [1], {"a": 1}, object(), type(None), Ellipsis])
def test_assorted_objects(obj):
    check(obj)


# ---------------------------------------------------------------------------------------------
# the public API -- needs the decompiler core (see needs_core above)


@needs_core
@pytest.mark.parametrize(
    "obj, fragment",
    [
        (42, "int object has no bytecode"),
        (len, "builtin function len"),
        (math.sqrt, "math.sqrt"),
        (str.join, "str.join"),
        (functools.partial(plain), "functools.partial"),
        (Empty, "class Empty has no single code object"),  # a class with methods decompiles:
        (int, "class int is implemented in C"),            # see tests/test_hostile.py
    ],
)
def test_public_decompile_rejects(obj, fragment):
    with pytest.raises(DecompileError, match=fragment.replace(".", r"\.")):
        pellucid.decompile(obj)


@needs_core
def test_public_recompile_rejects_builtin():
    with pytest.raises(DecompileError, match="implemented in C"):
        pellucid.recompile(len)
