"""``index.md``: what a dump directory holds and why, for people reading it as text.

A rendering of the capture model of every process that wrote into the directory (each
process's ``capture_<n>.json``; :mod:`pellucid.dynamo.capture_json`), so it always describes
what is there, whichever rank finished last.  ``pellucid report`` renders the same model as
HTML.  Per function: a summary (entries, graph breaks, recompilations, graphs, compile time),
each graph break with torch's whole explanation and hints, the user's line and the lines
around it, each recompilation with the guard that failed, its value as compiled for and as
called with, and the user's line behind the guard; then the cache entries and their files.
"""
import os
from typing import List, Optional, Sequence

from pellucid.dynamo.api import Dump, Function, capture_files, families, frame_label, functions
from pellucid.dynamo.dump_files import ClaimsLock, DumpFiles
from pellucid.dynamo.explain import user_frames
from pellucid.dynamo.model import Capture, CompiledFrame, GraphBreak, Recompilation

INDEX = "index.md"


def _rel(dump_dir: str, path: Optional[str]) -> str:
    return os.path.relpath(path, dump_dir) if path else "-"


def _link(dump_dir: str, path: Optional[str]) -> str:
    rel = _rel(dump_dir, path)
    return "[%s](%s)" % (rel, rel.replace(" ", "%20")) if path else "-"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _seconds(value: Optional[float]) -> str:
    return "-" if value is None else ("%.2f s" % value if value >= 0.1 else "%.0f ms" % (value * 1000))


def process_title(capture: Capture) -> str:
    """``process 1234 (rank 0) on host: python train.py`` from the capture's process record."""
    p = capture.process
    bits = ["process %s" % p.get("pid", "?")]
    if p.get("rank") is not None:
        bits.append("(rank %s)" % p["rank"])
    if p.get("host"):
        bits.append("on %s" % p["host"])
    argv = p.get("argv")
    title = " ".join(bits)
    if isinstance(argv, list) and argv:
        title += ": `%s`" % " ".join(str(a) for a in argv)[:160]
    return title


def check_count(source: Optional[str]) -> int:
    """How many checks a rendered guard makes (one ``if ...: return False`` line each)."""
    if not source:
        return 0
    return sum(1 for line in source.splitlines() if line.lstrip().startswith("if ")
               and "return False" in line)


def summary_rows(fns: Sequence[Function]) -> List[List[str]]:
    """The per-function summary table (header first): the numbers both renderings show."""
    rows = [["function", "frames", "cache entries", "graph breaks", "recompilations", "graphs",
             "compile time", "of which backend", "of which Inductor"]]
    for fn in fns:
        ms = fn.metrics
        backend = sum(m.backend_s or 0.0 for m in ms) if any(m.backend_s is not None for m in ms) else None
        inductor = sum(m.inductor_s or 0.0 for m in ms) if any(m.inductor_s is not None for m in ms) else None
        rows.append([fn.name, str(len(fn.frames)), str(len(fn.entries)), str(len(fn.graph_breaks)),
                     str(len(fn.recompilations)), str(len(fn.graphs)),
                     _seconds(fn.compile_time_s if ms else None), _seconds(backend), _seconds(inductor)])
    return rows


def _table(rows: List[List[str]]) -> List[str]:
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows[1:]]
    return out + [""]


