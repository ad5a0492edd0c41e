"""Why a frame broke and why it recompiled, in terms of the user's program.

Graph breaks: torch's structured trace carries the whole message ``TORCH_LOGS=graph_breaks``
prints (the reason, an explanation, hints, torch's developer context, a link, the user's
stack); :func:`parse_graph_break` splits it into the fields of
:class:`~pellucid.dynamo.model.GraphBreak` and adds the lines around the user's line.

Recompilations: when Dynamo compiles a frame again, pellucid runs each missed entry's
rendered guard (:mod:`pellucid.dynamo.guard_render`, which answers like Dynamo's guard
manager) on the frame locals of the call that missed, and :func:`diagnose` names the first
check that failed, the value it checks as compiled for and as called with, and the user's
line whose tracing installed the guard.

>>> gb = parse_graph_break("0/0", "Graph break in user code at t.py:3\\n"
...                        "Graph Break Reason: Unsupported: print\\n"
...                        "  Explanation: Dynamo cannot trace print\\n"
...                        "  Hint: remove it\\n")
>>> gb.location, gb.explanation, gb.hints
('t.py:3', 'Dynamo cannot trace print', ['remove it'])
"""
import linecache
import re
import textwrap
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from pellucid.dynamo.model import GraphBreak, Recompilation, SourceLine

_BREAK_AT = re.compile(r"Graph break in user code at (\S+:\d+)")
_FILE_LINE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>.+)$')
#: lines of context shown around the user's line
SNIPPET = 3


def source_line(filename: str, lineno: int, function: str = "") -> SourceLine:
    """A :class:`SourceLine` with the line's text as the file reads now (empty if unreadable)."""
    return SourceLine(filename, lineno, function, linecache.getline(filename, lineno).rstrip())


def snippet(filename: str, lineno: int, around: int = SNIPPET) -> List[SourceLine]:
    """The lines ``lineno - around .. lineno + around`` of ``filename`` (those that exist)."""
    out = []
    for n in range(max(1, lineno - around), lineno + around + 1):
        text = linecache.getline(filename, n)
        if not text:
            if n > lineno:
                break
            continue
        out.append(SourceLine(filename, n, "", text.rstrip("\n")))
    return out


_TORCH_FILE = re.compile(r"[\\/](?:site|dist)-packages[\\/]torch[\\/]")


def user_frames(stack: List[SourceLine]) -> List[SourceLine]:
    """``stack`` without the frames inside torch itself (``Module.__call__`` and the like)."""
    return [s for s in stack if not _TORCH_FILE.search(s.filename) and not s.filename.startswith("<frozen ")]


def parse_stack(text: str) -> List[SourceLine]:
    """``File "...", line N, in fn`` entries of a traceback text, each with its code line."""
    out: List[SourceLine] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _FILE_LINE.match(line)
        if m is None:
            continue
        code = ""
        if i + 1 < len(lines) and not _FILE_LINE.match(lines[i + 1]) and lines[i + 1].startswith("    "):
            code = lines[i + 1].strip()
        out.append(SourceLine(m.group("file"), int(m.group("line")), m.group("fn").strip(), code))
    return out


def _section(text: str, start: str, stops: Tuple[str, ...]) -> str:
    at = text.find(start)
    if at < 0:
        return ""
    rest = text[at + len(start):]
    end = len(rest)
    for stop in stops:
        k = rest.find(stop)
        if 0 <= k < end:
            end = k
    return rest[:end]


