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
import types
from typing import Any, Dict, Iterator, List, Optional, Tuple

from pellucid.dynamo import dump_runtime, full_code, graph_files, index
from pellucid.dynamo.capture import Capturer
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


@contextlib.contextmanager
def prepare_debug(dump_dir: str) -> Iterator[Capture]:
    """Capture what ``torch.compile`` compiles inside the block and write it to ``dump_dir``.

    Written files: ``__transformed_code_<n>_for_<fn>.py`` (Dynamo's bytecode as source; the code
    that runs when verified equivalent), ``full_code_for_<fn>.py`` (the cache lookup with guards),
    ``__compiled_fn_<n>.<stage>.py`` (graphs), ``index.md``.  Problems inside pellucid, an
    unwritable directory or a missing PyTorch internal are warnings; the program goes on.
    """
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
    capturer.start()
    try:
        yield capturer.capture
    finally:
        capture = capturer.finish()
        capturer.guarded("writing the dump", write_dump, capturer, files)
        CAPTURES.append(capture)


def _cache_entries(frame: CompiledFrame) -> List[object]:
    entries = find("torch._dynamo.eval_frame._debug_get_cache_entry_list")
    if entries is None or frame.code is None:
        return []
    return list(entries(frame.code))


def _render_guard(guard_manager: object, name: str, entry: CacheEntry) -> None:
    try:
        from pellucid.dynamo.guard_render import render_guard
    except ImportError as exc:
        entry.guard_error = "guard rendering unavailable: %s" % exc
        return
    try:
        rendered = render_guard(guard_manager, name)
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
        capturer.guarded("reading cache entries of %s" % frame.label, _fill_entries, frame)
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
    index.write_index(capture, files)


def _fill_entries(frame: CompiledFrame) -> None:
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
            _render_guard(gm, "guard_%s_%d" % (frame.ident, entry.index), entry)
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
