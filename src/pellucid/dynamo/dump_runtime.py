"""What a dump's ``full_code_for_<fn>.py`` files call to reach the live objects of the process.

A dump directory holds ``_pellucid_runtime.py``, one line that re-exports this module.  The
full-code files import it to get the guards' bound objects, the globals Dynamo's code reads,
the closures, and the code objects that run, all registered by ``prepare_debug`` while it
wrote the files.  In another process nothing is registered, and each call says so.

Which cache entry a dispatcher runs is decided as Dynamo decides it (:class:`Lookup`): the live
entries of the frame's code, most recently used first, each asked through its own guard
manager; the first that passes runs and moves to the front.  The rendered guards run alongside,
and a rendered guard that answers otherwise is reported once (:meth:`Choice.picks`).

>>> register("d", "full_code_for_f.py:guard:0", {"x": 1})
>>> lookup_registered("d", "full_code_for_f.py:guard:0")
{'x': 1}
"""
import linecache
import os
import sys
import threading
import types
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

_REGISTRY: Dict[str, Dict[str, Any]] = {}
_LOCK = threading.Lock()

RUNTIME_MODULE = "_pellucid_runtime"
RUNTIME_SOURCE = (
    '"""Helper module of a pellucid dump: the full_code files import it (see pellucid.dynamo.dump_runtime)."""\n'
    "from pellucid.dynamo.dump_runtime import bind_guard, cells, frame_globals, function, lookup, original  # noqa: F401\n"
)


class NotInThisProcess(LookupError):
    """The dump was written by another process; its live objects are not here."""


def register(dump_dir: str, key: str, value: Any) -> None:
    """Record a live object under ``key`` for the dump in ``dump_dir``."""
    with _LOCK:
        _REGISTRY.setdefault(os.path.abspath(dump_dir), {})[key] = value


def lookup_registered(dump_dir: str, key: str) -> Any:
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
    return lookup_registered(_dump_dir(file), "%s:%s:globals" % (os.path.basename(file), frame))


def bind_guard(file: str, guard: Callable[..., bool], key: str) -> Callable[..., bool]:
    """``guard`` with the objects its checks compare against (types, ids, tensor specs...)."""
    namespace = lookup_registered(_dump_dir(file), "%s:%s" % (os.path.basename(file), key))
    g = dict(guard.__globals__)
    g.update(namespace)
    return types.FunctionType(guard.__code__, g, guard.__name__, guard.__defaults__, guard.__closure__)


def function(file: str, code_file: str) -> Callable[..., Any]:
    """The function that runs for the cache entry whose code is in ``code_file`` (the code Dynamo
    installed: pellucid's recompiled code from that file, or Dynamo's own when it was refused)."""
    code, fn_globals, closure = lookup_registered(_dump_dir(file), code_file)
    return types.FunctionType(code, fn_globals, code.co_name, None, closure)


_UNCACHED: Dict[int, Tuple[types.CodeType, types.CodeType]] = {}


def uncached(code: types.CodeType) -> types.CodeType:
    """A copy of ``code`` (always the same one) that Dynamo keeps no cache for: running it runs
    the original code, never a cache entry or ``debug()``'s routing of ``code``."""
    with _LOCK:
        known = _UNCACHED.get(id(code))
        if known is None or known[0] is not code:
            known = _UNCACHED[id(code)] = (code, code.replace())
        return known[1]


def original(file: str, frame: str) -> Callable[..., Any]:
    """The frame's original (uncompiled) function (its code a copy Dynamo has no cache for:
    this is what runs when no entry passes)."""
    code, fn_globals, closure = lookup_registered(_dump_dir(file), "%s:%s:original" % (os.path.basename(file), frame))
    fn = types.FunctionType(uncached(code), fn_globals, code.co_name, None, closure)
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


# -- which entry runs: Dynamo's guard managers decide -----------------------------------------------
class LookupData(object):
    """What ``prepare_debug`` registers for a frame's dispatcher: the frame's original code
    (whose cache Dynamo keeps), and which entry index each code object an entry runs has."""

    def __init__(self, code: types.CodeType, label: str, entry_codes: List[Tuple[types.CodeType, int]],
                 capture: Any = None) -> None:
        self.code = code
        self.label = label
        self._codes = entry_codes  # (keeps the code objects, so their ids stay theirs)
        self.index_of = {id(c): k for c, k in entry_codes}
        self.capture = capture
        self.warned: Set[Tuple[int, bool]] = set()
        self.lock = threading.Lock()
        self.calls = 0  # dispatcher calls (lookups made), for tests and reports


