"""pellucid.debug(): breakpoints in dumped files are hit, and stepping follows their lines.

A ``bdb.Bdb`` subclass drives the debugger programmatically, as pdb would: breakpoints are set
in dumped files, the compiled function runs inside ``debug(pause=False)``, and each stop records
the file, line and local variables.
"""
import bdb
import os
import sys

import pytest

torch = pytest.importorskip("torch")

import pellucid  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inductor_support import missing_headers  # noqa: E402


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
            # (lists copied: Inductor's call(args) empties its argument list)
            self.stops.append((os.path.basename(frame.f_code.co_filename), frame.f_lineno,
                               {k: list(v) if type(v) is list else v for k, v in frame.f_locals.items()}))
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


# -- every backend: the files that run are exactly the ones debug() lists --------------------------
def break_loss(x, y):
    a = x.sin() + y
    print("graph break")
    return (a.cos() * 2).sum()


def _train_inputs():
    return torch.ones(3, requires_grad=True), torch.full((3,), 2.0)


def _train_step(compiled, x, y):
    x.grad = None
    loss = compiled(x, y)
    loss.backward()
    return loss.detach(), x.grad


def _files_run(dump, fn, *args):
    """``fn(*args)`` and the dumped files whose code ran in it (a call event in the file)."""
    import sys

    seen = set()

    def tracer(frame, event, arg):
        if frame.f_code.co_filename.startswith(dump):
            seen.add(frame.f_code.co_filename)
        return None
    sys.settrace(tracer)
    try:
        result = fn(*args)
    finally:
        sys.settrace(None)
    return result, seen


class Compiled:
    """A program compiled and dumped once, with the results of its plain compiled run."""

    def __init__(self, dump, backend):
        torch._dynamo.reset()
        self.dump = dump
        self.compiled = torch.compile(break_loss, backend=backend)
        x, y = _train_inputs()
        with pellucid.prepare_debug(dump) as self.capture:
            _train_step(self.compiled, x, y)
        self.expected = _train_step(self.compiled, x, y)  # the compiled program's second pass

    def stage_paths(self, stage):
        return [s.path for g in self.capture.graphs.values() for s in g.stages if s.stage == stage]


@pytest.fixture(scope="module")
def inductor_program(tmp_path_factory):
    """The one Inductor compile of this module's tests (two graphs, forward and backward)."""
    if missing_headers():
        pytest.skip(missing_headers())
    return Compiled(str(tmp_path_factory.mktemp("inductor") / "dump"), "inductor")


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_the_files_that_run_are_exactly_the_ones_debug_lists(tmp_path, backend, request):
    prog = request.getfixturevalue("inductor_program") if backend == "inductor" else \
        Compiled(str(tmp_path / "dump"), backend)
    runs_stages = {"eager": {"dynamo"}, "aot_eager": {"aot_forward", "aot_backward"},
                   "inductor": {"inductor", "inductor_backward"}}[backend]
    x, y = _train_inputs()
    d = pellucid.debug(pause=False)
    with d as session:
        got, ran = _files_run(prog.dump, _train_step, prog.compiled, x, y)
    assert all(torch.equal(a, b) for a, b in zip(got, prog.expected))
    running = [p for p in session.running() if p.startswith(prog.dump)]
    read_only = {p: why for p, why in session.read_only().items() if p.startswith(prog.dump)}
    assert ran == set(running) and len(running) == len(ran), (sorted(ran), running)
    # every dumped file is listed once: it runs, or it is for reading only (with the reason)
    assert set(prog.capture.files) == set(running) | set(read_only)
    assert not set(running) & set(read_only)
    # what runs: the cache lookup, the verified transformed code, the backend's last stage
    must_run = {f.full_code_path for f in prog.capture.frames.values()}
    must_run |= {t.path for f in prog.capture.frames.values() for t in f.transforms if t.replacement is not None}
    must_run |= {p for stage in runs_stages for p in prog.stage_paths(stage)}
    assert set(running) == must_run
    assert len([p for p in running if p in prog.capture.files]) >= 2 + 2 * len(runs_stages)
    for stage in ("dynamo", "aot_joint", "aot_forward", "aot_backward"):
        for path in set(prog.stage_paths(stage)) - must_run:
            assert read_only[path].startswith("for reading only: "), read_only[path]
    message = d.pause_message()
    runs_part, _, read_part = message.partition("For reading only")
    for path in running:
        assert "  %s\n" % path in runs_part
    for path in read_only:
        assert path in read_part and path not in runs_part


