"""Ask a dump questions from Python: which functions compiled, why they broke, why they recompiled.

The same objects whether the capture is live (``with prepare_debug(d) as capture``) or read
back from the directory (:func:`load_capture`, which needs no torch), so a notebook or a tool
asks "why did this recompile" without parsing files::

    >>> dump = pellucid.load_capture("dump")                       # doctest: +SKIP
    >>> for rc in dump.why_recompiled("Net.forward"):              # doctest: +SKIP
    ...     print(rc.explain())
    compile 0/1: the guard of entry 0/0 failed on L['x']: compiled for Tensor f32[4, 8] ...

A :class:`Dump` is a list of :class:`~pellucid.dynamo.model.Capture` objects, one per process
that wrote into the directory (ranks of a distributed job), with questions answered over all
of them; each ``Capture`` answers the same questions for its own process.
"""
import glob
import json
import os
import types
from typing import Any, Iterable, List, Optional, Sequence, Tuple

from pellucid.dynamo.model import (Capture, CacheEntry, CompiledFrame, CompileMetrics, GraphBreak,
                                   Recompilation)

#: each process's capture model in the dump directory (``{n}``: a counter per process)
CAPTURE_FILE = "capture_{n}.json"


def frame_label(frame: CompiledFrame) -> str:
    """The name a frame is shown under: its label, unique in the dump directory."""
    return frame.label or frame.qualname or frame.name


def families(capture: Capture) -> List[Tuple[CompiledFrame, List[CompiledFrame]]]:
    """Each user function (a frame with a ``full_code`` file) with its frames: itself first,
    then its resume functions by line."""
    return [(r, capture.family(r)) for r in capture.roots()]


class Function(object):
    """A compiled user function: its own frame and the resume functions Dynamo made from it.

    ``frames`` (root first), ``entries`` (every cache entry of every frame), ``graph_breaks``,
    ``recompilations``, ``graphs`` (names of the compiled graphs its code calls), ``metrics``
    (torch's compilation metrics of its compiles) and ``compile_time_s``.
    """

    def __init__(self, capture: Capture, root: CompiledFrame, frames: List[CompiledFrame]) -> None:
        self.capture = capture
        self.root = root
        self.frames = frames

    @property
    def name(self) -> str:
        """The function's name as the dump shows it."""
        return frame_label(self.root)

    @property
    def entries(self) -> List[CacheEntry]:
        return [e for f in self.frames for e in f.entries]

    @property
    def graph_breaks(self) -> List[GraphBreak]:
        return [gb for f in self.frames for gb in f.graph_breaks]

    @property
    def recompilations(self) -> List[Recompilation]:
        return [rc for f in self.frames for rc in f.recompilations]

    def graph_break_sites(self) -> List[Tuple[CompiledFrame, GraphBreak, List[str]]]:
        """The graph breaks, one per frame, place and kind: (frame, the first such break, the
        compile ids that hit it) -- a frame compiled again breaks again at the same line."""
        groups: dict = {}
        for frame in self.frames:
            for gb in frame.graph_breaks:
                key = (id(frame), gb.location, gb.kind or gb.reason.strip().split("\n", 1)[0])
                if key not in groups:
                    groups[key] = (frame, gb, [])
                groups[key][2].append(gb.compile_id)
        return list(groups.values())

    @property
    def compile_ids(self) -> List[str]:
        return [t.compile_id for f in self.frames for t in f.transforms]

    @property
    def graphs(self) -> List[str]:
        return [g for f in self.frames for t in f.transforms for g in t.graphs]

    @property
    def metrics(self) -> List[CompileMetrics]:
        ids = set(self.compile_ids)
        return [m for m in self.capture.metrics if m.compile_id in ids]

    @property
    def compile_time_s(self) -> float:
        return sum(m.total_s or 0.0 for m in self.metrics)

    def __repr__(self) -> str:
        return "<Function %s: %d frames, %d entries, %d graph breaks, %d recompilations>" % (
            self.name, len(self.frames), len(self.entries), len(self.graph_breaks),
            len(self.recompilations))


def functions(captures: Iterable[Capture]) -> List[Function]:
    """Every compiled user function of the captures."""
    return [Function(c, root, frames) for c in captures for root, frames in families(c)]


def _code_of(fn: Any) -> Optional[types.CodeType]:
    if isinstance(fn, types.CodeType):
        return fn
    forward = getattr(type(fn), "forward", None) if not isinstance(fn, (types.FunctionType, types.MethodType)) else None
    for candidate in (fn, getattr(fn, "_orig_mod", None), forward):
        if candidate is None:
            continue
        while hasattr(candidate, "__wrapped__"):
            candidate = candidate.__wrapped__
        code = getattr(getattr(candidate, "__func__", candidate), "__code__", None)
        if isinstance(code, types.CodeType):
            return code
    return None


