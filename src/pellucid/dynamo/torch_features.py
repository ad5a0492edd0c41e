"""The PyTorch internals pellucid uses, each found by feature detection.

PyTorch moves its internals every release.  Every lookup goes through :func:`find`, which
returns the object or ``None`` and records a warning that names what is missing, so a moved
hook is reported once instead of silently doing nothing.

>>> find("torch._dynamo.convert_frame.register_bytecode_hook") is not None  # doctest: +SKIP
True
"""
import importlib
import inspect
import warnings
from typing import Any, Dict, List, Optional

#: What each internal is used for, for the warning when it is missing.
PURPOSE: Dict[str, str] = {
    # (every internal pellucid reads, so that check_all can name each one that moved)
    "torch._dynamo.convert_frame._compile":
        "reading the globals and closure of the frame being compiled (full_code files look the "
        "function up by a scan instead)",
    "torch.compiler.set_stance":
        "keeping debug() from compiling (inputs no cache entry accepts would be compiled)",
    "torch._C._dynamo.eval_frame.get_eval_frame_callback":
        "telling debug()'s cache misses from calls outside torch.compile (misses are not reported)",
    "torch._C._dynamo.guards.RelationalGuard":
        "reading relational guards (guards with one are not written as Python)",
    "torch._C._dynamo.guards.GlobalStateGuard":
        "rendering GLOBAL_STATE guards (guards with one are not written as Python)",
    "torch._C._dynamo.guards.compute_overlapping_tensors":
        "rendering storage-overlap guards (guards with one are not written as Python)",
    "torch._C._dynamo.guards.dict_version":
        "rendering DICT_VERSION guards (guards with one are not written as Python)",
    "torch.fx.GraphModule":
        "listing graphs and running them from their files under debug()",
    "torch._dynamo.convert_frame.register_bytecode_hook":
        "capturing Dynamo's transformed bytecode (nothing can be dumped)",
    "torch._dynamo.eval_frame._debug_get_cache_entry_list":
        "reading cache entries and their guards (no guards or full_code files)",
    "torch._logging._internal.trace_log":
        "torch's structured trace (no graph files, graph-break or recompilation index)",
    "torch._guards.CompileContext.current_compile_id":
        "linking transformed code to its compilation (entries are matched by code instead)",
    "torch._C._dynamo.eval_frame._load_precompile_entry":
        "routing compiled calls through the full_code files under debug()",
    "torch._C._dynamo.eval_frame._reset_precompile_entries":
        "routing compiled calls through the full_code files under debug()",
    "torch._C._dynamo.eval_frame._debug_get_precompile_entries":
        "routing compiled calls through the full_code files under debug()",
    "torch._dynamo.guards.GuardManagerWrapper":
        "routing compiled calls through the full_code files under debug()",
    "torch._dynamo.guards.get_verbose_code_part":
        "naming the line of the compiled function that installed a guard that failed (a "
        "recompilation names the innermost line only)",
}

_missing_reported = set()


class PellucidWarning(UserWarning):
    """A problem inside pellucid; the user's program goes on with Dynamo's own code."""


def warn(message: str) -> None:
    """Emit one :class:`PellucidWarning` (the single channel for pellucid's failures)."""
    warnings.warn("pellucid: " + message, PellucidWarning, stacklevel=3)


def find(dotted: str) -> Optional[Any]:
    """Import the module part of ``dotted`` and walk the attributes; ``None`` if absent.

    A missing internal is warned about once per process, naming it and what stops working.
    """
    parts = dotted.split(".")
    obj: Any = None
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            obj = None
        break
    if obj is None and dotted not in _missing_reported:
        _missing_reported.add(dotted)
        warn("this PyTorch has no %s; %s" % (dotted, PURPOSE.get(dotted, "a feature is off")))
    return obj


#: The arguments of ``torch._dynamo.convert_frame._compile`` that capture reads from its frame.
COMPILE_ARGUMENTS = ("code", "globals", "closure")


def check_all() -> List[str]:
    """Look up every internal of :data:`PURPOSE` (each one missing is warned about once, by
    name) and check the arguments capture reads from ``_compile``'s frame; return what is missing.

    >>> check_all()  # doctest: +SKIP
    []
    """
    absent = [name for name in PURPOSE if find(name) is None]
    compile_fn = find("torch._dynamo.convert_frame._compile")
    if compile_fn is not None:
        try:
            params = inspect.signature(compile_fn).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        for arg in COMPILE_ARGUMENTS:
            name = "torch._dynamo.convert_frame._compile(%s=...)" % arg
            if arg not in params:
                absent.append(name)
                if name not in _missing_reported:
                    _missing_reported.add(name)
                    warn("this PyTorch's %s takes no %r argument; %s"
                         % ("torch._dynamo.convert_frame._compile", arg,
                            PURPOSE["torch._dynamo.convert_frame._compile"]))
    return absent
