"""What a dump's ``full_code_for_<fn>.py`` files call to reach the live objects of the process.

A dump directory holds ``_pellucid_runtime.py``, one line that re-exports this module.  The
full-code files import it to get the guards' bound objects, the globals Dynamo's code reads,
the closures, and the code objects that run, all registered by ``prepare_debug`` while it
wrote the files.  In another process nothing is registered, and each call says so.

>>> register("d", "full_code_for_f.py:guard:0", {"x": 1})
>>> lookup("d", "full_code_for_f.py:guard:0")
{'x': 1}
"""
import os
import threading
import types
from typing import Any, Callable, Dict, Optional, Tuple

_REGISTRY: Dict[str, Dict[str, Any]] = {}
_LOCK = threading.Lock()

RUNTIME_MODULE = "_pellucid_runtime"
RUNTIME_SOURCE = (
    '"""Helper module of a pellucid dump: the full_code files import it (see pellucid.dynamo.dump_runtime)."""\n'
    "from pellucid.dynamo.dump_runtime import bind_guard, function, original, frame_globals  # noqa: F401\n"
)


class NotInThisProcess(LookupError):
    """The dump was written by another process; its live objects are not here."""


def register(dump_dir: str, key: str, value: Any) -> None:
    """Record a live object under ``key`` for the dump in ``dump_dir``."""
    with _LOCK:
        _REGISTRY.setdefault(os.path.abspath(dump_dir), {})[key] = value


def lookup(dump_dir: str, key: str) -> Any:
    """The object registered under ``key``; :class:`NotInThisProcess` when there is none."""
    try:
        return _REGISTRY[os.path.abspath(dump_dir)][key]
    except KeyError:
        raise NotInThisProcess(
            "%s was not registered in this process: import the full_code file in the process "
            "that ran torch.compile under pellucid.prepare_debug(%r)" % (key, dump_dir)) from None


def _dump_dir(file: str) -> str:
    return os.path.dirname(os.path.abspath(file))


def frame_globals(file: str, frame: str) -> Dict[str, Any]:
    """The globals dict the compiled frame ``frame`` runs with (Dynamo's graphs live there)."""
    return lookup(_dump_dir(file), "%s:%s:globals" % (os.path.basename(file), frame))


def bind_guard(file: str, guard: Callable[..., bool], key: str) -> Callable[..., bool]:
    """``guard`` with the objects its checks compare against (types, ids, tensor specs...)."""
    namespace = lookup(_dump_dir(file), "%s:%s" % (os.path.basename(file), key))
    g = dict(guard.__globals__)
    g.update(namespace)
    return types.FunctionType(guard.__code__, g, guard.__name__, guard.__defaults__, guard.__closure__)


def function(file: str, code_file: str) -> Callable[..., Any]:
    """The function that runs for the cache entry whose code is in ``code_file`` (the code Dynamo
    installed: pellucid's recompiled code from that file, or Dynamo's own when it was refused)."""
    code, fn_globals, closure = lookup(_dump_dir(file), code_file)
    return types.FunctionType(code, fn_globals, code.co_name, None, closure)


def original(file: str, frame: str) -> Callable[..., Any]:
    """The frame's original (uncompiled) function."""
    code, fn_globals, closure = lookup(_dump_dir(file), "%s:%s:original" % (os.path.basename(file), frame))
    fn = types.FunctionType(code, fn_globals, code.co_name, None, closure)
    fn.__pellucid_runtime__ = True  # type: ignore[attr-defined]  # debug() leaves it alone
    return fn


def closure_of(code: types.CodeType) -> Optional[Tuple[Any, ...]]:
    """The closure of a live function running ``code`` (found through the garbage collector)."""
    if not code.co_freevars:
        return None
    import gc

    for obj in gc.get_referrers(code):
        if type(obj) is types.FunctionType and obj.__code__ is code:
            return obj.__closure__
    return None
