"""Public entry points: :func:`decompile` and :func:`recompile`."""
import inspect
import sys
import types
from typing import Any, Callable, Optional, TypeVar

from pellucid.decompiler.inputs import code_of
from pellucid.errors import DecompileError


_T = TypeVar("_T")
_TOO_DEEP = "nested too deeply for the structured decompiler (RecursionError)"


def _flat_if_too_deep(name: str, make: Callable[[], _T]) -> _T:
    """``make()``; if it hits the recursion limit, ``make()`` again with the fallback.

    Bytecode can nest expressions far deeper than source can (the stack is just a list), and
    the passes after structuring (``ast`` visitors, unparse, CPython's own compiler) recurse
    per level.  The fallback writes one flat statement per instruction, which they handle at
    any depth; if even that is too deep, the error says so instead of a RecursionError.
    """
    try:
        return make()
    except RecursionError:
        pass  # retried below, once the stack has unwound
    from pellucid.decompiler.fallback import force_fallback

    try:
        with force_fallback(_TOO_DEEP):
            return make()
    except RecursionError:
        pass
    raise DecompileError(
        "%s is nested too deeply to decompile within Python's recursion limit (%d), even flat; "
        "raise it with sys.setrecursionlimit() and retry" % (name, sys.getrecursionlimit())
    )


def decompile(obj: Any) -> str:
    """Return Python source equivalent to the bytecode of ``obj``.

    ``obj`` may be a function, method, lambda, generator/coroutine function, code object or
    module code object.  A class gives a ``class`` statement holding its decompiled methods
    (see :mod:`pellucid.decompiler.classes`); one without Python methods raises
    :class:`~pellucid.errors.DecompileError` saying why.

    >>> print(decompile(lambda x: x + 1))
    lambda x: x + 1
    """
    if inspect.isclass(obj):
        from pellucid.decompiler.classes import render_class

        return _flat_if_too_deep(getattr(obj, "__qualname__", "class"), lambda: render_class(obj))
    code = code_of(obj)
    from pellucid.decompiler.render import render_code

    func = obj if getattr(obj, "__code__", None) is code else getattr(obj, "__func__", None)
    return _flat_if_too_deep(code.co_name, lambda: render_code(code, func))


def recompile(obj: Any, path: Optional[str] = None) -> types.CodeType:
    """Decompile ``obj``, compile the source back, and return a code object that can replace it.

    Without ``path`` the code keeps the original's ``co_filename`` and line numbers, so
    tracebacks and debuggers show the original source; with ``path`` the source is written
    there and becomes the code's ``co_filename`` (lines point into that file).  Constants
    that have no literal form are bound, under reserved names, in the function's globals.

    >>> def f(x): return x * 2
    >>> f.__code__ = recompile(f)
    >>> f(21)
    42
    """
    code = code_of(obj)
    from pellucid.decompiler.recompile import recompile_full

    func = obj if getattr(obj, "__code__", None) is code else getattr(obj, "__func__", None)
    result = _flat_if_too_deep(
        code.co_name, lambda: recompile_full(code, path, getattr(func, "__qualname__", None))
    )
    if result.bindings:
        func = obj if hasattr(obj, "__globals__") else getattr(obj, "__func__", None)
        if func is None or not hasattr(func, "__globals__"):
            raise DecompileError("%s has constants without a literal form; recompile a function "
                                 "(whose globals can hold them) instead of a bare code object"
                                 % code.co_name)
        func.__globals__.update(result.bindings)
    return result.code
