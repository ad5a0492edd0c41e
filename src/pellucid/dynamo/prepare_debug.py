"""``pellucid.prepare_debug(dump_dir)``: dump everything torch.compile compiles inside a block.

>>> import pellucid, torch                                        # doctest: +SKIP
>>> with pellucid.prepare_debug("dump") as capture:               # doctest: +SKIP
...     torch.compile(f, backend="eager")(x)
>>> sorted(os.listdir("dump"))[:2]                                # doctest: +SKIP
['__compiled_fn_1.dynamo.py', '__transformed_code_0_for_f.py']

The block yields the :class:`~pellucid.dynamo.model.Capture` it fills (frames, cache entries,
graphs, graph breaks, recompilations), complete once the block has exited.
"""
import contextlib
import os
import sys
import time
import types
from typing import Any, Dict, Iterator, List, Optional, Tuple

from pellucid.dynamo import dump_runtime, full_code, graph_files, index
from pellucid.dynamo.capture import Capturer, guard_name
from pellucid.dynamo.dump_files import DumpFiles
from pellucid.dynamo.model import Capture, CacheEntry, CompiledFrame
from pellucid.dynamo.torch_features import find, warn


#: Every capture completed in this process, oldest first (what ``debug()`` runs from).
CAPTURES: List[Capture] = []


def verify_equivalent(original: types.CodeType, candidate: types.CodeType,
                      bindings: Dict[str, Any]) -> Tuple[bool, str]:
    """pellucid's equivalence check of Dynamo's code and the recompiled code."""
    from pellucid.verify import check_equivalent

    verdict = check_equivalent(original, candidate, bindings)
    return bool(verdict.ok), str(verdict.reason)


#: dump directory -> the capture file this process writes there (a later block replaces it)
_CAPTURE_FILES: Dict[str, str] = {}
#: dump directory -> every file this process wrote there, over all its blocks
_WRITTEN: Dict[str, List[str]] = {}


@contextlib.contextmanager
def prepare_debug(dump_dir: str, quiet: bool = False) -> Iterator[Capture]:
    """Capture what ``torch.compile`` compiles inside the block and write it to ``dump_dir``.

    Written files: ``__transformed_code_<n>_for_<fn>.py`` (Dynamo's bytecode as source; the code
    that runs when verified equivalent), ``full_code_for_<fn>.py`` (the cache lookup with guards),
    ``__compiled_fn_<n>.<stage>.py`` (graphs), ``capture_<n>.json`` (the capture model) and
    ``index.md``.  Files an earlier run wrote into the directory are removed first (ranks of
    one job, running together, share it).  When the block ends, one line on stderr says what
    was written (``quiet=True``: nothing).  Problems inside pellucid, an unwritable directory or
    a missing PyTorch internal are warnings; the program goes on.
    """
    started = time.time()
    try:
        files: Optional[DumpFiles] = DumpFiles(dump_dir)
    except OSError as exc:
        warn("cannot write to the dump directory %s (%s); nothing will be dumped"
             % (os.path.abspath(dump_dir), exc.strerror or exc))
        files = None
    if files is None or find("torch._dynamo") is None:
        yield Capture(os.path.abspath(dump_dir))
        return
    capturer = Capturer(files, verify_equivalent)
    removed = capturer.guarded("removing an earlier run's files", files.clear_old_runs, started) or []
    capturer.capture.process.update(_process_record(files.run, started))
    capturer.start()
    try:
        yield capturer.capture
    finally:
        capture = capturer.finish()
        capturer.guarded("writing the dump", write_dump, capturer, files)
        capturer.guarded("releasing the dump directory", files.release)
        CAPTURES.append(capture)
        if not quiet and not capturer.dump_dir_lost:
            sys.stderr.write(summary_line(capture, files.written, removed) + "\n")


def _process_record(run: str, started: float) -> Dict[str, Any]:
    import platform
    import socket

    rank = os.environ.get("RANK")
    torch = sys.modules.get("torch")
    return {"pid": os.getpid(), "host": socket.gethostname(), "run": run,
            "rank": int(rank) if rank and rank.isdigit() else None,
            "argv": list(sys.argv), "python": platform.python_version(),
            "torch": getattr(torch, "__version__", None), "start": started}


def summary_line(capture: Capture, written: List[str], removed: List[str]) -> str:
    """What a ``prepare_debug`` block wrote, in one line (counts as in the directory)."""
    from pellucid.dynamo.api import functions

    fns = functions([capture])
    d = capture.dump_dir
    if not capture.frames:
        return ("pellucid: nothing was compiled by torch.compile inside prepare_debug; "
                "%d files in %s (see %s)" % (len(written), d, os.path.join(d, "index.md")))
    entries = sum(len(f.entries) for f in capture.frames.values())
    breaks = sum(len(f.graph_breaks) for f in capture.frames.values())
    recompiles = sum(len(f.recompilations) for f in capture.frames.values())
    text = ("pellucid: %d function%s (%d frame%s), %d cache entr%s, %d graph break%s, "
            "%d recompilation%s, %d graph%s; %d files written to %s"
            % (len(fns), "" if len(fns) == 1 else "s", len(capture.frames), "" if len(capture.frames) == 1 else "s",
               entries, "y" if entries == 1 else "ies", breaks, "" if breaks == 1 else "s",
               recompiles, "" if recompiles == 1 else "s", len(capture.graphs), "" if len(capture.graphs) == 1 else "s",
               len(written), d))
    if removed:
        text += " (%d files of an earlier run removed)" % len(removed)
    return text + "; start with %s, or run: pellucid report %s" % (os.path.join(d, "index.md"), d)