_ENTRY_LIST: List[Any] = []  # [torch's _debug_get_cache_entry_list], found once


def _live_entries(code: types.CodeType) -> List[Any]:
    """Dynamo's cache entries of ``code``, in the order Dynamo tries them."""
    if not _ENTRY_LIST:
        from pellucid.dynamo.torch_features import find

        _ENTRY_LIST.append(find("torch._dynamo.eval_frame._debug_get_cache_entry_list"))
    entries = _ENTRY_LIST[0]
    return list(entries(code)) if entries is not None else []


class Lookup(object):
    """A frame's cache as one loaded ``full_code`` file sees it: Dynamo's live entries in the
    order Dynamo tries them.  Dynamo moves the entry that runs to the front of its list; the
    dispatcher (which runs instead of Dynamo's lookup) keeps that order itself, starting from
    Dynamo's order when the file is loaded."""

    def __init__(self, data: LookupData, guards: Dict[int, Callable[..., Any]], file: str) -> None:
        self.data = data
        self.guards = guards
        self.file = file
        self._recent: Optional[List[int]] = None  # id(entry code), most recently used first
        self._lock = threading.Lock()

    def _ordered(self) -> List[Any]:
        # the live list is read on every call (entry objects do not outlive a torch reset)
        live = _live_entries(self.data.code)
        with self._lock:
            if self._recent is None:
                self._recent = [id(e.code) for e in live]
            rank = {c: n for n, c in enumerate(self._recent)}
        return sorted(live, key=lambda e: rank.get(id(e.code), len(rank)))

    def select(self, f_locals: Dict[str, Any]) -> "Choice":
        """The entry Dynamo runs for these frame locals (a guard error propagates, as in Dynamo)."""
        self.data.calls += 1
        chosen = None
        for entry in self._ordered():
            manager = getattr(entry, "guard_manager", None)
            if manager is not None and manager.check(f_locals):
                chosen = entry
                break
        if chosen is not None:
            with self._lock:
                key = id(chosen.code)
                recent = self._recent if self._recent is not None else []
                if key in recent:
                    recent.remove(key)
                recent.insert(0, key)
        return Choice(self, f_locals, chosen)

    def verdict(self, index: int, f_locals: Dict[str, Any]) -> bool:
        """Dynamo's guard manager's answer for the entry numbered ``index``."""
        for entry in _live_entries(self.data.code):
            if self.data.index_of.get(id(entry.code)) == index:
                return bool(entry.guard_manager.check(f_locals))
        return False

    def disagree(self, index: int, dynamo: bool, f_locals: Dict[str, Any]) -> None:
        """Report, once per entry and answer, a rendered guard that answers otherwise."""
        with self.data.lock:
            if (index, dynamo) in self.data.warned:
                return
            self.data.warned.add((index, dynamo))
        try:
            where = self._where(index, dynamo, f_locals)
        except Exception as exc:  # noqa: BLE001 - a description only
            where = "(not found: %s: %s)" % (type(exc).__name__, exc)
        from pellucid.dynamo.model import GuardDisagreement
        from pellucid.dynamo.torch_features import warn

        capture = self.data.capture
        if capture is not None:
            capture.disagreements.append(GuardDisagreement(self.data.label, index, dynamo, where))
        warn("the rendered guard of cache entry %d of %s answers %s where Dynamo's guard manager "
             "answers %s; Dynamo's answer decides which entry runs. The first guard line that "
             "disagrees: %s" % (index, self.data.label, not dynamo, dynamo, where))

    def _where(self, index: int, dynamo: bool, f_locals: Dict[str, Any]) -> str:
        guard = self.guards.get(index)
        if dynamo and guard is not None:
            # the rendered guard said no: the line it returned False from
            line = _last_line(guard, f_locals, frame_globals(self.file, self._ident_of(guard)))
            if line is not None:
                path = guard.__code__.co_filename
                return "%s:%d: %s" % (path, line, linecache.getline(path, line).strip())
        for entry in _live_entries(self.data.code):
            if self.data.index_of.get(id(entry.code)) == index:
                info = entry.guard_manager.check_verbose(f_locals)
                parts = list(getattr(info, "verbose_code_parts", []) or [])
                if not dynamo and parts:
                    return "Dynamo's guard fails: %s" % str(parts[0]).strip()
        return "(the guard of entry %d, %s:%d)" % (
            index, guard.__code__.co_filename if guard else self.file,
            guard.__code__.co_firstlineno if guard else 0)

    @staticmethod
    def _ident_of(guard: Callable[..., Any]) -> str:
        name = guard.__name__  # guard_<ident>_<index>
        return name[len("guard_"):].rsplit("_", 1)[0]


