"""The capture model's renderings without torch: graph-break and recompilation explanations, the
capture file round trip, ``index.md``, the HTML report, provenance parsing, tidy dump files."""
import html.parser
import json
import re
import os
import stat
import subprocess
import sys

import pytest

from pellucid.dynamo import capture_json, explain
from pellucid.dynamo.api import load_capture
from pellucid.dynamo.dump_files import CLAIMS, DumpFiles
from pellucid.dynamo.index import render
from pellucid.dynamo.model import Capture, CompiledFrame, Recompilation, SourceLine
from pellucid.dynamo.provenance import fx_nodes, inductor_kernels
from pellucid.dynamo.report import write_report
from pellucid.dynamo.report_code import highlight_lines

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import report_fixture  # noqa: E402


# --------------------------------------------------------------------------- graph breaks

TORCH_213_PRINT = '''Graph break in user code at {src}:3
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Failed to trace builtin operator
  Explanation: Dynamo does not know how to trace builtin operator `print` with argument types ['str'] (has_kwargs False)
  Hint: Avoid calling builtin `print` with argument types ['str']. Consider using an equivalent alternative function/method to `print`.
  Hint: If you are attempting to call a logging function (e.g. `print`), you can try adding it to `torch._dynamo.config.reorderable_logging_functions`.

  Developer debug context: builtin print [<class 'torch._dynamo.variables.constant.ConstantVariable'>] False

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html

User code traceback:
  File "{main}", line 9, in <module>
    f(x)
  File "/x/site-packages/torch/nn/modules/module.py", line 1778, in _call_impl
    return forward_call(*args, **kwargs)
  File "{src}", line 3, in f
    print("hi")

Traceback (most recent call last):
  File "/x/site-packages/torch/_dynamo/symbolic_convert.py", line 1076, in wrapper
    return inner_fn(self, inst)
torch._dynamo.exc.Unsupported: Failed to trace builtin operator
'''


def _program(tmp_path):
    src = tmp_path / "prog.py"
    src.write_text("def f(x):\n    a = x + 1\n    print('hi')\n    return a\n")
    return str(src)


def test_a_graph_break_keeps_torchs_explanation_hints_and_the_users_lines(tmp_path):
    src = _program(tmp_path)
    gb = explain.parse_graph_break("0/0", TORCH_213_PRINT.format(src=src, main="/m/main.py"))
    assert gb.location == "%s:3" % src
    assert gb.kind == "Failed to trace builtin operator"
    assert gb.explanation.startswith("Dynamo does not know how to trace builtin operator `print`")
    assert len(gb.hints) == 2 and "reorderable_logging_functions" in gb.hints[1]
    assert gb.context.startswith("builtin print")
    assert gb.url.endswith("gb0059.html")
    assert [(s.filename, s.lineno) for s in gb.user_stack] == [
        ("/m/main.py", 9), ("/x/site-packages/torch/nn/modules/module.py", 1778), (src, 3)]
    assert [(s.lineno, s.text) for s in explain.user_frames(gb.user_stack)] == [(9, "f(x)"), (3, 'print("hi")')]
    assert gb.line.text == 'print("hi")'
    assert [s.lineno for s in gb.snippet] == [1, 2, 3, 4]  # the file has 4 lines
    assert gb.snippet[2].text == "    print('hi')"  # as the file reads
    assert "symbolic_convert" not in gb.reason  # torch's own traceback is not the program's


def test_a_graph_break_reason_on_the_header_line_is_its_kind(tmp_path):
    src = _program(tmp_path)
    text = ("Graph break in user code at %s:3\nGraph Break Reason: Data-dependent branching\n"
            "  Explanation: Detected data-dependent branching.\n\n"
            "      The branch condition involves a tensor computed as follows:\n"
            "        gt = gt(sum_1, 0)\n    \n  Hint: Use `torch.cond`.\n" % src)
    gb = explain.parse_graph_break("1/0", text)
    assert gb.kind == "Data-dependent branching"
    assert gb.explanation.split("\n")[0] == "Detected data-dependent branching."
    assert "gt = gt(sum_1, 0)" in gb.explanation
    assert gb.hints == ["Use `torch.cond`."]
    assert gb.user_stack[-1].lineno == 3  # from the header when torch gives no traceback


