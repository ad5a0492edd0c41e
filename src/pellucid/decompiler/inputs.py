"""Turn whatever the user hands us (function, method, class, code object...) into code objects."""
import functools
import inspect
import types
from typing import Any, List, Optional

from pellucid.errors import DecompileError

# How many __wrapped__ / __func__ links code_of follows before giving up (guards against
# cycles and proxies that make up a new object on every attribute access).
_MAX_UNWRAP = 100

# Py_TPFLAGS_HEAPTYPE: set for classes made by a class statement (or by C extensions that use
# PyType_FromSpec), clear for static C types such as int or dict.
_HEAPTYPE = 1 << 9

_C_CALLABLE_TYPES = (
    types.BuiltinFunctionType,  # len, math.sqrt, [].append (same type as BuiltinMethodType)
    types.WrapperDescriptorType,  # object.__init__
    types.MethodWrapperType,  # (1).__add__
    types.MethodDescriptorType,  # str.join
    types.ClassMethodDescriptorType,  # dict.__dict__["fromkeys"]
    type(int.real),  # getset_descriptor: int.real, function.__code__...
    type(types.FunctionType.__globals__),  # member_descriptor
)


def code_of(obj: Any) -> types.CodeType:
    """Return the code object behind ``obj`` or raise :class:`DecompileError` saying why there is none.

    Accepts code objects, functions, lambdas, bound methods, static/class methods, properties
    (their getter), ``functools.cached_property``, decorated functions that set ``__wrapped__``,
    generators, coroutines, async generators and frames.

    >>> code_of(lambda: 1).co_name
    '<lambda>'
    >>> code_of(len)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pellucid.errors.DecompileError: builtin function len is implemented in C ...
    """
    return _code_of(obj, 0)


def _code_of(obj: Any, depth: int) -> types.CodeType:
    if depth > _MAX_UNWRAP:
        raise DecompileError(
            f"gave up after following {_MAX_UNWRAP} __wrapped__/__func__ links from "
            f"{_describe(obj)}; it has no reachable bytecode"
        )
    if isinstance(obj, types.CodeType):
        return obj
    if isinstance(obj, types.FunctionType):
        return obj.__code__
    if isinstance(obj, (staticmethod, classmethod)):
        return _code_of(obj.__func__, depth + 1)
    if isinstance(obj, property):
        if obj.fget is None:
            raise DecompileError(
                "property has no getter to decompile; decompile its .fset or .fdel instead"
            )
        return _code_of(obj.fget, depth + 1)
    cached_property = getattr(functools, "cached_property", None)
    if cached_property is not None and isinstance(obj, cached_property):
        return _code_of(obj.func, depth + 1)
    if isinstance(obj, types.MethodType):
        return _code_of(obj.__func__, depth + 1)
    if isinstance(obj, (functools.partial, functools.partialmethod)):
        raise DecompileError(
            f"functools.{type(obj).__name__} object has no bytecode of its own; "
            f"decompile its .func instead"
        )
    if isinstance(obj, types.GeneratorType):
        return obj.gi_code
    if isinstance(obj, types.CoroutineType):
        return obj.cr_code
    if isinstance(obj, types.AsyncGeneratorType):
        return obj.ag_code
    if isinstance(obj, types.FrameType):
        return obj.f_code
    if isinstance(obj, _C_CALLABLE_TYPES):
        raise DecompileError(
            f"{_describe_c_callable(obj)} is implemented in C and has no Python bytecode"
        )
    if inspect.isclass(obj):
        raise DecompileError(class_message(obj))
    if isinstance(obj, types.ModuleType):
        raise DecompileError(_module_message(obj))
    if isinstance(obj, str):
        raise DecompileError(
            "str object is source text, not bytecode; pass compile(source, '<string>', 'exec') "
            "or a function to decompile"
        )
    if isinstance(obj, (bytes, bytearray, memoryview)):
        raise DecompileError(
            f"{type(obj).__name__} object has no bytecode to decompile; for the contents of a "
            f".pyc file use pellucid.load_pyc(path)"
        )

    code = _safe_getattr(obj, "__code__")
    if isinstance(code, types.CodeType):
        return code
    wrapped = _safe_getattr(obj, "__wrapped__")
    if wrapped is not None and wrapped is not obj:
        return _code_of(wrapped, depth + 1)
    call = _python_call_method(obj)
    if call is not None:
        raise DecompileError(
            f"{type(obj).__name__} object has no bytecode of its own; it is callable through "
            f"{type(obj).__qualname__}.__call__, decompile that instead"
        )
    raise DecompileError(f"{type(obj).__name__} object has no bytecode to decompile")


