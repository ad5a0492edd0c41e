"""``pellucid report DIR``: the dump as one static, self-contained HTML page.

A rendering of the capture model (every process's ``capture_<n>.json``, read with
:func:`pellucid.dynamo.api.load_capture`) and of the files it names; nothing re-reads torch and
nothing is fetched when the page is viewed (styles and script are inline).  Views:

* an overview: the processes (ranks), a summary per function, every graph break and
  recompilation with its explanation;
* per function: the original source with graph-break and guard lines marked, side by side with
  the transformed code of each cache entry; why it broke (torch's explanation and hints) and
  why each later cache entry was needed (the guard that failed, its value as compiled for and as
  called with, the line that installed it); each entry's guard as Python;
* per graph: each stage (Dynamo FX, AOT forward/backward, Inductor), every FX node linked to the
  user's line it came from, every Inductor kernel call to the FX nodes it computes;
* search over every line of all of that.

Links to dumped files are relative, so the report opens them from where it lies.

>>> path = write_report("dump")            # doctest: +SKIP
>>> os.path.basename(path)                 # doctest: +SKIP
'report.html'
"""
import html
import os
import re
from typing import Dict, List, Optional, Sequence, Tuple

from pellucid.dynamo.api import Dump, Function, families, frame_label, load_capture
from pellucid.dynamo.explain import user_frames
from pellucid.dynamo.index import check_count, process_title, summary_rows
from pellucid.dynamo.model import (Capture, CompiledFrame, CompiledGraph, GraphBreak, Recompilation,
                                   SourceLine)
from pellucid.dynamo.provenance import fx_nodes, inductor_kernels
from pellucid.dynamo.report_assets import CSS, JS
from pellucid.dynamo.report_code import highlight_lines

REPORT = "report.html"
_GUARD_FROM = re.compile(r"# from: (?P<text>.*?)  \((?P<file>[^()]*?):(?P<line>\d+) in (?P<fn>[^)]*)\)")
STAGE_ORDER = ["dynamo", "aot_joint", "aot_forward", "aot_backward", "aot_inference", "inductor",
               "inductor_backward"]
STAGE_NAMES = {"dynamo": "Dynamo FX graph", "aot_joint": "AOT joint", "aot_forward": "AOT forward",
               "aot_backward": "AOT backward", "aot_inference": "AOT inference",
               "inductor": "Inductor", "inductor_backward": "Inductor backward"}

e = html.escape


def write_report(dump_dir: str, out: Optional[str] = None) -> str:
    """Write the report of ``dump_dir`` to ``out`` (default ``DIR/report.html``); returns its path."""
    from pellucid.dynamo.dump_files import write_file

    dump = load_capture(dump_dir)
    out = os.path.abspath(out or os.path.join(dump.dump_dir, REPORT))
    write_file(out, render_report(dump, os.path.dirname(out)))
    return out


def _read(path: Optional[str]) -> Optional[str]:
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def _same_file(a: str, b: str) -> bool:
    """Whether two spellings name one source file (torch shortens names to their tail)."""
    if not a or not b:
        return False
    return a == b or a.endswith("/" + b.lstrip("./")) or b.endswith("/" + a.lstrip("./"))


class _Ids(object):
    """Unique, valid element ids."""

    def __init__(self) -> None:
        self.used: set = set()

    def make(self, *parts: object) -> str:
        base = re.sub(r"[^A-Za-z0-9_-]+", "_", "-".join(str(p) for p in parts)).strip("_") or "x"
        ident, n = base, 2
        while ident in self.used:
            ident, n = "%s-%d" % (base, n), n + 1
        self.used.add(ident)
        return ident


