"""``pellucid.debug()``: run the compiled program from the dumped files, under a debugger.

Run the program once inside ``prepare_debug(dir)``, then again inside ``debug()`` in the same
process.  Inside ``debug()``:

* Dynamo compiles nothing (its ``eager_on_recompile`` stance): inputs that no cache entry
  accepts run the original code, and ``debug()`` says so once per function;
* each call of a compiled function runs the dispatcher of its ``full_code`` file, which runs
  the entry Dynamo's own guard managers select (in Dynamo's most-recently-used order), and its
  rendered guards alongside (one that answers otherwise is reported once, in a warning, the
  session's ``disagreements`` and ``index.md``);
* the transformed code and resume functions already run from their dumped files (when
  ``prepare_debug`` verified them), so breakpoints there are hit;
* of each graph, the stage that runs runs from its dumped file, so a debugger steps from the
  transformed code into the graph: the Dynamo graph's ``forward`` (eager), AOT Autograd's
  forward and backward graphs (aot_eager), once verified equivalent; Inductor's output code
  (``call()``, forward and backward), once shown to be the module Inductor loaded
  (:mod:`pellucid.dynamo.inductor_code`).  The other stages' files are for reading only;
* ``pause=True`` stops once at the ``with`` line, like ``breakpoint()``, after listing the files
  that run and those for reading only, so breakpoints can be set before the program goes on.

>>> with debug(pause=False):      # doctest: +SKIP
...     compiled_model(x)
"""
import os
import sys
import threading
from typing import Any, Callable, Dict, List, Set

from pellucid.dynamo.torch_features import find, warn


#: AOT Autograd stages whose graphs run (the joint graph is only split into them)
_AOT_RUN = ("aot_forward", "aot_backward", "aot_inference")


_READING = "for reading only: "


def _read_only_reason(stage: str, inductor: bool) -> str:
    """Why a graph stage's file does not run (``inductor``: Inductor's output code runs)."""
    instead = "Inductor's output code runs instead" if inductor else "AOT Autograd's graphs run instead"
    if stage == "dynamo":
        return _READING + "the Dynamo graph; " + instead
    if stage == "aot_joint":
        return _READING + "AOT Autograd's joint graph; " + (
            instead if inductor else "it runs split into the forward and backward graphs")
    return _READING + "compiled further by Inductor, whose output code runs instead"


class DebugSession:
    """What ``debug()`` set up: which dumped files run, and which could not be used."""

    def __init__(self) -> None:
        self.graph_files: Dict[str, str] = {}  # path -> "installed" or why not
        self.transformed_files: Dict[str, str] = {}  # path -> "runs" or why Dynamo's code runs
        self.full_code_files: Dict[str, str] = {}  # path -> "runs" (the cache lookup) or why not
        self.misses: List[str] = []  # functions whose original code ran (no entry matched)
        #: rendered guards that answered otherwise than Dynamo's guard managers (Dynamo decided)
        self.disagreements: List[Any] = []

    def running(self) -> List[str]:
        """The dumped files whose code runs (breakpoints in them are hit): the cache lookups,
        the transformed code and resume functions, the graphs."""
        return [p for p, s in self.full_code_files.items() if s == "runs"] + \
            [p for p, s in self.transformed_files.items() if s == "runs"] + \
            [p for p, s in self.graph_files.items() if s == "installed"]

    def read_only(self) -> Dict[str, str]:
        """The other dumped files, each with why nothing runs from it."""
        out: Dict[str, str] = {}
        for files in (self.full_code_files, self.transformed_files, self.graph_files):
            for path, state in files.items():
                if state not in ("runs", "installed"):
                    out[path] = state
        return out


