"""Collect what Dynamo produces into the capture model, through the hooks PyTorch made for tools.

* ``torch._dynamo.convert_frame.register_bytecode_hook`` gives each (original, transformed)
  code pair while a frame compiles; the hook's return value is the code Dynamo installs, which
  is how pellucid's verified recompiled code (whose ``co_filename`` is the dumped file) runs.
* torch's structured trace (``torch._logging._internal.trace_log``) gives the FX/AOT graphs,
  Inductor's output code, graph-break reasons and recompilation reasons, tagged by compile id.
* ``_debug_get_cache_entry_list`` gives the cache entries and guard managers once compiling
  is over.

Every callback catches its own errors: a pellucid failure is one warning and Dynamo's own
code runs.
"""
import logging
import re
import sys
import threading
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

from pellucid.dynamo import trace_filter, transformed_code
from pellucid.dynamo.dump_files import DumpDirError, DumpFiles
from pellucid.dynamo.gc_pause import collector_paused
from pellucid.dynamo.model import (Capture, CompiledFrame, CompiledGraph, GraphBreak, GraphStage,
                                   Recompilation)
from pellucid.dynamo.names import Identity, is_resume_name, label_of, namer_for
from pellucid.dynamo.torch_features import check_all, find, warn

#: structured-trace event name -> graph stage
GRAPH_EVENTS = {
    "dynamo_output_graph": "dynamo",
    "aot_joint_graph": "aot_joint",
    "aot_forward_graph": "aot_forward",
    "aot_backward_graph": "aot_backward",
    "aot_inference_graph": "aot_inference",
    "inductor_output_code": "inductor",
}

#: the structured-trace event of the Dynamo graph, and the artifact of a graph-break reason
DYNAMO_GRAPH_EVENT = "dynamo_output_graph"
GRAPH_BREAK_ARTIFACT = "dynamo_graph_break_reason"

#: Inductor's first comment in its output code names the AOT graph it compiled
_AOT_ID = re.compile(r"^# AOT ID: \[.*_backward'\]", re.M)

_RESUME_LINE = re.compile(r"_at_(\d+)$")
_RESUME_OFFSET = re.compile(r"^__resume_at_(\d+)_\d+$")
_BREAK_AT = re.compile(r"Graph break in user code at (\S+:\d+)")


def compile_id_of(metadata: Dict[str, Any]) -> Optional[str]:
    """``"frame/compile"`` as Dynamo prints compile ids, from a structured-trace record."""
    if "frame_id" in metadata and "frame_compile_id" in metadata:
        return "%s/%s" % (metadata["frame_id"], metadata["frame_compile_id"])
    return None


def inductor_stage(code: str) -> str:
    """``inductor_backward`` for Inductor's output code of an AOT backward graph (compiled
    under the same compile id as the forward, often only when ``backward()`` first runs),
    else ``inductor``."""
    return "inductor_backward" if _AOT_ID.search(code[:2000]) else "inductor"


class _TraceHandler(logging.Handler):
    def __init__(self, capturer: "Capturer") -> None:
        super().__init__(logging.DEBUG)
        self.capturer = capturer

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if isinstance(metadata, dict):
            self.capturer.guarded("reading torch's structured trace", self.capturer.on_trace,
                                  metadata, getattr(record, "payload", None))


