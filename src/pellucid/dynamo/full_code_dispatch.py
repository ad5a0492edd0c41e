"""Inside ``debug()``, calls of a compiled user function go through its ``full_code`` file.

Dynamo looks its cache up in C, so a breakpoint in ``full_code_for_<fn>.py`` (a guard, the
dispatcher) would never be hit.  While ``debug()`` is active, each live function whose code
Dynamo compiled gets a small trampoline as its code, calling the dispatcher of the dumped
``full_code`` file; the dispatcher checks the guards in Python and calls the transformed code
(the dumped file Dynamo itself runs).  The trampoline has no cache entries, so Dynamo (which
compiles nothing inside ``debug()``) just runs it; resume functions are still found through
Dynamo's cache.  The original code is put back when ``debug()`` ends.

>>> trampoline_source("f", "x, y", "x, y", ())
'def f(x, y):\\n    return __pellucid_dispatch__(x, y)\\n'
"""
import gc
import importlib.util
import os
import sys
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

DISPATCH = "__pellucid_dispatch__"


def trampoline_source(name: str, params: str, call: str, freevars: Tuple[str, ...],
                      dispatch: str = DISPATCH) -> str:
    """A function named ``name`` with ``params`` that returns ``dispatch(call)``; free
    variables are named in a never-run statement so the closure layout matches."""
    body = ""
    if freevars:
        body = "        if False:\n            (%s,)\n" % ", ".join(freevars)
        return ("def __pellucid_outer__(%s):\n    def %s(%s):\n%s        return %s(%s)\n    return %s\n"
                % (", ".join(freevars), name, params, body, dispatch, call, name))
    return "def %s(%s):\n    return %s(%s)\n" % (name, params, dispatch, call)


def trampoline(code: types.CodeType, filename: str, dispatch: str = DISPATCH) -> Optional[types.CodeType]:
    """Code with ``code``'s signature and closure layout that calls ``DISPATCH``; None if the
    layout cannot be reproduced."""
    from pellucid.decompiler.recompile import find_nested_code
    from pellucid.dynamo.full_code import signature_parts

    params, call, _ = signature_parts(code)
    name = code.co_name if code.co_name.isidentifier() else "f"
    module = compile(trampoline_source(name, params, call, code.co_freevars, dispatch), filename, "exec")
    new = find_nested_code(module, name)
    if new is None:
        return None
    if new.co_freevars != code.co_freevars or new.co_argcount != code.co_argcount or \
            new.co_kwonlyargcount != code.co_kwonlyargcount or \
            (new.co_flags & 0x0C) != (code.co_flags & 0x0C):
        return None
    return new.replace(co_name=code.co_name)


def load_full_code(path: str) -> types.ModuleType:
    """Import a dumped ``full_code`` file (its directory holds the runtime helper it needs)."""
    directory = os.path.dirname(path)
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location("__pellucid_debug__." + name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.path.insert(0, directory)
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    finally:
        try:
            sys.path.remove(directory)
        except ValueError:
            pass
    return module


def route_through_full_code(code: types.CodeType, dispatcher: Callable[..., Any]) -> List[Callable[[], None]]:
    """Make every live function running ``code`` call ``dispatcher``; returns undo actions."""
    undo: List[Callable[[], None]] = []
    dispatch = "%s%d" % (DISPATCH, id(code))  # one global name per compiled function
    tramp = trampoline(code, getattr(dispatcher, "__code__", code).co_filename, dispatch)
    if tramp is None:
        return undo
    for obj in gc.get_referrers(code):
        if not (type(obj) is types.FunctionType and obj.__code__ is code) or \
                getattr(obj, "__pellucid_runtime__", False):
            continue  # (the full_code file's own handle on the original code must stay as is)
        fn_globals: Dict[str, Any] = obj.__globals__
        had = dispatch in fn_globals
        old_dispatch = fn_globals.get(dispatch)
        fn_globals[dispatch] = dispatcher
        obj.__code__ = tramp

        def restore(fn: types.FunctionType = obj, g: Dict[str, Any] = fn_globals,
                    had: bool = had, old: Any = old_dispatch) -> None:
            fn.__code__ = code
            if had:
                g[dispatch] = old
            else:
                g.pop(dispatch, None)
        undo.append(restore)
    return undo
