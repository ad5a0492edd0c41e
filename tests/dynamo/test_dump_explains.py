"""The dump explains itself (torch 2.13, CPU): each item ``index.md`` promises, on real
programs -- graph breaks with torch's explanation, hints and the user's lines; recompilations
with the guard that failed, its value as compiled for and as called with, and the line that
installed it; a summary per function; names as the user wrote them; the capture read back
through ``load_capture``; a tidy directory; ``pellucid dump`` and ``pellucid demo``."""
import functools
import os
import re
import shutil
import stat
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import pellucid  # noqa: E402
from pellucid.dynamo.api import load_capture  # noqa: E402

SRC = os.path.dirname(os.path.dirname(pellucid.__file__))
HERE = os.path.abspath(__file__)


def _line_of(fn, text):
    """The line number in this file of the line of ``fn`` that contains ``text``."""
    import inspect

    lines, start = inspect.getsourcelines(fn)
    (k,) = [i for i, line in enumerate(lines) if text in line]
    return start + k


def f_print(x, n):
    a = x.sin() * n
    print("graph break")  # the break
    return a.cos() + n


def _dump(tmp_path, fn, calls, backend="eager", name="dump"):
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=backend)
    dump = str(tmp_path / name)
    with pellucid.prepare_debug(dump) as capture:
        outs = [compiled(*args) for args in calls]
    return capture, dump, outs


def _index(dump):
    with open(os.path.join(dump, "index.md"), encoding="utf-8") as fh:
        return fh.read()


def test_a_graph_break_is_explained_with_torchs_hints_and_the_users_lines(tmp_path, capsys):
    capture, dump, _ = _dump(tmp_path, f_print, [(torch.ones(3), 2)])
    (gb,) = capture.graph_breaks(f_print)
    line = _line_of(f_print, "# the break")
    assert gb.kind == "Failed to trace builtin operator"
    assert "print" in gb.explanation and gb.hints and all(h for h in gb.hints)
    assert (gb.line.filename, gb.line.lineno) == (HERE, line)
    assert gb.line.text == 'print("graph break")  # the break'
    assert [s.lineno for s in gb.snippet] == list(range(line - 3, line + 4))  # three lines around it
    text = _index(dump)
    assert "**graph break** in `f_print` (compile 0/0) at `%s:%d` in `f_print`: **Failed to trace builtin operator**" % (
        HERE, line) in text
    assert ">> %d      print(\"graph break\")  # the break" % line in text
    assert "  - Explanation: Dynamo does not know how to trace builtin operator `print`" in text
    for hint in gb.hints:
        assert "  - Hint: %s" % hint in text
    assert "Encountered graph break when attempting to trace CALL" not in text.split("## ")[0]


def f_shape(x, n):
    y = x * n  # guards on x and n
    return y.relu()


def test_a_recompile_names_the_guard_its_values_and_its_line(tmp_path, capsys):
    calls = [(torch.ones(3), 2), (torch.ones(3), 3), (torch.ones(3, dtype=torch.float64), 3)]
    capture, dump, _ = _dump(tmp_path, f_shape, calls)
    rcs = capture.why_recompiled(f_shape)
    assert [rc.compile_id for rc in rcs] == ["0/1", "0/2"]
    line = _line_of(f_shape, "# guards on x and n")
    n_rc, x_rc = rcs
    assert (n_rc.failed_entry, n_rc.subject, n_rc.expected, n_rc.actual) == ("0/0", "L['n']", "2", "3")
    assert (x_rc.failed_entry, x_rc.subject) == ("0/1", "L['x']")
    assert x_rc.expected == "Tensor f32[3] stride (1,)" and x_rc.actual == "Tensor f64[3] stride (1,)"
    for rc in rcs:
        assert (rc.guard_line.filename, rc.guard_line.lineno) == (HERE, line)
        assert rc.guard_line.text == "y = x * n  # guards on x and n"
        assert rc.reason.startswith(rc.failed_entry + ": ")  # torch's own reason is kept
    assert n_rc.explain() == ("compile 0/1: the guard of entry 0/0 failed on L['n']: compiled for 2, called with 3; "
                              "guard installed by %s:%d (y = x * n  # guards on x and n)" % (HERE, line))
    text = _index(dump)
    assert "- **recompiled** `f_shape` (compile 0/1): the guard of entry 0/0 failed on `L['n']`" in text
    assert "  - compiled for: 2\n  - called with: 3\n" in text
    assert "  - called with: Tensor f64[3] stride (1,)" in text
    assert "  - guard installed by `%s:%d` in `f_shape`: `y = x * n  # guards on x and n`" % (HERE, line) in text
    # the same answers from the files, without torch's objects
    loaded = load_capture(dump)
    assert [rc.explain() for rc in loaded.why_recompiled("f_shape")] == [rc.explain() for rc in rcs]