def test_an_unknown_graph_break_layout_keeps_the_whole_text():
    gb = explain.parse_graph_break("0/0", "something torch never said before")
    assert gb.reason == "something torch never said before"
    assert gb.location == "?" and not gb.hints and not gb.user_stack


def test_a_recompilation_explains_itself_in_one_paragraph():
    line = SourceLine("/p/m.py", 7, "forward", "h = self.linear(x)")
    inner = SourceLine("/p/lib.py", 3, "linear", "return x @ w")
    rc = Recompilation("0/1", "0/0: tensor 'x' size mismatch", "0/0", "check", "TENSOR_MATCH", "L['x']",
                       "Tensor f32[4, 8]", "Tensor f32[6, 8]", line, [line, inner])
    assert rc.explain() == ("compile 0/1: the guard of entry 0/0 failed on L['x']: compiled for Tensor f32[4, 8], "
                            "called with Tensor f32[6, 8]; guard installed by /p/m.py:7 (h = self.linear(x)), "
                            "inside /p/lib.py:3")
    assert Recompilation("0/1", "0/0: L['n'] == 2").explain() == "compile 0/1: 0/0: L['n'] == 2"


# --------------------------------------------------------------------------- the capture file

def test_the_capture_file_reads_back_as_the_same_model(tmp_path):
    dump = report_fixture.make_dump(str(tmp_path), ranks=1)
    with open(os.path.join(dump, "capture_0.json")) as fh:
        data = json.load(fh)
    assert data["format"] == "pellucid-capture"
    # paths inside the dump are relative; texts that are files are named, not copied
    frame = data["frames"][0]
    assert frame["transforms"][0]["path"] == "__transformed_code_0_for_forward.py"
    assert data["graphs"]["__compiled_fn_1"]["stages"][0]["source"] == {"$file": "__compiled_fn_1.dynamo.py"}
    moved = str(tmp_path / "moved")
    os.rename(dump, moved)
    back = load_capture(moved)
    assert len(back) == 1
    cap = back[0]
    root, resume = sorted(cap.frames.values(), key=lambda f: f.firstlineno)
    assert root.qualname == "Block.forward" and resume.firstlineno == 7
    assert root.transforms[0].path == os.path.join(moved, "__transformed_code_0_for_forward.py")
    assert root.entries[0].transform is root.transforms[1]  # newest first, the same object
    assert root.transforms[0].replacement is not None and resume.transforms[0].replacement is None
    assert root.graph_breaks[0].kind == "Data-dependent branching"
    assert root.recompilations[0].guard_line.lineno == 6
    stage = cap.graphs["__compiled_fn_1"].stages[0]
    assert "class GraphModule" in stage.source  # the file's text
    assert [r.explain() for r in back.why_recompiled("Block.forward")] == [
        r.explain() for f in (root, resume) for r in f.recompilations]
    assert back.why_recompiled("forward") == back.why_recompiled("Block.forward")
    with pytest.raises(LookupError):
        back.why_recompiled("nosuch")


def test_frames_referring_to_frames_survive_the_round_trip():
    cap = Capture("/d")
    a = CompiledFrame("f", "f", "/t.py", 1)
    b = CompiledFrame("torch_dynamo_resume_in_f_at_2", "torch_dynamo_resume_in_f_at_2", "/t.py", 2)
    b.root = a  # (a frame object, as the model links resume functions)
    cap.frames = {10: a, 20: b}
    back = capture_json.from_json(capture_json.to_json(cap), "/d")
    fa, fb = back.frames[0], back.frames[1]
    assert fb.root is fa


def test_a_capture_file_of_another_pellucid_version_reads(tmp_path):
    data = {"format": "pellucid-capture", "version": 99, "frames": [
        {"$type": "CompiledFrame", "name": "f", "qualname": "f", "filename": "/t.py", "firstlineno": 1,
         "a_field_from_the_future": 1,
         "graph_breaks": [{"$type": "GraphBreak", "compile_id": "0/0", "reason": "r"}]}]}
    cap = capture_json.from_json(data, str(tmp_path))
    gb = cap.frames[0].graph_breaks[0]
    assert gb.reason == "r" and gb.location == "" and gb.hints == []


