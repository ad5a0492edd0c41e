"""Inside ``debug()``, calls of a compiled user function go through its ``full_code`` file.

Dynamo looks its cache up in C, so a breakpoint in ``full_code_for_<fn>.py`` (a guard, the
dispatcher) would never be hit.  While ``debug()`` is active, Dynamo's lookup for each code
object it compiled finds first a small trampoline (loaded as a precompile entry, see
:func:`route_through_full_code`) calling the dispatcher of the dumped ``full_code`` file; the
dispatcher asks Dynamo's guard managers which entry runs, runs the rendered guards alongside,
and calls the transformed code (the dumped file Dynamo itself runs).  Resume functions are
still found through Dynamo's cache.  The trampolines are removed when ``debug()`` ends.

>>> trampoline_source("f", "x, y", "x, y", ())
'def f(x, y): return __pellucid_dispatch__(x, y)\\n'
"""
import importlib.util
import os
import sys
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

DISPATCH = "__pellucid_dispatch__"


def trampoline_source(name: str, params: str, call: str, freevars: Tuple[str, ...],
                      dispatch: str = DISPATCH, cellvars: Tuple[str, ...] = (),
                      argnames: Tuple[str, ...] = ()) -> str:
    """A function named ``name`` with ``params`` that returns ``dispatch(call)``, on one line
    (so every line of its code is the compiled function's ``def`` line).  It has the same
    free and cell variables as the compiled function (Dynamo runs it in that function's
    frame): nested for the free ones, which a lambda over them hands to the dispatcher
    (``CLOSURE_PARAM``) so the dispatcher runs the entry with the caller's closure; cells
    that are not arguments are assigned after the ``return``, which never runs."""
    from pellucid.dynamo.full_code import CLOSURE_PARAM

    tail = ""
    captured = tuple(freevars) + tuple(cellvars)
    if freevars:
        call = "%s%s%s=lambda: (%s,)" % (call, ", " if call else "", CLOSURE_PARAM, ", ".join(captured))
    elif cellvars:
        tail += "; (lambda: (%s,))" % ", ".join(cellvars)
    locals_ = [c for c in cellvars if c not in argnames]
    if locals_:
        tail += "; %s = None" % " = ".join(locals_)
    line = "def %s(%s): return %s(%s)%s" % (name, params, dispatch, call, tail)
    if freevars:
        return "def __pellucid_outer__(%s):\n    %s\n    return %s\n" % (", ".join(freevars), line, name)
    return line + "\n"


def _moved(code: types.CodeType, delta: int, filename: str) -> types.CodeType:
    """``code`` (and the code nested in it) with every line moved by ``delta``, in ``filename``."""
    consts = tuple(_moved(c, delta, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_firstlineno=code.co_firstlineno + delta, co_filename=filename, co_consts=consts)


def _nargs(code: types.CodeType) -> int:
    return code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)


def trampoline(code: types.CodeType, dispatch: str = DISPATCH) -> Optional[types.CodeType]:
    """Code laid out like ``code`` (arguments, cell and free variables: Dynamo runs it in a frame
    made for ``code``) that calls ``dispatch``; None if that layout cannot be reproduced.  It
    reports itself at ``code``'s ``def`` line, in ``code``'s file: a traceback or a debugger's
    stack shows the compiled function being entered, then the dispatcher of its full_code file."""
    from pellucid.decompiler.recompile import find_nested_code
    from pellucid.dynamo.full_code import signature_parts

    params, call, _ = signature_parts(code)
    name = code.co_name if code.co_name.isidentifier() else "f"
    argnames = tuple(code.co_varnames[:_nargs(code)])
    source = trampoline_source(name, params, call, code.co_freevars, dispatch, code.co_cellvars, argnames)
    module = compile(source, "<pellucid trampoline>", "exec", dont_inherit=True)
    new = find_nested_code(module, name)
    if new is None:
        return None
    if new.co_freevars != code.co_freevars or new.co_cellvars != code.co_cellvars or \
            new.co_argcount != code.co_argcount or new.co_kwonlyargcount != code.co_kwonlyargcount or \
            getattr(new, "co_posonlyargcount", 0) != getattr(code, "co_posonlyargcount", 0) or \
            (new.co_flags & 0x0C) != (code.co_flags & 0x0C) or \
            tuple(new.co_varnames[:_nargs(new)]) != argnames:
        return None
    new = _moved(new, code.co_firstlineno - new.co_firstlineno, code.co_filename)
    changes: Dict[str, Any] = {"co_name": code.co_name}
    if hasattr(code, "co_qualname"):
        changes["co_qualname"] = code.co_qualname
    return new.replace(**changes)


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


#: the PyTorch internals routing uses (an extra cache entry Dynamo checks before its own)
ROUTING = ("torch._C._dynamo.eval_frame._load_precompile_entry",
           "torch._C._dynamo.eval_frame._reset_precompile_entries",
           "torch._C._dynamo.eval_frame._debug_get_precompile_entries",
           "torch._dynamo.guards.GuardManagerWrapper")


def route_through_full_code(targets: List[Tuple[types.CodeType, Callable[..., Any], Dict[str, Any]]]
                            ) -> Tuple[List[Callable[[], None]], Dict[int, str]]:
    """Make Dynamo run each target's dispatcher whenever it would look up the cache of the
    target's code object: ``targets`` are (original code, dispatcher, the globals the code
    runs with).  Returns the undo actions and, per ``id`` of a code object, "runs" or why not.

    Dynamo checks a code object's *precompile entries* (what ``torch.compiler`` loads from
    disk) before its cache entries; pellucid loads one whose guard always passes and whose code
    is a trampoline to the dispatcher.  Nothing about the function changes (not its
    ``__code__``, which guards may check), calls outside ``torch.compile`` run the plain
    function as before, and the dispatcher asks Dynamo's own guard managers which entry runs.
    """
    from pellucid.dynamo.torch_features import find

    load, reset, existing, wrapper = (find(name) for name in ROUTING)
    undo: List[Callable[[], None]] = []
    outcome: Dict[int, str] = {}
    if load is None or reset is None or existing is None or wrapper is None:
        for code, _, _ in targets:
            outcome[id(code)] = "not used: this PyTorch has no precompile entries to route calls with"
        return undo, outcome
    for code, dispatcher, fn_globals in targets:
        if list(existing(code)):
            outcome[id(code)] = "not used: the code already has precompile entries (torch.compiler.load)"
            continue
        dispatch = "%s%d" % (DISPATCH, id(code))  # one global name per compiled function
        tramp = trampoline(code, dispatch)
        if tramp is None:
            outcome[id(code)] = "not used: its argument, cell or free variable layout cannot be reproduced"
            continue
        had = dispatch in fn_globals
        old = fn_globals.get(dispatch)
        fn_globals[dispatch] = dispatcher
        load(code, wrapper(), tramp)
        outcome[id(code)] = "runs"

        def restore(code: types.CodeType = code, g: Dict[str, Any] = fn_globals, name: str = dispatch,
                    had: bool = had, old: Any = old) -> None:
            reset(code)
            if had:
                g[name] = old
            else:
                g.pop(name, None)
        undo.append(restore)
    return undo, outcome
