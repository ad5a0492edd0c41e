"""The ``pellucid`` command line (also ``python -m pellucid``).

>>> main(["decompile", "builtins:len"])  # doctest: +SKIP
pellucid: error: builtin function len is implemented in C and has no Python bytecode
2

Exit status: 0 success, 1 the decompiler failed on valid bytecode, 2 bad input or usage.
Every error is a single ``pellucid: error: ...`` line on stderr; ``--traceback`` adds the
Python traceback for bug reports.
"""
import argparse
import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import sys
import traceback
import types
from typing import Any, Callable, List, NamedTuple, NoReturn, Optional, Sequence, TextIO

from pellucid.bytecode.features import RUNNING_VERSION
from pellucid.bytecode.pyc import load_pyc, magic_number_of
from pellucid.decompiler.inputs import code_of
from pellucid.errors import DecompileError

__all__ = ["main"]

EXIT_OK = 0
EXIT_DECOMPILER_FAILED = 1
EXIT_BAD_INPUT = 2

_SOURCE_SUFFIXES = (".py", ".pyw")
_PYC_SUFFIXES = (".pyc",)


class CliError(Exception):
    """An error reported as one ``pellucid: error: ...`` line, exiting with ``exit_code``."""

    def __init__(self, message: str, exit_code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class Unit(NamedTuple):
    """One code object to decompile, with the name it is shown under.

    ``obj`` is the live function (or method, staticmethod...) when there is one: its defaults,
    keyword defaults, annotations and closure are then part of the output.  ``note`` is a
    comment line put before the source (what a bare code object cannot tell)."""

    label: str
    code: types.CodeType
    obj: Any = None
    note: Optional[str] = None


# --------------------------------------------------------------------------------------------
# argument parsing


_MAIN_DESCRIPTION = """\
Decompile CPython bytecode back to readable Python source.

pellucid reads bytecode of the Python running it (CPython 3.8 to 3.15): a .pyc file
must be decompiled by the same Python version that wrote it."""

_MAIN_EPILOG = """\
examples:
  pellucid decompile __pycache__/mod.cpython-312.pyc
      decompile a compiled module (run pellucid with Python 3.12 for it)
  pellucid decompile script.py
      compile script.py with this Python, then decompile it: shows the round trip
  pellucid decompile json.decoder:JSONDecoder.raw_decode
      one function or method of an importable module
  pellucid decompile json.decoder:JSONDecoder
      every method of a class, one after another
  pellucid decompile json.decoder
      a whole module, from its source or its cached .pyc
  python3.12 -m pellucid decompile mod.cpython-312.pyc -o mod.py --color never
      pick the Python version explicitly and write the source to a file
  pellucid demo demo-dump
      compile a small bundled torch program and write its dump, index and report
  pellucid dump -o dump -- python train.py --epochs 1
      dump what torch.compile makes of a program, without editing it
  pellucid report dump
      write dump/report.html, a browsable report of a dump

Run 'pellucid COMMAND --help' for the details of a command.
exit status: 0 success, 1 the decompiler failed, 2 bad input or usage."""

_DECOMPILE_DESCRIPTION = """\
Print Python source equivalent to the bytecode of TARGET.

TARGET is one of:
  FILE.pyc              a compiled module written by this Python version
  FILE.py               a script: compiled with this Python, then decompiled
  FILE.py:QUALNAME      one function or class body of FILE.py or FILE.pyc, found by
                        name among its code objects ('Class.method'); nothing is run
  MODULE                an importable module (its source or cached .pyc); not imported
  MODULE:QUALNAME       a function, method, property or class inside an imported module,
                        by its dotted __qualname__ ('Class.method', 'outer.<locals>.inner');
                        a class decompiles all its methods one after another

Modules are looked up on sys.path plus the current directory, like 'python -m'."""

_DECOMPILE_EPILOG = """\
examples:
  pellucid decompile __pycache__/util.cpython-311.pyc
  pellucid decompile util.py --color always | less -R
  pellucid decompile util.py:Parser.parse
  pellucid decompile collections:OrderedDict.__repr__
  pellucid decompile mypkg.models:User -o user_methods.py

Importing MODULE:QUALNAME runs the module's top-level code, as 'import MODULE' would.
Functions implemented in C (len, math.sqrt, str.join) have no bytecode to decompile."""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are a single line, like every other pellucid error."""

    def error(self, message: str) -> NoReturn:
        self.exit(
            EXIT_BAD_INPUT,
            f"pellucid: error: {message} (see '{self.prog} --help')\n",
        )


def _common_options() -> argparse.ArgumentParser:
    """Options every subcommand takes."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--traceback",
        action="store_true",
        help="on error, also print the Python traceback (for bug reports)",
    )
    return common