def _first_body_line(code):
    import dis

    return min(line for _, line in dis.findlinestarts(code) if line and line > code.co_firstlineno)


def _code_named(path, name):
    with open(path, encoding="utf-8") as fh:
        todo = [compile(fh.read(), path, "exec")]
    while todo:
        code = todo.pop(0)
        if code.co_name == name:
            return code
        todo += [c for c in code.co_consts if isinstance(c, type(code))]
    raise AssertionError("no %s in %s" % (name, path))


def test_breakpoints_in_inductor_call_forward_and_backward(inductor_program):
    prog = inductor_program
    # the graph after the break: its forward takes the value computed before the break
    (resume,) = [f for f in prog.capture.frames.values() if f.is_resume]
    graph = prog.capture.graphs[resume.transforms[0].graphs[0]]
    paths = {s.stage: s for s in graph.stages}
    fw, bw = paths["inductor"], paths["inductor_backward"]
    assert fw.origin and bw.origin and fw.origin != bw.origin
    with open(fw.path, encoding="utf-8") as fh:
        assert fw.origin in fh.read()  # the dump says which module of Inductor's cache it is
    fw_line = _first_body_line(_code_named(fw.path, "call"))
    bw_line = _first_body_line(_code_named(bw.path, "call"))
    rec = Recorder(prog.dump, steps=3)
    rec.set_break(fw.path, fw_line)
    rec.set_break(bw.path, bw_line)
    x, y = _train_inputs()
    with pellucid.debug(pause=False) as session:
        assert session.graph_files[fw.path] == "installed", session.graph_files[fw.path]
        assert session.graph_files[bw.path] == "installed", session.graph_files[bw.path]
        got = rec.runcall(_train_step, prog.compiled, x, y)
    assert all(torch.equal(a, b) for a, b in zip(got, prog.expected))
    fw_stops = [s for s in rec.stops if s[0] == os.path.basename(fw.path)]
    bw_stops = [s for s in rec.stops if s[0] == os.path.basename(bw.path)]
    assert fw_stops and fw_stops[0][1] == fw_line, [(s[0], s[1]) for s in rec.stops]
    assert bw_stops and bw_stops[0][1] == bw_line, [(s[0], s[1]) for s in rec.stops]
    assert rec.stops.index(fw_stops[0]) < rec.stops.index(bw_stops[0])
    # call(args) gets the value computed before the graph break
    (arg,) = fw_stops[0][2]["args"]
    assert torch.equal(arg, x.detach().sin() + y)
    lines = [s[1] for s in fw_stops]
    assert len(lines) == 4 and lines == sorted(lines) and len(set(lines)) == 4, lines  # 'next' steps down call()
    # after debug(), Inductor's module runs its own code again
    rec2 = Recorder(prog.dump)
    rec2.set_break(fw.path, fw_line)
    rec2.runcall(_train_step, prog.compiled, *_train_inputs())
    assert not rec2.stops


def test_an_inductor_file_that_is_not_inductors_module_does_not_run(inductor_program, monkeypatch):
    from pellucid.dynamo import inductor_code

    prog = inductor_program
    path = prog.stage_paths("inductor")[0]
    with open(path, encoding="utf-8") as fh:
        original = fh.read()
    call = _code_named(path, "call")
    lines = original.split("\n")
    at = _first_body_line(call) - 1
    indent = lines[at][:len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at, indent + "args = list(args)")  # an edit that changes what call() does
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines))
        # the text is not the one Inductor's module was made from
        with pellucid.debug(pause=False) as session:
            rec = Recorder(prog.dump)
            rec.set_break(path, at + 1)
            got = rec.runcall(_train_step, prog.compiled, *_train_inputs())
        assert "hashes to" in session.graph_files[path], session.graph_files[path]
        assert path in session.read_only() and path not in session.running()
        assert not [s for s in rec.stops if s[0] == os.path.basename(path)]
        assert all(torch.equal(a, b) for a, b in zip(got, prog.expected))
        # were the text check fooled, the code comparison still refuses the file
        monkeypatch.setattr(inductor_code, "check_text", lambda body, origin: None)
        with pellucid.debug(pause=False) as session:
            got = _train_step(prog.compiled, *_train_inputs())
        assert "call() of Inductor's module differs" in session.graph_files[path], session.graph_files[path]
        assert all(torch.equal(a, b) for a, b in zip(got, prog.expected))
    finally:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(original)