def find_frames(captures: Iterable[Capture], fn: Any) -> List[CompiledFrame]:
    """The frames of ``fn`` (and of its resume functions) in the captures.

    ``fn`` is a function, method, module (its ``forward``), code object, or a name: the frame's
    label or qualified name (``Block.forward``), or its last part (``forward``).
    """
    captures = list(captures)
    found: List[CompiledFrame] = []
    code = None if isinstance(fn, str) else _code_of(fn)
    if code is not None and not find_frames_by_code(captures, code):
        # a decorated function: Dynamo compiled its wrapper, named after it
        name = getattr(fn, "__qualname__", None) or getattr(code, "co_qualname", None)
        if isinstance(name, str):
            return find_frames(captures, name)
    for c in captures:
        for root, frames in families(c):
            if code is not None:
                hit = root.code is code or (root.code is None and root.qualname == getattr(code, "co_qualname", code.co_name)
                                            and root.filename == code.co_filename
                                            and root.firstlineno == code.co_firstlineno)
            else:
                names = {frame_label(root), root.qualname, root.name, root.ident}
                hit = fn in names
            if hit:
                found.extend(frames)
    if not found and isinstance(fn, str):  # a last part: ``forward`` for ``Block.forward``
        for c in captures:
            for root, frames in families(c):
                if frame_label(root).split(".")[-1] == fn or root.qualname.split(".")[-1] == fn:
                    found.extend(frames)
    return found


def find_frames_by_code(captures: Iterable[Capture], code: types.CodeType) -> bool:
    """Whether a frame of the captures was compiled from ``code``."""
    return any(f.code is code for c in captures for f in c.frames.values())


class Dump(list):
    """The captures of every process that wrote into a dump directory (a list of
    :class:`~pellucid.dynamo.model.Capture`), answering questions over all of them."""

    def __init__(self, dump_dir: str, captures: Sequence[Capture] = ()) -> None:
        super().__init__(captures)
        self.dump_dir = dump_dir

    def functions(self) -> List[Function]:
        """Every compiled user function (per process)."""
        return functions(self)

    def frames(self, fn: Any = None) -> List[CompiledFrame]:
        """Every compiled frame, or those of ``fn`` (see :func:`find_frames`)."""
        if fn is None:
            return [f for c in self for f in c.frames.values()]
        return find_frames(self, fn)

    def graph_breaks(self, fn: Any = None) -> List[GraphBreak]:
        """The graph breaks of every frame, or of ``fn``'s frames."""
        return [gb for f in self.frames(fn) for gb in f.graph_breaks]

    def recompilations(self, fn: Any = None) -> List[Recompilation]:
        """The recompilations of every frame, or of ``fn``'s frames."""
        return [rc for f in self.frames(fn) for rc in f.recompilations]

    def why_recompiled(self, fn: Any) -> List[Recompilation]:
        """Why ``fn`` (or a resume function of it) was compiled again, one
        :class:`~pellucid.dynamo.model.Recompilation` per recompile (``.explain()`` says it
        in one paragraph).  Raises ``LookupError`` when nothing of that name was compiled."""
        frames = self.frames(fn)
        if not frames:
            raise LookupError("%r was not compiled in this dump (functions: %s)" % (
                fn, ", ".join(sorted({f.name for f in self.functions()})) or "none"))
        return [rc for f in frames for rc in f.recompilations]

    def __repr__(self) -> str:
        return "<Dump %s: %d process(es), %d functions>" % (self.dump_dir, len(self), len(self.functions()))


def capture_files(dump_dir: str) -> List[str]:
    """The capture files in ``dump_dir``, in process order."""
    names = glob.glob(os.path.join(dump_dir, CAPTURE_FILE.replace("{n}", "*")))

    def number(path: str) -> int:
        stem = os.path.basename(path)[len("capture_"):-len(".json")]
        return int(stem) if stem.isdigit() else 1 << 30
    return sorted(names, key=number)


def load_capture(dump_dir: str) -> Dump:
    """Read a dump directory's capture model (every process's ``capture_<n>.json``), ranks of
    a distributed job in rank order.

    Needs no torch: a dump made on a cluster reads on a laptop.  Raises ``FileNotFoundError``
    when the directory holds no capture.

    >>> dump = load_capture("dump")                 # doctest: +SKIP
    >>> dump.functions()                            # doctest: +SKIP
    [<Function Net.forward: 2 frames, 4 entries, 2 graph breaks, 2 recompilations>]
    """
    from pellucid.dynamo.capture_json import from_json

    dump_dir = os.path.abspath(dump_dir)
    paths = capture_files(dump_dir)
    if not paths:
        raise FileNotFoundError("%s holds no pellucid capture (no %s): was it written by "
                                "pellucid.prepare_debug?" % (dump_dir, CAPTURE_FILE.replace("{n}", "<n>")))
    captures = []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            captures.append(from_json(json.load(fh), dump_dir))
    # ranks in rank order, whichever finished first (and wrote capture_0.json)
    captures.sort(key=lambda c: (not isinstance(c.process.get("rank"), int), c.process.get("rank") or 0))
    return Dump(dump_dir, captures)
