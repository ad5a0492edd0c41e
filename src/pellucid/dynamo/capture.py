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

from pellucid.dynamo import explain, trace_filter, transformed_code
from pellucid.dynamo.code_shapes import ShapeCache
from pellucid.dynamo.dump_files import DumpDirError, DumpFiles
from pellucid.dynamo.gc_pause import collector_paused
from pellucid.dynamo.model import (Capture, CompiledFrame, CompiledGraph, CompileMetrics, GraphBreak,
                                   GraphStage, Recompilation)
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


def guard_name(ident: str, index: int) -> str:
    """The name of the guard function of cache entry ``index`` of the frame ``ident``."""
    return "guard_%s_%d" % (ident, index)


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
        #: compile id -> pellucid's diagnosis of a recompilation, made when Dynamo recompiled
        self._diagnoses: Dict[str, Recompilation] = {}
        #: compile id -> the user stack torch's recompile reason names
        self._recompile_stacks: Dict[str, List[Any]] = {}
        #: (compile id, Dynamo's text of a guard) -> the user stack that made the guard
        self.guard_stacks: Dict[Tuple[str, str], Any] = {}
        #: id(guard manager) -> (it, its guard tree): read to explain a recompilation, and
        #: rendered again for the dump without reading it twice
        self.guard_trees: Dict[int, Tuple[Any, Any, Dict[str, Any]]] = {}
        self.dump_dir_lost = False
        self.namer = namer_for(files.dump_dir)
        self._idents: Dict[str, Any] = {}  # ident -> the frame holding it, in this capture
        #: id(resume code) -> (that code, the frame whose transformed code calls it, resume
        #: offset), from the ``__resume_at_*`` globals of each transformed code, as it is made
        self._resume_parents: Dict[int, Tuple[types.CodeType, CompiledFrame, Optional[int]]] = {}
        #: the layers of a model compile one function to code of one shape: decompiled once
        self.shapes = ShapeCache()

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
        self._install_guard_stacks()

    def _install_guard_stacks(self) -> None:
        """Keep the user stack of each guard Dynamo makes (its text keeps only the innermost
        line, often inside torch): a recompilation then names the line of the compiled function
        that installed the failed guard.  Without ``get_verbose_code_part`` only the innermost
        line is known (each recompilation says so)."""
        original = find("torch._dynamo.guards.get_verbose_code_part")
        guards = sys.modules.get("torch._dynamo.guards")
        current = find("torch._guards.CompileContext.current_compile_id")
        if not callable(original) or guards is None or current is None:
            return
        stacks = self.guard_stacks

        def get_verbose_code_part(code_part: Any, guard: Any, *args: Any, **kwargs: Any) -> Any:
            text = original(code_part, guard, *args, **kwargs)
            stack = getattr(guard, "user_stack", None) if guard is not None else None
            if stack:
                try:
                    stacks[(str(current()), text)] = stack
                except Exception:  # noqa: BLE001 - only an explanation is lost
                    pass
            return text
        get_verbose_code_part.__wrapped__ = original  # type: ignore[attr-defined]
        guards.get_verbose_code_part = get_verbose_code_part  # type: ignore[union-attr]

        def restore() -> None:
            if getattr(guards, "get_verbose_code_part", None) is get_verbose_code_part:
                guards.get_verbose_code_part = original  # type: ignore[union-attr]
        self._undo.append(restore)

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
            missed = _missed_entries(original)
            if missed:
                self.guarded("explaining the recompilation of %s" % frame.label, self._diagnose,
                             compile_id, original, missed)
            if fn_globals is not None:
                self.globals_of[id(original)] = fn_globals
            if closure is not _UNKNOWN:
                self.closures_of[id(original)] = closure  # type: ignore[assignment]
            # n counts this frame's compilations; another process's file of the same name
            # makes this one ``...for_f.1.py`` (see DumpFiles.claim)
            path = self.files.claim("__transformed_code_%d_for_%s.py" % (len(frame.transforms), frame.ident))
            t = transformed_code.build(compile_id, original, transformed, path, self.files.write,
                                       fn_globals, self.verify, self.shapes)
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
            wrapped = _wrapped_function(code, fn_globals, _compile_locals(code))
            if wrapped is not None:
                # a decorator's wrapper (functools.wraps): named as the function the user wrote,
                # whose source the dump shows
                frame.wrapper, qualname = qualname, wrapped[0]
                frame.module = wrapped[1] or frame.module
                label = label_of(qualname.rsplit(".", 1)[-1], qualname)
                inner = getattr(wrapped[2], "__code__", None)
                if isinstance(inner, types.CodeType):
                    frame.source, frame.source_start = explain.function_source(inner)
                    frame.source_filename = inner.co_filename
            else:
                label = label_of(code.co_name, qualname)
        identity = Identity(label, frame.module, code.co_firstlineno, code, offset)
        frame.label, frame.ident = self.namer.name(identity, self._idents, code)
        frame.root = _root_of(frame)
        if not frame.is_resume and frame.source is None:  # (a resume function's is its root's)
            frame.source, frame.source_start = explain.function_source(code)
        self.capture.frames[id(code)] = frame
        return frame

    def _diagnose(self, compile_id: str, original: types.CodeType, missed: List[Any]) -> None:
        """Which guard of which earlier entry failed for the call Dynamo is compiling now."""
        f_locals = _compile_locals(original)
        if f_locals is None:
            return
        frame = self.capture.frames.get(id(original))
        root = frame.root if frame is not None and frame.root is not None else frame
        stack = self._recompile_stacks.get(compile_id)
        names: Dict[int, str] = {}
        if frame is not None:
            # the name the dump gives each entry's guard (prepare_debug._fill_entries), so that
            # the guard rendered here is the one the dump writes
            index = {}
            for k, t in enumerate(frame.transforms):
                index[id(t.transformed)] = k
                if t.replacement is not None:
                    index[id(t.replacement)] = k
            for e in missed:
                k = index.get(id(getattr(e, "code", None)))
                if k is not None and getattr(e, "guard_manager", None) is not None:
                    names[id(e.guard_manager)] = guard_name(frame.ident, k)
        self._diagnoses[compile_id] = explain.diagnose(
            compile_id, "", [(str(getattr(e, "compile_id", "?")), e.guard_manager) for e in missed
                             if getattr(e, "guard_manager", None) is not None],
            f_locals, _places(root, original), stack, self.guard_stacks, self.guard_trees, names)

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
            name = artifact.get("name") if isinstance(artifact, dict) else None
            if name == GRAPH_BREAK_ARTIFACT:
                self._pending_breaks.append(explain.parse_graph_break(compile_id, payload or ""))
                return
            if name == "recompile_reasons":
                self._recompile_stacks[compile_id] = explain.recompile_user_stack(_reason_text(payload))
                return
            metrics = metadata.get("compilation_metrics")
            if isinstance(metrics, dict):
                self._metrics.append((str(metrics.get("compile_id") or compile_id), metrics))

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
            cap.metrics.append(_metrics_of(compile_id, metrics))
            frame = by_compile.get(compile_id)
            reason = metrics.get("recompile_reason")
            if frame is None or not reason:
                continue
            rc = self._diagnoses.pop(compile_id, None) or Recompilation(compile_id, "")
            rc.reason = str(reason)
            if rc.guard_line is None:
                stack = explain.recompile_user_stack(rc.reason) or self._recompile_stacks.get(compile_id)
                rc.guard_line = stack[-1] if stack else None
            frame.recompilations.append(rc)
        for compile_id, rc in self._diagnoses.items():  # (torch gave no metrics for these)
            frame = by_compile.get(compile_id)
            if frame is not None and rc.failed_entry:
                rc.reason = rc.reason or "%s: %s" % (rc.failed_entry, rc.check)
                frame.recompilations.append(rc)
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