def graph_break_lines(gb: GraphBreak, label: str, compiles: Sequence[str] = ()) -> List[str]:
    """A graph break in Markdown: where, torch's explanation and hints, the lines around it."""
    here = gb.line
    where = "`%s:%d`" % (here.filename, here.lineno) if here is not None else "`%s`" % gb.location
    if here is not None and here.function:
        where += " in `%s`" % here.function
    compiles = list(compiles) or [gb.compile_id]
    out = ["- **graph break** in `%s` (compile%s %s) at %s: **%s**" % (
        label, "s" if len(compiles) > 1 else "", ", ".join(compiles), where,
        gb.kind or (gb.reason.strip().splitlines()[0] if gb.reason.strip() else "?"))]
    if gb.snippet:
        width = len(str(gb.snippet[-1].lineno))
        out += ["", "  ```python"]
        for line in gb.snippet:
            mark = ">>" if here is not None and line.lineno == here.lineno else "  "
            out.append("  %s %*d  %s" % (mark, width, line.lineno, line.text))
        out += ["  ```", ""]
    if gb.explanation:
        first, _, more = gb.explanation.partition("\n")
        out.append("  - Explanation: %s" % first)
        if more.strip():
            out += ["", "    ```"] + ["    " + ln for ln in more.strip("\n").split("\n")] + ["    ```", ""]
    for hint in gb.hints:
        out.append("  - Hint: %s" % hint)
    if gb.context:
        out.append("  - torch's context: `%s`" % gb.context.replace("`", "'"))
    stack = user_frames(gb.user_stack)
    if len(stack) > 1:
        out.append("  - reached from: " + " → ".join(
            "`%s:%d` (%s)" % (os.path.basename(s.filename), s.lineno, s.function) for s in stack))
    if gb.url:
        out.append("  - more: <%s>" % gb.url)
    if not (gb.explanation or gb.hints):  # a layout pellucid does not know: torch's text, whole
        out += ["", "  ```", "  " + gb.reason.replace("\n", "\n  "), "  ```"]
    return out + [""]


def recompilation_lines(rc: Recompilation, label: str) -> List[str]:
    """A recompilation in Markdown: the guard that failed, its values then and now, its line."""
    if rc.subject or rc.check:
        out = ["- **recompiled** `%s` (compile %s): the guard of entry %s failed on `%s`" % (
            label, rc.compile_id, rc.failed_entry or "?", rc.subject or "?")]
        out.append("  - compiled for: %s" % rc.expected)
        out.append("  - called with: %s" % rc.actual)
        out.append("  - failing check: `%s`" % rc.check.replace("`", "'"))
    else:
        out = ["- **recompiled** `%s` (compile %s): %s" % (
            label, rc.compile_id, rc.reason.strip().splitlines()[0] if rc.reason.strip() else "?")]
    if rc.guard_line is not None:
        g = rc.guard_line
        out.append("  - guard installed by `%s:%d`%s%s" % (
            g.filename, g.lineno, " in `%s`" % g.function if g.function else "",
            ": `%s`" % g.text.strip().replace("`", "'") if g.text else ""))
    if rc.reason and (rc.subject or rc.check):
        out.append("  - torch's reason: `%s`" % rc.reason.strip().splitlines()[0].replace("`", "'"))
    if rc.note:
        out.append("  - note: %s" % rc.note)
    return out + [""]


def _frame_table(dump_dir: str, frame: CompiledFrame) -> List[str]:
    kind = "resume function " if frame.is_resume else ""
    lines = ["#### %s`%s` (`%s:%d`)" % (kind, frame_label(frame), frame.filename, frame.firstlineno), ""]
    if not frame.entries:
        return lines + ["No cache entries were read for this frame.", ""]
    lines += ["| cache entry | compile | transformed code | runs | guard |", "|---|---|---|---|---|"]
    for e in frame.entries:
        t = e.transform
        if t is not None and t.replacement is not None:
            runs = "pellucid's file (verified)"
        else:
            runs = "Dynamo's bytecode" + (" (%s)" % t.rejected[:120] if t is not None and t.rejected else "")
        if e.guard_source:
            guard = "`%s`: %d checks" % (e.guard_name or "guard", check_count(e.guard_source))
        else:
            guard = "not rendered: %s" % (e.guard_error or "?")
        lines.append("| %d | %s | %s | %s | %s |" % (
            e.index, e.compile_id, _link(dump_dir, t.path) if t is not None else "-", _cell(runs), _cell(guard)))
    return lines + [""]