def test_each_function_is_summed_up(tmp_path, capsys):
    calls = [(torch.ones(3), 2), (torch.ones(3), 3)]
    capture, dump, _ = _dump(tmp_path, f_print, calls)
    (fn,) = capture.functions()
    assert len(fn.frames) == 2 and len(fn.entries) == 4 and len(fn.graph_breaks) == 2
    assert len(fn.recompilations) == 2 and len(fn.graphs) == 4
    assert fn.compile_time_s > 0 and len(fn.metrics) == 4
    row = re.search(r"^\| f_print \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| ([\d.]+ m?s) \|", _index(dump), re.M)
    assert row and row.groups()[:5] == ("2", "4", "2", "2", "4")


def passthrough(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


class Wrapped(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    @passthrough
    def forward(self, x):
        return self.lin(x).relu()  # the wrapped forward


def test_a_decorated_function_is_named_as_the_user_wrote_it(tmp_path, capsys):
    model = Wrapped()
    calls = [(torch.ones(2, 4),), (torch.ones(5, 4),)]
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="eager")
    dump = str(tmp_path / "dump")
    with pellucid.prepare_debug(dump) as capture:
        for args in calls:
            compiled(*args)
    (frame,) = capture.frames.values()
    assert frame.name == "wrapper"  # the code Dynamo compiled is the decorator's
    assert frame.label == "Wrapped.forward" and frame.wrapper == "passthrough.<locals>.wrapper"
    assert frame.module == __name__
    assert "full_code_for_Wrapped_forward.py" in os.listdir(dump)
    assert "def forward(self, x):" in frame.source and frame.source_filename == HERE
    (rc,) = frame.recompilations
    assert rc.guard_line.lineno == _line_of(Wrapped.forward.__wrapped__, "# the wrapped forward")
    assert "### function `Wrapped.forward`" in _index(dump)
    assert capture.why_recompiled(Wrapped.forward) == [rc]  # asked by the function the user wrote
    assert capture.why_recompiled(model) == [rc]


def test_prepare_debug_says_what_it_wrote_and_leaves_a_tidy_directory(tmp_path, capsys):
    old = os.umask(0o022)
    try:
        capture, dump, _ = _dump(tmp_path, f_print, [(torch.ones(3), 2)])
    finally:
        os.umask(old)
    err = capsys.readouterr().err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("pellucid: ")]
    files = sorted(os.listdir(dump))
    assert not [n for n in files if n.startswith(".")]  # no hidden leftovers
    assert "1 function (2 frames), 2 cache entries, 1 graph break, 0 recompilations, 2 graphs; " \
           "%d files written to %s" % (len(files), dump) in line
    assert {stat.S_IMODE(os.stat(os.path.join(dump, n)).st_mode) for n in files} == {0o644}
    assert set(load_capture(dump)[0].process["written"]) == set(files)


RERUN = '''
import sys, torch, pellucid
def first(x):
    return x.sin() + 1
def second(x):
    return x.cos() + 2
fn = first if sys.argv[1] == "1" else second
with pellucid.prepare_debug(sys.argv[2]):
    torch.compile(fn, backend="eager")(torch.ones(3))
'''


