"""The PyTorch internals pellucid uses, each found by feature detection.

PyTorch moves its internals every release.  Every lookup goes through :func:`find`, which
returns the object or ``None`` and records a warning that names what is missing, so a moved
hook is reported once instead of silently doing nothing.

>>> find("torch._dynamo.convert_frame.register_bytecode_hook") is not None  # doctest: +SKIP
True
"""
import importlib
import warnings
from typing import Any, Dict, Optional

#: What each internal is used for, for the warning when it is missing.
PURPOSE: Dict[str, str] = {
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
