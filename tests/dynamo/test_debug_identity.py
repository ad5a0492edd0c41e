"""Frames are keyed by identity, and Dynamo's own guards decide what ``debug()`` runs.

* frames whose code shares a name (every module's ``forward``, a user ``step`` beside
  ``torch.optim.SGD.step``, a submodule's ``forward``) get files, dispatchers, guards and
  globals of their own, named from what the code is (qualified name, module, line), the same
  names in every run;
* under ``debug()`` the cache entry that runs is the one Dynamo's guard managers select, in the
  order Dynamo tries them, even where the compiled program differs from eager execution;
* a rendered guard that answers otherwise than Dynamo's is reported once, naming the entry
  and the guard line, and recorded in ``index.md``; Dynamo's answer decides.
"""
import ast
import os
import re
import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pellucid  # noqa: E402
import debug_differential  # noqa: E402
from dynamo_programs import PROGRAMS  # noqa: E402
from pellucid.dynamo.torch_features import PellucidWarning  # noqa: E402


class A(nn.Module):
    def forward(self, x):
        return x.sin()


class B(nn.Module):
    def forward(self, x):
        return x.cos()


def _top_level_names(path):
    """Names a module defines (def, class) and assigns at its top level, with repeats (a guard
    is defined, then assigned once, bound to its objects)."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    defs, assigned = [], []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defs.append(node.name)
        elif isinstance(node, ast.Assign):
            assigned += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return defs, assigned


def _check_files_apart(capture):
    """Every frame has its own ident and files; every full_code file binds each name once."""
    idents = [f.ident for f in capture.frames.values()]
    assert len(set(idents)) == len(idents), idents
    paths = [t.path for f in capture.frames.values() for t in f.transforms]
    assert len(set(paths)) == len(paths)
    for root in capture.roots():
        assert root.full_code_path and os.path.basename(root.full_code_path) == "full_code_for_%s.py" % root.ident
        defs, assigned = _top_level_names(root.full_code_path)
        for names in (defs, assigned):
            repeated = sorted(n for n in set(names) if names.count(n) > 1)
            assert not repeated, (root.full_code_path, repeated)
        names = defs + assigned
        for frame in capture.family(root):
            assert frame.root is root and frame.full_code_path == root.full_code_path
            assert frame.ident in names and "G_" + frame.ident in names


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_two_modules_whose_methods_share_a_name(tmp_path, backend):
    """The issue's program: ``a(x)`` under debug() printed ``cos(x)``."""
    torch._dynamo.reset()
    a = torch.compile(A(), backend=backend)
    b = torch.compile(B(), backend=backend)
    x = torch.arange(3.0)
    with pellucid.prepare_debug(str(tmp_path / "dump")) as capture:
        a(x)
        b(x)
    labels = sorted(f.label for f in capture.frames.values())
    assert labels == ["A.forward", "B.forward"], labels
    files = os.listdir(str(tmp_path / "dump"))
    assert "full_code_for_A_forward.py" in files and "full_code_for_B_forward.py" in files
    _check_files_apart(capture)
    with pellucid.debug(pause=False) as session:
        got_a, got_b = a(x), b(x)
    assert torch.equal(got_a, x.sin()) and torch.equal(got_b, x.cos())
    assert set(session.full_code_files.values()) == {"runs"} and len(session.full_code_files) == 2
    calls = debug_differential.dispatcher_calls(capture)
    assert calls == {"A.forward": 1, "B.forward": 1}, calls


@pytest.mark.parametrize("name, expected", [
    ("ten_forwards", ["_Sin.forward", "_Cos.forward", "_Tanh.forward", "_Exp.forward", "_Square.forward",
                      "_Neg.forward", "_Relu.forward", "_Sigmoid.forward", "_Clamp.forward", "_Atan.forward"]),
    ("submodule_graph_break", ["_Outer.forward", "_Inner.forward"]),
    ("two_forwards_same_name", ["two_forwards_same_name.A.forward", "two_forwards_same_name.B.forward"]),
    ("training_step", ["training_step.step", "SGD.step"]),
    ("training_loop", ["training_loop.step", "SGD.step"]),  # (train's loop breaks: not compiled)
])
def test_same_named_frames_are_kept_apart_and_debug_runs_each(tmp_path, name, expected):
    ref, got = debug_differential.check(PROGRAMS[name], "eager", str(tmp_path / "dump"))
    capture = got.capture
    labels = [f.label for f in capture.roots() if not f.is_resume]
    for label in expected:
        assert label in labels, labels
    _check_files_apart(capture)
    calls = debug_differential.dispatcher_calls(capture)
    for label in expected:
        assert calls.get(label), (label, calls)
    index = open(os.path.join(capture.dump_dir, "index.md"), encoding="utf-8").read()
    for label in expected:
        assert "function `%s`" % label in index