class Choice(object):
    """Dynamo's answer for one call: which entry runs."""

    def __init__(self, lookup: Lookup, f_locals: Dict[str, Any], entry: Any) -> None:
        self.lookup = lookup
        self.f_locals = f_locals
        self.entry = entry
        self.index = lookup.data.index_of.get(id(entry.code)) if entry is not None else None

    def picks(self, index: int, rendered: Optional[bool]) -> bool:
        """Whether entry ``index`` runs; ``rendered`` is its rendered guard's answer (None
        when not rendered), checked against Dynamo's guard manager."""
        runs = self.entry is not None and self.index == index
        if rendered is not None:
            dynamo = runs or self.lookup.verdict(index, self.f_locals)
            if bool(rendered) != dynamo:
                self.lookup.disagree(index, dynamo, self.f_locals)
        return runs

    def otherwise(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """What runs when no listed entry was picked: the code of the entry Dynamo picked (one
        compiled outside ``prepare_debug``), or ``original`` when no entry passes."""
        if self.entry is None:
            return original
        fn = types.FunctionType(self.entry.code, original.__globals__, original.__name__, None,
                                original.__closure__)
        fn.__pellucid_runtime__ = True  # type: ignore[attr-defined]
        return fn


def _last_line(fn: Callable[..., Any], *args: Any) -> Optional[int]:
    """The last line of ``fn``'s own code that ran when calling ``fn(*args)``."""
    code = fn.__code__
    lines: List[int] = []

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code is not code:
            return None
        if event == "line":
            lines.append(frame.f_lineno)
        return tracer

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn(*args)
    finally:
        sys.settrace(old)
    return lines[-1] if lines else None


def lookup(file: str, frame: str, guards: Dict[int, Callable[..., Any]]) -> Lookup:
    """The cache lookup of ``frame`` for a loaded full_code file (``guards``: the rendered
    guard of each entry index, to say where one disagrees)."""
    data = lookup_registered(_dump_dir(file), "%s:%s:lookup" % (os.path.basename(file), frame))
    return Lookup(data, guards, file)


# -- closures: the cells of the function called ------------------------------------------------------
class Cells(object):
    """The closure of the compiled function being called, in its code's ``co_freevars`` order."""

    def __init__(self, names: Tuple[str, ...], cells: Tuple[Any, ...]) -> None:
        self.names = names
        self.cells = cells

    def values(self) -> Dict[str, Any]:
        """Free variable -> value, as the frame's locals show them (empty cells left out)."""
        out: Dict[str, Any] = {}
        for name, cell in zip(self.names, self.cells):
            try:
                out[name] = cell.cell_contents
            except ValueError:
                pass
        return out

    def bind(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn``'s code with these cells as its closure (what runs in the called function's frame)."""
        bound = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, self.cells)
        bound.__pellucid_runtime__ = True  # type: ignore[attr-defined]
        return bound


def cells(file: str, frame: str, given: Any) -> Cells:
    """The closure of the function called: ``given`` is a function debug()'s trampoline made
    over the called function's cells; None (a direct call of the dispatcher) gives the closure
    of the function that was compiled."""
    code, _, closure = lookup_registered(_dump_dir(file), "%s:%s:original" % (os.path.basename(file), frame))
    names = tuple(code.co_freevars)
    if given is None:
        return Cells(names, tuple(closure or ()))
    by_name = dict(zip(given.__code__.co_freevars, given.__closure__ or ()))
    return Cells(names, tuple(by_name[n] for n in names))