class debug:  # noqa: N801 - used like a function: ``with pellucid.debug():``
    """Context manager; see the module docstring."""

    def __init__(self, pause: bool = True) -> None:
        self.pause = pause
        self.session = DebugSession()
        self._undo: List[Callable[[], None]] = []
        self._originals: Dict[int, Any] = {}  # id(original code) -> (code, label)
        self._reported: Set[int] = set()
        self._disagreements_before: List[Any] = []  # (capture, how many it had)

    def __enter__(self) -> DebugSession:
        try:
            self._setup()
        except Exception as exc:  # never break the user's program
            warn("debug() could not set up (%s: %s); the program runs as compiled"
                 % (type(exc).__name__, exc))
        if self.pause:
            self._pause(sys._getframe(1))
        return self.session

    def __exit__(self, *exc: Any) -> None:
        while self._undo:
            try:
                self._undo.pop()()
            except Exception as err:
                warn("debug() could not undo a change: %s: %s" % (type(err).__name__, err))
        self._record_disagreements()

    def _record_disagreements(self) -> None:
        """Rendered guards found to disagree with Dynamo's go into the session and the index."""
        from pellucid.dynamo import index

        for capture, before in self._disagreements_before:
            found = capture.disagreements[before:]
            if not found:
                continue
            self.session.disagreements += found
            try:
                index.rewrite_part(capture)
            except Exception as err:  # an unwritable dump directory must not break the program
                warn("debug() could not update %s/index.md: %s: %s"
                     % (capture.dump_dir, type(err).__name__, err))

    # -- setting up ------------------------------------------------------------------------------
    def _setup(self) -> None:
        from pellucid.dynamo.prepare_debug import CAPTURES, verify_equivalent

        if not CAPTURES:
            warn("debug() found nothing that prepare_debug captured in this process: run the "
                 "program inside pellucid.prepare_debug(dir) first, then again inside debug()")
            return
        set_stance = find("torch.compiler.set_stance")
        if set_stance is not None:
            stance = set_stance("eager_on_recompile")
            stance.__enter__()
            self._undo.append(lambda: stance.__exit__(None, None, None))
        from pellucid.dynamo.dump_runtime import uncached

        for capture in CAPTURES:
            self._disagreements_before.append((capture, len(capture.disagreements)))
            for frame in capture.frames.values():
                if frame.code is not None:
                    self._originals[id(frame.code)] = (frame.code, frame.label)
                    # (a dispatcher runs the original code as this copy when no entry passes)
                    copy = uncached(frame.code)
                    self._originals[id(copy)] = (copy, frame.label)
                for t in frame.transforms:
                    if t.path:
                        self.session.transformed_files[t.path] = (
                            "runs" if t.replacement is not None else "Dynamo's bytecode runs: %s" % t.rejected)
            for graph in capture.graphs.values():
                self._install_graph(graph, verify_equivalent)
        self._route_full_code(CAPTURES)
        self._watch_misses()

    def _install_graph(self, graph: Any, verify_equivalent: Callable[..., Any]) -> None:
        """Make the stages of ``graph`` that run, run from their files; the others are for reading.

        Of a graph's stages only the last compiled ones run: Inductor's output code when there
        is any, else AOT Autograd's forward/backward (or inference) graph, else Dynamo's graph.
        """
        from pellucid.dynamo import graph_code, inductor_code

        stages = [s for s in graph.stages if s.path]
        inductor = [s for s in stages if s.stage.startswith("inductor")]
        aot = [s for s in stages if s.stage in _AOT_RUN]
        running = inductor or aot or [s for s in stages if s.stage == "dynamo"]
        for s in stages:
            if s not in running:
                self.session.graph_files[s.path] = _read_only_reason(s.stage, bool(inductor))
        if not running:
            return
        if graph.compiled_fn is None:
            for s in running:
                self.session.graph_files[s.path] = "not used: the compiled graph's callable was not captured"
            return
        if inductor:
            for s in inductor:
                undo, outcome = inductor_code.install_from_file(s.path, s.origin, [graph.compiled_fn])
                self._undo += undo
                self.session.graph_files[s.path] = outcome
            return
        modules = graph_code.graph_modules_in(graph.compiled_fn)
        undo, outcomes = graph_code.install_from_files(
            modules, [s.path for s in running], lambda a, b: verify_equivalent(a, b, {}))
        self._undo += undo
        for s in running:
            self.session.graph_files[s.path] = outcomes.get(
                s.path, "not used: no graph module reachable from the compiled graph")

    def _route_full_code(self, captures: List[Any]) -> None:
        """Calls of compiled user functions go through their dumped full_code dispatcher.

        Frames are matched by code object: the newest capture of a code object describes its
        cache; a frame whose code has no live cache entry (Dynamo was reset since) is left alone.
        """
        from pellucid.dynamo import full_code_dispatch
        from pellucid.dynamo.dump_runtime import _live_entries

        loaded: Dict[str, Any] = {}
        targets: List[Any] = []
        chosen: Dict[int, Any] = {}  # id(code) -> (frame, capture)
        for capture in reversed(captures):
            for frame in capture.roots():
                path = frame.full_code_path
                if frame.is_resume or not path or frame.code is None or not frame.entries \
                        or id(frame.code) in chosen or not _live_entries(frame.code):
                    continue
                chosen[id(frame.code)] = frame
                if not all(callable(getattr(getattr(e, "guard_manager", None), "check", None))
                           for e in _live_entries(frame.code)):
                    # the dispatcher asks each entry's guard manager: without it, no routing
                    self.session.full_code_files[path] = \
                        "not used: this PyTorch's cache entries have no guard_manager.check"
                    warn("debug(): this PyTorch's cache entries have no guard_manager.check, so "
                         "%s runs Dynamo's lookup, not its full_code file" % frame.label)
                    continue
                try:
                    module = loaded.get(path) or full_code_dispatch.load_full_code(path)
                except Exception as exc:
                    self.session.full_code_files[path] = "not used: %s: %s" % (type(exc).__name__, exc)
                    continue
                loaded[path] = module
                dispatcher = getattr(module, frame.ident, None)
                fn_globals = getattr(module, "G_" + frame.ident, None)
                if dispatcher is not None and isinstance(fn_globals, dict):
                    targets.append((frame.code, dispatcher, fn_globals))
        undo, outcome = full_code_dispatch.route_through_full_code(targets)
        self._undo += undo
        for code, _, _ in targets:
            self.session.full_code_files[chosen[id(code)].full_code_path] = outcome[id(code)]

    def _watch_misses(self) -> None:
        """Report, once per function, inputs that no cache entry accepts.

        Dynamo runs a frame's original code only when no cache entry matches; then the
        original code object starts executing, which a profile function sees.
        """
        if sys.getprofile() is not None:
            warn("debug(): a profiler is active, so inputs that miss every cache entry are not reported")
            return
        callback_of = find("torch._C._dynamo.eval_frame.get_eval_frame_callback")
        originals = self._originals
        lock = threading.Lock()

        def profile(frame: Any, event: str, arg: Any) -> None:
            if event != "call":
                return
            code = frame.f_code
            known = originals.get(id(code))
            if known is None or known[0] is not code or id(code) in self._reported:
                return
            name = known[1]
            if callback_of is not None and callback_of() is None:
                return  # called outside torch.compile: not a cache miss
            with lock:
                if id(code) in self._reported:
                    return
                self._reported.add(id(code))
            self.session.misses.append(name)
            warn("debug(): no compiled entry of %s accepts these inputs; its original code runs "
                 "(nothing is compiled inside debug())" % name)

        sys.setprofile(profile)
        threading.setprofile(profile)

        def stop() -> None:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
        self._undo.append(stop)

    # -- pausing ---------------------------------------------------------------------------------
    def pause_message(self) -> str:
        """What the pause prints: every dumped file that runs, then the ones for reading only."""
        lines = ["pellucid.debug: paused before the program goes on; set breakpoints in the dumped "
                 "files, then continue."]
        running = self.session.running()
        lines.append("These files run (breakpoints in them are hit):" if running else
                     "No dumped file runs (see the reasons below).")
        lines += ["  %s" % p for p in running]
        read_only = self.session.read_only()
        if read_only:
            lines.append("For reading only (nothing runs from them):")
            lines += ["  %s -- %s" % (p, why[len(_READING):] if why.startswith(_READING) else why)
                      for p, why in read_only.items()]
        return "\n".join(lines) + "\n"

    def _pause(self, frame: Any) -> None:
        hook = os.environ.get("PYTHONBREAKPOINT")
        if hook == "0":
            return
        sys.stderr.write(self.pause_message())
        if (hook and hook != "pdb.set_trace") or sys.breakpointhook is not sys.__breakpointhook__:
            sys.breakpointhook()  # the debugger in charge (debugpy/VS Code, PyCharm, PYTHONBREAKPOINT)
            return
        import pdb

        pdb.Pdb().set_trace(frame)