def test_resume_functions_are_filed_with_their_function_by_identity(tmp_path):
    _, got = debug_differential.check(PROGRAMS["submodule_graph_break"], "eager", str(tmp_path / "dump"))
    frames = list(got.capture.frames.values())
    resumes = [f for f in frames if f.is_resume]
    assert resumes
    for f in resumes:
        assert f.parent is not None and f.parent.code is not None
        # the parent's transformed code refers to this resume function's code object
        g = f.parent.code.co_filename and any(
            name.startswith("__resume_at_") for t in f.parent.transforms for name in t.resumes)
        assert g
        assert f.label.startswith(f.parent.label + ".resume_at_"), (f.label, f.parent.label)
        assert f.root is f.parent.root


def test_closures_made_in_a_loop_run_with_their_own_cells(tmp_path):
    _, got = debug_differential.check(PROGRAMS["closures_made_in_a_loop"], "aot_eager", str(tmp_path / "dump"))
    (g,) = [f for f in got.capture.roots() if f.label == "closures_made_in_a_loop.make.g"]
    # the closures (``k`` is 0, 1, 2) share the code object: entries of one frame, which the
    # guards on the free variable ``k`` tell apart (the outputs differ with ``k``)
    assert len(g.entries) >= 2


# -- Dynamo decides, even where it differs from eager ------------------------------------------------
def _dict_default():
    # The entry compiled for ``{}`` guards only that ``d`` is a dict (torch 2.13), so it also
    # accepts ``{"scale": 2.0}``: which entry runs then depends on the order Dynamo tries its
    # entries in, the most recently used first.
    def f(x, d):
        try:
            s = d["scale"]
        except KeyError:
            s = 0.5
        return x * s
    x2, x3 = torch.ones(2), torch.ones(3)
    return f, [(x2, {}), (x3, {"scale": 2.0}), (x2, {"scale": 2.0}), (x2, {}), (x2, {"scale": 2.0})]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_debug_reproduces_the_compiled_program_where_it_differs_from_eager(tmp_path, backend):
    ref, got = debug_differential.check(_dict_default, backend, str(tmp_path / "dump"))
    fn, calls = _dict_default()
    eager = [fn(*args) for args in calls]
    compiled = [value for _, value in ref.passes[1]]
    differs = [k for k, (e, c) in enumerate(zip(eager, compiled)) if not torch.equal(e, c)]
    if torch.__version__.startswith("2.13"):
        # the last call runs the entry compiled for {} (x * 0.5), eager gives x * 2
        assert differs == [4], differs
        assert torch.equal(compiled[4], torch.full((2,), 0.5))
        assert torch.equal(compiled[2], torch.full((2,), 2.0))


# -- a rendered guard that disagrees ----------------------------------------------------------------
def bump(x, n):
    return x + n


def test_a_disagreeing_rendered_guard_is_reported_once_and_dynamo_decides(tmp_path):
    dump = str(tmp_path / "dump")
    torch._dynamo.reset()
    compiled = torch.compile(bump, backend="eager")
    x = torch.ones(2)
    with pellucid.prepare_debug(dump) as capture:
        expected = compiled(x, 3)
    (frame,) = capture.roots()
    path = frame.full_code_path
    text = open(path, encoding="utf-8").read()
    # break the rendered guard of entry 0: its check of ``n`` now fails for n == 3 (the full_code
    # file reads ``L['n']`` once, as ``n``: see guard_fold)
    lines = text.split("\n")
    (k,) = [i for i, line in enumerate(lines) if re.search(r"(L\['n'\]|\bn) == 3\)", line)]
    lines[k] = re.sub(r"(L\['n'\]|\bn) == 3\)", r"\1 == 4)", lines[k])
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pellucid.debug(pause=False) as session:
            outs = [compiled(x, 3) for _ in range(3)]
    assert all(torch.equal(o, expected) for o in outs)  # Dynamo's answer: entry 0 runs
    ours = [str(w.message) for w in caught if issubclass(w.category, PellucidWarning)]
    assert len(ours) == 1, ours
    assert "cache entry 0 of bump" in ours[0] and "%s:%d" % (path, k + 1) in ours[0], ours[0]
    (d,) = session.disagreements
    assert (d.frame, d.entry, d.dynamo) == ("bump", 0, True) and d.where.startswith("%s:%d:" % (path, k + 1))
    index = open(os.path.join(dump, "index.md"), encoding="utf-8").read()
    assert "disagreed with Dynamo" in index and "`bump` cache entry 0" in index
    assert not session.misses