class Capturer:
    """Install the hooks, fill a :class:`Capture`, and remove the hooks again."""

    def __init__(self, files: DumpFiles,
                 verify: Callable[[types.CodeType, types.CodeType, Dict[str, Any]], Tuple[bool, str]]) -> None:
        self.files = files
        self.verify = verify
        self.capture = Capture(files.dump_dir)
        #: compile id -> [(stage, text, file Inductor loaded the text from)]
        self.graph_sources: Dict[str, List[Tuple[str, str, Optional[str]]]] = {}
        self.globals_of: Dict[int, Dict[str, Any]] = {}  # id(original code) -> frame globals
        #: id(original code) -> the closure of the frame Dynamo compiled (read from ``_compile``'s
        #: arguments, so writing the dump needs no garbage-collector scan for the function)
        self.closures_of: Dict[int, Optional[Tuple[Any, ...]]] = {}
        self._lock = threading.RLock()
        self._undo: List[Callable[[], None]] = []
        self._warned: set = set()
        self._pending_breaks: List[GraphBreak] = []  # from the trace; placed in finish()
        self._metrics: List[Tuple[str, Dict[str, Any]]] = []
        self.dump_dir_lost = False
        self.namer = namer_for(files.dump_dir)
        self._idents: Dict[str, Any] = {}  # ident -> the frame holding it, in this capture
        #: id(resume code) -> (that code, the frame whose transformed code calls it, resume
        #: offset), from the ``__resume_at_*`` globals of each transformed code, as it is made
        self._resume_parents: Dict[int, Tuple[types.CodeType, CompiledFrame, Optional[int]]] = {}

    # -- installing ---------------------------------------------------------------------------
    def install(self) -> None:
        check_all()  # (each internal that moved is named once, whether or not it is used here)
        register = find("torch._dynamo.convert_frame.register_bytecode_hook")
        if register is not None:
            handle = register(self.on_bytecode)
            self._undo.append(handle.remove)
        trace_log = find("torch._logging._internal.trace_log")
        if trace_log is not None:
            handler = _TraceHandler(self)
            old_level = trace_log.level
            trace_log.addHandler(handler)
            trace_log.setLevel(logging.DEBUG)

            def remove() -> None:
                trace_log.removeHandler(handler)
                trace_log.setLevel(old_level)
            self._undo.append(remove)
            # events nobody reads are not built while this handler is the only one
            self._undo.extend(trace_filter.install(trace_log, handler))

    def uninstall(self) -> None:
        while self._undo:
            undo = self._undo.pop()
            try:
                undo()
            except Exception as exc:
                warn("could not remove a hook: %s: %s" % (type(exc).__name__, exc))

    def guarded(self, what: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a callback; turn any error into one warning (per kind of failure)."""
        if self.dump_dir_lost:
            return None  # said once already; Dynamo's own code runs from here on
        try:
            with collector_paused():
                return fn(*args)
        except DumpDirError as exc:
            self.dump_dir_lost = True
            message = ("the dump directory %s cannot be written any more (%s); pellucid stops "
                       "dumping and the program goes on with Dynamo's own code"
                       % (self.files.dump_dir, exc.strerror or exc))
            self.capture.warnings.append(message)
            warn(message)
            return None
        except Exception as exc:  # never let pellucid break the user's program
            key = (what, type(exc).__name__)
            if key not in self._warned:
                self._warned.add(key)
                message = "internal error while %s: %s: %s" % (what, type(exc).__name__, exc)
                self.capture.warnings.append(message)
                warn(message)
            return None

    # -- bytecode hook --------------------------------------------------------------------------
    def on_bytecode(self, original: types.CodeType, transformed: types.CodeType) -> Optional[types.CodeType]:
        return self.guarded("handling Dynamo's code for %s" % original.co_name,
                            self._on_bytecode, original, transformed)

    def _on_bytecode(self, original: types.CodeType, transformed: types.CodeType) -> Optional[types.CodeType]:
        with self._lock:
            fn_globals, closure = _frame_context(original)
            frame = self.frame_for(original, fn_globals)
            compile_id = self._current_compile_id() or "?/%d" % len(frame.transforms)
            if fn_globals is not None:
                self.globals_of[id(original)] = fn_globals
            if closure is not _UNKNOWN:
                self.closures_of[id(original)] = closure  # type: ignore[assignment]
            # n counts this frame's compilations; another process's file of the same name
            # makes this one ``...for_f.1.py`` (see DumpFiles.claim)
            path = self.files.claim("__transformed_code_%d_for_%s.py" % (len(frame.transforms), frame.ident))
            t = transformed_code.build(compile_id, original, transformed, path, self.files.write,
                                       fn_globals, self.verify)
            frame.transforms.append(t)
            self._note_resumes(frame, t, fn_globals)
            self.capture.files.append(path)
            if t.replacement is None:
                message = ("Dynamo's own code runs for %s (compile %s): %s; disassembly in %s"
                           % (frame.label, compile_id, t.rejected, path))
                self.capture.warnings.append(message)
                if t.source is None:
                    # pellucid failed (not just "could not show it equivalent"): say so, once
                    # per frame; the index lists the others
                    warn(message)
            return t.replacement

    def _note_resumes(self, frame: CompiledFrame, t: Any, fn_globals: Optional[Dict[str, Any]]) -> None:
        """Remember which frame calls each resume function of ``t`` (the ``__resume_at_*``
        globals Dynamo installed for it), so the resume function is named and filed with it."""
        for name in t.resumes:
            code = resume_code((fn_globals or {}).get(name))
            if code is not None and id(code) not in self._resume_parents:
                m = _RESUME_OFFSET.match(name)
                self._resume_parents[id(code)] = (code, frame, int(m.group(1)) if m else None)

    def frame_for(self, code: types.CodeType, fn_globals: Optional[Dict[str, Any]] = None) -> CompiledFrame:
        """The frame of ``code`` (made, and named, the first time the code is seen)."""
        frame = self.capture.frames.get(id(code))
        if frame is not None and frame.code is code:
            return frame
        qualname = _qualname_of(code, fn_globals)
        frame = CompiledFrame(code.co_name, qualname, code.co_filename, code.co_firstlineno, code=code)
        frame.module = fn_globals.get("__name__") if fn_globals is not None else None
        known = self._resume_parents.get(id(code))
        offset: Optional[int] = None
        if known is not None and known[0] is code:
            frame.parent, offset = known[1], known[2]
        frame.is_resume = frame.parent is not None or is_resume_name(code.co_name)
        if frame.parent is not None:
            m = _RESUME_LINE.search(code.co_name)
            parent = frame.parent
            label = "%s.resume_at_%s" % (label_of(parent.name, parent.qualname),
                                         m.group(1) if m else code.co_firstlineno)
            frame.module = frame.module or parent.module
        else:
            label = label_of(code.co_name, qualname)
        identity = Identity(label, frame.module, code.co_firstlineno, code, offset)
        frame.label, frame.ident = self.namer.name(identity, self._idents, code)
        frame.root = _root_of(frame)
        self.capture.frames[id(code)] = frame
        return frame

    @staticmethod
    def _current_compile_id() -> Optional[str]:
        current = find("torch._guards.CompileContext.current_compile_id")
        if current is None:
            return None
        cid = current()
        return None if cid is None else str(cid)

    # -- structured trace ---------------------------------------------------------------------
    def on_trace(self, metadata: Dict[str, Any], payload: Optional[str]) -> None:
        compile_id = compile_id_of(metadata) or "?"
        with self._lock:
            for event, stage in GRAPH_EVENTS.items():
                if event in metadata and payload:
                    origin = None
                    if stage == "inductor":
                        stage = inductor_stage(payload)
                        where = metadata.get(event)
                        origin = where.get("file_path") if isinstance(where, dict) else None
                    self.graph_sources.setdefault(compile_id, []).append((stage, payload, origin))
                    return
            artifact = metadata.get("artifact")
            if isinstance(artifact, dict) and artifact.get("name") == GRAPH_BREAK_ARTIFACT:
                text = payload or ""
                m = _BREAK_AT.search(text)
                self._pending_breaks.append(GraphBreak(compile_id, text.strip(), m.group(1) if m else "?"))
                return
            metrics = metadata.get("compilation_metrics")
            if isinstance(metrics, dict):
                self._metrics.append((compile_id, metrics))

    def start(self) -> None:
        self.install()

    # -- after compiling ------------------------------------------------------------------------
    def finish(self) -> Capture:
        """Remove the hooks and complete the model: cache entries, graphs, breaks, recompiles."""
        self.uninstall()
        cap = self.capture
        by_compile: Dict[str, CompiledFrame] = {}
        for frame in cap.frames.values():
            for t in frame.transforms:
                by_compile[t.compile_id] = frame
        for gb in self._pending_breaks:
            frame = by_compile.get(gb.compile_id)
            if frame is not None:
                frame.graph_breaks.append(gb)
        for compile_id, metrics in self._metrics:
            frame = by_compile.get(compile_id)
            reason = metrics.get("recompile_reason")
            if frame is not None and reason:
                frame.recompilations.append(Recompilation(compile_id, str(reason)))
        self._link_resumes()
        self._collect_graphs()
        self._check_trace()
        return cap

    def _check_trace(self) -> None:
        """Name the structured-trace events (or compile ids) this torch did not give although
        what was compiled implies them: where torch renamed one, the graph files, graph-break
        reasons or recompilation reasons would otherwise be missing without a word."""
        transforms = [t for f in self.capture.frames.values() for t in f.transforms]
        absent: List[str] = []
        if any(t.graphs for t in transforms) and not any(
                source[0] == "dynamo" for sources in self.graph_sources.values() for source in sources):
            absent.append("torch's structured trace sent no %r event for the graphs Dynamo compiled "
                          "(no graph files)" % DYNAMO_GRAPH_EVENT)
        if any(t.resumes for t in transforms) and not self._pending_breaks:
            absent.append("torch's structured trace sent no %r artifact for the graph breaks "
                          "(index.md lists no reasons)" % GRAPH_BREAK_ARTIFACT)
        if any(t.compile_id.partition("/")[2] not in ("", "0", "?") for t in transforms) and not any(
                m.get("recompile_reason") for _, m in self._metrics):
            absent.append("torch's structured trace sent no 'compilation_metrics' with a "
                          "'recompile_reason' for the recompilations (index.md lists no reasons)")
        if any(t.compile_id.startswith("?") for t in transforms):
            absent.append("torch._guards.CompileContext.current_compile_id() gave no id while "
                          "Dynamo compiled (graphs and reasons are not matched to frames)")
        for message in absent:
            if message not in self._warned:
                self._warned.add(message)
                self.capture.warnings.append(message)
                warn(message)

    def _link_resumes(self) -> None:
        """Give each resume function not linked while compiling (its parent compiled in an
        earlier capture, say) its parent, through the ``__resume_at_*`` globals the parent's
        transformed code calls: by code object, never by name."""
        frames = self.capture.frames
        by_code = {id(f.code): f for f in frames.values()}
        for frame in frames.values():
            g = self.globals_of.get(id(frame.code), {})
            for t in frame.transforms:
                for name in t.resumes:
                    target = resume_code(g.get(name))
                    child = by_code.get(id(target)) if target is not None else None
                    if child is not None and child.code is target and child.parent is None \
                            and child is not frame:
                        child.parent = frame
                        child.is_resume = True
        for frame in frames.values():
            frame.root = _root_of(frame)

    def _collect_graphs(self) -> None:
        for frame in self.capture.frames.values():
            for t in frame.transforms:
                stages = self.graph_sources.get(t.compile_id, [])
                if not t.graphs:
                    continue
                # One frame compile produces one Dynamo graph; its AOT/Inductor stages follow it.
                name = t.graphs[0]
                graph = self.capture.graphs.setdefault(name, CompiledGraph(name, t.compile_id))
                g = self.globals_of.get(id(t.original), {})
                for global_name in t.transformed.co_names:
                    if global_name.startswith(name + "_") or global_name == name:
                        graph.compiled_fn = g.get(global_name, graph.compiled_fn)
                seen = {s.stage for s in graph.stages}
                for stage, text, origin in stages:
                    if stage not in seen:
                        graph.stages.append(GraphStage(stage, text, origin=origin))
                        seen.add(stage)


def resume_code(installed: Any) -> Optional[types.CodeType]:
    """The resume function's code behind a ``__resume_at_*`` global: the function itself, or
    (a resume function with free variables) the factory Dynamo installs, which makes the
    function from a code object it closes over."""
    code = getattr(installed, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    if is_resume_name(code.co_name):
        return code
    for cell in getattr(installed, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if isinstance(value, types.CodeType):
            return value
    return code


def _root_of(frame: CompiledFrame) -> CompiledFrame:
    """The frame whose full_code file holds ``frame``: up the chain of parents."""
    seen = set()
    while frame.parent is not None and id(frame) not in seen:
        seen.add(id(frame))
        frame = frame.parent
    return frame


def _qualname_of(code: types.CodeType, fn_globals: Optional[Dict[str, Any]]) -> str:
    """``co_qualname`` (3.11+); before, the ``__qualname__`` of the module-level function or
    class method running ``code``, else its name."""
    qualname = getattr(code, "co_qualname", None)
    if qualname:
        return qualname
    for value in list((fn_globals or {}).values()):
        candidates = [value]
        if isinstance(value, type):
            candidates = list(vars(value).values())
        for c in candidates:
            c = getattr(c, "__func__", c)
            if getattr(c, "__code__", None) is code:
                return getattr(c, "__qualname__", code.co_name)
    return code.co_name


#: ``_frame_context``'s closure when this torch's ``_compile`` does not take the closure
_UNKNOWN = object()


def _frame_context(code: types.CodeType) -> Tuple[Optional[Dict[str, Any]], object]:
    """The globals and closure of the frame Dynamo is compiling (``_compile``'s ``globals`` and
    ``closure`` arguments); the closure is ``_UNKNOWN`` when ``_compile`` has no such argument."""
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "_compile" and f.f_locals.get("code") is code:
            f_locals = f.f_locals
            g = f_locals.get("globals")
            closure: object = _UNKNOWN
            cells = f_locals.get("closure", _UNKNOWN)
            if cells is None or isinstance(cells, tuple):
                # no free variables: None, as FunctionType() and ``__closure__`` spell it
                closure = tuple(cells) if code.co_freevars and cells else None
                if code.co_freevars and (closure is None or len(closure) != len(code.co_freevars)):
                    closure = _UNKNOWN  # not the layout the code needs: let the dump look it up
            return (g if isinstance(g, dict) else None), closure
        f = f.f_back
    return None, _UNKNOWN
