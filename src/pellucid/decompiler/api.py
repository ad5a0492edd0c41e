"""Public entry points: :func:`decompile` and :func:`recompile`."""
import types
from typing import Any, Optional

from pellucid.decompiler.inputs import code_of


def decompile(obj: Any) -> str:
    """Return Python source equivalent to the bytecode of ``obj``.

    ``obj`` may be a function, method, lambda, generator/coroutine function, code object or
    module code object.

    >>> print(decompile(lambda x: x + 1))
    lambda x: x + 1
    """
    code = code_of(obj)
    from pellucid.decompiler.render import render_code

    func = obj if getattr(obj, "__code__", None) is code else getattr(obj, "__func__", None)
    return render_code(code, func)


def recompile(obj: Any, path: Optional[str] = None) -> types.CodeType:
    """Decompile ``obj``, compile the source back, and return a code object that can replace it.

    With ``path`` the source is written there and becomes the code's ``co_filename``.  Constants
    that have no literal form are bound, under reserved names, in the function's globals.

    >>> def f(x): return x * 2
    >>> f.__code__ = recompile(f)
    >>> f(21)
    42
    """
    code = code_of(obj)
    from pellucid.decompiler.recompile import recompile_full

    func = obj if getattr(obj, "__code__", None) is code else getattr(obj, "__func__", None)
    result = recompile_full(code, path, getattr(func, "__qualname__", None))
    if result.bindings:
        func = obj if hasattr(obj, "__globals__") else getattr(obj, "__func__", None)
        if func is None or not hasattr(func, "__globals__"):
            from pellucid.errors import DecompileError

            raise DecompileError("%s has constants without a literal form; recompile a function "
                                 "(whose globals can hold them) instead of a bare code object"
                                 % code.co_name)
        func.__globals__.update(result.bindings)
    return result.code