# -- names: stable across runs, module-qualified only when needed ------------------------------------
SCRIPT = '''
import sys, torch, pellucid
sys.path.insert(0, %(here)r)
import other_module_for_names as other

def forward(x):
    y = x * 2
    print("break")
    return y.sin()

class Net(torch.nn.Module):
    def forward(self, x):
        return other.Net()(x) + 1

with pellucid.prepare_debug(%(dump)r) as capture:
    torch.compile(forward, backend="eager")(torch.ones(2))
    torch.compile(Net(), backend="eager")(torch.ones(2))
    torch.compile(other.Net(), backend="eager")(torch.ones(2))
for f in sorted(capture.frames.values(), key=lambda f: f.ident):
    print("FRAME", f.label, f.ident, f.full_code_path.rsplit("/", 1)[-1])
'''

OTHER = '''
import torch

class Net(torch.nn.Module):
    def forward(self, x):
        y = x.cos()
        print("other break")
        return y - 1
'''


def test_names_are_stable_across_runs_and_qualified_only_when_needed(tmp_path):
    (tmp_path / "other_module_for_names.py").write_text(OTHER)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(pellucid.__file__))
    runs = []
    for n in range(2):
        dump = str(tmp_path / ("dump%d" % n))
        script = tmp_path / "prog.py"
        script.write_text(SCRIPT % {"here": str(tmp_path), "dump": dump})
        done = subprocess.run([sys.executable, str(script)], env=env, cwd=str(tmp_path),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
        frames = [line.split()[1:] for line in done.stdout.splitlines() if line.startswith("FRAME")]
        runs.append((frames, sorted(os.listdir(dump))))
    assert runs[0] == runs[1]  # same names, same files, in a second run
    frames, files = runs[0]
    labels = {label: (ident, full) for label, ident, full in frames}
    assert labels["forward"][0] == "forward"
    # two classes named Net with a forward each: the one compiled first keeps the short name,
    # the other is module-qualified
    assert labels["Net.forward"][0] == "Net_forward"
    assert labels["other_module_for_names.Net.forward"][0] == "other_module_for_names_Net_forward"
    assert "forward.resume_at_8" in labels and labels["forward.resume_at_8"][1] == "full_code_for_forward.py"
    assert "__transformed_code_0_for_other_module_for_names_Net_forward.py" in files
    assert not [n for n in files if re.search(r"\.\d+\.py$", n)], files  # no counters


def test_a_second_capture_in_one_process_names_the_same_frames_alike(tmp_path):
    """After ``torch._dynamo.reset()`` Dynamo makes new resume code objects; captured again into
    the same directory, every frame gets the name it had (its files are replaced, not added)."""
    dump = str(tmp_path / "dump")
    seen = []
    for _ in range(2):
        torch._dynamo.reset()
        fn, calls = PROGRAMS["two_forwards_same_name"]()
        compiled = torch.compile(fn, backend="eager")
        with pellucid.prepare_debug(dump) as capture:
            for args in calls:
                compiled(*args)
        # (graph files keep Dynamo's own names, __compiled_fn_<n>, the names the transformed code
        # calls them by: Dynamo's counter goes on within a process)
        files = sorted(n for n in os.listdir(dump) if not n.startswith("__compiled_fn_"))
        seen.append((sorted((f.label, f.ident) for f in capture.frames.values()), files))
    assert seen[0] == seen[1]
    assert len(seen[0][0]) == 7, seen[0][0]  # f, A.forward, B.forward and four resume functions


def test_a_rendered_guard_that_passes_where_dynamos_fails_is_reported_and_dynamo_decides(tmp_path):
    dump = str(tmp_path / "dump")
    torch._dynamo.reset()
    compiled = torch.compile(bump, backend="eager")
    x = torch.ones(2)
    with pellucid.prepare_debug(dump) as capture:
        compiled(x, 3)
    (frame,) = capture.roots()
    path = frame.full_code_path
    text = open(path, encoding="utf-8").read()
    # (the full_code file reads ``L['n']`` once, as ``n``: see guard_fold)
    check = re.compile(r"(L\['n'\]|\bn) == 3\)")
    assert len(check.findall(text)) == 1
    with open(path, "w", encoding="utf-8") as fh:  # the rendered guard now also accepts n == 4
        fh.write(check.sub(r"\1 in (3, 4))", text))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pellucid.debug(pause=False) as session:
            out = compiled(x, 4)
    assert torch.equal(out, x + 4)  # no entry passes for Dynamo: the original code ran
    assert session.misses == ["bump"]
    ours = [str(w.message) for w in caught if issubclass(w.category, PellucidWarning)]
    (disagree,) = [m for m in ours if "rendered guard" in m]
    (d,) = session.disagreements
    assert (d.frame, d.entry, d.dynamo) == ("bump", 0, False)
    assert "Dynamo's guard fails" in d.where and "L['n']" in d.where, d.where
    assert d.where in disagree


def clashing(L, dynamo, cells, x):
    y = x * L + dynamo
    print("break")
    return y - cells


def test_parameters_named_like_the_dispatchers_locals(tmp_path):
    def build():
        return clashing, [(2.0, 3.0, 1.0, torch.ones(2)), (1.0, 0.5, 2.0, torch.ones(2))]
    _, got = debug_differential.check(build, "eager", str(tmp_path / "dump"))
    text = open(got.capture.roots()[0].full_code_path, encoding="utf-8").read()
    assert "    L_ = {'L': L, 'dynamo': dynamo, 'cells': cells, 'x': x}" in text


def raising(x, limit):
    y = x.sin() * 2
    print("break")
    if limit < 0:
        raise ValueError("negative limit")
    return y + limit


def test_a_traceback_under_debug_shows_code_lines_of_the_dumped_files(tmp_path):
    """The issue saw tracebacks (and pdb's ``w``) at comment lines of full_code files: the
    dispatcher is entered from a frame at the compiled function's own ``def`` line."""
    import traceback

    dump = str(tmp_path / "dump")
    torch._dynamo.reset()
    compiled = torch.compile(raising, backend="eager")
    with pellucid.prepare_debug(dump):
        with pytest.raises(ValueError):
            compiled(torch.ones(2), -1)
    with pellucid.debug(pause=False) as session:
        with pytest.raises(ValueError) as info:
            compiled(torch.ones(2), -1)
    assert not session.misses
    entries = traceback.extract_tb(info.value.__traceback__)
    files = [os.path.basename(e.filename) for e in entries]
    assert any(f.startswith("full_code_for_raising") for f in files), files
    # (the code after the break raises while Dynamo traces it: Dynamo runs it uncompiled)
    assert "__transformed_code_0_for_raising.py" in files, files
    here = os.path.abspath(__file__)
    def_line = raising.__code__.co_firstlineno
    for e in entries:
        if os.path.abspath(e.filename).startswith(os.path.abspath(dump)):
            assert e.lineno in debug_differential.code_lines(e.filename), (e.filename, e.lineno, e.line)
    # the frame that enters the dispatcher is the compiled function's, at its def line
    k = files.index([f for f in files if f.startswith("full_code_for_raising")][0])
    assert os.path.abspath(entries[k - 1].filename) == here and entries[k - 1].lineno == def_line


def _two_compiled_functions(backend):
    # ``outer`` and ``inner`` are each compiled by torch.compile, and call each other's
    # compiled form; both break the graph, so each is a frame Dynamo compiled.
    def inner(x, n):
        y = x.cos() + n
        print("inner", n)
        return compiled_outer(y, n - 1) if n > 0 else y

    def outer(x, n):
        y = x.sin() * 2
        print("outer", n)
        return compiled_inner(y, n) - 1

    compiled_inner = torch.compile(inner, backend=backend)
    compiled_outer = torch.compile(outer, backend=backend)
    return compiled_outer, [(torch.ones(2), 2), (torch.full((2,), 0.5), 2), (torch.ones(3), 1)]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_two_compiled_functions_calling_each_other(tmp_path, backend):
    _, got = debug_differential.check(_two_compiled_functions, backend, str(tmp_path / "dump"))
    calls = debug_differential.dispatcher_calls(got.capture)
    assert calls.get("_two_compiled_functions.outer") and calls.get("_two_compiled_functions.inner"), calls
