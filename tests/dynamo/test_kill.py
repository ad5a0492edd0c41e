"""Nothing is lost when the process is killed right after ``prepare_debug``'s block (issue 20).

pellucid may do work later than the block only if a SIGKILL just after the block loses none
of it.  A child process compiles programs with graph breaks, recompilations and graphs inside
``prepare_debug``, prints what the capture holds, and kills itself with SIGKILL at once; the
dump directory must then hold every file the capture and ``index.md`` name, each complete
(every ``.py`` compiles), the process's capture model must read back with the same frames, and
no half-written temporary file may be left.
"""
import ast
import json
import os
import re
import signal
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

if not hasattr(signal, "SIGKILL"):
    pytest.skip("no SIGKILL on this platform", allow_module_level=True)

import pellucid  # noqa: E402

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kill_program.py")
_LINK = re.compile(r"\]\(([^)]+)\)")


def _killed_run(dump, backend):
    env = dict(os.environ)
    src = os.path.dirname(os.path.dirname(os.path.abspath(pellucid.__file__)))
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, PROGRAM, dump, backend], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stderr[-3000:])
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, done.stdout
    assert "not reached" not in done.stdout
    return json.loads(lines[0])


def _complete_python(path):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    assert text.endswith("\n"), "%s does not end with a newline: cut short?" % path
    compile(text, path, "exec", dont_inherit=True)
    return text


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_sigkill_right_after_the_block_loses_nothing(tmp_path, backend):
    dump = str(tmp_path / "dump")
    report = _killed_run(dump, backend)
    assert not report["warnings"], report["warnings"]
    names = sorted(os.listdir(dump))
    assert not [n for n in names if n.startswith(".tmp-")], "a half-written file was left: %s" % names

    # every file the capture names is there and complete
    captured = set(report["files"])
    for _, transforms, full in report["frames"]:
        captured.update(transforms)
        captured.add(full)
    captured.update(report["graph_files"])
    assert None not in captured, "a frame has no full_code file or a graph stage no file"
    roots = {os.path.basename(p) for p in captured if os.path.basename(p).startswith("full_code_for_")}
    assert {"full_code_for_breaks.py", "full_code_for_Block_forward.py"} <= roots, roots
    assert len(report["graph_files"]) >= 4, report["graph_files"]  # both functions' graphs
    if backend == "aot_eager":
        assert any(".aot_" in os.path.basename(p) for p in report["graph_files"]), report["graph_files"]
    for path in sorted(captured):
        assert os.path.dirname(path) == os.path.abspath(dump)
        assert os.path.exists(path), "the capture names %s; the dump has no such file" % path
        if path.endswith(".py"):
            _complete_python(path)

    # every file the index names is there and complete, and the index names the capture
    with open(os.path.join(dump, "index.md"), encoding="utf-8") as fh:
        index = fh.read()
    # the process's capture model (capture_<n>.json, what index.md and ``pellucid report`` are
    # rendered from) reads back whole and holds what the process captured
    dump_model = pellucid.load_capture(dump)
    (mine,) = [c for c in dump_model if c.process.get("pid") == report["pid"]]
    assert sorted(f.name for f in mine.frames.values()) == sorted(name for name, _, _ in report["frames"])
    assert sum(len(f.transforms) for f in mine.frames.values()) == \
        sum(len(transforms) for _, transforms, _ in report["frames"])
    linked = set(_LINK.findall(index))
    assert linked, index
    for rel in sorted(linked):
        path = os.path.join(dump, rel)
        assert os.path.exists(path), "index.md links %s; the dump has no such file" % rel
        if path.endswith(".py"):
            _complete_python(path)
    assert {os.path.relpath(p, dump) for p in captured} <= linked, \
        sorted({os.path.relpath(p, dump) for p in captured} - linked)

    # the full_code files find the runtime module they import
    for name in roots:
        tree = ast.parse(_complete_python(os.path.join(dump, name)))
        imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for alias in node.names if alias.name.startswith("_pellucid")]
        assert imported, name
        for module in imported:
            assert module + ".py" in names, (name, module)