class _Page(object):
    def __init__(self, dump: Dump, out_dir: str) -> None:
        self.dump = dump
        self.out_dir = out_dir
        self.ids = _Ids()
        self.fn_ids: Dict[Tuple[int, int], str] = {}  # (capture, id(root)) -> view id
        self.graph_ids: Dict[Tuple[int, str], str] = {}
        self.graph_owner: Dict[Tuple[int, str], Function] = {}
        #: (capture, id(root)) -> {user line number -> element id of that source line}
        self.source_lines: Dict[Tuple[int, int], Dict[int, str]] = {}
        self.fns: List[Tuple[int, Function]] = []
        for ci, capture in enumerate(dump):
            for root, frames in families(capture):
                fn = Function(capture, root, frames)
                self.fns.append((ci, fn))
                self.fn_ids[(ci, id(root))] = self.ids.make("p%d" % ci, "fn", fn.name)
                for g in fn.graphs:
                    self.graph_owner.setdefault((ci, g), fn)
            for name in capture.graphs:
                self.graph_ids[(ci, name)] = self.ids.make("p%d" % ci, "graph", name)

    # -- small pieces ----------------------------------------------------------------------
    def file_link(self, path: Optional[str], text: Optional[str] = None) -> str:
        if not path:
            return '<span class="muted">-</span>'
        rel = os.path.relpath(path, self.out_dir)
        return '<a class="file" href="%s">%s</a>' % (e(rel.replace(os.sep, "/")), e(text or os.path.basename(path)))

    def source_ref(self, ci: int, fn: Optional[Function], line: Optional[SourceLine], short: bool = True) -> str:
        """A user line: a link to it in the function's source view when that view shows it."""
        if line is None:
            return '<span class="muted">?</span>'
        label = "%s:%d" % (os.path.basename(line.filename) if short else line.filename, line.lineno)
        if fn is not None:
            target = self.source_lines.get((ci, id(fn.root)), {}).get(line.lineno)
            if target and _same_file(line.filename, _source_file(fn.root)):
                return '<a href="#%s" title="%s">%s</a>' % (target, e(line.filename), e(label))
        if os.path.dirname(os.path.abspath(line.filename)) == self.dump.dump_dir and os.path.exists(line.filename):
            return self.file_link(line.filename, label)  # (a dumped file pellucid's code ran from)
        return '<span class="mono" title="%s">%s</span>' % (e(line.filename), e(label))

    def code_block(self, prefix: str, text: str, marks: Optional[Dict[int, Tuple[str, str]]] = None,
                   notes: Optional[Dict[int, str]] = None, start: int = 1, tall: bool = False,
                   lines_out: Optional[Dict[int, str]] = None) -> str:
        marks = marks or {}
        notes = notes or {}
        rows = []
        for k, line_html in enumerate(highlight_lines(text)):
            n = start + k
            ident = "%s-L%d" % (prefix, n)
            if lines_out is not None:
                lines_out[n] = ident
            css, title = marks.get(n, ("", ""))
            rows.append('<div class="line%s" id="%s"%s><span class="n">%d</span><span class="m"></span>'
                        '<code>%s</code>%s</div>' % (
                            " " + css if css else "", ident, ' title="%s"' % e(title) if title else "", n,
                            line_html or " ", '<span class="ann">%s</span>' % notes[n] if n in notes else ""))
        return '<div class="code%s">%s</div>' % (" tall" if tall else "", "".join(rows))

    def tabs(self, group: str, panes: Sequence[Tuple[str, str, str]]) -> Tuple[str, str]:
        """(tab buttons, pane group) for (id, label, html) panes; the first is shown."""
        buttons = "".join('<button data-pane="%s" class="%s">%s</button>' % (pid, "on" if k == 0 else "", e(label))
                          for k, (pid, label, _) in enumerate(panes))
        body = "".join('<div class="pane%s" id="%s">%s</div>' % (" on" if k == 0 else "", pid, content)
                       for k, (pid, _, content) in enumerate(panes))
        return ('<div class="tabs" data-for="%s">%s</div>' % (group, buttons),
                '<div class="panes" id="%s">%s</div>' % (group, body))

    # -- function view -----------------------------------------------------------------------
    def function_view(self, ci: int, fn: Function) -> str:
        vid = self.fn_ids[(ci, id(fn.root))]
        root = fn.root
        parts = ['<section class="view" id="%s" data-title="%s">' % (vid, e(fn.name))]
        parts.append('<h2>%s<span class="where">%s:%d%s</span></h2>' % (
            e(fn.name), e(_source_file(root)), root.source_start if root.source_filename else root.firstlineno,
            " · " + _inline_md(process_title(fn.capture)) if len(self.dump) > 1 else ""))
        parts.append(self.facts(fn))
        parts.append('<div class="sub">Dynamo\'s cache lookup as Python: %s</div>' % (
            self.file_link(root.full_code_path) if root.full_code_path else '<span class="muted">none written</span>'))
        # source first: its line ids are what breaks and recompiles link to
        source_html = self.source_and_code(ci, fn, vid)
        breaks = self.breaks_html(ci, fn)
        recompiles = self.recompiles_html(ci, fn)
        if breaks:
            parts.append('<h3>Why it broke</h3>' + breaks)
        if recompiles:
            parts.append('<h3>Why it recompiled</h3>' + recompiles)
        parts.append('<h3>Source and transformed code</h3>' + source_html)
        parts.append('<h3>Cache entries and guards</h3>' + self.entries_html(ci, fn, vid))
        graphs = [g for g in fn.graphs if g in fn.capture.graphs]
        if graphs:
            parts.append('<h3>Graphs</h3><table><tr><th>graph</th><th>compile</th><th>stages</th></tr>%s</table>' % "".join(
                '<tr><td><a href="#%s">%s</a></td><td>%s</td><td>%s</td></tr>' % (
                    self.graph_ids[(ci, g)], e(g), e(fn.capture.graphs[g].compile_id),
                    ", ".join(e(STAGE_NAMES.get(s.stage, s.stage)) for s in _stages(fn.capture.graphs[g])))
                for g in graphs))
        parts.append("</section>")
        return "".join(parts)

    def facts(self, fn: Function) -> str:
        chips = [("", len(fn.frames), "frame"), ("", len(fn.entries), "cache entry"),
                 ("break", len(fn.graph_breaks), "graph break"), ("recomp", len(fn.recompilations), "recompilation"),
                 ("", len(fn.graphs), "graph")]
        out = []
        for css, n, what in chips:
            plural = what if n == 1 else (what[:-1] + "ies" if what.endswith("y") else what + "s")
            out.append('<span class="chip %s"><b>%d</b> %s</span>' % (css, n, plural))
        if fn.metrics:
            out.append('<span class="chip"><b>%.2f s</b> compiling</span>' % fn.compile_time_s)
        return '<div class="facts">%s</div>' % "".join(out)

    def source_and_code(self, ci: int, fn: Function, vid: str) -> str:
        root = fn.root
        marks = self.source_marks(fn)
        lines: Dict[int, str] = {}
        if root.source:
            left = self.code_block("%s-src" % vid, root.source, marks, start=root.source_start or 1,
                                   lines_out=lines)
        else:
            left = '<div class="empty" style="padding:10px">The source of %s could not be read when it was captured.</div>' % e(fn.name)
        self.source_lines[(ci, id(root))] = lines
        panes = []
        for frame in fn.frames:
            for entry_label, t in _transforms(frame):
                text = _read(t.path)
                if text is None:
                    continue
                pid = self.ids.make(vid, "code", frame_label(frame), t.compile_id)
                head = '<div class="sub" style="padding:4px 10px">%s · %s</div>' % (
                    self.file_link(t.path),
                    '<span class="ok">runs (verified equivalent to Dynamo\'s bytecode)</span>' if t.replacement is not None
                    else '<span class="warn">Dynamo\'s own bytecode runs: %s</span>' % e((t.rejected or "")[:200]))
                panes.append((pid, "%s · %s" % (_short(frame_label(frame)), entry_label), head + self.code_block(pid, text)))
        if panes:
            buttons, body = self.tabs(self.ids.make(vid, "codes"), panes)
            right = '<div class="panel"><div class="head"><span class="label">Transformed code</span>%s</div>%s</div>' % (buttons, body)
        else:
            right = '<div class="panel"><div class="head"><span class="label">Transformed code</span></div><div class="empty" style="padding:10px">no transformed code was written</div></div>'
        legend = ('<div class="legend"><span class="lb">graph break (or a call that breaks)</span>'
                  '<span class="lr">guard that failed and caused a recompile</span>'
                  '<span class="lg">line that installed guards</span></div>')
        wrapper = (' <span class="muted">(compiled as its decorator\'s wrapper %s, %s:%d)</span>' % (
            e(root.wrapper), e(os.path.basename(root.filename)), root.firstlineno)) if root.wrapper else ""
        return legend + '<div class="split"><div class="panel"><div class="head"><span class="label">Original source</span><span class="muted">%s</span>%s</div>%s</div>%s</div>' % (
            e(_source_file(root)), wrapper, left, right)

    def source_marks(self, fn: Function) -> Dict[int, Tuple[str, str]]:
        """Per source line: the strongest mark (break > recompile > guard) and every note."""
        root = fn.root
        source_file = _source_file(root)
        notes: Dict[int, List[Tuple[int, str, str]]] = {}

        def mark(n: int, rank: int, css: str, title: str) -> None:
            if title not in [t for _, _, t in notes.get(n, [])]:
                notes.setdefault(n, []).append((rank, css, title))
        guards: Dict[int, int] = {}
        for entry in fn.entries:
            for m in _GUARD_FROM.finditer(entry.guard_source or ""):
                if _same_file(m.group("file"), source_file):
                    n = int(m.group("line"))
                    guards[n] = guards.get(n, 0) + 1
        for n, count in guards.items():
            mark(n, 1, "guard", "%d guard check%s installed by this line (over all cache entries)" % (count, "" if count == 1 else "s"))
        for rc in fn.recompilations:
            g = rc.guard_line
            if g is not None and _same_file(g.filename, source_file):
                mark(g.lineno, 2, "recomp", "a guard from this line failed: compile %s (%s: compiled for %s, called with %s)" % (
                    rc.compile_id, rc.subject or rc.check, rc.expected, rc.actual))
        for gb in fn.graph_breaks:
            for k, s in enumerate(gb.user_stack):
                if _same_file(s.filename, source_file):
                    inner = k == len(gb.user_stack) - 1
                    mark(s.lineno, 3, "break", ("graph break here: %s" if inner else "a graph break inside this call: %s")
                         % (gb.kind or gb.location))
        out = {}
        for n, items in notes.items():
            items.sort(key=lambda item: -item[0])
            out[n] = (items[0][1], "\n".join(t for _, _, t in items))
        return out

    def breaks_html(self, ci: int, fn: Function) -> str:
        return "".join(self.break_card(ci, fn, frame_label(frame), gb, compiles)
                       for frame, gb, compiles in fn.graph_break_sites())

    def break_card(self, ci: int, fn: Optional[Function], label: str, gb: GraphBreak, compiles: List[str],
                   where: str = "") -> str:
        ident = self.ids.make("gb", label, gb.location)
        here = gb.line
        rows = ['<div class="card break searchable" id="%s"><div class="title">%s</div>' % (
            ident, e(gb.kind or gb.reason.strip().split("\n")[0]))]
        rows.append('<div class="sub">in <b>%s</b> at %s%s · compile%s %s%s</div>' % (
            e(label), self.source_ref(ci, fn, here), " (%s)" % e(here.text.strip()) if here is not None and here.text else "",
            "s" if len(compiles) > 1 else "", e(", ".join(compiles)), " · " + where if where else ""))
        kv = []
        if gb.explanation:
            kv.append(("Explanation", '<div style="white-space:pre-wrap">%s</div>' % e(gb.explanation)))
        if gb.hints:
            kv.append(("Hints", "<ul>%s</ul>" % "".join("<li>%s</li>" % e(h) for h in gb.hints)))
        stack = user_frames(gb.user_stack)
        if len(stack) > 1:
            kv.append(("Reached from", " → ".join(self.source_ref(ci, fn, s) + " <span class=muted>%s</span>" % e(s.function)
                                                  for s in stack)))
        if gb.context:
            kv.append(("torch's context", '<code>%s</code>' % e(gb.context)))
        if gb.url:
            kv.append(("More", '<a href="%s">%s</a>' % (e(gb.url), e(gb.url))))
        if kv:
            rows.append('<div class="kv">%s</div>' % "".join('<div class="k">%s</div><div>%s</div>' % kv_ for kv_ in kv))
        else:
            rows.append('<pre class="mono">%s</pre>' % e(gb.reason))
        rows.append("</div>")
        return "".join(rows)

    def recompiles_html(self, ci: int, fn: Function) -> str:
        return "".join(self.recompile_card(ci, fn, frame_label(f), rc) for f in fn.frames for rc in f.recompilations)

    def recompile_card(self, ci: int, fn: Optional[Function], label: str, rc: Recompilation, where: str = "") -> str:
        ident = self.ids.make("rc", label, rc.compile_id)
        if rc.subject or rc.check:
            title = "compile %s of %s: the guard of entry %s failed on <code>%s</code>" % (
                e(rc.compile_id), e(label), e(rc.failed_entry or "?"), e(rc.subject or "?"))
            kv = [("compiled for", e(rc.expected)), ("called with", '<b>%s</b>' % e(rc.actual)),
                  ("failing check", '<code>%s</code>' % e(rc.check))]
        else:
            title = "compile %s of %s" % (e(rc.compile_id), e(label))
            kv = []
        if where:
            kv.insert(0, ("seen on", where))
        if rc.guard_line is not None:
            g = rc.guard_line
            kv.append(("guard from", "%s %s" % (self.source_ref(ci, fn, g), '<code>%s</code>' % e(g.text.strip()) if g.text else "")))
        if rc.reason:
            kv.append(("torch's reason", '<code>%s</code>' % e(" ".join(rc.reason.strip().split("\n")[0].split()))))
        if rc.note:
            kv.append(("note", e(rc.note)))
        return '<div class="card recomp searchable" id="%s"><div class="title">%s</div><div class="kv">%s</div></div>' % (
            ident, title, "".join('<div class="k">%s</div><div>%s</div>' % kv_ for kv_ in kv))

    def entries_html(self, ci: int, fn: Function, vid: str) -> str:
        out = []
        for frame in fn.frames:
            why = {rc.compile_id: rc for rc in frame.recompilations}
            out.append('<div class="card"><div class="title">%s<span class="muted"> · %s:%d%s</span></div>' % (
                e(frame_label(frame)), e(os.path.basename(frame.filename)), frame.firstlineno,
                " · resume function Dynamo made at a graph break" if frame.is_resume else ""))
            if not frame.entries:
                out.append('<div class="empty">no cache entries were read</div></div>')
                continue
            out.append('<table><tr><th>entry</th><th>compile</th><th>code that runs</th><th>guard</th><th>why this entry was needed</th></tr>')
            for entry in frame.entries:
                t = entry.transform
                runs = (self.file_link(t.path) + (' <span class="ok">verified</span>' if t.replacement is not None
                                                  else ' <span class="warn">Dynamo\'s bytecode</span>')) if t is not None else "-"
                if entry.guard_source:
                    gid = self.ids.make(vid, "guard", frame_label(frame), entry.index)
                    guard = '<details><summary><code>%s</code>: %d checks</summary>%s</details>' % (
                        e(entry.guard_name or "guard"), check_count(entry.guard_source),
                        self.code_block(gid, entry.guard_source))
                else:
                    guard = '<span class="warn">not rendered: %s</span>' % e(entry.guard_error or "?")
                rc = why.get(entry.compile_id)
                if rc is not None:
                    need = "%s failed on <code>%s</code>: compiled for %s, called with <b>%s</b>" % (
                        "entry %s's guard" % e(rc.failed_entry) if rc.failed_entry else "a guard", e(rc.subject or rc.check or "?"),
                        e(rc.expected or "?"), e(rc.actual or "?")) if (rc.subject or rc.check) else e(rc.reason.strip().split("\n")[0])
                else:
                    need = '<span class="muted">first compile</span>'
                out.append('<tr><td class="r">%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>' % (
                    entry.index, e(entry.compile_id), runs, guard, need))
            out.append("</table></div>")
        return "".join(out)

    # -- graph view -----------------------------------------------------------------------------
    def graph_view(self, ci: int, capture: Capture, graph: CompiledGraph) -> str:
        vid = self.graph_ids[(ci, graph.name)]
        owner = self.graph_owner.get((ci, graph.name))
        parts = ['<section class="view" id="%s" data-title="%s">' % (vid, e(graph.name))]
        parts.append('<h2>%s<span class="where">compile %s%s</span></h2>' % (
            e(graph.name), e(graph.compile_id),
            ' · from <a href="#%s">%s</a>' % (self.fn_ids[(ci, id(owner.root))], e(owner.name)) if owner else ""))
        texts = {s.stage: _read(s.path) for s in graph.stages}
        node_lines: Dict[str, Dict[str, str]] = {}  # stage -> node name -> line id
        panes = []
        pane_ids = {s.stage: self.ids.make(vid, s.stage) for s in _stages(graph)}
        for s in _stages(graph):
            text = texts.get(s.stage)
            if text is None:
                continue
            pid = pane_ids[s.stage]
            notes: Dict[int, str] = {}
            if not s.stage.startswith("inductor"):
                names = node_lines.setdefault(s.stage, {})
                for node in fx_nodes(text):
                    names[node.name] = "%s-L%d" % (pid, node.lineno)
                    if node.source is not None:
                        notes[node.lineno] = "← " + self.source_ref(ci, owner, node.source)
        for s in _stages(graph):
            text = texts.get(s.stage)
            pid = pane_ids[s.stage]
            if text is None:
                panes.append((pid, STAGE_NAMES.get(s.stage, s.stage), '<div class="empty">file not found: %s</div>' % e(s.path or "")))
                continue
            notes = {}
            head = ['<div class="sub" style="padding:4px 10px">%s%s</div>' % (
                self.file_link(s.path), " · Inductor's module: <span class=mono>%s</span>" % e(s.origin) if s.origin else "")]
            if s.stage.startswith("inductor"):
                look = ["aot_backward"] if s.stage == "inductor_backward" else ["dynamo", "aot_forward", "aot_inference"]
                kernels = inductor_kernels(text, getattr(graph, "provenance", None))
                rows = []
                for k in kernels:
                    if not k.nodes and k.how == "name" and k.aten:
                        # (a fused kernel's name lists its ops: the graph's nodes of those ops)
                        segments = "_%s_" % k.aten[0]
                        k.nodes = list(dict.fromkeys(
                            n for st in look for n in node_lines.get(st, {})
                            if "_%s_" % re.sub(r"_\d+$", "", n) in segments))[:12]
                    links = []
                    for name in k.nodes:
                        target = next((node_lines[st][name] for st in look if name in node_lines.get(st, {})), None)
                        links.append('<a href="#%s">%s</a>' % (target, e(name)) if target else '<span class="mono">%s</span>' % e(name))
                    how = {"comment": "Inductor's comment", "torch": "torch's provenance",
                           "name": "the kernel's name (nodes of the ops it names)"}.get(k.how, "")
                    notes[k.lineno] = ("→ nodes " + ", ".join(links)) if links else ("fuses " + e(", ".join(k.aten))) if k.aten else ""
                    rows.append('<tr><td><a href="#%s-L%d"><code>%s</code></a>%s</td><td>%s</td><td class="mono">%s</td><td class="muted">%s</td></tr>' % (
                        pid, k.lineno, e(k.kernel), ' (<a href="#%s-L%d">definition</a>)' % (pid, k.defined_at) if k.defined_at else "",
                        ", ".join(links) or '<span class="muted">-</span>', e(", ".join(k.aten)), e(how)))
                if rows:
                    head.append('<details open><summary>%d kernel call%s and the FX nodes they compute</summary><table><tr><th>kernel</th><th>FX nodes</th><th>ATen ops</th><th>known from</th></tr>%s</table></details>' % (
                        len(rows), "" if len(rows) == 1 else "s", "".join(rows)))
            else:
                for node in fx_nodes(text):
                    if node.source is not None:
                        notes[node.lineno] = "← " + self.source_ref(ci, owner, node.source)
            panes.append((pid, STAGE_NAMES.get(s.stage, s.stage), "".join(head) + self.code_block(pid, text, notes=notes)))
        if panes:
            buttons, body = self.tabs(self.ids.make(vid, "stages"), panes)
            parts.append('<div class="panel"><div class="head"><span class="label">Stages</span>%s</div>%s</div>' % (buttons, body))
        else:
            parts.append('<div class="empty">no stage of this graph was captured</div>')
        parts.append("</section>")
        return "".join(parts)

    # -- overview, navigation, page ----------------------------------------------------------------
    def overview(self) -> str:
        d = self.dump
        parts = ['<section class="view" id="overview" data-title="Overview"><h2>Overview<span class="where">%s</span></h2>' % e(d.dump_dir)]
        fns = [fn for _, fn in self.fns]
        parts.append('<div class="facts">%s</div>' % "".join('<span class="chip %s"><b>%d</b> %s</span>' % (css, n, what) for css, n, what in [
            ("", len(d), "process" if len(d) == 1 else "processes"), ("", len(fns), "function" if len(fns) == 1 else "functions"),
            ("break", sum(len(f.graph_breaks) for f in fns), "graph breaks"),
            ("recomp", sum(len(f.recompilations) for f in fns), "recompilations"),
            ("", sum(len(c.graphs) for c in d), "graphs")]))
        if len(d) > 1 or any(c.process for c in d):
            parts.append('<h3>Processes</h3><table><tr><th>process</th><th>python</th><th>torch</th><th>functions</th><th>files</th></tr>%s</table>' % "".join(
                '<tr><td>%s</td><td>%s</td><td>%s</td><td class="r">%d</td><td>%s</td></tr>' % (
                    _inline_md(process_title(c)), e(str(c.process.get("python", "?"))), e(str(c.process.get("torch", "?"))),
                    len(families(c)), self.file_link(c.capture_file) if c.capture_file else "-")
                for c in d))
        parts.append("<h3>Functions</h3>")
        if not fns:
            parts.append('<div class="empty">Nothing was compiled.</div>')
        else:
            rows = summary_rows(fns)
            head = "".join('<th class="%s">%s</th>' % ("" if k == 0 else "r", e(h)) for k, h in enumerate(rows[0]))
            if len(d) > 1:
                head = "<th>process</th>" + head
            body = []
            for (ci, fn), row in zip(self.fns, rows[1:]):
                cells = ['<td><a href="#%s">%s</a></td>' % (self.fn_ids[(ci, id(fn.root))], e(row[0]))]
                cells += ['<td class="r">%s</td>' % e(c) for c in row[1:]]
                if len(d) > 1:
                    cells.insert(0, "<td>%s</td>" % e(_process_short(fn.capture)))
                body.append("<tr>%s</tr>" % "".join(cells))
            parts.append("<table><tr>%s</tr>%s</table>" % (head, "".join(body)))
        # the same event in several processes (ranks running one program) is shown once
        breaks: Dict[tuple, list] = {}
        for ci, fn in self.fns:
            for frame, gb, compiles in fn.graph_break_sites():
                key = (fn.name, frame_label(frame), gb.location, gb.kind)
                breaks.setdefault(key, [ci, fn, frame, gb, compiles, []])[5].append(ci)
        if breaks:
            parts.append("<h3>Graph breaks</h3>")
            parts += [self.break_card(ci, fn, frame_label(frame), gb, compiles, self.seen_on(where))
                      for ci, fn, frame, gb, compiles, where in breaks.values()]
        rcs: Dict[tuple, list] = {}
        for ci, fn in self.fns:
            for f in fn.frames:
                for rc in f.recompilations:
                    key = (fn.name, frame_label(f), rc.compile_id, rc.subject, rc.expected, rc.actual, rc.reason)
                    rcs.setdefault(key, [ci, fn, f, rc, []])[4].append(ci)
        if rcs:
            parts.append("<h3>Recompilations</h3>")
            parts += [self.recompile_card(ci, fn, frame_label(f), rc, self.seen_on(where))
                      for ci, fn, f, rc, where in rcs.values()]
        warnings = [(c, w) for c in d for w in c.warnings]
        if warnings:
            parts.append('<h3>Warnings</h3><ul>%s</ul>' % "".join('<li class="searchable" id="%s">%s</li>' % (
                self.ids.make("warning", k), e(w)) for k, (_, w) in enumerate(warnings)))
        parts.append("</section>")
        return "".join(parts)

    def seen_on(self, processes: List[int]) -> str:
        """Which processes an event happened in (empty for a one-process dump)."""
        if len(self.dump) < 2:
            return ""
        names = ", ".join(_process_short(self.dump[ci]) for ci in processes)
        if len(processes) == len(self.dump):
            return "every process (%s)" % e(names)
        return '<span class="warn">only %s</span>' % e(names)

    def nav(self) -> str:
        out = ['<nav><a href="#overview">Overview</a><a href="#search">Search</a>']
        for ci, capture in enumerate(self.dump):
            if len(self.dump) > 1:
                out.append('<div class="group">%s</div>' % e(_process_short(capture)))
            out.append('<div class="group">functions</div>')
            for cj, fn in self.fns:
                if cj != ci:
                    continue
                badges = ""
                if fn.graph_breaks:
                    badges += '<span class="badge break" title="graph breaks">%d</span>' % len(fn.graph_breaks)
                if fn.recompilations:
                    badges += '<span class="badge recomp" title="recompilations">%d</span>' % len(fn.recompilations)
                out.append('<a href="#%s"><span class="name">%s</span>%s</a>' % (self.fn_ids[(ci, id(fn.root))], e(fn.name), badges))
            if capture.graphs:
                out.append('<div class="group">graphs</div>')
                for name in _graph_order(capture):
                    out.append('<a href="#%s"><span class="name mono">%s</span><span class="badge neutral">%s</span></a>' % (
                        self.graph_ids[(ci, name)], e(name), e(capture.graphs[name].compile_id)))
        out.append("</nav>")
        return "".join(out)

    def page(self) -> str:
        views = []
        for ci, fn in self.fns:
            views.append(self.function_view(ci, fn))
        for ci, capture in enumerate(self.dump):
            for name in _graph_order(capture):
                views.append(self.graph_view(ci, capture, capture.graphs[name]))
        overview = self.overview()  # (after the views: it links to their source lines)
        search = ('<section class="view" id="search" data-title="Search"><h2>Search</h2>'
                  '<div id="hit-count" class="muted"></div><ul class="hits" id="hits"></ul></section>')
        fns = [fn for _, fn in self.fns]
        stats = "%d function%s · %d graph break%s · %d recompilation%s" % (
            len(fns), "" if len(fns) == 1 else "s", sum(len(f.graph_breaks) for f in fns),
            "" if sum(len(f.graph_breaks) for f in fns) == 1 else "s",
            sum(len(f.recompilations) for f in fns), "" if sum(len(f.recompilations) for f in fns) == 1 else "s")
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                "<title>pellucid report</title><style>%s</style></head><body>"
                "<header><span class=\"brand\">pellucid report</span><span class=\"dir\">%s</span>"
                "<span class=\"stats\">%s</span><input id=\"q\" type=\"search\" placeholder=\"Search code, guards, reasons…\" aria-label=\"search\"></header>"
                "<div class=\"layout\">%s<main>%s%s%s</main></div><script>%s</script></body></html>\n" % (
                    CSS, e(self.dump.dump_dir), e(stats), self.nav(), overview, "".join(views), search, JS))


