"""prepare_debug on real torch.compile programs (torch 2.13, CPU).

Each case runs a program twice in fresh Dynamo state, once plainly and once inside
``pellucid.prepare_debug``, and checks: the outputs are identical; every compiled frame's
transformed code was decompiled into a file; every ``.py`` file in the dump compiles;
``full_code_for_<fn>.py``, imported in this process, gives the compiled function's results;
and the index names every compiled function.
"""
import importlib
import os
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")

import pellucid  # noqa: E402
from pellucid.dynamo.torch_features import PellucidWarning  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inductor_support import needs_headers  # noqa: E402


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype \
            and torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _run(program, backend, first_pass=None, second_pass=None):
    """Compile and call a program in fresh Dynamo state (inside ``first_pass``, when given);
    a second pass of the same calls inside ``second_pass`` when given (the program's state
    goes on from the first).  Returns fn, outputs, calls, second outputs, what the contexts gave."""
    import contextlib

    torch._dynamo.reset()
    torch.manual_seed(0)
    fn, calls = program()
    compiled = torch.compile(fn, backend=backend)
    with (first_pass or contextlib.nullcontext)() as first:
        outs = [compiled(*args) for args in calls]
    again = second = None
    if second_pass is not None:
        with second_pass() as second:
            again = [compiled(*args) for args in calls]
    return fn, outs, calls, again, (first, second)


def _check_dump(tmp_path, program, backend, expect_functions):
    """Plain run and run inside prepare_debug agree; so do their second passes, the plain
    compiled program's and one inside ``debug()``: debug() runs what the program runs."""
    import contextlib

    _, plain, _, plain2, _ = _run(program, backend, None, contextlib.nullcontext)
    dump = str(tmp_path / "dump")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn, outs, calls, debugged, (capture, session) = _run(
            program, backend, lambda: pellucid.prepare_debug(dump), lambda: pellucid.debug(pause=False))
    ours = [w for w in caught if issubclass(w.category, PellucidWarning)]
    assert not ours, [str(w.message) for w in ours]
    assert len(outs) == len(plain)
    for a, b in zip(plain, outs):
        assert _same(a, b)
    for a, b in zip(plain2, debugged):
        assert _same(a, b)
    assert not session.disagreements and not session.misses
    assert session.full_code_files and set(session.full_code_files.values()) == {"runs"}, \
        session.full_code_files
    files = sorted(os.listdir(dump))
    for name in files:
        if name.endswith(".py"):
            with open(os.path.join(dump, name), encoding="utf-8") as fh:
                compile(fh.read(), name, "exec")
    assert capture.frames, "nothing was captured"
    for frame in capture.frames.values():
        assert frame.transforms, frame.name
        for t in frame.transforms:
            assert t.source is not None, (frame.name, t.rejected)
            assert os.path.basename(t.path) in files
    with open(os.path.join(dump, "index.md"), encoding="utf-8") as fh:
        index = fh.read()
    for name in expect_functions:
        root = _root(capture, name)
        assert "full_code_for_%s.py" % root.ident in files
        assert os.path.basename(root.full_code_path) == "full_code_for_%s.py" % root.ident
        assert "function `%s`" % root.label in index
    return capture, dump, fn, outs, calls


def _root(capture, name):
    """The frame of the user function of this file whose code is named ``name`` (exactly one:
    ``torch.optim.SGD.step`` is compiled beside a ``step`` of ours, say)."""
    here = os.path.abspath(__file__)
    (root,) = [f for f in capture.roots()
               if f.name == name and not f.is_resume and os.path.abspath(f.filename) == here]
    assert root.root is root
    return root


