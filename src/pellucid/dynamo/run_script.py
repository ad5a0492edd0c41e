"""Run a Python program under ``prepare_debug`` without editing it (``pellucid dump``).

``python -m pellucid.dynamo.run_script -o DIR -- train.py ARGS`` (or ``-- -m pkg.mod ARGS``)
runs the program as ``__main__`` inside ``prepare_debug(DIR)`` and prints what was dumped.

>>> summary_line(Capture("/tmp/d"))
'pellucid: no frames were compiled by torch.compile; nothing to dump in /tmp/d'
"""
import os
import runpy
import sys
from typing import List, Optional, Sequence

from pellucid.dynamo.model import Capture

USAGE = "usage: python -m pellucid.dynamo.run_script -o DIR -- (SCRIPT | -m MODULE) [ARGS...]"


def summary_line(capture: Capture) -> str:
    """One line on what a dump holds, printed when the program ends."""
    frames = list(capture.frames.values())
    if not frames:
        return "pellucid: no frames were compiled by torch.compile; nothing to dump in %s" % capture.dump_dir
    transforms = [t for f in frames for t in f.transforms]
    running = sum(1 for t in transforms if t.replacement is not None)
    files = len(set(capture.files))
    return ("pellucid: %d frames compiled (%d compilations, %d running from the dump's files), "
            "%d graphs, %d files written to %s; start with %s"
            % (len(frames), len(transforms), running, len(capture.graphs), files, capture.dump_dir,
               os.path.join(capture.dump_dir, "index.md")))


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point; returns the program's exit status."""
    args: List[str] = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 4 or args[0] not in ("-o", "--output") or args[2] != "--":
        sys.stderr.write(USAGE + "\n")
        return 2
    dump_dir, program = args[1], args[3:]
    from pellucid.dynamo.prepare_debug import prepare_debug

    status = 0
    module = program[0] == "-m"
    if module and len(program) < 2:
        sys.stderr.write(USAGE + "\n")
        return 2
    target = program[1] if module else program[0]
    sys.argv = [target] + program[(2 if module else 1):]
    if not module:
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
    with prepare_debug(dump_dir) as capture:
        try:
            if module:
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(target, run_name="__main__")
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    sys.stderr.write(summary_line(capture) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
