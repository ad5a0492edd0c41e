"""The pellucid command line: python -m pellucid, and pellucid.cli.main() in process."""
import importlib.util
import os
import pathlib
import py_compile
import subprocess
import sys
import textwrap
import types
import uuid

import pytest

from pellucid import cli
from pellucid.decompiler import api
from pellucid.errors import DecompileError

SRC_DIR = pathlib.Path(__file__).resolve().parents[1] / "src"
RUNNING_STR = "{}.{}".format(*sys.version_info[:2])
OTHER = "3.12" if RUNNING_STR != "3.12" else "3.11"
OTHER_MAGIC = {"3.12": 3531, "3.11": 3495}[OTHER]

SCRIPT = textwrap.dedent(
    """\
    def f(x):
        return x + 1


    class C:
        def m(self):
            return 1

        @staticmethod
        def s():
            return 2

        @property
        def p(self):
            return 3

        @p.setter
        def p(self, value):
            pass

        class Inner:
            def deep(self):
                return 4

        alias = int
        data = 5


    def outer():
        def inner():
            return 1
        return inner
    """
)

# Tests that need the real decompiler core (pellucid.decompiler.render) to produce source: the
# core is still being written, so they are skipped until it exists; the lead engineer runs them.
needs_core = pytest.mark.skipif(
    importlib.util.find_spec("pellucid.decompiler.render") is None,
    reason="decompiler core (pellucid.decompiler.render) not written yet",
)


# ---------------------------------------------------------------------------------------------
# helpers


