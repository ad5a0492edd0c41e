"""The capture model as JSON: what each process writes to the dump (``capture_<n>.json``), and
what ``index.md``, ``pellucid report`` and :func:`pellucid.load_capture` read back.

Every dataclass of :mod:`pellucid.dynamo.model` is written field by field, with its class name;
what only lives in the process (code objects, guard namespaces, compiled callables) is written
as a description or left out, paths inside the dump directory are written relative to it (so a
dump can be moved or copied to another machine), texts that are dumped files (transformed
code, graph stages) name the file instead of copying it, and references between frames (a
resume function's root) become frame numbers.  Reading ignores fields it does not know and fills in
defaults for fields a file lacks, so older and newer dumps read.  Nothing here imports torch.

>>> from pellucid.dynamo.model import Capture, CompiledFrame
>>> cap = Capture("/d")
>>> cap.frames[1] = CompiledFrame("f", "f", "/t.py", 3)
>>> back = from_json(to_json(cap), "/elsewhere")
>>> [f.qualname for f in back.frames.values()], back.dump_dir
(['f'], '/elsewhere')
"""
import dataclasses
import json
import os
import types
from typing import Any, Dict, List, Optional

from pellucid.dynamo import model

FORMAT = "pellucid-capture"
VERSION = 1
#: fields that hold objects of the running process only
_LIVE_FIELDS = frozenset({"guard_namespace", "compiled_fn"})
#: fields holding paths of files in the dump directory (a str, or a list of them)
_PATH_FIELDS = frozenset({"path", "full_code_path", "files", "index_part"})


#: model classes whose ``source`` is the text of the file at their ``path`` (read back as that
#: file's text: the file adds a header to a graph's listing)
_IN_FILES = (model.Transform, model.GraphStage)


@dataclasses.dataclass
class CodeInfo:
    """A code object as read back from a dump: what it was, not the object itself."""

    name: str
    qualname: str = ""
    filename: str = ""
    firstlineno: int = 0


def to_json(capture: model.Capture) -> Dict[str, Any]:
    """The capture as JSON-ready data (see the module docstring)."""
    frames = list(capture.frames.values())
    numbers = {id(f): n for n, f in enumerate(frames)}
    writer = _Writer(capture.dump_dir, numbers)
    out: Dict[str, Any] = {"format": FORMAT, "version": VERSION}
    for f in dataclasses.fields(capture):
        value = getattr(capture, f.name)
        if f.name == "frames":
            out["frames"] = [writer.dataclass(fr) for fr in frames]
        elif f.name == "dump_dir":
            continue  # (the reader's directory is the dump's)
        elif f.name not in _LIVE_FIELDS:
            out[f.name] = writer.value(value, f.name)
    return out


def dumps(capture: model.Capture) -> str:
    """:func:`to_json` as text."""
    return json.dumps(to_json(capture), indent=1, sort_keys=False, default=repr)


class _Writer(object):
    def __init__(self, dump_dir: str, numbers: Dict[int, int]) -> None:
        self.dump_dir = dump_dir
        self.numbers = numbers

    def dataclass(self, obj: Any) -> Dict[str, Any]:
        out: Dict[str, Any] = {"$type": type(obj).__name__}
        for f in dataclasses.fields(obj):
            if f.name in _LIVE_FIELDS:
                continue
            value = getattr(obj, f.name)
            if f.name == "source" and isinstance(obj, _IN_FILES) and value and getattr(obj, "path", None):
                # the text is in the dumped file: the file is named instead of copied
                out[f.name] = {"$file": self.path(obj.path)}
                continue
            out[f.name] = self.value(value, f.name)
        return out

    def value(self, value: Any, name: str = "") -> Any:
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, str):
            return self.path(value) if name in _PATH_FIELDS else value
        if isinstance(value, model.CompiledFrame):
            return {"$frame": self.numbers.get(id(value))}
        if isinstance(value, types.CodeType):
            return {"$code": value.co_name, "qualname": getattr(value, "co_qualname", value.co_name),
                    "filename": value.co_filename, "firstlineno": value.co_firstlineno}
        if isinstance(value, CodeInfo):
            return {"$code": value.name, "qualname": value.qualname, "filename": value.filename,
                    "firstlineno": value.firstlineno}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return self.dataclass(value)
        if isinstance(value, (list, tuple)):
            return [self.value(v, name) for v in value]
        if isinstance(value, dict):
            return {str(k): self.value(v) for k, v in value.items()}
        return repr(value)

    def path(self, path: str) -> str:
        if os.path.isabs(path):
            rel = os.path.relpath(path, self.dump_dir)
            if not rel.startswith(os.pardir):
                return rel
        return path