def _safe_getattr(obj: Any, name: str) -> Any:
    """getattr that treats any exception from a property or __getattr__ as 'no attribute'."""
    try:
        return getattr(obj, name, None)
    except Exception:
        return None


def _describe(obj: Any) -> str:
    name = _safe_getattr(obj, "__qualname__") or _safe_getattr(obj, "__name__")
    if isinstance(name, str):
        return name
    return f"{type(obj).__name__} object"


def _describe_c_callable(obj: Any) -> str:
    """'builtin function len', 'builtin function math.sqrt', 'method str.join', ..."""
    qualname = _safe_getattr(obj, "__qualname__") or _safe_getattr(obj, "__name__")
    if not isinstance(qualname, str):
        qualname = repr(obj)
    objclass = _safe_getattr(obj, "__objclass__")
    if isinstance(obj, types.BuiltinFunctionType):
        owner = _safe_getattr(obj, "__self__")
        if owner is None or isinstance(owner, types.ModuleType):
            module = _safe_getattr(obj, "__module__")
            if isinstance(module, str) and module not in ("builtins", "__builtin__"):
                qualname = f"{module}.{qualname}"
            return f"builtin function {qualname}"
        return f"builtin method {qualname}"
    if isinstance(obj, types.MethodWrapperType):
        return f"method-wrapper {qualname}"
    if inspect.isclass(objclass) and "." not in qualname:
        qualname = f"{objclass.__qualname__}.{qualname}"
    if isinstance(obj, (type(int.real), type(types.FunctionType.__globals__))):
        return f"attribute descriptor {qualname}"
    return f"method {qualname}"


def _methods_with_code(cls: type) -> List[str]:
    names = []
    for name, value in vars(cls).items():
        if isinstance(value, (types.FunctionType, staticmethod, classmethod, property)):
            try:
                code_of(value)
            except DecompileError:
                continue
            names.append(name)
    return names


def class_message(cls: type) -> str:
    """Why ``cls`` has no single code object, and what to decompile instead."""
    qualname = getattr(cls, "__qualname__", None) or getattr(cls, "__name__", repr(cls))
    try:
        methods = _methods_with_code(cls)
    except Exception:
        methods = []
    if methods:
        shown = ", ".join(f"{qualname}.{m}" for m in methods[:3])
        more = ", ..." if len(methods) > 3 else ""
        return (
            f"class {qualname} has no single code object; decompile its methods one by one "
            f"(e.g. {shown}{more}), or the module's .pyc"
        )
    if not getattr(cls, "__flags__", 0) & _HEAPTYPE:  # a static type: int, dict, ...
        return f"class {qualname} is implemented in C and has no Python bytecode"
    return f"class {qualname} has no single code object and defines no methods with Python bytecode"


def _module_message(module: types.ModuleType) -> str:
    name = getattr(module, "__name__", "?")
    origin = getattr(getattr(module, "__spec__", None), "origin", None) or getattr(
        module, "__file__", None
    )
    if not isinstance(origin, str) or not origin.endswith((".py", ".pyc", ".pyw")):
        return f"module {name} has no Python bytecode (it is built in or implemented in C)"
    return (
        f"module {name} keeps no code object after import; decompile its functions, its .pyc "
        f"(pellucid.load_pyc), or run `pellucid decompile {name}`"
    )


def _python_call_method(obj: Any) -> Optional[Any]:
    """The Python-level __call__ of ``type(obj)``, if it has one."""
    for klass in type(obj).__mro__:
        call = vars(klass).get("__call__")
        if call is not None:
            return call if isinstance(call, types.FunctionType) else None
    return None