def _add_decompile_command(
    commands: "argparse._SubParsersAction[Any]", common: argparse.ArgumentParser
) -> None:
    cmd = commands.add_parser(
        "decompile",
        parents=[common],
        help="print Python source for a .pyc, a .py, a module or a function",
        description=_DECOMPILE_DESCRIPTION,
        epilog=_DECOMPILE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cmd.add_argument(
        "target", metavar="TARGET", help="FILE.pyc, FILE.py[:QUALNAME], MODULE or MODULE:QUALNAME"
    )
    cmd.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the source to FILE instead of stdout (never colored)",
    )
    cmd.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="syntax-highlight the output with pygments: 'auto' (default) when stdout is a "
        "terminal and NO_COLOR is not set",
    )
    cmd.add_argument(
        "--no-verify",
        action="store_true",
        help="do not check the source equivalent to the bytecode (faster; by default the text "
        "shown is the form pellucid.verify accepted, and says so in a comment when none was)",
    )
    cmd.set_defaults(run=_run_decompile)


_DUMP_DESCRIPTION = """\
Run a Python program with pellucid.prepare_debug(DIR) around it, without editing it.

Everything torch.compile compiles while the program runs is written to DIR: Dynamo's
transformed code and resume functions as source, full_code_for_<fn>.py (the cache lookup
with its guards), the FX/AOT/Inductor graphs, and index.md, which lists them with graph
breaks and recompilations.  When the program ends, one line says what was written."""

_DUMP_EPILOG = """\
examples:
  pellucid dump -o dump -- python train.py --epochs 1
  pellucid dump -o dump -- python -m mypkg.train
  pellucid dump -o dump -- python -c "import mypkg; mypkg.run()"
  then open dump/index.md, run 'pellucid report dump', or step through the files with
  pellucid.debug()

The command after -- must start with a Python interpreter; pellucid runs the program with
that interpreter (which needs torch), so it is the same program, same arguments.  That
interpreter imports this pellucid (nothing else of this environment is put on its path)."""


