"""``index.md``: what a dump directory holds, for people.

Each process writes its own part (compiled frames, cache entries and their files, graph breaks
with reason and source line, recompilations with the guard that failed, graphs, warnings); the
index is every part, joined under a file lock, so several processes sharing a directory all
appear in it.
"""
import os
from typing import List, Optional

from pellucid.dynamo.dump_files import ClaimsLock, DumpFiles
from pellucid.dynamo.model import Capture, CompiledFrame

PARTS = ".pellucid-index"


def _rel(capture: Capture, path: str) -> str:
    return os.path.relpath(path, capture.dump_dir) if path else "-"


def _frame_section(capture: Capture, frame: CompiledFrame) -> List[str]:
    kind = "resume function " if frame.is_resume else ""
    lines = ["### %s`%s` (%s:%d)" % (kind, frame.label, frame.filename, frame.firstlineno), ""]
    if frame.entries:
        lines += ["| cache entry | compile | transformed code | runs | guard |",
                  "|---|---|---|---|---|"]
        for e in frame.entries:
            t = e.transform
            runs = "pellucid's recompiled file" if t is not None and t.replacement is not None \
                else "Dynamo's bytecode" + (" (%s)" % t.rejected.replace("|", "/")[:120] if t is not None and t.rejected else "")
            guard = "rendered" if e.guard_source else "not rendered: %s" % (e.guard_error or "?")
            lines.append("| %d | %s | %s | %s | %s |" % (
                e.index, e.compile_id, "[%s](%s)" % (_rel(capture, t.path), _rel(capture, t.path))
                if t is not None and t.path else "-", runs, guard))
        lines.append("")
    for gb in frame.graph_breaks:
        first = gb.reason.strip().splitlines()
        reason = " ".join(line.strip() for line in first[1:3]) if len(first) > 1 else (first[0] if first else "")
        lines.append("- graph break (compile %s) at `%s`: %s" % (gb.compile_id, gb.location, reason))
    for rc in frame.recompilations:
        lines.append("- recompiled (compile %s) because a guard failed: `%s`"
                     % (rc.compile_id, rc.reason.splitlines()[0].strip()))
    if frame.graph_breaks or frame.recompilations:
        lines.append("")
    return lines


def render_part(capture: Capture) -> str:
    """This process's part of the index."""
    lines = ["## process %d" % os.getpid(), ""]
    for root in capture.roots():
        full = root.full_code_path
        lines += ["### function `%s` — %s" % (root.label, "[%s](%s)" % (_rel(capture, full), _rel(capture, full))
                                               if full else "no full_code file"), ""]
        for frame in capture.family(root):
            lines += _frame_section(capture, frame)
    if capture.graphs:
        lines += ["### graphs", ""]
        for name in sorted(capture.graphs, key=lambda n: int(n.rsplit("_", 1)[-1]) if n.rsplit("_", 1)[-1].isdigit() else 0):
            g = capture.graphs[name]
            files = ", ".join("[%s](%s)" % (s.stage, _rel(capture, s.path))
                              + (" (Inductor's module `%s`)" % s.origin if s.origin else "")
                              for s in g.stages if s.path)
            lines.append("- `%s` (compile %s): %s" % (name, g.compile_id, files or "no stages captured"))
        lines.append("")
    if capture.disagreements:
        lines += ["### rendered guards that disagreed with Dynamo under debug()", "",
                  "Dynamo's guard manager decided which entry ran; the rendered guard answered otherwise.", ""]
        for d in capture.disagreements:
            lines.append("- `%s` cache entry %d: Dynamo %s, rendered guard %s; first line that disagrees: %s"
                         % (d.frame, d.entry, "passes" if d.dynamo else "fails",
                            "fails" if d.dynamo else "passes", d.where.replace("\n", " ")))
        lines.append("")
    if capture.warnings:
        lines += ["### warnings", ""] + ["- %s" % w.replace("\n", " ") for w in capture.warnings] + [""]
    return "\n".join(lines) + "\n"


def write_index(capture: Capture, files: DumpFiles) -> str:
    """Write this process's part, then rebuild ``index.md`` from all parts; returns its path.

    Parts are claimed like every dump file (``.pellucid-index-<n>.md``), so a later run
    replaces them instead of adding to them.
    """
    part = files.claim(PARTS + "-{n}.md", key="index part")
    capture.index_part = part
    files.write(part, render_part(capture))
    return _rebuild(capture, files)


def rewrite_part(capture: Capture) -> Optional[str]:
    """Rewrite this capture's part of the index (after ``debug()`` added to the capture) and
    rebuild ``index.md``; None when the capture wrote no index."""
    if not capture.index_part:
        return None
    files = DumpFiles(capture.dump_dir)
    files.write(capture.index_part, render_part(capture))
    return _rebuild(capture, files)


def _rebuild(capture: Capture, files: DumpFiles) -> str:
    parts_dir = capture.dump_dir
    # The claims lock serialises the rebuilds (without advisory locks, the rename in
    # files.write still keeps the file whole); nothing below claims a name.
    with ClaimsLock(files.claims_dir):
        names = sorted((n for n in os.listdir(parts_dir) if n.startswith(PARTS + "-") and n.endswith(".md")),
                       key=lambda n: int(n[len(PARTS) + 1:-3]) if n[len(PARTS) + 1:-3].isdigit() else 0)
        body = ["# pellucid dump index", "",
                "Files written by `pellucid.prepare_debug` for code compiled by `torch.compile`.",
                "`full_code_for_<fn>.py` is Dynamo's cache lookup as Python; "
                "`__transformed_code_<n>_for_<fn>.py` are the cache entries' code; "
                "`__compiled_fn_<n>.<stage>.py` are the graphs.", ""]
        for n in names:
            with open(os.path.join(parts_dir, n), encoding="utf-8") as fh:
                body.append(fh.read())
        path = os.path.join(capture.dump_dir, "index.md")
        files.write(path, "\n".join(body))
    return path