def test_load_capture_says_when_a_directory_holds_no_dump(tmp_path):
    with pytest.raises(FileNotFoundError, match="no pellucid capture"):
        load_capture(str(tmp_path))


# --------------------------------------------------------------------------- index.md

def test_the_index_explains_breaks_and_recompiles_and_sums_up_each_function(tmp_path):
    dump = report_fixture.make_dump(str(tmp_path), ranks=2)
    with open(os.path.join(dump, "index.md")) as fh:
        text = fh.read()
    assert text == render(load_capture(dump))  # a rendering of the capture files, nothing else
    # the summary: one row per function and process, counts as in the model
    assert "| 0 | Block.forward | 2 | 4 | 2 | 2 | 4 | 4.50 s | 2.00 s | 1.25 s |" in text
    assert "| 1 | Block.forward | 2 | 4 | 2 | 2 | 4 | 4.50 s | 2.00 s | 1.25 s |" in text
    assert text.count("## process ") == 2
    # a graph break: kind, the compiles that hit it, the line with its neighbours, explanation, hints
    assert "**graph break** in `Block.forward` (compiles 0/0, 0/1) at `%s:7` in `forward`: **Data-dependent branching**" % (
        os.path.join(str(tmp_path), "model.py")) in text
    assert ">> 7          if h.mean() > 0.5:" in text
    assert "     6          h = self.linear(x).relu()" in text
    assert "  - Hint: Use `torch.cond` to express dynamic control flow." in text
    assert "  - reached from: `train.py:12` (<module>) → `model.py:7` (forward)" in text
    # a recompile: the guard, the values then and now, the line behind it
    assert "- **recompiled** `Block.forward` (compile 0/1): the guard of entry 0/0 failed on `L['x']`" in text
    assert "  - compiled for: Tensor f32[4, 8] stride (8, 1)" in text
    assert "  - called with: Tensor f32[6, 8] stride (8, 1)" in text
    assert "  - guard installed by `%s:6` in `forward`: `h = self.linear(x).relu()`" % (
        os.path.join(str(tmp_path), "model.py")) in text
    # entries: which code runs, how many checks the guard makes
    assert "| 1 | 0/1 | [__transformed_code_1_for_forward.py](__transformed_code_1_for_forward.py) | pellucid's file (verified) | `guard_forward_1`: 3 checks |" in text
    for link in __import__("re").findall(r"\]\(([^)]+)\)", text):
        assert os.path.exists(os.path.join(dump, link)), link


# --------------------------------------------------------------------------- the report (no browser)