def _cache_entries(frame: CompiledFrame) -> List[object]:
    entries = find("torch._dynamo.eval_frame._debug_get_cache_entry_list")
    if entries is None or frame.code is None:
        return []
    return list(entries(frame.code))


def _render_guard(guard_manager: object, name: str, entry: CacheEntry,
                  trees: Optional[Dict[int, Tuple[Any, Any, Dict[str, Any]]]] = None) -> None:
    try:
        from pellucid.dynamo.guard_render import render_guard
    except ImportError as exc:
        entry.guard_error = "guard rendering unavailable: %s" % exc
        return
    try:
        rendered = render_guard(guard_manager, name, trees=trees)
    except Exception as exc:
        entry.guard_error = "%s: %s" % (type(exc).__name__, exc)
        return
    entry.guard_source = rendered.source
    entry.guard_name = rendered.name
    entry.guard_namespace = dict(rendered.namespace)


def write_dump(capturer: Capturer, files: DumpFiles) -> None:
    """Render the completed capture into files (each step guarded on its own)."""
    capture = capturer.capture
    for frame in capture.frames.values():
        capturer.guarded("reading cache entries of %s" % frame.label, _fill_entries, frame,
                         capturer.guard_trees)
    from pellucid.dynamo.graph_code import use_live_listings

    for graph in capture.graphs.values():
        capturer.guarded("reading the graph modules of %s" % graph.name, use_live_listings, graph)
        for stage in graph.stages:
            path = files.claim("%s.%s.py" % (graph.name, stage.stage), key="graph %s %s" % (graph.name, stage.stage))
            files.write(path, graph_files.graph_file_text(graph.name, stage.stage, graph.compile_id, stage.source,
                                                               stage.origin))
            stage.path = path
            capture.files.append(path)
    files.write(os.path.join(files.dump_dir, dump_runtime.RUNTIME_MODULE + ".py"), dump_runtime.RUNTIME_SOURCE)
    for root in capture.roots():
        capturer.guarded("writing full_code for %s" % root.label, _write_full_code, capturer, files,
                         root, capture.family(root))
    _write_capture(capture, files)
    index.write_index(capture, files)


def _write_capture(capture: Capture, files: DumpFiles) -> None:
    """This process's capture model, ``capture_<n>.json`` (what the index, the report and
    ``load_capture`` read), listing every file the process wrote."""
    from pellucid.dynamo.capture_json import dumps

    # a later prepare_debug block of this process replaces its capture (its files are replaced
    # where names repeat; the others stay listed, so a later run removes them)
    path = _CAPTURE_FILES.get(files.dump_dir) or files.claim("capture_{n}.json", key="capture")
    _CAPTURE_FILES[files.dump_dir] = path
    capture.capture_file = path
    index_path = os.path.join(files.dump_dir, index.INDEX)
    before = [p for p in _WRITTEN.get(files.dump_dir, []) if os.path.exists(p)]
    names = [os.path.basename(p) for p in before + files.written + [path, index_path]]
    capture.process["written"] = sorted(set(names), key=names.index)
    _WRITTEN[files.dump_dir] = [os.path.join(files.dump_dir, n) for n in capture.process["written"]]
    capture.process["end"] = time.time()
    files.write(path, dumps(capture))


def _fill_entries(frame: CompiledFrame,
                  trees: Optional[Dict[int, Tuple[Any, Any, Dict[str, Any]]]] = None) -> None:
    live = _cache_entries(frame)
    by_code = {}
    for k, t in enumerate(frame.transforms):
        by_code[id(t.transformed)] = (k, t)
        if t.replacement is not None:
            by_code[id(t.replacement)] = (k, t)
    frame.entries = []
    unknown = len(frame.transforms)  # entries compiled outside this capture are numbered after
    for e in live:  # Dynamo's order (the most recently used first)
        code = getattr(e, "code", None)
        k, t = by_code.get(id(code), (None, None))
        if k is None:
            k, unknown = unknown, unknown + 1
        entry = CacheEntry(index=k, compile_id=str(getattr(e, "compile_id", "?")), transform=t,
                           code=code if isinstance(code, types.CodeType) else None)
        gm = getattr(e, "guard_manager", None)
        if gm is None:
            entry.guard_error = "the cache entry has no guard_manager"
        else:
            _render_guard(gm, guard_name(frame.ident, entry.index), entry, trees)
        frame.entries.append(entry)
    # newest first, as the files list them (Dynamo's own order changes as entries are used)
    frame.entries.sort(key=lambda e: (e.transform is None, -e.index))


def _write_full_code(capturer: Capturer, files: DumpFiles, root: CompiledFrame,
                     frames: List[CompiledFrame]) -> None:
    path = files.claim("full_code_for_%s.py" % root.ident, key="full %s" % root.ident)
    text, registry = full_code.render(path, frames, capturer.globals_of, capturer.closures_of,
                                     capturer.capture)
    for key, value in registry.items():
        dump_runtime.register(files.dump_dir, key, value)
    files.write(path, text)
    for frame in frames:
        frame.full_code_path = path
    capturer.capture.files.append(path)