def from_json(data: Dict[str, Any], dump_dir: str) -> model.Capture:
    """A :class:`~pellucid.dynamo.model.Capture` from :func:`to_json`'s data; paths are made
    absolute against ``dump_dir`` (where the file was read)."""
    if data.get("format") != FORMAT:
        raise ValueError("not a pellucid capture file (format %r)" % data.get("format"))
    reader = _Reader(os.path.abspath(dump_dir))
    frames = [reader.value(f) for f in data.get("frames", [])]
    reader.resolve(frames)
    for frame in frames:  # an entry's transform is one of its frame's, as in the live model
        own = {(t.compile_id, t.path): t for t in getattr(frame, "transforms", [])}
        for entry in getattr(frame, "entries", []):
            t = entry.transform
            if t is not None:
                entry.transform = own.get((t.compile_id, t.path), t)
    kwargs = {}
    for f in dataclasses.fields(model.Capture):
        if f.name in data and f.name not in ("frames", "dump_dir"):
            kwargs[f.name] = reader.value(data[f.name], f.name)
    cap = model.Capture(reader.dump_dir, **kwargs)
    cap.frames = {n: fr for n, fr in enumerate(frames)}
    return cap


def loads(text: str, dump_dir: str) -> model.Capture:
    """:func:`from_json` of a text."""
    return from_json(json.loads(text), dump_dir)


class _Reader(object):
    def __init__(self, dump_dir: str) -> None:
        self.dump_dir = dump_dir
        self.refs: List[Any] = []  # (object, field name, frame number)

    def value(self, value: Any, name: str = "") -> Any:
        if isinstance(value, str):
            return os.path.join(self.dump_dir, value) if name in _PATH_FIELDS and value and \
                not os.path.isabs(value) else value
        if isinstance(value, list):
            return [self.value(v, name) for v in value]
        if not isinstance(value, dict):
            return value
        if "$code" in value:
            return CodeInfo(value["$code"], value.get("qualname", ""), value.get("filename", ""),
                            value.get("firstlineno", 0))
        if "$frame" in value:
            return _FrameRef(value["$frame"])
        if "$file" in value:
            path = os.path.join(self.dump_dir, value["$file"])
            try:
                with open(path, encoding="utf-8") as fh:
                    return fh.read()
            except (OSError, UnicodeDecodeError):
                return None
        cls = getattr(model, value.get("$type", ""), None) if "$type" in value else None
        if cls is None or not dataclasses.is_dataclass(cls):
            return {k: self.value(v) for k, v in value.items() if k != "$type"}
        known = {f.name: f for f in dataclasses.fields(cls)}
        kwargs = {k: self.value(v, k) for k, v in value.items() if k in known}
        missing = [f.name for f in known.values() if f.name not in kwargs
                   and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        for k in missing:  # (a file from an older pellucid: an empty value of the right kind)
            kwargs[k] = "" if "str" in str(known[k].type) else None
        obj = cls(**kwargs)
        for k, v in kwargs.items():
            if isinstance(v, _FrameRef):
                self.refs.append((obj, k, v.number))
        return obj

    def resolve(self, frames: List[Any]) -> None:
        for obj, name, number in self.refs:
            target = frames[number] if isinstance(number, int) and 0 <= number < len(frames) else None
            setattr(obj, name, target)


class _FrameRef(object):
    def __init__(self, number: Optional[int]) -> None:
        self.number = number