def test_a_rerun_into_the_same_directory_replaces_the_earlier_run(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(RERUN)
    dump = str(tmp_path / "dump")
    env = dict(os.environ, PYTHONPATH=SRC)
    env.pop("PELLUCID_RUN_ID", None)
    for run in ("1", "2"):
        done = subprocess.run([sys.executable, str(script), run, dump], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
        assert done.returncode == 0, done.stderr
    files = sorted(os.listdir(dump))
    assert not [n for n in files if "first" in n], files
    assert "full_code_for_second.py" in files and files.count("capture_0.json") == 1
    assert "function `second`" in _index(dump) and "first" not in _index(dump)
    assert "files of an earlier run removed" in done.stderr
    assert len(load_capture(dump)) == 1


def _cli(args, cwd, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "pellucid"] + args, cwd=str(cwd), env=env or dict(os.environ, PYTHONPATH=SRC),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)


def test_dump_errors_are_one_line(tmp_path):
    done = _cli(["dump", "-o", "d", "--", sys.executable, "nosuch.py"], tmp_path)
    assert done.returncode == 2 and done.stderr == "pellucid: error: no such file: nosuch.py\n"
    done = _cli(["dump", "-o", "d", "--", sys.executable, "-m", "no_such_module_here"], tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr == "pellucid: error: no module named no_such_module_here\n"
    assert not os.path.exists(str(tmp_path / "d" / "index.md"))


PROGRAM = "import torch\nprint(torch.compile(lambda x: x.relu() + 1, backend='eager')(torch.tensor([-1.0, 2.0])).tolist())\n"


def test_dump_runs_dash_c_and_dash_m(tmp_path):
    done = _cli(["dump", "-o", "dc", "--", sys.executable, "-c", PROGRAM], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "[1.0, 3.0]" in done.stdout and "files written to %s" % (tmp_path / "dc") in done.stderr
    (tmp_path / "prog_mod.py").write_text(PROGRAM + "import sys\nprint('argv', sys.argv[1:])\n")
    done = _cli(["dump", "-o", "dm", "--", sys.executable, "-m", "prog_mod", "x", "y"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "[1.0, 3.0]" in done.stdout and "argv ['x', 'y']" in done.stdout
    assert "index.md" in os.listdir(str(tmp_path / "dm"))


def test_a_failing_program_shows_its_own_traceback(tmp_path):
    (tmp_path / "bad.py").write_text("def g():\n    raise ValueError('boom')\ng()\n")
    done = _cli(["dump", "-o", "d", "--", sys.executable, "bad.py"], tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("Traceback (most recent call last):\n  File \"%s\", line 3" % (tmp_path / "bad.py")), done.stderr
    assert "ValueError: boom" in done.stderr and "runpy" not in done.stderr and "run_script" not in done.stderr


def _other_python():
    """An interpreter of another version than this one, without torch (None when there is none)."""
    import glob

    mine = "%d.%d" % sys.version_info[:2]
    for exe in sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[0-9].*/bin/python3.1[0-9]"))):
        version = re.search(r"python(3\.\d+)$", exe).group(1)
        if version != mine:
            return exe
    return None


def test_another_interpreter_gets_only_pellucid_on_its_path(tmp_path):
    other = _other_python()
    if other is None:
        pytest.skip("no second CPython (3.10+) on this machine")
    probe = ("import importlib.util, os, sys; import pellucid; "
             "print('TORCH', importlib.util.find_spec('torch') is not None); "
             "print('PATH', os.environ.get('PYTHONPATH', '')); "
             "print('SHIM', sorted(os.listdir(os.environ['PYTHONPATH'].split(os.pathsep)[0])))")
    env = dict(os.environ, PYTHONPATH=SRC)  # this pellucid, this environment's torch
    done = _cli(["dump", "-o", "d", "--", other, "-c", probe], tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "TORCH False" in done.stdout  # this environment's torch did not leak into it
    path = re.search(r"^PATH (.*)$", done.stdout, re.M).group(1).split(os.pathsep)
    assert "SHIM ['pellucid']" in done.stdout  # a directory holding pellucid alone...
    assert not os.path.exists(path[0])  # ...removed afterwards
    assert path[1:] == [SRC]  # the user's own PYTHONPATH is kept after it


def test_pellucid_demo_writes_dump_index_and_report(tmp_path):
    done = _cli(["demo", "demo-dump", "--backend", "eager"], tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    dump = tmp_path / "demo-dump"
    for name in ("index.md", "report.html", "capture_0.json"):
        assert (dump / name).exists(), name
    out = done.stdout
    assert "open %s in a browser" % (dump / "report.html") in out
    assert "why it broke:" in out and "Data-dependent branching" in out
    assert re.search(r"why it recompiled: compile \d+/1: the guard of entry \d+/0 failed on L\['x'\]: "
                     r"compiled for Tensor f32\[4, 8\] stride \(8, 1\), called with Tensor f32\[6, 8\]", out), out
    assert "pellucid demo demo-dump --step" in out
    dumped = load_capture(str(dump))
    assert {fn.name for fn in dumped.functions()} == {"Net.forward", "Block.forward"}
    assert len(dumped.recompilations()) >= 2 and dumped.graph_breaks()
    shutil.rmtree(str(dump))
