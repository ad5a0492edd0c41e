"""pellucid.debug(): breakpoints in dumped files are hit, and stepping follows their lines.

A ``bdb.Bdb`` subclass drives the debugger programmatically, as pdb would: breakpoints are set
in dumped files, the compiled function runs inside ``debug(pause=False)``, and each stop records
the file, line and local variables.
"""
import bdb
import os

import pytest

torch = pytest.importorskip("torch")

import pellucid  # noqa: E402


class Recorder(bdb.Bdb):
    """Stops at breakpoints; after a stop, 'next's through ``steps`` more lines of that frame."""

    def __init__(self, dump, steps=3):
        super().__init__()
        self.dump = dump
        self.steps = steps
        self.stops = []  # (file name, line, {local: value})
        self._left = 0

    def user_line(self, frame):
        if frame.f_code.co_filename.startswith(self.dump):
            self.stops.append((os.path.basename(frame.f_code.co_filename), frame.f_lineno,
                               dict(frame.f_locals)))
            if self._left == 0 or self.get_break(self.canonic(frame.f_code.co_filename), frame.f_lineno):
                self._left = self.steps  # a breakpoint: 'next' from here
            else:
                self._left -= 1
            if self._left:
                self.set_next(frame)
                return
        self.set_continue()


def _line_of(path, startswith):
    with open(path, encoding="utf-8") as fh:
        for k, line in enumerate(fh, 1):
            if line.strip().startswith(startswith):
                return k
    raise AssertionError("no line starting with %r in %s" % (startswith, path))


def graph_fn(x, y):
    a = (x.sin() + y).cos() * 2
    return a + 1


@pytest.mark.parametrize("backend, stage", [("eager", "dynamo"), ("aot_eager", "aot_inference")])
def test_breakpoint_in_graph_file_is_hit_and_steps(tmp_path, backend, stage):
    dump = str(tmp_path / "dump")
    torch._dynamo.reset()
    compiled = torch.compile(graph_fn, backend=backend)
    x, y = torch.ones(3), torch.full((3,), 2.0)
    with pellucid.prepare_debug(dump) as capture:
        expected = compiled(x, y)
    (graph,) = capture.graphs.values()
    (graph_file,) = [s.path for s in graph.stages if s.stage == stage]
    line = _line_of(graph_file, "cos")
    rec = Recorder(dump)
    rec.set_break(graph_file, line)
    with pellucid.debug(pause=False) as session:
        assert session.graph_files[graph_file] == "installed"
        out = rec.runcall(compiled, x, y)
    assert torch.equal(out, expected)
    hits = [s for s in rec.stops if s[0] == os.path.basename(graph_file)]
    assert hits and hits[0][1] == line
    # at the 'cos' line, 'add' holds x.sin() + y
    add = hits[0][2]["add"]
    assert torch.equal(add, x.sin() + y)
    lines = [s[1] for s in hits]
    assert lines[1] > lines[0] and lines == sorted(lines), lines  # 'next' moves down the file
    # after debug() the graph module runs its own code again
    rec2 = Recorder(dump)
    rec2.set_break(graph_file, line)
    rec2.runcall(compiled, x, y)
    assert not rec2.stops


def test_debug_without_prepare_debug_warns(monkeypatch):
    from pellucid.dynamo import prepare_debug as pd
    from pellucid.dynamo.torch_features import PellucidWarning

    monkeypatch.setattr(pd, "CAPTURES", [])
    with pytest.warns(PellucidWarning, match="run the program inside pellucid.prepare_debug"):
        with pellucid.debug(pause=False):
            pass


def test_inputs_needing_a_recompile_run_the_original_code_and_say_so_once(tmp_path):
    from pellucid.dynamo.torch_features import PellucidWarning
    import warnings

    torch._dynamo.reset()
    compiled = torch.compile(graph_fn, backend="eager")
    with pellucid.prepare_debug(str(tmp_path / "dump")) as capture:
        compiled(torch.ones(3), torch.ones(3))
    compiled_frames = len(capture.frames)
    hooks = []
    handle = torch._dynamo.convert_frame.register_bytecode_hook(lambda old, new: hooks.append(old))
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pellucid.debug(pause=False) as session:
                x = torch.ones(2, 5)  # another rank: the guards fail
                outs = [compiled(x, x) for _ in range(3)]
    finally:
        handle.remove()
    assert not hooks, "debug() must not compile anything"
    assert all(torch.equal(o, graph_fn(x, x)) for o in outs)
    ours = [str(w.message) for w in caught if issubclass(w.category, PellucidWarning)]
    assert len(ours) == 1 and "graph_fn" in ours[0] and "original code runs" in ours[0], ours
    assert session.misses == ["graph_fn"]
    assert compiled_frames == 1


def break_fn(x, y):
    a = x.sin() + y
    print("graph break here")
    return a.cos() * 2


