"""How readable the transformed-code files are: lines, pellucid temporaries, ``del`` lines.

For the transformed-code files (``__transformed_code_<n>_for_<fn>.py``) of

* every program of ``tests/dynamo_programs.py`` (backend eager, each in a fresh Dynamo state,
  run in this process), and
* the ``bench/models.py --quick`` models (backend eager, run by ``bench/models.py`` itself
  with ``--keep-dumps``),

it counts per file:

* ``lines``  -- code lines: not blank, not only a comment (the header, the status line and,
  when Dynamo's own code runs, the commented disassembly are not counted);
* ``temps``  -- distinct pellucid temporaries (``__pellucid_t<N>``, ``__pellucid_args<N>``...:
  every ``__pellucid_`` name but the closure wrapper and the constants without a literal form);
* ``dels``   -- lines that start with ``del``;
* ``ran``    -- whether the file is the code that runs (verified equivalent to Dynamo's).

``--prior PYTHON`` also renders the same frames with the prior tool (depyf, installed beside
torch in the interpreter ``PYTHON``, run as ``depyf.prepare_debug``), and compares the code lines
of the files both tools wrote for the same frame (same file name).  ``--json OUT`` keeps the
figures; ``--compare OLD.json`` prints them beside an earlier run's (before/after a change).
Usage::

    PYTHONPATH=src python bench/readability.py --programs --models --json after.json \\
        --prior /path/to/venv-with-depyf/bin/python --compare before.json

Needs torch (and transformers for ``--models``).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_TEMP = re.compile(r"\b__pellucid_(?!closure__\b|const_|target__\b)\w+")
_FILE = re.compile(r"^__transformed_code_(\d+)_for_(.+)\.py$")
# pellucid names its files by the frame's qualified name; the code's own name is in the header
_HEADER = re.compile(r"^# Dynamo's transformed code for (\S+) ")


def file_figures(text: str) -> Dict[str, Any]:
    """The counts of one transformed-code file's text (see the module docstring).

    >>> file_figures("# c\\nx = __pellucid_t1 = 2\\ndel x\\n\\n")
    {'lines': 2, 'temps': 1, 'dels': 1, 'ran': False}
    """
    lines = [ln.strip() for ln in text.splitlines()]
    code = [ln for ln in lines if ln and not ln.startswith("#")]
    return {
        "lines": len(code),
        "temps": len(set(m.group(0) for ln in code for m in _TEMP.finditer(ln))),
        "dels": sum(1 for ln in code if ln.startswith("del ")),
        "ran": "# This file is the code that runs" in text,
    }


def dump_figures(dump: str) -> Dict[str, Dict[str, Any]]:
    """File name -> figures, for the transformed-code files of one dump directory."""
    out: Dict[str, Dict[str, Any]] = {}
    if not os.path.isdir(dump):
        return out
    for name in sorted(os.listdir(dump)):
        m = _FILE.match(name)
        if m:
            with open(os.path.join(dump, name), encoding="utf-8") as fh:
                text = fh.read()
            out[name] = file_figures(text)
            header = _HEADER.match(text)
            out[name]["frame"] = "%s#%s" % (header.group(1) if header else m.group(2), m.group(1))
    return out


def same_frames(ours: Dict[str, Dict[str, Any]], theirs: Dict[str, Dict[str, Any]]
                ) -> List[Any]:
    """(our file, their file) pairs for the same frame: the same code name and the same
    ``<n>`` (the n-th transformed code of that name).  A code name shared by several functions
    (two ``forward`` methods) is numbered per function by pellucid and per name by the prior
    tool: its files are left out, they cannot be paired."""
    by_key: Dict[str, List[str]] = {}
    for name, fig in ours.items():
        by_key.setdefault(fig.get("frame", name), []).append(name)
    shared = set(k.rsplit("#", 1)[0] for k, names in by_key.items() if len(names) > 1)
    theirs_by_key = {fig.get("frame", name): name for name, fig in theirs.items()}
    pairs = []
    for key, names in sorted(by_key.items()):
        if key.rsplit("#", 1)[0] not in shared and key in theirs_by_key:
            pairs.append((names[0], theirs_by_key[key]))
    return pairs


# -- running the programs ---------------------------------------------------------------------------
def _calls(inputs: List[Any]):
    for item in inputs:
        if isinstance(item, dict):
            yield item.get("args", ()), item.get("kwargs", {})
        else:
            yield item, {}


def run_programs(out_dir: str, tool: str, names: Optional[List[str]] = None) -> List[str]:
    """Run each program under ``tool``'s ``prepare_debug`` into ``out_dir/<program>``; returns
    the programs that failed (with the reason)."""
    import warnings

    import torch

    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from dynamo_programs import PROGRAMS

    if tool == "pellucid":
        import pellucid
        prepare = pellucid.prepare_debug
    else:
        import depyf
        prepare = depyf.prepare_debug
    failed = []
    for name in sorted(PROGRAMS):
        if names and name not in names:
            continue
        torch._dynamo.reset()
        torch.manual_seed(0)
        fn, inputs = PROGRAMS[name]()
        dump = os.path.join(out_dir, name)
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")
                with prepare(dump):
                    compiled = torch.compile(fn, backend="eager")
                    for args, kwargs in _calls(inputs):
                        try:
                            compiled(*args, **kwargs)
                        except Exception:
                            pass  # some programs raise on purpose: the dump is what counts
        except Exception as exc:
            failed.append("%s: %s: %s" % (name, type(exc).__name__, str(exc)[:200]))
        torch._dynamo.reset()
    return failed


def run_models(out_dir: str, python: str, tool: str) -> None:
    """The ``--quick`` models, backend eager, dumps under ``out_dir/<model>``."""
    if tool == "pellucid":
        cmd = [python, os.path.join(HERE, "models.py"), "--quick", "--backends", "eager",
               "--keep-dumps", out_dir]
        subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src")))
        # models.py keeps DIR/<model>/<backend>
        for model in os.listdir(out_dir):
            src = os.path.join(out_dir, model, "eager")
            if os.path.isdir(src):
                for f in os.listdir(src):
                    os.replace(os.path.join(src, f), os.path.join(out_dir, model, f))
                os.rmdir(src)
        return
    sys.path.insert(0, HERE)
    from models import QUICK
    for model in QUICK:
        subprocess.run([python, __file__, "--worker-model", model, "--out", out_dir],
                       cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=900)


def _worker_model(model: str, out_dir: str) -> None:
    """Prior tool, one model (in its own process, as models.py runs pellucid's)."""
    import warnings

    import depyf
    import torch

    sys.path.insert(0, HERE)
    from tiny_configs import build

    net, inputs, _ = build(model)
    torch._dynamo.reset()
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with depyf.prepare_debug(os.path.join(out_dir, model)):
            compiled = torch.compile(net, backend="eager")
            with torch.no_grad():
                compiled(**inputs)


def collect(root: str) -> Dict[str, Dict[str, Dict[str, Any]]]:
    """``root/<case>/<file>`` -> {case: {file: figures}}."""
    return {case: dump_figures(os.path.join(root, case)) for case in sorted(os.listdir(root))
            if os.path.isdir(os.path.join(root, case))}


# -- report -----------------------------------------------------------------------------------------
def _sum(files: Dict[str, Dict[str, Any]], key: str) -> int:
    return sum(f[key] for f in files.values())


def report(results: Dict[str, Any], old: Optional[Dict[str, Any]], file=sys.stdout) -> None:
    prior = results.get("prior", {})
    for group in ("models", "programs"):
        cases = results.get(group)
        if not cases:
            continue
        print("\n%s (per case: transformed-code files, then sums over them)" % group, file=file)
        head = "%-40s %5s %6s %6s %5s" % ("case", "files", "lines", "temps", "dels")
        if old:
            head += "  | before: %6s %6s %5s" % ("lines", "temps", "dels")
        if prior:
            head += "  | prior: %6s (same frames: ours/prior lines, longer)" % "lines"
        print(head, file=file)
        tot = {"files": 0, "lines": 0, "temps": 0, "dels": 0}
        tot_old = {"lines": 0, "temps": 0, "dels": 0}
        longer_all: List[str] = []
        for case, files in sorted(cases.items()):
            row = "%-40s %5d %6d %6d %5d" % (case[:40], len(files), _sum(files, "lines"),
                                              _sum(files, "temps"), _sum(files, "dels"))
            tot["files"] += len(files)
            for k in ("lines", "temps", "dels"):
                tot[k] += _sum(files, k)
            if old:
                before = old.get(group, {}).get(case, {})
                row += "  |         %6d %6d %5d" % (_sum(before, "lines"), _sum(before, "temps"),
                                                    _sum(before, "dels"))
                for k in tot_old:
                    tot_old[k] += _sum(before, k)
            theirs = prior.get(group, {}).get(case)
            if prior:
                if theirs is None:
                    row += "  |        -"
                else:
                    same = same_frames(files, theirs)
                    ours_l = sum(files[f]["lines"] for f, _ in same)
                    their_l = sum(theirs[g]["lines"] for _, g in same)
                    longer = [(f, g) for f, g in same if files[f]["lines"] > theirs[g]["lines"]]
                    longer_all += ["%s/%s (%d > %d)" % (case, f, files[f]["lines"], theirs[g]["lines"])
                                   for f, g in longer]
                    row += "  |        %6d (%d frames: %d/%d, %d longer)" % (
                        _sum(theirs, "lines"), len(same), ours_l, their_l, len(longer))
            print(row, file=file)
        row = "%-40s %5d %6d %6d %5d" % ("TOTAL", tot["files"], tot["lines"], tot["temps"], tot["dels"])
        if old:
            row += "  |         %6d %6d %5d" % (tot_old["lines"], tot_old["temps"], tot_old["dels"])
        print(row, file=file)
        if prior:
            print("files longer than the prior tool's: %d%s" % (
                len(longer_all), "".join("\n  " + x for x in longer_all)), file=file)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", action="store_true", help="the torch test programs")
    parser.add_argument("--models", action="store_true", help="the bench/models.py --quick models")
    parser.add_argument("--only", help="comma-separated program names (with --programs)")
    parser.add_argument("--prior", metavar="PYTHON", help="interpreter with depyf and torch")
    parser.add_argument("--prior-from", metavar="JSON",
                        help="take the prior tool's figures from an earlier run's --json")
    parser.add_argument("--json", metavar="OUT")
    parser.add_argument("--compare", metavar="OLD_JSON")
    parser.add_argument("--keep", metavar="DIR", help="keep the dumps under DIR")
    parser.add_argument("--collect", metavar="DIR",
                        help="run nothing: count the dumps an earlier --keep DIR run left")
    parser.add_argument("--worker-programs", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--worker-model", help=argparse.SUPPRESS)
    parser.add_argument("--tool", default="pellucid", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker_model:
        _worker_model(args.worker_model, args.out)
        return 0
    if args.worker_programs:
        for line in run_programs(args.out, args.tool, args.only.split(",") if args.only else None):
            print(line, file=sys.stderr)
        return 0
    if args.collect:
        results = {}
        for tool in ("pellucid", "prior"):
            for group in ("programs", "models"):
                where = os.path.join(args.collect, tool, group)
                if os.path.isdir(where):
                    if tool == "pellucid":
                        results[group] = collect(where)
                    else:
                        results.setdefault("prior", {})[group] = collect(where)
        args.keep = args.collect
        return _finish(args, results, args.collect)
    if not (args.programs or args.models):
        parser.error("say --programs and/or --models")
    root = args.keep or tempfile.mkdtemp(prefix="pellucid-readability-")
    results: Dict[str, Any] = {}
    tools = [("pellucid", sys.executable)] + ([("prior", args.prior)] if args.prior else [])
    for tool, python in tools:
        for group in ("programs", "models"):
            if not getattr(args, group):
                continue
            out = os.path.join(root, tool, group)
            os.makedirs(out, exist_ok=True)
            if group == "programs":
                cmd = [python, __file__, "--worker-programs", "--tool",
                       "pellucid" if tool == "pellucid" else "depyf", "--out", out]
                if args.only:
                    cmd += ["--only", args.only]
                env = dict(os.environ)
                if tool == "pellucid":
                    env["PYTHONPATH"] = os.path.join(ROOT, "src")
                done = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True)
                if done.stderr.strip():
                    print("%s %s: %s" % (tool, group, done.stderr.strip()[-2000:]), file=sys.stderr)
            else:
                run_models(out, python, "pellucid" if tool == "pellucid" else "depyf")
            if tool == "pellucid":
                results[group] = collect(out)
            else:
                results.setdefault("prior", {})[group] = collect(out)
    return _finish(args, results, root)


def _finish(args: Any, results: Dict[str, Any], root: str) -> int:
    if args.prior_from:
        with open(args.prior_from, encoding="utf-8") as fh:
            results["prior"] = json.load(fh).get("prior", {})
    old = None
    if args.compare:
        with open(args.compare, encoding="utf-8") as fh:
            old = json.load(fh)
    report(results, old)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1, sort_keys=True)
    if not args.keep:
        import shutil
        shutil.rmtree(root, ignore_errors=True)
    else:
        print("dumps kept under %s" % root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