def _perturbed(args):
    """Inputs that should miss the guards: other dtype, other int values."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor) and a.is_floating_point():
            out.append(a.double())
        elif isinstance(a, int) and not isinstance(a, bool):
            out.append(a + 100)
        else:
            out.append(a)
    return tuple(out)


def _check_guards_agree(capture, full, name, calls):
    """The rendered guards of the user function's entries answer like Dynamo's guard managers,
    on the inputs that were compiled for (hits) and on perturbed ones (misses)."""
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    frame = _root(capture, name)
    root = frame.ident
    live = _debug_get_cache_entry_list(frame.code)
    assert len(live) == len(frame.entries)
    code = frame.code
    names = code.co_varnames[:code.co_argcount]
    answers = set()
    compared = 0
    for e_live, entry in zip(live, frame.entries):
        assert entry.guard_source is not None, entry.guard_error
        guard = getattr(full, "guard_%s_%d" % (root, entry.index))
        g = getattr(full, "G_" + root)
        for args in list(calls) + [_perturbed(a) for a in calls]:
            if len(args) != len(names):
                continue
            L = dict(zip(names, args))
            expected = e_live.guard_manager.check(L)
            assert guard(L, g) == expected, (entry.index, args)
            answers.add(expected)
            compared += 1
    assert compared and answers == {True, False}, answers


def _import_full_code(capture, dump, name):
    """The full_code module of the user function named ``name``, and its dispatcher."""
    ident = _root(capture, name).ident
    sys.path.insert(0, dump)
    try:
        sys.modules.pop("full_code_for_" + ident, None)
        sys.modules.pop("_pellucid_runtime", None)
        module = importlib.import_module("full_code_for_" + ident)
    finally:
        sys.path.remove(dump)
    return module, getattr(module, ident)


# -- programs ------------------------------------------------------------------------------------
def data_dependent_if():
    def branchy(x, y):
        a = x.sin() + y
        if a.sum() > 0:
            b = a * 2
        else:
            b = a - 1
        return b.cos()
    return branchy, [(torch.ones(3), torch.ones(3)), (-torch.ones(3) * 3, torch.ones(3))]


class Printer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        h = self.lin(x).relu()
        print("hidden norm computed")
        return h * 2


def module_with_print():
    m = Printer()
    return m, [(torch.randn(2, 4),), (torch.randn(2, 4),)]


def growing_sizes():
    def grow(x, n):
        return (x * n).sum(0) + x.shape[0]
    return grow, [(torch.ones(k, 2), 2) for k in (2, 3, 4, 5)]


def training_step():
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()
    g = torch.Generator().manual_seed(1)
    data = [(torch.randn(4, 4, generator=g), torch.randn(4, 1, generator=g)) for _ in range(3)]
    return step, data


def two_comprehensions():
    # Before 3.12 each comprehension is a function; one that breaks the graph (``.item()``) is
    # handed to Dynamo's ``_create_nested_fn`` with its code object, a constant without a
    # literal form: the transformed code of ``comps`` and of its resume function each bind one
    # in the module's globals, and neither may rebind the other's.
    def comps(x):
        a = [v.sum().item() for v in x]
        print("between")
        b = [v.max().item() * 2 for v in x]
        return a, b
    x = torch.arange(6.0).reshape(2, 3)
    return comps, [(x,), (x + 1,), (x + 2,)]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_constants_of_transformed_code_keep_their_names_apart(tmp_path, backend, capsys):
    capture, dump, fn, outs, calls = _check_dump(tmp_path, two_comprehensions, backend, ["comps"])
    transforms = [t for f in capture.frames.values() for t in f.transforms]
    assert len(transforms) >= 2
    assert all(t.replacement is not None for t in transforms), [t.rejected for t in transforms]
    for args, (a, b) in zip(calls, outs):
        assert a == [float(v.sum()) for v in args[0]] and b == [float(v.max()) * 2 for v in args[0]]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_data_dependent_if(tmp_path, backend, capsys):
    capture, dump, fn, outs, calls = _check_dump(tmp_path, data_dependent_if, backend, ["branchy"])
    assert any(f.graph_breaks for f in capture.frames.values())
    full, branchy = _import_full_code(capture, dump, "branchy")
    _check_guards_agree(capture, full, "branchy", calls)
    for args, out in zip(calls, outs):
        assert _same(branchy(*args), out)


@needs_headers
def test_data_dependent_if_inductor(tmp_path):
    capture, dump, fn, outs, calls = _check_dump(tmp_path, data_dependent_if, "inductor", ["branchy"])
    stages = {s.stage for g in capture.graphs.values() for s in g.stages}
    assert "inductor" in stages


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_module_forward_with_print(tmp_path, backend, capsys):
    capture, dump, fn, outs, calls = _check_dump(tmp_path, module_with_print, backend, ["forward"])
    assert "hidden norm computed" in capsys.readouterr().out
    breaks = [gb for f in capture.frames.values() for gb in f.graph_breaks]
    assert breaks and all(gb.location.endswith(":%d" % (Printer.forward.__code__.co_firstlineno + 2))
                          for gb in breaks if "print" in gb.reason.lower()), breaks


def test_recompilation_and_dynamic_shapes(tmp_path):
    capture, dump, fn, outs, calls = _check_dump(tmp_path, growing_sizes, "eager", ["grow"])
    frame = _root(capture, "grow")
    assert len(frame.entries) >= 2
    assert frame.recompilations, "the size change should be recorded as a recompilation"
    dynamo_graphs = [s.source for g in capture.graphs.values() for s in g.stages if s.stage == "dynamo"]
    assert any("Sym(" in src for src in dynamo_graphs), "expected a dynamic-shape graph"
    full, grow = _import_full_code(capture, dump, "grow")
    _check_guards_agree(capture, full, "grow", calls)
    for args, out in zip(calls, outs):
        assert _same(grow(*args), out)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_training_step(tmp_path, backend):
    capture, dump, fn, outs, calls = _check_dump(tmp_path, training_step, backend, ["step"])
    if backend == "aot_eager":
        stages = {s.stage for g in capture.graphs.values() for s in g.stages}
        assert {"aot_forward", "aot_backward"} <= stages, stages


def test_unwritable_dump_dir_warns_and_program_runs(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    fn, calls = data_dependent_if()
    torch._dynamo.reset()
    with pytest.warns(PellucidWarning, match="cannot write to the dump directory"):
        with pellucid.prepare_debug(str(blocker / "dump")):
            out = torch.compile(fn, backend="eager")(*calls[0])
    assert _same(out, fn(*calls[0]))


# -- transformers models from tiny configs (nothing is downloaded) --------------------------------
def _tiny_gpt2():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=100, n_positions=64,
                                  bos_token_id=0, eos_token_id=0)
    model = transformers.GPT2LMHeadModel(cfg).eval()

    def run(ids):
        with torch.no_grad():
            return model(ids).logits
    g = torch.Generator().manual_seed(2)
    return run, [(torch.randint(0, 100, (2, 8), generator=g),), (torch.randint(0, 100, (2, 8), generator=g),)]


def _tiny_bert():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.BertConfig(num_hidden_layers=2, num_attention_heads=2, hidden_size=32,
                                  intermediate_size=64, vocab_size=100, max_position_embeddings=64)
    model = transformers.BertModel(cfg).eval()

    def run(ids):
        with torch.no_grad():
            return model(ids).last_hidden_state
    g = torch.Generator().manual_seed(3)
    return run, [(torch.randint(0, 100, (2, 8), generator=g),)]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("builder", [_tiny_gpt2, _tiny_bert], ids=["gpt2", "bert"])
def test_transformers_models(tmp_path, builder, backend):
    capture, dump, fn, outs, calls = _check_dump(tmp_path, builder, backend, ["run"])
    full, run = _import_full_code(capture, dump, "run")
    for args, out in zip(calls, outs):
        assert _same(run(*args), out)


def test_spawned_ranks_share_a_dump_dir(tmp_path):
    import subprocess

    dump = tmp_path / "dump"
    env = dict(os.environ)
    src = os.path.dirname(os.path.dirname(pellucid.__file__))
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    program = os.path.join(os.path.dirname(__file__), "spawn_program.py")
    done = subprocess.run([sys.executable, program, str(dump), "4"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout
    files = sorted(os.listdir(str(dump)))
    import re

    full = [n for n in files if re.match(r"^full_code_for_f(\.\d+)?\.py$", n)]
    transformed_f = [n for n in files if re.match(r"^__transformed_code_0_for_f(\.\d+)?\.py$", n)]
    assert len(full) == 4 and len(transformed_f) == 4, files
    assert not [n for n in files if n.startswith(".tmp-")], "a temporary file was left behind"
    for name in files:
        if name.endswith(".py"):
            with open(os.path.join(str(dump), name), encoding="utf-8") as fh:
                compile(fh.read(), name, "exec")
    index = (dump / "index.md").read_text()
    assert index.count("## process") == 4
    for name in full:
        assert "[%s]" % name in index


def test_dump_command_runs_a_script_unchanged(tmp_path):
    import subprocess

    script = tmp_path / "train.py"
    script.write_text(
        "import sys, torch\n"
        "def step(x):\n"
        "    y = x.relu()\n"
        "    print('args', sys.argv[1:])\n"
        "    return y + 1\n"
        "print(torch.compile(step, backend='eager')(torch.tensor([-1.0, 2.0])).tolist())\n"
    )
    dump = tmp_path / "dump"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(pellucid.__file__))
    done = subprocess.run([sys.executable, "-m", "pellucid", "dump", "-o", str(dump), "--",
                           sys.executable, str(script), "a", "b"], env=env, cwd=str(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "args ['a', 'b']" in done.stdout and "[1.0, 3.0]" in done.stdout
    summary = [line for line in done.stderr.splitlines() if line.startswith("pellucid:")]
    assert len(summary) == 1 and str(dump) in summary[0], done.stderr
    files = os.listdir(str(dump))
    assert "full_code_for_step.py" in files and "index.md" in files
    # the summary's counts are the directory's
    assert "1 function (2 frames), 2 cache entries, 1 graph break, 0 recompilations, 2 graphs; " \
        "%d files written to %s" % (len(files), dump) in summary[0], (summary, files)


def test_threads_compiling_at_once(tmp_path):
    import threading

    def make(k):
        def fn(x):
            y = x * k
            print("break in thread function", k)
            return y.sin()
        fn.__name__ = fn.__qualname__ = "thread_fn_%d" % k
        fn.__code__ = fn.__code__.replace(co_name="thread_fn_%d" % k)
        return fn
    fns = [make(k) for k in range(4)]
    torch._dynamo.reset()
    results = {}
    errors = []

    def run(k):
        try:
            results[k] = torch.compile(fns[k], backend="eager")(torch.ones(3))
        except Exception as exc:  # pragma: no cover - reported by the assertion below
            errors.append(exc)
    dump = str(tmp_path / "dump")
    with pellucid.prepare_debug(dump) as capture:
        threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    for k in range(4):
        assert torch.equal(results[k], (torch.ones(3) * k).sin())
    files = os.listdir(dump)
    idents = set()
    for k in range(4):
        root = _root(capture, "thread_fn_%d" % k)
        assert root.label.endswith(".thread_fn_%d" % k) and root.ident not in idents
        idents.add(root.ident)
        assert "full_code_for_%s.py" % root.ident in files, files
        assert "__transformed_code_0_for_%s.py" % root.ident in files, files
    assert not [n for n in files if n.startswith(".tmp-")]
    index = open(os.path.join(dump, "index.md"), encoding="utf-8").read()
    for k in range(4):
        assert "function `%s`" % _root(capture, "thread_fn_%d" % k).label in index