def _places(root: Optional[CompiledFrame], code: types.CodeType) -> List[Any]:
    """Where the lines of the function the user reads are (see :func:`explain.diagnose`): a
    decorated function's own lines first, then the code Dynamo compiled."""
    places: List[Any] = []
    if root is not None and root.source_filename and root.source:
        places.append((root.source_filename, root.source_start,
                       root.source_start + root.source.count("\n")))
    places.append((code.co_filename, None, None))
    return places


def _wrapped_function(code: types.CodeType, fn_globals: Optional[Dict[str, Any]],
                      f_locals: Optional[Dict[str, Any]]) -> Optional[Tuple[str, Optional[str], Any]]:
    """(qualified name, module, innermost function) of the function a decorator's wrapper
    stands for, when ``code``
    is the code of a ``functools.wraps`` wrapper (transformers wraps GPT-2's ``forward`` so):
    the function object running ``code`` -- a method of the class of the call's first argument,
    or a global of its module -- has ``__wrapped__``, and ``wraps`` gave it the wrapped
    function's ``__qualname__``."""
    if "<locals>" not in getattr(code, "co_qualname", "<locals>"):
        return None  # (a wrapper is made inside its decorator)
    candidates: List[Any] = []
    if f_locals:
        first = f_locals.get(code.co_varnames[0]) if code.co_varnames else None
        if code.co_flags & 0x04 and first is not None and not code.co_argcount:  # (*args)
            first = first[0] if isinstance(first, tuple) and first else None
        if first is not None:
            for klass in type(first).__mro__:
                candidates.extend(vars(klass).values())
    if fn_globals:
        candidates.extend(list(fn_globals.values()))
    for value in candidates:
        fn = getattr(value, "__func__", value)
        if getattr(fn, "__code__", None) is code and hasattr(fn, "__wrapped__"):
            qualname = getattr(fn, "__qualname__", None)
            if isinstance(qualname, str) and qualname and qualname != getattr(code, "co_qualname", None):
                import inspect

                module = getattr(fn, "__module__", None)
                try:
                    inner = inspect.unwrap(fn)
                except ValueError:  # (a __wrapped__ cycle)
                    inner = None
                return qualname, module if isinstance(module, str) else None, inner
    return None


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