def render_function(dump_dir: str, fn: Function) -> List[str]:
    """One function's section."""
    root = fn.root
    lines = ["### function `%s`" % fn.name, ""]
    where = "`%s:%d`" % (root.filename, root.firstlineno)
    if root.wrapper:
        where = "`%s`, compiled as its decorator's wrapper `%s` (%s)" % (
            root.source_filename or root.filename, root.wrapper, where)
    if root.module:
        where += " in module `%s`" % root.module
    full = root.full_code_path
    lines.append("Defined at %s; Dynamo's cache lookup as Python: %s." % (
        where, _link(dump_dir, full) if full else "no full_code file"))
    lines.append("")
    lines += _table(summary_rows([fn]))
    for frame, gb, compiles in fn.graph_break_sites():
        lines += graph_break_lines(gb, frame_label(frame), compiles)
    for frame in fn.frames:
        for rc in frame.recompilations:
            lines += recompilation_lines(rc, frame_label(frame))
    for frame in fn.frames:
        lines += _frame_table(dump_dir, frame)
    graphs = [fn.capture.graphs[g] for g in fn.graphs if g in fn.capture.graphs]
    if graphs:
        lines.append("Graphs:")
        lines.append("")
        for g in graphs:
            files = ", ".join("[%s](%s)" % (s.stage, _rel(dump_dir, s.path))
                              + (" (Inductor's module `%s`)" % s.origin if s.origin else "")
                              for s in g.stages if s.path)
            lines.append("- `%s` (compile %s): %s" % (g.name, g.compile_id, files or "no stages captured"))
        lines.append("")
    return lines


def render(dump: Dump) -> str:
    """``index.md`` for the captures of a dump directory."""
    d = dump.dump_dir
    lines = ["# pellucid dump index", "",
             "Written by `pellucid.prepare_debug` for code compiled by `torch.compile`. "
             "`pellucid report %s` writes the same as a browsable HTML report; "
             "`pellucid.load_capture(%r)` hands it to Python." % (d, d), "",
             "Files: `full_code_for_<fn>.py` is Dynamo's cache lookup as Python (guards, dispatch); "
             "`__transformed_code_<n>_for_<fn>.py` are the cache entries' code; "
             "`__compiled_fn_<n>.<stage>.py` are the graphs; `capture_<n>.json` is each process's "
             "capture model.", ""]
    fns = functions(dump)
    if not fns:
        lines += ["Nothing was compiled.", ""]
    elif len(dump) > 1 or len(fns) > 1:
        rows = summary_rows(fns)
        if len(dump) > 1:
            rows = [["process"] + rows[0]] + [[str(fn.capture.process.get("rank", fn.capture.process.get("pid", "?")))]
                                                 + row for fn, row in zip(fns, rows[1:])]
        lines += ["## Summary", ""] + _table(rows)
    for capture in dump:
        if len(dump) > 1:
            lines += ["## %s" % process_title(capture), ""]
        for root, frames in families(capture):
            lines += render_function(d, Function(capture, root, frames))
        if capture.warnings:
            lines += ["#### warnings", ""] + ["- %s" % w.replace("\n", " ") for w in capture.warnings] + [""]
        disagreements = getattr(capture, "disagreements", None)
        if disagreements:
            lines += ["#### rendered guards that disagreed with Dynamo under debug()", "",
                      "Dynamo's guard manager decided which entry ran; the rendered guard answered otherwise.", ""]
            for dg in disagreements:
                lines.append("- `%s` cache entry %d: Dynamo %s, rendered guard %s; first line that disagrees: %s"
                             % (dg.frame, dg.entry, "passes" if dg.dynamo else "fails",
                                "fails" if dg.dynamo else "passes", dg.where.replace("\n", " ")))
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def rebuild(dump_dir: str, files: Optional[DumpFiles] = None) -> str:
    """Rewrite ``index.md`` from every capture file in the directory; returns its path."""
    from pellucid.dynamo.api import load_capture
    from pellucid.dynamo.dump_files import write_file

    dump_dir = os.path.abspath(dump_dir)
    path = os.path.join(dump_dir, INDEX)
    text = render(load_capture(dump_dir) if capture_files(dump_dir) else Dump(dump_dir))
    if files is not None:
        files.write(path, text)
    else:
        write_file(path, text)
    return path


def write_index(capture: Capture, files: DumpFiles) -> str:
    """Rebuild ``index.md`` after this process wrote its capture file (under the directory's
    lock, so ranks finishing together each see the others' files whole)."""
    with ClaimsLock(files.claims_dir):
        return rebuild(capture.dump_dir, files)


def rewrite_part(capture: Capture) -> Optional[str]:
    """Rewrite this capture's file (after ``debug()`` added to the capture) and rebuild
    ``index.md``; None when the capture wrote no capture file."""
    from pellucid.dynamo.capture_json import dumps
    from pellucid.dynamo.dump_files import write_file

    path = capture.capture_file
    if not path:
        return None
    write_file(path, dumps(capture))
    return rebuild(capture.dump_dir)
