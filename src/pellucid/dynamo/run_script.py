"""Run a Python program under ``prepare_debug`` without editing it (``pellucid dump``).

``python -m pellucid.dynamo.run_script -o DIR -- SCRIPT ARGS`` (or ``-- -m MODULE ARGS``, or
``-- -c CODE ARGS``) runs the program as ``__main__`` inside ``prepare_debug(DIR)``, as
``python SCRIPT ARGS`` would run it; ``prepare_debug`` says what was written when it ends.
A program that raises shows its traceback without pellucid's frames and exits with status 1.

>>> main(["-o", "d", "--", "/no/such/script.py"])   # doctest: +SKIP
pellucid: error: no such file: /no/such/script.py
2
"""
import os
import runpy
import sys
import traceback
import types
from typing import List, Optional, Sequence

USAGE = "usage: python -m pellucid.dynamo.run_script -o DIR -- (SCRIPT | -m MODULE | -c CODE) [ARGS...]"


def _error(message: str) -> int:
    sys.stderr.write("pellucid: error: %s\n" % message)
    return 2


def _print_user_traceback(exc: BaseException) -> None:
    """The program's traceback as Python prints it, from the program's first frame on."""
    tb = exc.__traceback__
    ours = (os.path.abspath(__file__), os.path.abspath(runpy.__file__))

    def is_ours(filename: str) -> bool:
        return filename.startswith("<frozen runpy") or os.path.abspath(filename) in ours
    while tb is not None and is_ours(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point; returns the program's exit status."""
    args: List[str] = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 4 or args[0] not in ("-o", "--output") or args[2] != "--":
        sys.stderr.write(USAGE + "\n")
        return 2
    dump_dir, program = args[1], args[3:]
    mode = program[0] if program[0] in ("-m", "-c") else "script"
    if mode != "script" and len(program) < 2:
        return _error("%s needs an argument (%s)" % (program[0], USAGE))
    target = program[0] if mode == "script" else program[1]
    rest = program[1:] if mode == "script" else program[2:]
    if mode == "script" and not os.path.exists(target):
        return _error("no such file: %s" % target)
    if mode == "-m":
        import importlib.util

        sys.path.insert(0, os.getcwd())
        try:
            spec = importlib.util.find_spec(target)
        except (ImportError, ValueError) as exc:
            return _error("cannot find module %s: %s" % (target, exc))
        if spec is None:
            return _error("no module named %s" % target)
    from pellucid.dynamo.prepare_debug import prepare_debug

    status = 0
    if mode == "script":
        sys.argv = [target] + rest
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
    elif mode == "-c":
        sys.argv = ["-c"] + rest
        sys.path.insert(0, "")
    else:
        sys.argv = [target] + rest
    with prepare_debug(dump_dir):
        try:
            if mode == "-m":
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            elif mode == "-c":
                main_module = types.ModuleType("__main__")
                sys.modules["__main__"] = main_module
                exec(compile(target, "<string>", "exec"), main_module.__dict__)  # noqa: S102 - the user's -c
            else:  # (as python does since 3.9: __file__ and tracebacks name the script absolutely)
                runpy.run_path(os.path.abspath(target), run_name="__main__")
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                sys.stderr.write("%s\n" % exc.code)
        except KeyboardInterrupt:
            status = 130
        except BaseException as exc:  # the program's own error: shown as python shows it
            _print_user_traceback(exc)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