def test_breakpoints_in_transformed_code_and_resume_function(tmp_path, capsys):
    dump = str(tmp_path / "dump")
    torch._dynamo.reset()
    compiled = torch.compile(break_fn, backend="eager")
    x, y = torch.ones(3), torch.full((3,), 2.0)
    with pellucid.prepare_debug(dump) as capture:
        expected = compiled(x, y)
    frames = {f.name: f for f in capture.frames.values()}
    (resume_name,) = [n for n in frames if n.startswith("torch_dynamo_resume_in_break_fn")]
    transformed = frames["break_fn"].transforms[0]
    resume = frames[resume_name].transforms[0]
    # pellucid's recompiled code is what Dynamo runs for both frames
    assert transformed.replacement is not None, transformed.rejected
    assert resume.replacement is not None, resume.rejected
    t_line = _line_of(transformed.path, "graph_out_0 =")
    r_line = _line_of(resume.path, "graph_out_0 =")
    full_path = frames["break_fn"].full_code_path
    f_line = _line_of(full_path, "if dynamo.picks(0, guard_break_fn_0(")
    graph_paths = [st.path for g in capture.graphs.values() for st in g.stages if st.stage == "dynamo"]
    g_lines = {p: _line_of(p, "cos") for p in graph_paths if "cos" in open(p).read()}
    rec = Recorder(dump, steps=2)
    rec.set_break(transformed.path, t_line)
    rec.set_break(resume.path, r_line)
    rec.set_break(full_path, f_line)
    for p, line in g_lines.items():
        rec.set_break(p, line)
    with pellucid.debug(pause=False) as session:
        assert session.full_code_files[full_path] == "runs"
        out = rec.runcall(compiled, x, y)
    assert torch.equal(out, expected)
    # the cache lookup written as Python runs first: its dispatcher checks the guard
    f_stops = [s for s in rec.stops if s[0] == os.path.basename(full_path)]
    assert f_stops and f_stops[0][1] == f_line and torch.equal(f_stops[0][2]["x"], x)
    assert rec.stops.index(f_stops[0]) == 0
    # the graph after the break runs from its dumped file
    (g_path,) = g_lines
    g_stops = [s for s in rec.stops if s[0] == os.path.basename(g_path)]
    assert g_stops and g_stops[0][1] == g_lines[g_path]
    t_stops = [s for s in rec.stops if s[0] == os.path.basename(transformed.path)]
    r_stops = [s for s in rec.stops if s[0] == os.path.basename(resume.path)]
    assert t_stops and t_stops[0][1] == t_line
    assert torch.equal(t_stops[0][2]["x"], x) and torch.equal(t_stops[0][2]["y"], y)
    assert [s[1] for s in t_stops] == sorted(s[1] for s in t_stops) and len(t_stops) == 3, \
        [(s[0], s[1]) for s in rec.stops]
    # the graph break's resume function is reached, with the value computed before the break
    assert r_stops and r_stops[0][1] == r_line
    assert torch.equal(r_stops[0][2]["a"], x.sin() + y)
    assert rec.stops.index(t_stops[0]) < rec.stops.index(r_stops[0])


def loss_fn(w, x):
    return ((x @ w).tanh() ** 2).sum()


def test_aot_forward_and_backward_graph_files_are_stepped(tmp_path):
    """Training with aot_eager: the forward graph runs from its file during the forward pass
    and the backward graph from its file during ``backward()``."""
    dump = str(tmp_path / "dump")
    torch._dynamo.reset()
    compiled = torch.compile(loss_fn, backend="aot_eager")
    x = torch.ones(2, 3)

    def step():
        w = torch.full((3, 2), 0.5, requires_grad=True)
        loss = compiled(w, x)
        loss.backward()
        return loss.detach(), w.grad
    with pellucid.prepare_debug(dump) as capture:
        expected = step()
    (graph,) = capture.graphs.values()
    paths = {st.stage: st.path for st in graph.stages}
    assert {"aot_forward", "aot_backward"} <= set(paths), paths
    fw_line = _line_of(paths["aot_forward"], "tanh")
    bw_line = _line_of(paths["aot_backward"], "mul")
    rec = Recorder(dump, steps=1)
    rec.set_break(paths["aot_forward"], fw_line)
    rec.set_break(paths["aot_backward"], bw_line)
    with pellucid.debug(pause=False) as session:
        assert session.graph_files[paths["aot_forward"]] == "installed"
        assert session.graph_files[paths["aot_backward"]] == "installed"
        got = rec.runcall(step)
    assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1])
    hit = [(name, line) for name, line, _ in rec.stops]
    assert (os.path.basename(paths["aot_forward"]), fw_line) in hit
    assert (os.path.basename(paths["aot_backward"]), bw_line) in hit