def parse_graph_break(compile_id: str, text: str) -> GraphBreak:
    """Split torch's graph-break message into a :class:`GraphBreak` (the whole text stays in
    ``reason``); unknown layouts keep what could be read."""
    # (what follows is torch's own Python traceback inside Dynamo: nothing about the program)
    text = text.split("\nTraceback (most recent call last):", 1)[0].strip()
    m = _BREAK_AT.search(text)
    gb = GraphBreak(compile_id, text, m.group(1) if m else "?")
    body = text.split("\nUser code traceback:", 1)[0]
    body = body.split("\nTraceback (most recent call last):", 1)[0]
    lines = body.splitlines()
    # the kind: what follows "Graph Break Reason:" on its line, unless that is only torch's
    # "Encountered graph break when attempting to trace ...:" preamble; then the first
    # unindented line after it
    for i, line in enumerate(lines):
        if line.startswith("Graph Break Reason:"):
            head = line[len("Graph Break Reason:"):].strip()
            rest = [ln for ln in lines[i + 1:] if ln.strip()]
            if head and not head.endswith(":"):
                gb.kind = head
            elif rest and not rest[0].startswith(" "):
                gb.kind = rest[0].strip()
            else:
                gb.kind = head.rstrip(":")
            break
    hints = []
    explanation: List[str] = []
    context: List[str] = []
    current: Optional[List[str]] = None
    for line in lines:
        s = line.strip()
        if s.startswith("Explanation:"):
            current = explanation
            explanation.append(s[len("Explanation:"):].strip())
        elif s.startswith("Hint:"):
            hints.append(s[len("Hint:"):].strip())
            current = None
        elif s.startswith("Developer debug context:"):
            current = context
            context.append(s[len("Developer debug context:"):].strip())
        elif s.startswith("For more details"):
            current = None
        elif current is not None and (line.startswith("    ") or not s):
            current.append(line[4:] if line.startswith("    ") else "")
        else:
            current = None
    gb.explanation = textwrap.dedent("\n".join(explanation).strip("\n")).strip()
    gb.hints = hints
    gb.context = " ".join(c.strip() for c in context if c.strip())
    url = re.search(r"https?://\S+", body)
    gb.url = url.group(0).rstrip(".") if url else ""
    stack = _section(text, "User code traceback:", ())
    gb.user_stack = parse_stack(stack)
    here = gb.user_stack[-1] if gb.user_stack else None
    if here is None and m is not None:
        filename, _, lineno = m.group(1).rpartition(":")
        here = source_line(filename, int(lineno))
        gb.user_stack = [here]
    if here is not None:
        gb.snippet = snippet(here.filename, here.lineno)
    return gb


def function_source(code: Any) -> Tuple[Optional[str], int]:
    """The source of the function ``code`` belongs to, as its file reads now, and its first
    line number; (None, 0) when the file cannot be read."""
    import inspect

    try:
        lines, start = inspect.getsourcelines(code)
    except (OSError, TypeError, IndexError):
        return None, 0
    return "".join(lines), max(start, 1)


# ---------------------------------------------------------------------------------- recompiles

def describe_value(value: Any) -> str:
    """A short description of a value a guard reads (a tensor by its metadata, never data)."""
    try:
        import torch
    except ImportError:  # pragma: no cover - guards exist only with torch
        torch = None
    if torch is not None and isinstance(value, torch.Tensor):
        try:
            device = "" if value.device.type == "cpu" else " on %s" % value.device
            return "%s %s%s stride %s%s%s" % (
                type(value).__name__, _dtype(value.dtype), list(value.shape), tuple(value.stride()),
                device, ", requires_grad" if value.requires_grad else "")
        except Exception:  # noqa: BLE001 - meta/odd tensors: the type is something
            return "a %s" % type(value).__name__
    if isinstance(value, (bool, int, float, complex, str, bytes, type(None))):
        text = repr(value)
        return text if len(text) <= 80 else text[:77] + "..."
    if isinstance(value, type):
        return "class %s.%s" % (value.__module__, value.__qualname__)
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return "a %s of length %d" % (type(value).__name__, len(value))
    return "a %s object (id %d)" % (type(value).__name__, id(value))


_DTYPE_SHORT = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
                "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
                "bool": "b8", "complex64": "c64", "complex128": "c128"}


def _dtype(dtype: Any) -> str:
    name = str(dtype).replace("torch.", "")
    return _DTYPE_SHORT.get(name, name)


def _expected(kind: str, params: Dict[str, Any]) -> Optional[str]:
    """The value a check was compiled for, from the guard's own parameters."""
    if kind == "TENSOR_MATCH" and "size" in params:
        t = params.get("tensor_type")
        return "%s %s%s stride %s%s" % (
            getattr(t, "__name__", "Tensor"), _dtype(params.get("dtype")),
            ["?" if s is None else s for s in params["size"]],
            tuple("?" if s is None else s for s in params.get("stride", [])),
            ", requires_grad" if params.get("requires_grad") else "")
    if kind == "EQUALS_MATCH" and "value" in params:
        return describe_value(params["value"])
    if kind == "TYPE_MATCH":
        t = params.get("type")
        return ("an instance of class %s.%s" % (t.__module__, t.__qualname__)) if t is not None \
            else "an instance of the type with id %s" % params.get("type_id")
    if kind == "ID_MATCH":
        return "the object with id %s%s" % (params.get("obj_id"),
                                            " (%s)" % params["type_text"] if params.get("type_text") else "")
    if kind in ("LENGTH_CHECK", "DICT_LENGTH") and "length" in params:
        return "length %d" % params["length"]
    if kind == "NONE_MATCH":
        return "None"
    if kind == "NOT_NONE":
        return "not None"
    if kind == "TRUE_MATCH":
        return "True"
    if kind == "FALSE_MATCH":
        return "False"
    return None