class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.hrefs, self.external = set(), [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            assert a["id"] not in self.ids, "duplicate id %s" % a["id"]
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.hrefs.append(a["href"])
        if tag in ("script", "img", "link", "iframe") and (a.get("src") or a.get("href")):
            self.external.append((tag, a.get("src") or a.get("href")))


def test_the_report_is_one_self_contained_page_whose_links_resolve(tmp_path):
    dump = report_fixture.make_dump(str(tmp_path), ranks=2)
    path = write_report(dump)
    assert path == os.path.join(dump, "report.html")
    with open(path) as fh:
        page = fh.read()
    p = _Links()
    p.feed(page)
    assert not p.external  # styles and script inline; nothing loaded at view time
    internal = [h[1:] for h in p.hrefs if h.startswith("#")]
    files = [h for h in p.hrefs if not h.startswith(("#", "http://", "https://"))]
    assert internal and files
    assert not [h for h in internal if h not in p.ids]
    assert not [h for h in files if not os.path.exists(os.path.join(dump, h))]
    # every function, graph and stage has its view; source lines are marked
    for ident in ("overview", "search", "p0-fn-Block_forward", "p1-fn-Block_forward",
                  "p0-graph-__compiled_fn_1", "p1-graph-__compiled_fn_4"):
        assert ident in p.ids, ident
    assert 'class="line break" id="p0-fn-Block_forward-src-L7"' in page
    assert 'class="line recomp" id="p0-fn-Block_forward-src-L6"' in page
    assert "guard check" in page and "every process (rank 0 (pid 4100), rank 1 (pid 4101))" in page
    # an FX node links to its user line, an Inductor kernel to its FX node
    assert '<a href="#p0-fn-Block_forward-src-L6"' in page
    assert '→ nodes <a href="#p0-graph-__compiled_fn_1-dynamo-L8">linear</a>' in page


def test_a_report_written_elsewhere_links_back_into_the_dump(tmp_path):
    dump = report_fixture.make_dump(str(tmp_path / "run"), ranks=1)
    out = str(tmp_path / "reports" / "r.html")
    os.makedirs(os.path.dirname(out))
    write_report(dump, out)
    p = _Links()
    with open(out) as fh:
        p.feed(fh.read())
    files = [h for h in p.hrefs if not h.startswith(("#", "http"))]
    assert files and all(h.startswith("../run/dump/") for h in files)
    assert all(os.path.exists(os.path.join(os.path.dirname(out), h)) for h in files)


def test_pellucid_report_command(tmp_path, capsys):
    from pellucid.cli import main

    dump = report_fixture.make_dump(str(tmp_path), ranks=1)
    assert main(["report", dump]) == 0
    assert "report written to %s" % os.path.join(dump, "report.html") in capsys.readouterr().out
    assert main(["report", str(tmp_path / "nosuch")]) == 2
    assert capsys.readouterr().err == "pellucid: error: no such directory: %s\n" % (tmp_path / "nosuch")
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pellucid: error: ") and "holds no pellucid capture" in err and err.count("\n") == 1


# --------------------------------------------------------------------------- provenance, code

def test_fx_nodes_take_the_user_line_of_the_comment_above_them():
    text = report_fixture.AOT_FORWARD.format(g="g", cid="0/0", b=4, src="/p/model.py")
    nodes = {n.name: n for n in fx_nodes(text)}
    assert set(nodes) == {"permute", "addmm", "relu", "mean", "gt"}
    assert (nodes["relu"].source.filename, nodes["relu"].source.lineno) == ("/p/model.py", 6)
    assert nodes["gt"].source.lineno == 7 and nodes["gt"].source.text == "if h.mean() > 0.5:"


def test_inductor_kernel_calls_name_the_nodes_they_compute():
    text = report_fixture.INDUCTOR.format(g="g", cid="0/0", b=4)
    calls = inductor_kernels(text)
    assert [(c.kernel, c.nodes, c.how) for c in calls] == [
        ("extern_kernels.addmm", ["linear"], "comment"), ("cpp_fused_gt_mean_relu_0", [], "name")]
    assert calls[1].aten == ["gt_mean_relu"]
    assert text.splitlines()[calls[1].defined_at - 1].startswith("cpp_fused_gt_mean_relu_0 = async_compile")
    lines = text.splitlines()
    assert lines[calls[0].lineno - 1].strip().startswith("extern_kernels.addmm(")
    mapped = inductor_kernels(text, {"cppCodeToPost": {"cpp_fused_gt_mean_relu_0:2": ["gt", "mean", "relu"]}})
    assert (mapped[1].nodes, mapped[1].how) == (["gt", "mean", "relu"], "torch")


def test_code_lines_are_escaped_and_keep_their_text():
    src = 'x = "<b>&"  # <i>\ny = f"""a\n{x}"""\n'
    lines = highlight_lines(src)
    assert len(lines) == 3
    import re
    plain = [__import__("html").unescape(re.sub(r"<[^>]+>", "", line)) for line in lines]
    assert plain == src.splitlines()
    assert "<b>" not in "".join(lines)
    assert highlight_lines("int main() { return 0; }\n")  # not Python: shown, not raised


# --------------------------------------------------------------------------- tidy dump files

def test_files_get_the_mode_the_umask_gives(tmp_path):
    for mask, mode in ((0o022, 0o644), (0o077, 0o600), (0o002, 0o664)):
        old = os.umask(mask)
        try:
            files = DumpFiles(str(tmp_path / ("d%o" % mask)))
            path = files.claim("x.py")
            files.write(path, "x = 1\n")
        finally:
            os.umask(old)
        assert stat.S_IMODE(os.stat(path).st_mode) == mode


def test_a_rank_that_finished_first_keeps_its_names(tmp_path):
    from pellucid.dynamo.dump_files import ClaimsLock

    d = str(tmp_path)
    first = _dead_pid()
    mine = DumpFiles(d, run="id:job")
    with ClaimsLock(mine.claims_dir) as claims:
        claims.fh.write(("f.py\t%d\tid:job\n" % first).encode())   # a finished rank of this run
        claims.fh.write(("g.py\t%d\tid:old\n" % first).encode())   # a finished process of another run
    assert os.path.basename(mine.claim("f.py")) == "f.1.py"
    assert os.path.basename(mine.claim("g.py")) == "g.py"


def test_the_last_writer_leaves_no_claims_registry(tmp_path):
    files = DumpFiles(str(tmp_path))
    files.write(files.claim("a.py"), "a\n")
    assert os.path.isdir(str(tmp_path / CLAIMS))
    files.release()
    assert sorted(os.listdir(str(tmp_path))) == ["a.py"]
    # a writer after that recreates it, and works
    again = DumpFiles(str(tmp_path))
    assert os.path.basename(again.claim("a.py")) == "a.py"
    again.release()
    assert sorted(os.listdir(str(tmp_path))) == ["a.py"]


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _manifest(d, n, pid, run, written, end=1.0):
    with open(os.path.join(d, "capture_%d.json" % n), "w") as fh:
        json.dump({"format": "pellucid-capture", "process": {
            "pid": pid, "host": __import__("socket").gethostname(), "run": run, "end": end,
            "written": written + ["capture_%d.json" % n]}}, fh)
    for name in written:
        with open(os.path.join(d, name), "w") as fh:
            fh.write("old\n")


def test_an_earlier_runs_files_are_removed_and_nothing_else(tmp_path):
    d = str(tmp_path)
    _manifest(d, 0, _dead_pid(), "process:old", ["__transformed_code_0_for_f.py", "index.md"])
    _manifest(d, 1, os.getppid(), "process:alive", ["__transformed_code_0_for_g.py"])  # still running
    _manifest(d, 2, _dead_pid(), "id:mine", ["__compiled_fn_1.dynamo.py"])  # a rank of this run
    _manifest(d, 3, _dead_pid(), "process:later", ["late.py"], end=10 ** 12)  # ended after we started
    with open(os.path.join(d, "notes.txt"), "w") as fh:
        fh.write("the user's own file\n")
    files = DumpFiles(d, run="id:mine")
    removed = files.clear_old_runs(started=1000.0)
    assert sorted(removed) == ["__transformed_code_0_for_f.py", "capture_0.json", "index.md"]
    assert sorted(n for n in os.listdir(d) if n != CLAIMS) == [
        "__compiled_fn_1.dynamo.py", "__transformed_code_0_for_g.py", "capture_1.json", "capture_2.json",
        "capture_3.json", "late.py", "notes.txt"]


def test_the_files_a_killed_writer_claimed_are_removed(tmp_path):
    from pellucid.dynamo.dump_files import ClaimsLock

    d = str(tmp_path)
    with open(os.path.join(d, "orphan.py"), "w") as fh:
        fh.write("x\n")
    files = DumpFiles(d, run="process:me")
    with ClaimsLock(files.claims_dir) as claims:
        claims.fh.write(("orphan.py\t%d\n" % _dead_pid()).encode())
    assert files.clear_old_runs(0.0) == ["orphan.py"]
    assert not os.path.exists(os.path.join(d, "orphan.py"))


# --------------------------------------------------------------------------- folded guards

FOLD_GUARD = '''def guard_0(L, G):
    try:
        # L['m']  (dict, via FrameLocalsGuardAccessor(key='m', framelocals_idx=0))
        if not (type(L['m']) is dict): return False  # from: y = m['a'] + m['b']  (t.py:3 in f)
        # L['m']['a']  (int, via DictGetItemGuardAccessor('a'))
        if not (type(L['m']['a']) is int and L['m']['a'] == 1): return False  # from: y = m['a'] + m['b']  (t.py:3 in f)
        if not (L['m']['a'] >= 0): return False  # from: y = m['a'] + m['b']  (t.py:3 in f)
        # L['m']['b']  (int, via DictGetItemGuardAccessor('b'))
        if not (type(L['m']['b']) is int and L['m']['b'] == 2): return False  # from: y = m['a'] + m['b']  (t.py:3 in f)
        if not (L['m']['b'] >= 0): return False  # from: y = m['a'] + m['b']  (t.py:3 in f)
        # L['m']['c']  (int, via DictGetItemGuardAccessor('c'))
        if not (type(L['m']['c']) is int and L['m']['c'] == limit): return False  # from: y = m['a'] + m['b']  (t.py:3 in f)
        if not (L['m']['c'] >= 0): return False  # from: y = m['a'] + m['b']  (t.py:3 in f)
        # L['s']  (str, via FrameLocalsGuardAccessor(key='s', framelocals_idx=1))
        if not (type(L['s']) is str and L['s'] == "L['m']"): return False  # from: print(s)  (t.py:4 in f)
        return True
    except Exception:
        return False
'''


def _guard(text):
    scope = {"limit": 3}
    exec(compile(text, "<guard>", "exec"), scope)
    return scope["guard_0"]


def test_a_folded_guard_answers_as_the_original_on_every_input():
    from pellucid.dynamo.guard_fold import fold

    text, loops = fold(FOLD_GUARD)
    assert loops == 1 and "for _f0, _f1 in (('a', 1), ('b', 2), ('c', limit)):" in text
    assert "m = L['m']  # dict, via" in text and "if not (type(a" not in text
    assert "s == \"L['m']\"" in text  # a string that spells a value is not a read of it
    plain, folded = _guard(FOLD_GUARD), _guard(text)
    values = [1, 2, 3, 0, -1, "1", None]
    import itertools
    cases = 0
    for a, b, c in itertools.product(values, repeat=3):
        for m in ({"a": a, "b": b, "c": c}, {"a": a, "b": b}, [a, b, c]):
            for s in ("L['m']", "x"):
                L = {"m": m, "s": s}
                assert plain(L, {}) == folded(L, {}), (L, text)
                cases += 1
    assert cases > 1000 and plain({"m": {"a": 1, "b": 2, "c": 3}, "s": "L['m']"}, {})


def test_folding_leaves_a_guard_alone_when_its_lines_cannot_be_proven_alike():
    from pellucid.dynamo.guard_fold import fold

    # the siblings' comments differ: no table can give them, so no loop; names still apply
    import itertools
    counter = itertools.count(10)
    different = re.sub(r"\(t\.py:3 in f\)", lambda m: "(t.py:%d in f)" % next(counter), FOLD_GUARD)
    text, loops = fold(different)
    assert loops == 0 and "m = L['m']" in text
    assert _guard(text)({"m": {"a": 1, "b": 2, "c": 3}, "s": "L['m']"}, {}) is True
    # a column only a comment shows holds names no code reads (the values' types): the table,
    # evaluated before the loop, cannot hold them
    typed = FOLD_GUARD.replace("(int, via DictGetItemGuardAccessor('c'))", "(Limit, via DictGetItemGuardAccessor('c'))")
    text, loops = fold(typed)
    assert "Limit)" not in text and "Limit, via" in text
    assert _guard(text)({"m": {"a": 1, "b": 2, "c": 3}, "s": "L['m']"}, {}) is True
    # a loop variable's name already used by the guard: not folded into a loop
    clash = FOLD_GUARD.replace("== limit", "== _f1")
    assert fold(clash)[1] == 0
    # not a rendered guard: returned as it was
    assert fold("x = 1\n") == ("x = 1\n", 0)