def run_cli(*args, cwd=None):
    """Run ``python -m pellucid ARGS`` in a fresh interpreter."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(SRC_DIR)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "pellucid", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        cwd=str(cwd) if cwd else None,
        env=env,
        timeout=120,
    )


def assert_single_error_line(stderr, *fragments):
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("pellucid: error: "), stderr
    assert "Traceback" not in stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def forge_pyc(path, magic_number, payload=b"\xff" * 32):
    path.write_bytes(magic_number.to_bytes(2, "little") + b"\r\n" + bytes(12) + payload)
    return path


@pytest.fixture
def files(tmp_path):
    """A directory with script.py, its pyc, and a few broken files."""
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    pyc = tmp_path / "script.pyc"
    py_compile.compile(str(script), cfile=str(pyc), doraise=True)
    truncated = tmp_path / "truncated.pyc"
    truncated.write_bytes(pyc.read_bytes()[:30])
    (tmp_path / "empty.pyc").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    forge_pyc(tmp_path / "other.pyc", OTHER_MAGIC)
    forge_pyc(tmp_path / "old.pyc", 62211)  # Python 2.7
    forge_pyc(tmp_path / "unknown.pyc", 1234)
    return tmp_path


@pytest.fixture
def fake_core(monkeypatch):
    """Replace the decompiler core with a stand-in that names the code object it was given."""
    seen = []

    def fake_decompile(obj, verify=True):
        code = obj if isinstance(obj, types.CodeType) else obj.__code__
        seen.append(code)
        VERIFY_FLAGS.append(verify)
        return f"# decompiled {code.co_name} from {os.path.basename(code.co_filename)}"

    monkeypatch.setattr(api, "decompile", fake_decompile)
    return seen


VERIFY_FLAGS = []  # the ``verify`` argument of every fake decompile call, in order


@pytest.fixture
def importable(tmp_path, monkeypatch):
    """A uniquely named module on sys.path made from SCRIPT; removed again afterwards."""
    name = f"pellucid_cli_test_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(SCRIPT)
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)
    yield name
    sys.modules.pop(name, None)


# ---------------------------------------------------------------------------------------------
# help and usage


def test_help_teaches_with_examples():
    result = run_cli("--help")
    assert result.returncode == 0
    assert result.stderr == ""
    out = result.stdout
    assert out.startswith("usage: pellucid ")
    assert "decompile" in out
    assert "examples:" in out
    assert "pellucid decompile script.py" in out
    assert "json.decoder:JSONDecoder" in out
    assert "exit status" in out


def test_decompile_help_lists_target_forms():
    result = run_cli("decompile", "--help")
    assert result.returncode == 0
    for fragment in ("FILE.pyc", "FILE.py", "MODULE:QUALNAME", "--color", "-o FILE", "examples:"):
        assert fragment in result.stdout


def test_no_command_prints_help_and_exits_2():
    result = run_cli()
    assert result.returncode == 2
    assert result.stdout == ""
    assert "usage: pellucid" in result.stderr


def test_version():
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("pellucid ")
    assert f"Python {sys.version.split()[0]}" in result.stdout


def test_report_command_needs_a_directory(capsys):
    assert cli.main(["report"]) == 2
    assert_single_error_line(capsys.readouterr().err, "the following arguments are required: DIR")


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["dump"], "the following arguments are required: -o/--output"),
        (["dump", "-o", "d"], "no program given"),
        (["dump", "-o", "d", "--"], "no program given"),
        (["dump", "-o", "d", "--", "ls", "-l"], "must start with a Python interpreter"),
        (["dump", "-o", "d", "--", "python"], "no script given after python"),
    ],
)
def test_dump_usage_errors_are_one_line(capsys, argv, fragment):
    assert cli.main(argv) == 2
    assert_single_error_line(capsys.readouterr().err, fragment)


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["decompile"], "the following arguments are required: TARGET"),
        (["decompile", "x.py", "--color", "blue"], "invalid choice: 'blue'"),
        (["bogus"], "invalid choice: 'bogus'"),
        (["decompile", "x.py", "--nope"], "unrecognized arguments: --nope"),
    ],
)
def test_usage_errors_are_one_line(capsys, argv, fragment):
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert_single_error_line(captured.err, fragment, "--help")


def test_main_returns_zero_for_help(capsys):
    assert cli.main(["--help"]) == 0
    assert "examples:" in capsys.readouterr().out


def test_entry_point_is_declared():
    pyproject = (SRC_DIR.parent / "pyproject.toml").read_text()
    assert 'pellucid = "pellucid.cli:main"' in pyproject


# ---------------------------------------------------------------------------------------------
# bad input: exit code 2, one line on stderr, nothing on stdout (subprocess: no traceback)


def _c_extension() -> str:
    """A module that is a C extension file here (Debian's 3.14+ build ``math`` into the
    interpreter)."""
    for name in ("math", "_ctypes", "_decimal", "_sqlite3"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin not in (None, "built-in"):
            return name
    raise RuntimeError("no C extension module found")


C_EXTENSION = _c_extension()

BAD_INPUTS = [
    # (argv, fragments expected in the single error line)
    (["missing.pyc"], ["no such file: missing.pyc"]),
    (["missing.py"], ["no such file: missing.py"]),
    (["."], [". is a directory, not a .py or .pyc file"]),
    (["notes.txt"], ["notes.txt is neither a .py source file nor a .pyc file"]),
    (
        ["other.pyc"],
        [f"other.pyc was compiled by Python {OTHER} but this is Python {RUNNING_STR}: "
         f"run pellucid with Python {OTHER}"],
    ),
    (["old.pyc"], ["old.pyc was compiled by Python 2.7", "3.8 to 3.15 only"]),
    (["unknown.pyc"], ["unknown.pyc is not a .pyc file of any known Python version"]),
    (["truncated.pyc"], ["truncated.pyc has corrupt or truncated marshal data"]),
    (["empty.pyc"], ["empty.pyc is empty (0 bytes), not a .pyc file"]),
    (["broken.py"], ["broken.py does not compile with Python", "SyntaxError", "(line 1)"]),
    (["no_such_module_xyz"], ["no module named 'no_such_module_xyz'"]),
    (["no_such_module_xyz:f"], ["no module named 'no_such_module_xyz'"]),
    (["json.no_such_sub:f"], ["no module named 'json.no_such_sub'"]),
    (["json:no_such_attr"], ["module json has no attribute 'no_such_attr'"]),
    (["json.decoder:JSONDecoder.nope"], ["class json.decoder:JSONDecoder has no attribute 'nope'"]),
    (["builtins:len"], ["builtin function len is implemented in C and has no Python bytecode"]),
    (["math:sqrt"], ["builtin function math.sqrt is implemented in C"]),
    (["builtins:str.join"], ["method str.join is implemented in C"]),
    (["str:join"], ["no module named 'str'", "use builtins:str.join"]),
    (["builtins:int"], ["class int is implemented in C and has no Python bytecode"]),
    ([C_EXTENSION], ["module %s is a C extension" % C_EXTENSION, "has no Python bytecode"]),
    (["sys"], ["module sys is built into the interpreter"]),
    (["script.py:nope"], ["script.py defines no function or class named 'nope'"]),
    (["script.py:C.nope"], ["script.py:C defines no function or class named 'nope'"]),
    (["not a target!"], ["no such file, and not a module or module:qualname: not a target!"]),
]


@pytest.mark.parametrize("argv, fragments", BAD_INPUTS, ids=[a[0] for a, _ in BAD_INPUTS])
def test_bad_input_in_process(files, monkeypatch, capsys, argv, fragments):
    monkeypatch.chdir(files)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert cli.main(["decompile", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert_single_error_line(captured.err, *fragments)


# A representative subset through a real `python -m pellucid` process.
SUBPROCESS_CASES = ["missing.pyc", ".", "notes.txt", "other.pyc", "truncated.pyc", "broken.py",
                    "no_such_module_xyz", "json:no_such_attr", "builtins:len", "math:sqrt"]


@pytest.mark.parametrize("target", SUBPROCESS_CASES)
def test_bad_input_subprocess(files, target):
    fragments = dict((a[0], f) for a, f in BAD_INPUTS)[target]
    result = run_cli("decompile", target, cwd=files)
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert_single_error_line(result.stderr, *fragments)


def test_wrong_version_pyc_names_both_versions_subprocess(files):
    result = run_cli("decompile", "other.pyc", cwd=files)
    assert result.returncode == 2
    assert result.stderr == (
        f"pellucid: error: other.pyc was compiled by Python {OTHER} but this is Python "
        f"{RUNNING_STR}: run pellucid with Python {OTHER}\n"
    )


def test_real_pyc_of_another_interpreter(files):
    python = pathlib.Path("/root/.pyenv/versions/3.8.18/bin/python")
    if RUNNING_STR == "3.8":
        python = pathlib.Path("/root/.pyenv/versions/3.12.1/bin/python")
    if not python.exists():
        pytest.skip(f"{python} is not installed")
    subprocess.run([str(python), "-m", "py_compile", "script.py"], cwd=str(files), check=True)
    pycs = list((files / "__pycache__").glob("script.*.pyc"))
    assert len(pycs) == 1
    version = "3.8" if "38" in pycs[0].name else "3.12"
    result = run_cli("decompile", str(pycs[0]), cwd=files)
    assert result.returncode == 2
    assert_single_error_line(
        result.stderr, f"was compiled by Python {version}", f"run pellucid with Python {version}"
    )


def test_module_whose_import_fails(tmp_path, monkeypatch, capsys):
    name = f"pellucid_broken_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("raise RuntimeError('nope\\nsecond line')\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)
    try:
        assert cli.main(["decompile", f"{name}:f"]) == 2
    finally:
        sys.modules.pop(name, None)
    assert_single_error_line(
        capsys.readouterr().err, f"importing {name} failed: RuntimeError: nope second line"
    )


def test_module_that_exits_on_import(tmp_path, monkeypatch, capsys):
    name = f"pellucid_exits_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("import sys\nsys.exit(3)\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)
    try:
        assert cli.main(["decompile", f"{name}:f"]) == 2
    finally:
        sys.modules.pop(name, None)
    assert_single_error_line(capsys.readouterr().err, f"importing {name} failed", "sys.exit(3)")


def test_module_with_missing_dependency(tmp_path, monkeypatch, capsys):
    name = f"pellucid_dep_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("import no_such_dependency_xyz\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)
    try:
        assert cli.main(["decompile", f"{name}:f"]) == 2
    finally:
        sys.modules.pop(name, None)
    assert_single_error_line(
        capsys.readouterr().err,
        f"importing {name} failed: ModuleNotFoundError",
        "no_such_dependency_xyz",
    )


def test_namespace_package(tmp_path, monkeypatch, capsys):
    name = f"pellucid_ns_{uuid.uuid4().hex[:8]}"
    (tmp_path / name).mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)
    try:
        assert cli.main(["decompile", name]) == 2
    finally:
        sys.modules.pop(name, None)
    assert_single_error_line(capsys.readouterr().err, f"{name} is a namespace package")


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root can read files without read permission",
)
def test_unreadable_source(files, capsys):
    script = files / "script.py"
    script.chmod(0)
    try:
        assert cli.main(["decompile", str(script)]) == 2
    finally:
        script.chmod(0o644)
    assert_single_error_line(capsys.readouterr().err, f"permission denied: cannot read {script}")


def test_unwritable_output(files, fake_core, capsys):
    out = files / "no_such_dir" / "out.py"
    assert cli.main(["decompile", str(files / "script.py"), "-o", str(out)]) == 2
    assert_single_error_line(capsys.readouterr().err, f"cannot write {out}")


def test_traceback_flag_shows_the_traceback(files, capsys):
    assert cli.main(["decompile", "--traceback", str(files / "truncated.pyc")]) == 2
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert err.splitlines()[-1].startswith("pellucid: error: ")


# ---------------------------------------------------------------------------------------------
# decompiler failures: exit code 1


@pytest.mark.parametrize(
    "exc, shown",
    [
        (RuntimeError("boom"), "RuntimeError: boom"),
        (DecompileError("unsupported opcode FOO"), "unsupported opcode FOO"),
    ],
)
def test_decompiler_failure_exits_1(files, monkeypatch, capsys, exc, shown):
    def broken(obj, verify=True):
        raise exc

    monkeypatch.setattr(api, "decompile", broken)
    target = str(files / "script.pyc")
    assert cli.main(["decompile", target]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert_single_error_line(captured.err, f"could not decompile {target}: {shown}")


# ---------------------------------------------------------------------------------------------
# what gets decompiled (with a stand-in for the unfinished core)


def test_pyc_target(files, fake_core, capsys):
    assert cli.main(["decompile", str(files / "script.pyc")]) == 0
    assert capsys.readouterr().out == "# decompiled <module> from script.py\n"
    assert fake_core[0].co_name == "<module>"


def test_pyc_without_suffix_is_sniffed(files, fake_core, capsys):
    (files / "compiled").write_bytes((files / "script.pyc").read_bytes())
    assert cli.main(["decompile", str(files / "compiled")]) == 0
    assert capsys.readouterr().out == "# decompiled <module> from script.py\n"


def test_py_target_is_compiled_by_this_python(files, fake_core, capsys):
    assert cli.main(["decompile", str(files / "script.py")]) == 0
    assert capsys.readouterr().out == "# decompiled <module> from script.py\n"
    assert fake_core[0] == compile(SCRIPT, str(files / "script.py"), "exec", dont_inherit=True)


def test_file_qualname_targets(files, fake_core, capsys):
    # Nothing is run: one comment line says what the code object alone cannot tell.
    assert cli.main(["decompile", str(files / "script.py") + ":C.m"]) == 0
    note, out = capsys.readouterr().out.split("\n", 1)
    assert note.startswith("# pellucid: from the code object only (") and "defaults" in note
    assert out == "# decompiled m from script.py\n"
    assert cli.main(["decompile", str(files / "script.pyc") + ":outer.<locals>.inner"]) == 0
    note, out = capsys.readouterr().out.split("\n", 1)
    assert "closure values are not known" in note
    assert out == "# decompiled inner from script.py\n"
    assert cli.main(["decompile", str(files / "script.py") + ":C"]) == 0
    note, out = capsys.readouterr().out.split("\n", 1)
    assert note.startswith("# pellucid: class body from its code object only (") and "bases" in note


def test_module_function_target(importable, fake_core, capsys):
    # (the live function is decompiled, not its bare code object)
    assert cli.main(["decompile", f"{importable}:f"]) == 0
    assert capsys.readouterr().out == f"# decompiled f from {importable}.py\n"
    assert isinstance(fake_core[-1], types.CodeType)


@pytest.mark.parametrize(
    "qualname, name",
    [("C.m", "m"), ("C.s", "s"), ("C.p", "p"), ("C.p.fset", "p"), ("C.Inner.deep", "deep"),
     ("outer.<locals>.inner", "inner")],
)
def test_module_qualname_targets(importable, fake_core, capsys, qualname, name):
    assert cli.main(["decompile", f"{importable}:{qualname}"]) == 0
    out = capsys.readouterr().out
    if "<locals>" in qualname:  # a code object inside another function's: no function object
        note, out = out.split("\n", 1)
        assert note.startswith("# pellucid: from the code object only (the enclosing function")
    assert out == f"# decompiled {name} from {importable}.py\n"


def test_class_target_decompiles_every_method(importable, fake_core, capsys):
    assert cli.main(["decompile", f"{importable}:C"]) == 0
    out = capsys.readouterr().out
    headers = [line for line in out.splitlines() if line.startswith(f"# {importable}")]
    assert headers == [
        f"# {importable}:C.m",
        f"# {importable}:C.s",
        f"# {importable}:C.p.fget",
        f"# {importable}:C.p.fset",
        f"# {importable}:C.Inner.deep",
    ]
    assert [code.co_name for code in fake_core] == ["m", "s", "p", "p", "deep"]


def test_module_target_uses_source_without_importing(importable, fake_core, capsys):
    assert cli.main(["decompile", importable]) == 0
    assert capsys.readouterr().out == f"# decompiled <module> from {importable}.py\n"
    assert importable not in sys.modules


def test_module_target_falls_back_to_cached_pyc(tmp_path, monkeypatch, fake_core, capsys):
    name = f"pellucid_sourceless_{uuid.uuid4().hex[:8]}"
    src = tmp_path / f"{name}.py"
    src.write_text("x = 1\n")
    py_compile.compile(str(src), cfile=str(tmp_path / f"{name}.pyc"), doraise=True)
    src.unlink()  # a sourceless module: only NAME.pyc is left
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)
    assert cli.main(["decompile", name]) == 0
    assert capsys.readouterr().out == f"# decompiled <module> from {name}.py\n"


def test_stdlib_module_target(fake_core, capsys):
    assert cli.main(["decompile", "json.decoder"]) == 0
    assert capsys.readouterr().out == "# decompiled <module> from decoder.py\n"


def test_frozen_stdlib_module_target(fake_core, capsys):
    # 'os' is frozen into the interpreter on 3.11+; its code is still found.
    assert cli.main(["decompile", "os"]) == 0
    assert capsys.readouterr().out == "# decompiled <module> from os.py\n"


def test_module_in_current_directory(tmp_path, monkeypatch, fake_core, capsys):
    name = f"pellucid_cwd_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("def g():\n    return 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    try:
        assert cli.main(["decompile", f"{name}:g"]) == 0
    finally:
        sys.modules.pop(name, None)
    assert capsys.readouterr().out == f"# decompiled g from {name}.py\n"


def test_output_file(files, fake_core, capsys):
    out = files / "out.py"
    assert cli.main(["decompile", str(files / "script.pyc"), "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert out.read_text() == "# decompiled <module> from script.py\n"


def test_color_never_and_auto_without_tty(files, fake_core, capsys):
    for mode in ("never", "auto"):
        assert cli.main(["decompile", str(files / "script.pyc"), "--color", mode]) == 0
        assert "\x1b[" not in capsys.readouterr().out


def test_color_always(files, fake_core, capsys):
    pytest.importorskip("pygments")
    assert cli.main(["decompile", str(files / "script.pyc"), "--color", "always"]) == 0
    captured = capsys.readouterr()
    assert "\x1b[" in captured.out
    assert captured.err == ""


def test_color_always_without_pygments_warns(files, fake_core, monkeypatch, capsys):
    import pellucid.highlight

    monkeypatch.setattr(pellucid.highlight, "available", lambda: False)
    assert cli.main(["decompile", str(files / "script.pyc"), "--color", "always"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "# decompiled <module> from script.py\n"
    assert captured.err.startswith("pellucid: warning: --color always needs pygments")


def test_color_auto_on_a_tty(files, fake_core, monkeypatch, capsys):
    pytest.importorskip("pygments")
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    assert cli.main(["decompile", str(files / "script.pyc")]) == 0
    assert "\x1b[" in capsys.readouterr().out
    monkeypatch.setenv("NO_COLOR", "1")
    assert cli.main(["decompile", str(files / "script.pyc")]) == 0
    assert "\x1b[" not in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# with the real decompiler core


@needs_core
def test_real_round_trip_of_a_script(files):
    # Needs the real decompiler core: the output must define the script's function again.
    result = run_cli("decompile", "script.py", "--color", "never", cwd=files)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert "def f(x):" in result.stdout


@needs_core
def test_real_function_of_a_module(files):
    # Needs the real decompiler core.
    result = run_cli("decompile", "json.decoder:JSONDecoder.decode", cwd=files)
    assert result.returncode == 0, result.stderr
    assert "def decode(" in result.stdout


@needs_core
@pytest.mark.parametrize("target, expected", [
    ("json.decoder:JSONDecoder.raw_decode", "def raw_decode(self, s, idx=0):"),
    ("json:dumps", "def dumps(obj, *, skipkeys=False, ensure_ascii=True, check_circular=True,"),
])
def test_real_function_object_keeps_its_defaults(capsys, target, expected):
    # Issue 15: the CLI decompiled the bare code object, losing ``idx=0`` and json.dumps's
    # keyword defaults.
    assert cli.main(["decompile", target, "--color", "never"]) == 0
    assert expected in capsys.readouterr().out


CLOSURE_MODULE = textwrap.dedent(
    """\
    def outer(k=3):
        def inner(a: int = 1, *, b: str = "x", c=[1, 2]) -> int:
            return a + k
        return inner

    inner = outer(5)
    """
)


@needs_core
def test_real_function_object_annotations_and_closure(tmp_path, monkeypatch, capsys):
    name = f"pellucid_cli_closure_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(CLOSURE_MODULE)
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)
    try:
        assert cli.main(["decompile", f"{name}:inner", "--color", "never"]) == 0
    finally:
        sys.modules.pop(name, None)
    out = capsys.readouterr().out
    assert out.startswith("# closure: k = 5\n"), out
    assert "def inner(a: int=1, *, b: str='x', c=[1, 2]) -> int:" in out.replace(" = ", "=")
    # the same function from the file, not run: no defaults, and a comment line says so
    assert cli.main(["decompile", str(tmp_path / f"{name}.py") + ":outer.<locals>.inner",
                     "--color", "never"]) == 0
    note, out = capsys.readouterr().out.split("\n", 1)
    assert note.startswith("# pellucid: from the code object only") and "def inner(a, *, b, c):" in out


def test_internal_error_is_still_one_line(files, monkeypatch, capsys):
    def buggy(target):
        raise KeyError("oops")

    monkeypatch.setattr(cli, "resolve_target", buggy)
    assert cli.main(["decompile", str(files / "script.pyc")]) == 1
    assert_single_error_line(
        capsys.readouterr().err, "internal error: KeyError: 'oops'", "--traceback"
    )


def test_decompile_verifies_unless_told_not_to(fake_core, files, capsys):
    del VERIFY_FLAGS[:]
    assert cli.main(["decompile", str(files / "script.py")]) == 0
    assert cli.main(["decompile", str(files / "script.py"), "--no-verify"]) == 0
    capsys.readouterr()
    assert VERIFY_FLAGS == [True, False]


def test_unverified_text_says_so(tmp_path, capsys, monkeypatch):
    """When the verifier accepts no form, the printed text starts with a comment saying so."""
    import pellucid.verify
    from pellucid.verify import Verdict

    def refuse(original, candidate, bindings=None):
        return Verdict(False, "differs: refused by the test"), [original]

    monkeypatch.setattr(pellucid.verify, "check_blaming", refuse)
    src = tmp_path / "m.py"
    src.write_text("def f(x):\n    return x + 1\n")
    assert cli.main(["decompile", str(src)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# pellucid: NOT verified equivalent"), out
    assert "refused by the test" in out.splitlines()[0]