def _actual(kind: str, value: Any, params: Dict[str, Any]) -> str:
    if kind == "TYPE_MATCH":
        return "an instance of class %s.%s" % (type(value).__module__, type(value).__qualname__)
    if kind == "ID_MATCH":
        return "another object: %s" % describe_value(value)
    if kind in ("LENGTH_CHECK", "DICT_LENGTH"):
        try:
            return "length %d" % len(value)
        except Exception:  # noqa: BLE001
            return describe_value(value)
    return describe_value(value)


def _state_differences(kind: str, params: Dict[str, Any]) -> Optional[Tuple[str, str]]:
    """(expected, actual) for the process-wide state guard, naming only the fields that changed."""
    if kind == "GLOBAL_STATE" and isinstance(params.get("state"), dict):
        from pellucid.dynamo.guard_helpers import current_global_state

        then, now = params["state"], current_global_state()
        keys = sorted(k for k in set(then) | set(now) if then.get(k) != now.get(k))
        if keys:
            return (", ".join("%s=%r" % (k, then.get(k)) for k in keys),
                    ", ".join("%s=%r" % (k, now.get(k)) for k in keys))
    return None


def _guard_line(check: Any, frame_file: str) -> Optional[SourceLine]:
    """The user's line a leaf check's first code part names (torch shortens the file name to
    its tail: the frame's own file is used when it ends the same way)."""
    parts = getattr(check, "parts", None) or []
    for part in parts:
        loc = getattr(part, "location", None)
        if not loc or not getattr(part, "user_line", None):
            continue
        m = re.match(r"^(?P<file>.+):(?P<line>\d+)(?: in (?P<fn>.+))?$", loc)
        if m is None:
            continue
        filename = m.group("file")
        if frame_file.endswith(filename):
            filename = frame_file
        return SourceLine(filename, int(m.group("line")), m.group("fn") or "", part.user_line.strip())
    return None


def _leaf_of(rendered: Any, check: Any) -> Any:
    tree = getattr(rendered, "tree", None)
    if tree is None or check.leaf_id is None:
        return None
    for leaf in tree.all_checks():
        if id(leaf.leaf) == check.leaf_id:
            return leaf
    for rel in tree.relational:
        if id(rel.leaf) == check.leaf_id:
            return rel
    return None


def _stack_lines(stack: Any) -> List[SourceLine]:
    """A ``traceback.StackSummary`` as source lines, outermost first."""
    out = []
    for fs in stack or ():
        out.append(SourceLine(str(getattr(fs, "filename", "?")), int(getattr(fs, "lineno", 0) or 0),
                              str(getattr(fs, "name", "")), str(getattr(fs, "line", "") or "").strip()))
    return out


#: where a compiled function's own lines are: a file, and the range of lines in it (None: all)
Place = Tuple[str, Optional[int], Optional[int]]


def _installed_by(leaf: Any, entry_id: str, places: Sequence[Place],
                  guard_stacks: Optional[Dict[Tuple[str, str], Any]]) -> Tuple[Optional[SourceLine], List[SourceLine]]:
    """(the line of the compiled function whose tracing made the guard, the user stack) for a
    failed leaf check; from the stacks recorded when Dynamo made the guard, else the
    innermost line Dynamo's text names.  ``places``: where the function's lines are, the one
    the user reads first (a decorated function's, then its wrapper's): the outermost frame of
    the stack in the first of them that has one."""
    if guard_stacks:
        for part in getattr(leaf, "parts", None) or []:
            stack = guard_stacks.get((entry_id, getattr(part, "raw", "")))
            if stack:
                lines = user_frames(_stack_lines(stack))
                for name, lo, hi in places:
                    own = [s for s in lines if s.filename == name and (lo is None or lo <= s.lineno)
                           and (hi is None or s.lineno <= hi)]
                    if own:
                        return own[0], lines
                if lines:
                    return lines[-1], lines
    return _guard_line(leaf, places[-1][0]), []