def _compile_frame(code: types.CodeType) -> Any:
    """The frame of Dynamo's ``_compile`` for ``code`` (None when not inside one)."""
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "_compile" and f.f_locals.get("code") is code:
            return f
        f = f.f_back
    return None


def _missed_entries(code: types.CodeType) -> List[Any]:
    """The cache entries Dynamo tried before compiling ``code`` again (``_compile``'s
    ``cache_entries_for_reasons``, or ``cache_entries``), most recent first."""
    f = _compile_frame(code)
    if f is None:
        return []
    entries = f.f_locals.get("cache_entries_for_reasons", f.f_locals.get("cache_entries"))
    return list(entries) if isinstance(entries, (list, tuple)) else []


def _compile_locals(code: types.CodeType) -> Optional[Dict[str, Any]]:
    """The frame locals of the call Dynamo is compiling ``code`` for."""
    f = _compile_frame(code)
    if f is None:
        return None
    dynamo_frame = f.f_locals.get("frame")
    f_locals = getattr(dynamo_frame, "f_locals", None)
    if not isinstance(f_locals, dict):
        f_locals = f.f_locals.get("locals")
    return f_locals if isinstance(f_locals, dict) else None


def _reason_text(payload: Any) -> str:
    """torch's ``recompile_reasons`` payload (JSON: one reason, or a list) as text."""
    import json

    try:
        value = json.loads(payload) if isinstance(payload, str) else payload
    except ValueError:
        return str(payload or "")
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value or "")


def _metrics_of(compile_id: str, m: Dict[str, Any]) -> CompileMetrics:
    def num(key: str) -> Optional[float]:
        v = m.get(key)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    def count(key: str) -> Optional[int]:
        v = m.get(key)
        return int(v) if isinstance(v, int) and not isinstance(v, bool) else None

    restarts = m.get("restart_reasons")
    return CompileMetrics(
        compile_id, name=str(m.get("co_name") or ""), total_s=num("entire_frame_compile_time_s"),
        backend_s=num("backend_compile_time_s"), inductor_s=num("inductor_compile_time_s"),
        codegen_s=num("code_gen_time_s"), guard_count=count("guard_count"),
        graph_op_count=count("graph_op_count"),
        # (each is a graph break's whole message, which the frame's graph breaks hold already)
        restart_reasons=[str(r).strip().split("\n", 1)[0] for r in restarts]
        if isinstance(restarts, (list, tuple, set)) else [],
        fail_type=str(m["fail_type"]) if m.get("fail_type") else None,
        fail_reason=str(m["fail_reason"]) if m.get("fail_reason") else None)


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