def _add_dump_command(
    commands: "argparse._SubParsersAction[Any]", common: argparse.ArgumentParser
) -> None:
    cmd = commands.add_parser(
        "dump",
        parents=[common],
        help="run 'python script.py ...' under prepare_debug and dump what torch.compile made",
        description=_DUMP_DESCRIPTION,
        epilog=_DUMP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cmd.add_argument("-o", "--output", metavar="DIR", required=True, help="the dump directory")
    cmd.add_argument("command", nargs=argparse.REMAINDER, metavar="-- python SCRIPT [ARGS...]",
                     help="the program to run, after --")
    cmd.set_defaults(run=_run_dump)


def _pellucid_only_path() -> str:
    """A temporary directory holding only this pellucid package (a link to it), for another
    interpreter's ``PYTHONPATH``: putting this environment's site-packages there instead would
    hand that interpreter this environment's torch and everything else."""
    import shutil
    import tempfile

    package = os.path.dirname(os.path.abspath(__file__))
    shim = tempfile.mkdtemp(prefix="pellucid-path-")
    try:
        os.symlink(package, os.path.join(shim, "pellucid"))
    except (OSError, NotImplementedError):  # no symlinks (Windows without the privilege): a copy
        shutil.copytree(package, os.path.join(shim, "pellucid"),
                        ignore=shutil.ignore_patterns("__pycache__"))
    return shim


def _run_dump(args: argparse.Namespace) -> int:
    import shutil
    import subprocess

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise CliError("no program given: write it after --, e.g. "
                       "'pellucid dump -o dump -- python train.py'")
    interpreter = command[0]
    if not os.path.basename(interpreter).startswith("python"):
        raise CliError("the program must start with a Python interpreter (python, python3.11, "
                       "/path/to/python), not %r" % interpreter)
    if len(command) < 2:
        raise CliError("no script given after %s: e.g. '%s train.py', '%s -m pkg.module' or "
                       "'%s -c CODE'" % (interpreter, interpreter, interpreter, interpreter))
    program = command[1:]
    if program[0] in ("-m", "-c"):
        if len(program) < 2:
            raise CliError("%s %s needs an argument" % (interpreter, program[0]))
    elif program[0].startswith("-"):
        raise CliError("%s option %s is not supported here: give a script, -m MODULE or -c CODE"
                       % (interpreter, program[0]))
    elif not os.path.isfile(program[0]):
        raise CliError("no such file: %s" % program[0] if not os.path.exists(program[0])
                       else "not a file: %s" % program[0])
    if shutil.which(interpreter) is None:
        raise CliError("cannot run %s: no such program" % interpreter)
    shim = _pellucid_only_path()
    env = dict(os.environ)
    env["PYTHONPATH"] = shim + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        done = subprocess.run([interpreter, "-m", "pellucid.dynamo.run_script", "-o",
                               os.path.abspath(args.output), "--"] + program, env=env)
    except OSError as exc:
        raise CliError("cannot run %s: %s" % (interpreter, exc.strerror or exc))
    finally:
        shutil.rmtree(shim, ignore_errors=True)
    return done.returncode


_REPORT_DESCRIPTION = """\
Write a static, self-contained HTML report of a dump directory (every process that wrote
into it): per function, the original source with graph-break and guard lines marked beside
the transformed code; why each graph break happened and why each cache entry was needed;
the guards; every graph stage with FX nodes linked to source lines and Inductor kernels to
FX nodes; search over all of it.  Open it in any browser; it loads nothing from the network."""


def _add_report_command(
    commands: "argparse._SubParsersAction[Any]", common: argparse.ArgumentParser
) -> None:
    cmd = commands.add_parser(
        "report",
        parents=[common],
        help="write an HTML report of a dump directory",
        description=_REPORT_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cmd.add_argument("dump", metavar="DIR", help="the dump directory (written by prepare_debug)")
    cmd.add_argument("-o", "--output", metavar="FILE", help="where to write it (default DIR/report.html)")
    cmd.set_defaults(run=_run_report)


def _run_report(args: argparse.Namespace) -> int:
    from pellucid.dynamo.report import write_report

    if not os.path.isdir(args.dump):
        raise CliError("no such directory: %s" % args.dump)
    try:
        path = write_report(args.dump, args.output)
    except FileNotFoundError as exc:
        raise CliError(str(exc))
    except OSError as exc:
        raise CliError("cannot write the report: %s" % (exc.strerror or exc))
    print("pellucid: report written to %s" % path)
    return EXIT_OK


_DEMO_DESCRIPTION = """\
Compile a small bundled program under prepare_debug and write its dump, index and report to
DIR: a model whose submodule has a graph break, called with a new shape (a recompile), with
a backward pass.  Needs torch."""


def _add_demo_command(
    commands: "argparse._SubParsersAction[Any]", common: argparse.ArgumentParser
) -> None:
    cmd = commands.add_parser(
        "demo",
        parents=[common],
        help="dump a small bundled torch.compile program, to see what pellucid shows",
        description=_DEMO_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cmd.add_argument("dump", metavar="DIR", help="the dump directory to write")
    cmd.add_argument("--backend", default="inductor", choices=("eager", "aot_eager", "inductor"),
                     help="torch.compile backend (default: inductor)")
    cmd.add_argument("--step", action="store_true",
                     help="then run a step under pellucid.debug(), which pauses in pdb to step through the dump")
    cmd.set_defaults(run=_run_demo)


def _run_demo(args: argparse.Namespace) -> int:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise CliError("pellucid demo needs torch: pip install \"pellucid[torch]\" (see README)")
    from pellucid.dynamo.demo import run

    return run(args.dump, args.backend, args.step)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``pellucid`` command."""
    from pellucid import __version__

    parser = _Parser(
        prog="pellucid",
        description=_MAIN_DESCRIPTION,
        epilog=_MAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"pellucid {__version__} (Python {sys.version.split()[0]})",
    )
    commands = parser.add_subparsers(
        title="commands", dest="command", metavar="COMMAND", parser_class=_Parser
    )
    common = _common_options()
    _add_decompile_command(commands, common)
    _add_dump_command(commands, common)
    _add_report_command(commands, common)
    _add_demo_command(commands, common)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``pellucid`` with ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # --help, --version and usage errors
        if exc.code is None:
            return EXIT_OK
        return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except CliError as exc:
        if args.traceback:
            traceback.print_exc()
        _print_error(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        _print_error("interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. '| head'); don't let Python complain when flushing.
        _silence_stdout()
        return EXIT_OK
    except Exception as exc:  # a bug in pellucid itself: still one line, unless --traceback
        if args.traceback:
            traceback.print_exc()
        _print_error(
            f"internal error: {type(exc).__name__}: {exc} (rerun with --traceback to report it)"
        )
        return EXIT_DECOMPILER_FAILED


def _print_error(message: str) -> None:
    sys.stderr.write(f"pellucid: error: {_one_line(message)}\n")
    sys.stderr.flush()


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


# --------------------------------------------------------------------------------------------
# decompile


def _run_decompile(args: argparse.Namespace) -> int:
    units = resolve_target(args.target)
    text = _render(units, verify=not args.no_verify)
    if args.output:
        _write_file(args.output, text)
        return EXIT_OK
    if _want_color(args.color, sys.stdout):
        from pellucid.highlight import highlight

        text = highlight(text)
    _write_stdout(text)
    return EXIT_OK


def _render(units: List[Unit], verify: bool = True) -> str:
    from pellucid.decompiler import api

    chunks = []
    for unit in units:
        try:
            source = api.decompile(unit.code if unit.obj is None else unit.obj, verify=verify)
        except Exception as exc:
            kind = "" if isinstance(exc, DecompileError) else f"{type(exc).__name__}: "
            raise CliError(
                f"could not decompile {unit.label}: {kind}{exc}", EXIT_DECOMPILER_FAILED
            ) from exc
        if not source.endswith("\n"):
            source += "\n"
        if unit.note:
            source = f"# {unit.note}\n{source}"
        if len(units) > 1:
            source = f"# {unit.label}\n{source}"
        chunks.append(source)
    return "\n".join(chunks)


def _want_color(mode: str, stream: TextIO) -> bool:
    if mode == "never":
        return False
    from pellucid.highlight import available

    if mode == "always":
        if not available():
            sys.stderr.write(
                "pellucid: warning: --color always needs pygments "
                "(pip install pellucid[highlight]); printing plain text\n"
            )
            return False
        return True
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and available()


def _write_stdout(text: str) -> None:
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode("utf-8", "backslashreplace"))
    sys.stdout.flush()


def _write_file(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except IsADirectoryError:
        raise CliError(f"cannot write {path}: it is a directory") from None
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None


# --------------------------------------------------------------------------------------------
# TARGET resolution


def resolve_target(target: str) -> List[Unit]:
    """Turn a TARGET argument into the code objects to decompile; raises :class:`CliError`."""
    if not target:
        raise CliError("empty TARGET: give a .pyc or .py file, a module, or module:qualname")
    if os.path.isfile(target):
        return [_unit_from_file(target)]
    path, colon, qualname = target.rpartition(":")
    if colon and path.lower().endswith(_SOURCE_SUFFIXES + _PYC_SUFFIXES) and _is_qualname(qualname):
        return _units_from_file_qualname(path, qualname)
    if _looks_like_path(target):
        return [_unit_from_file(target)]
    module, colon, qualname = target.partition(":")
    if _is_module_name(module) and (not colon or _is_qualname(qualname)):
        if colon:
            return _units_from_object(module, qualname)
        return [_unit_from_module(module)]
    if os.path.isdir(target):
        raise CliError(f"{target} is a directory, not a .py or .pyc file")
    raise CliError(
        f"no such file, and not a module or module:qualname: {target}"
    )


def _looks_like_path(target: str) -> bool:
    if target.lower().endswith(_SOURCE_SUFFIXES + _PYC_SUFFIXES):
        return True
    separators = [os.sep] + ([os.altsep] if os.altsep else [])
    if any(sep in target for sep in separators):
        return True
    return os.path.isfile(target)


def _is_module_name(name: str) -> bool:
    return bool(name) and all(part.isidentifier() for part in name.split("."))


def _is_nested_marker(part: str) -> bool:
    """'<locals>', '<lambda>', '<genexpr>', '<listcomp>'... as found in __qualname__."""
    return len(part) > 2 and part[0] == "<" and part[-1] == ">" and part[1:-1].isidentifier()


def _is_qualname(qualname: str) -> bool:
    return bool(qualname) and all(
        part.isidentifier() or _is_nested_marker(part) for part in qualname.split(".")
    )


# ---- files


def _unit_from_file(path: str) -> Unit:
    try:
        os.stat(path)
    except FileNotFoundError:
        raise CliError(f"no such file: {path}") from None
    except PermissionError:
        raise CliError(f"permission denied: cannot read {path}") from None
    except (OSError, ValueError) as exc:
        raise CliError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if os.path.isdir(path):
        raise CliError(f"{path} is a directory, not a .py or .pyc file")
    lower = path.lower()
    if lower.endswith(_PYC_SUFFIXES):
        return Unit(path, _load_pyc(path))
    if lower.endswith(_SOURCE_SUFFIXES):
        return Unit(path, _compile_file(path))
    # No telling extension: a .pyc starts with a magic number ending in b"\r\n".
    if magic_number_of(_read_bytes(path)[:4]) is not None:
        return Unit(path, _load_pyc(path))
    raise CliError(f"{path} is neither a .py source file nor a .pyc file")


def _load_pyc(path: str) -> types.CodeType:
    try:
        return load_pyc(path)
    except DecompileError as exc:  # PycError
        raise CliError(str(exc)) from exc


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except PermissionError:
        raise CliError(f"permission denied: cannot read {path}") from None
    except IsADirectoryError:
        raise CliError(f"{path} is a directory, not a .py or .pyc file") from None
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None


def _compile_file(path: str, display_name: Optional[str] = None) -> types.CodeType:
    source = _read_bytes(path)
    try:
        return compile(source, display_name or path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        raise CliError(
            f"{path} does not compile with Python {_running()}: "
            f"{type(exc).__name__}: {exc.msg}{where}"
        ) from exc
    except (ValueError, TypeError) as exc:  # null bytes in source (before 3.12)
        raise CliError(f"{path} is not Python source: {exc}") from exc


def _running() -> str:
    return RUNNING_VERSION


# ---- modules without importing them


def _no_module(name: str, qualname: str = "") -> CliError:
    import builtins

    hint = ""
    if "." not in name and hasattr(builtins, name):
        wanted = f"{name}.{qualname}" if qualname else name
        hint = f" ({name} is a builtin: use builtins:{wanted})"
    return CliError(f"no module named {name!r}{hint}")


def _use_cwd_for_imports() -> None:
    """Find modules in the current directory, as 'python -m' does (console scripts don't)."""
    cwd = os.getcwd()
    if not any(entry in ("", ".", cwd) for entry in sys.path):
        sys.path.insert(0, cwd)


def _find_spec(module: str) -> Any:
    _use_cwd_for_imports()
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError as exc:
        raise _no_module(exc.name or module) from exc
    except ValueError:  # sys.modules[module].__spec__ is None, e.g. __main__
        raise CliError(f"module {module} has no import spec, so its code cannot be found") from None
    except Exception as exc:  # importing a parent package failed
        raise CliError(
            f"cannot find module {module}: importing its package failed: "
            f"{type(exc).__name__}: {_one_line(str(exc))}"
        ) from exc
    if spec is None:
        raise _no_module(module)
    return spec


def _unit_from_module(module: str) -> Unit:
    spec = _find_spec(module)
    origin = spec.origin
    loader = spec.loader
    if origin is None and spec.submodule_search_locations is not None:
        raise CliError(
            f"{module} is a namespace package with no code of its own; "
            f"decompile one of its modules"
        )
    if origin == "built-in" or loader is importlib.machinery.BuiltinImporter:
        raise CliError(
            f"module {module} is built into the interpreter (implemented in C) and has no "
            f"Python bytecode"
        )
    if isinstance(origin, str) and origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
        raise CliError(
            f"module {module} is a C extension ({origin}) and has no Python bytecode"
        )
    if origin == "frozen" or loader is importlib.machinery.FrozenImporter:
        filename = getattr(getattr(spec, "loader_state", None), "filename", None)
        if isinstance(filename, str) and os.path.isfile(filename):
            return Unit(module, _compile_file(filename))
        return Unit(module, _code_from_loader(module, loader))
    if isinstance(origin, str) and spec.has_location:
        if origin.lower().endswith(_SOURCE_SUFFIXES):
            if os.path.isfile(origin):
                return Unit(module, _compile_file(origin))
            cached = spec.cached
            if isinstance(cached, str) and os.path.isfile(cached):
                return Unit(module, _load_pyc(cached))
        elif origin.lower().endswith(_PYC_SUFFIXES):
            return Unit(module, _load_pyc(origin))
    return Unit(module, _code_from_loader(module, loader))


def _code_from_loader(module: str, loader: Any) -> types.CodeType:
    get_code = getattr(loader, "get_code", None)
    if get_code is None:
        raise CliError(f"module {module} has no Python bytecode pellucid can find")
    try:
        code = get_code(module)
    except Exception as exc:
        raise CliError(
            f"cannot get the code of module {module}: {type(exc).__name__}: {_one_line(str(exc))}"
        ) from exc
    if not isinstance(code, types.CodeType):
        raise CliError(f"module {module} has no Python bytecode (implemented in C?)")
    return code


# ---- objects inside imported modules


def _import(module: str, qualname: str = "") -> types.ModuleType:
    _use_cwd_for_imports()
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module == missing or module.startswith(missing + ".")):
            raise _no_module(missing, qualname if missing == module else "") from exc
        raise CliError(
            f"importing {module} failed: ModuleNotFoundError: {_one_line(str(exc))}"
        ) from exc
    except SystemExit as exc:
        raise CliError(f"importing {module} failed: it called sys.exit({exc.code!r})") from exc
    except Exception as exc:
        raise CliError(
            f"importing {module} failed: {type(exc).__name__}: {_one_line(str(exc))}"
        ) from exc


def _nested_codes(codes: List[types.CodeType], part: str, label: str) -> List[types.CodeType]:
    """The code objects named ``part`` among the constants of ``codes`` ('<locals>' is skipped)."""
    if part == "<locals>":
        return codes
    found = [
        const
        for code in codes
        for const in code.co_consts
        if isinstance(const, types.CodeType) and const.co_name == part
    ]
    if not found:
        raise CliError(f"{label} defines no function or class named {part!r}")
    return found


def _code_units(label: str, codes: List[types.CodeType], source: str) -> List[Unit]:
    """Units for code objects found without their function objects (``source`` names what
    was not run)."""
    if len(codes) == 1:
        return [Unit(label, codes[0], note=_unknown_note(codes[0], source))]
    return [Unit(f"{label} #{i}", code, note=_unknown_note(code, source))
            for i, code in enumerate(codes, 1)]


def _unknown_note(code: types.CodeType, source: str) -> str:
    """The comment line saying what the code object alone does not tell."""
    if code.co_flags & inspect.CO_NEWLOCALS:
        return (f"pellucid: from the code object only ({source} not run): argument defaults, "
                f"annotations, decorators and closure values are not known")
    return (f"pellucid: class body from its code object only ({source} not run): bases, "
            f"keywords and decorators are not known")


def _units_from_file_qualname(path: str, qualname: str) -> List[Unit]:
    """FILE.py:Class.method -- found among the compiled file's code objects, nothing is run."""
    codes = [_unit_from_file(path).code]
    walked: List[str] = []
    for part in qualname.split("."):
        label = f"{path}:{'.'.join(walked)}" if walked else path
        codes = _nested_codes(codes, part, label)
        walked.append(part)
    return _code_units(f"{path}:{qualname}", codes, path)


def _units_from_object(module: str, qualname: str) -> List[Unit]:
    obj: Any = _import(module, qualname)
    walked: List[str] = []
    codes: Optional[List[types.CodeType]] = None  # set once we walk into nested code objects
    for part in qualname.split("."):
        label = f"{module}:{'.'.join(walked)}" if walked else module
        if codes is None and part == "<locals>":
            codes = [_code_or_fail(obj, label)]
        elif codes is not None:
            codes = _nested_codes(codes, part, label)
        else:
            obj = _getattr_or_fail(obj, part, label)
        walked.append(part)
    label = f"{module}:{qualname}"
    if codes is not None:
        return _code_units(label, codes, "the enclosing function")
    if isinstance(obj, types.ModuleType):
        return [_unit_from_module(obj.__name__)]
    if inspect.isclass(obj):
        return _units_from_class(obj, label)
    return [Unit(label, _code_or_fail(obj, label), _live(obj))]


def _live(obj: Any) -> Any:
    """The object to decompile for ``obj``: itself when it is (or wraps) a function, whose
    defaults, annotations and closure the output then shows; else None (its code alone)."""
    func = getattr(obj, "__func__", obj)  # methods, staticmethod, classmethod
    return func if isinstance(func, types.FunctionType) else None


def _getattr_or_fail(obj: Any, name: str, label: str) -> Any:
    try:
        return getattr(obj, name)
    except AttributeError:
        kind = "module" if isinstance(obj, types.ModuleType) else (
            "class" if inspect.isclass(obj) else type(obj).__name__
        )
        raise CliError(f"{kind} {label} has no attribute {name!r}") from None
    except Exception as exc:
        raise CliError(
            f"getting {label}.{name} failed: {type(exc).__name__}: {_one_line(str(exc))}"
        ) from exc


def _code_or_fail(obj: Any, label: str) -> types.CodeType:
    try:
        return code_of(obj)
    except DecompileError as exc:
        raise CliError(str(exc)) from exc


def _units_from_class(cls: type, label: str) -> List[Unit]:
    """Every method defined in the class body (and nested classes), in definition order."""
    units: List[Unit] = []
    seen = set()

    def visit(klass: type, prefix: str) -> None:
        if id(klass) in seen:
            return
        seen.add(id(klass))
        for name, value in vars(klass).items():
            here = f"{prefix}.{name}"
            if inspect.isclass(value):
                # Only classes defined inside this one, not aliases such as 'x = int'.
                inner = getattr(value, "__qualname__", "")
                if inner == f"{klass.__qualname__}.{name}":
                    visit(value, here)
                continue
            if isinstance(value, property):
                for accessor in ("fget", "fset", "fdel"):
                    func = getattr(value, accessor)
                    if func is not None:
                        _add(units, f"{here}.{accessor}", func)
                continue
            _add(units, here, value)

    visit(cls, label)
    if not units:
        try:
            code_of(cls)
        except DecompileError as exc:  # says whether it's implemented in C
            raise CliError(str(exc)) from exc
        raise CliError(f"class {label} has no methods with Python bytecode")
    return units


def _add(units: List[Unit], label: str, value: Any) -> None:
    if isinstance(value, (str, bytes, int, float, complex, tuple, list, dict, set, frozenset)):
        return
    if value is None:
        return
    try:
        units.append(Unit(label, code_of(value), _live(value)))
    except DecompileError:
        pass  # data attributes, C functions stored on the class, ...