def diagnose(compile_id: str, reason: str, missed: List[Tuple[str, Any]], f_locals: Dict[str, Any],
             frame_file: Union[str, Sequence[Place]], user_stack: Optional[List[SourceLine]] = None,
             guard_stacks: Optional[Dict[Tuple[str, str], Any]] = None,
             trees: Optional[Dict[int, Tuple[Any, Any, Dict[str, Any]]]] = None,
             guard_names: Optional[Dict[int, str]] = None) -> Recompilation:
    """A :class:`Recompilation` for compile ``compile_id``: ``missed`` are the earlier entries
    as (compile id, guard manager), in the order Dynamo tried them; the first whose rendered
    guard fails on ``f_locals`` is explained.  Never raises (what failed goes to ``note``).
    ``trees``: guard trees already read and rendered, and a place for the ones read here
    (:func:`pellucid.dynamo.guard_render.render_guard`); ``guard_names`` (``id`` of a guard
    manager -> name): the name to render a guard under (the dump's, so that it renders once)."""
    from pellucid.dynamo.guard_render import failing_check, render_guard

    places: List[Place] = [(frame_file, None, None)] if isinstance(frame_file, str) \
        else [p for p in frame_file if p[0]]
    rc = Recompilation(compile_id, reason)
    notes = []
    for entry_id, guard_manager in missed:
        try:
            name = (guard_names or {}).get(id(guard_manager), "guard")
            rendered = render_guard(guard_manager, name, trees=trees)
        except Exception as exc:  # noqa: BLE001 - one entry we cannot explain
            notes.append("the guard of entry %s could not be rendered: %s" % (entry_id, exc))
            continue
        g = rendered.globals_dict if rendered.globals_dict is not None else {}
        try:
            check = failing_check(rendered, f_locals, g)
        except Exception as exc:  # noqa: BLE001
            notes.append("running the guard of entry %s failed: %s" % (entry_id, exc))
            continue
        if check is None:
            continue  # this entry's guard passes on these locals (Dynamo skipped it for another reason)
        rc.failed_entry = entry_id
        rc.check = check.text.split("  # ", 1)[0].strip()
        rc.guard_kind = check.kind
        leaf = _leaf_of(rendered, check)
        params = getattr(leaf, "params", {}) if leaf is not None else {}
        subject = getattr(leaf, "subject", "") if leaf is not None else ""
        if not subject and leaf is not None and getattr(leaf, "subjects", None):
            subject = ", ".join(leaf.subjects)
        rc.subject = subject
        state = _state_differences(check.kind, params)
        if state is not None:
            rc.expected, rc.actual = state
        else:
            rc.expected = _expected(check.kind, params) or "a value passing `%s`" % rc.check
            rc.actual = _read(rendered, subject, f_locals, g, check.kind, params)
        if leaf is not None:
            rc.guard_line, rc.guard_stack = _installed_by(leaf, entry_id, places, guard_stacks)
        break
    else:
        if notes:
            rc.note = "; ".join(notes)
        elif missed:
            rc.note = "every earlier entry's rendered guard passes on this call's locals"
    if rc.guard_line is None and user_stack:
        rc.guard_line = user_stack[-1]
    return rc


def _read(rendered: Any, subject: str, f_locals: Dict[str, Any], g: Dict[str, Any],
          kind: str, params: Dict[str, Any]) -> str:
    """The subject's value on the call that missed, described (read like the guard reads it)."""
    if not subject or subject == "L":
        return "?"
    if "," in subject and not subject.startswith(("(", "[")):
        subject = "(%s)" % subject
    try:
        from pellucid.dynamo.guard_render import guard_scope

        scope = guard_scope(rendered)  # (not the whole guard compiled: see failing_check)
        value = eval("lambda L, G: " + subject, scope)(f_locals, g)  # noqa: S307 - the guard's own expression
    except Exception as exc:  # noqa: BLE001 - the value cannot be read: that is why it failed
        return "cannot be read (%s: %s)" % (type(exc).__name__, exc)
    if isinstance(value, tuple) and "," in subject:
        return ", ".join(describe_value(v) for v in value)
    return _actual(kind, value, params)


def recompile_user_stack(text: str) -> List[SourceLine]:
    """The ``User stack trace:`` of torch's recompile reason (torch 2.13+), if any."""
    return parse_stack(text.split("User stack trace:", 1)[1]) if "User stack trace:" in text else []