def render_report(dump: Dump, out_dir: str) -> str:
    """The report page of ``dump``, with file links relative to ``out_dir``."""
    return _Page(dump, out_dir).page()


# ------------------------------------------------------------------------------------- helpers

def _stages(graph: CompiledGraph) -> List[object]:
    return sorted(graph.stages, key=lambda s: STAGE_ORDER.index(s.stage) if s.stage in STAGE_ORDER else 99)


def _graph_order(capture: Capture) -> List[str]:
    def key(name: str) -> Tuple[int, str]:
        tail = name.rsplit("_", 1)[-1]
        return (int(tail) if tail.isdigit() else 1 << 30, name)
    return sorted(capture.graphs, key=key)


def _transforms(frame: CompiledFrame) -> List[Tuple[str, object]]:
    """(label, transform) per cache entry, newest first; transforms without an entry after."""
    out = []
    seen = set()
    for entry in frame.entries:
        if entry.transform is not None:
            out.append(("entry %d" % entry.index, entry.transform))
            seen.add(id(entry.transform))
    for k, t in enumerate(frame.transforms):
        if id(t) not in seen:
            out.append(("compile %s" % t.compile_id, t))
    return out


def _source_file(frame: CompiledFrame) -> str:
    """The file whose lines the function's source view shows."""
    return frame.source_filename or frame.filename


def _short(label: str) -> str:
    return label if len(label) <= 40 else "…" + label[-39:]


def _process_short(capture: Capture) -> str:
    p = capture.process
    if p.get("rank") is not None:
        return "rank %s (pid %s)" % (p["rank"], p.get("pid", "?"))
    return "process %s" % p.get("pid", "?")


def _inline_md(text: str) -> str:
    """``process_title``'s Markdown backticks as HTML code."""
    parts = text.split("`")
    return "".join(("<code>%s</code>" % e(p)) if k % 2 else e(p) for k, p in enumerate(parts))
