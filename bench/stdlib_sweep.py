"""Recompile every function of the standard library and ask the verifier about each.

For every importable pure-Python module of the running interpreter's standard library (every
``.py`` file under its ``lib/python3.X`` directory, packages included; see :func:`stdlib_modules`
for what is left out and why), every function the module defines (one per distinct code object,
found as the swap suite finds them: ``tests/swap/swap_targets.collect_functions``) goes through
what :func:`pellucid.recompile` does -- recompile, :func:`pellucid.verify.check_equivalent`,
and the fallback forms when the structured one is not accepted -- and is counted as:

* ``verified``: a form was accepted (``fallbacks`` counts those whose accepted text uses the
  state-machine fallback somewhere, whether the structurer gave up or the verifier refused the
  structured form -- ``refused`` counts the latter);
* ``raises``: recompiling raised (the decompiler failed on valid bytecode);
* ``not proven``: no form was accepted (``differs`` among them: the verifier found a difference
  in every form; the rest ran out of budget or met something it does not model), or the
  function took longer than ``--timeout`` seconds (``timeouts``).

Verifier time is the CPU time of all the checks of a function (``time.process_time``: on a busy
machine wall time mostly measures waiting), reported as p50/p99/max.  Each
module runs in its own child process (``--jobs`` at a time), so one that hangs or crashes on
import costs only itself.  Usage::

    python bench/stdlib_sweep.py                       # table per version, lists of problems
    python bench/stdlib_sweep.py --jobs 2 --json out.json
    python bench/stdlib_sweep.py json email.parser     # only these modules (and submodules)
    python bench/stdlib_sweep.py --package jinja2 --package networkx   # installed packages instead

``--package`` sweeps the modules of an installed package (its directory, walked as the stdlib's
is) instead of the standard library: the code users run is mostly not the stdlib's.

The goal (issue 15): 0 raises, 0 not proven, fallbacks under 0.1% of functions, verifier p99
under 50 ms and max under 1 s, on every version from 3.8.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Subtrees of the stdlib directory that are not modules of the library: CPython's own test suite
# and the test packages shipped inside some packages (importing them runs or registers tests;
# ``sys.stdlib_module_names`` leaves ``test`` out too), and third-party packages.
_NOT_LIBRARY = ("test", "site-packages", "dist-packages", "__pycache__")
_TEST_PARTS = frozenset({"test", "tests", "idle_test"})
# Modules that run a program when imported (they are scripts): skipped, with the reason.
_RUNS_ON_IMPORT = {
    "antigravity": "opens a web browser when imported",
    "idlelib.idle": "starts IDLE when imported",
    "idlelib.__main__": "starts IDLE when imported",
}


def stdlib_modules() -> Tuple[List[str], Dict[str, str]]:
    """Names of the stdlib's pure-Python modules, and those left out with the reason."""
    return _modules_under(sysconfig.get_paths()["stdlib"], [])


def package_modules(package: str) -> Tuple[List[str], Dict[str, str]]:
    """Names of an installed package's pure-Python modules, and those left out with the reason.

    ``package_modules("jinja2")`` lists ``jinja2``, ``jinja2.compiler``, ... without importing
    any of them (only the top-level package is located).
    """
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None:
        raise SystemExit("stdlib_sweep: no installed package named %r in this interpreter" % package)
    if not spec.submodule_search_locations:  # a single-file module
        return [package], {}
    return _modules_under(list(spec.submodule_search_locations)[0], package.split("."))


def _modules_under(base: str, prefix: List[str]) -> Tuple[List[str], Dict[str, str]]:
    names: List[str] = []
    left_out: Dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        rel = os.path.relpath(dirpath, base)
        parts = [] if rel == "." else rel.split(os.sep)
        if parts and (parts[0] in _NOT_LIBRARY or not os.path.exists(os.path.join(dirpath, "__init__.py"))):
            dirnames[:] = []
            continue
        if parts and _TEST_PARTS & set(parts):
            left_out[".".join(parts)] = "a test suite (not a library module)"
            dirnames[:] = []
            continue
        dirnames.sort()
        if not parts and not prefix:
            dirnames[:] = [d for d in dirnames if d not in _NOT_LIBRARY]
        for fn in sorted(filenames):
            if not fn.endswith(".py"):
                continue
            stem = fn[:-3]
            if not stem.isidentifier():
                continue
            if stem == "__init__":
                if not parts and not prefix:
                    continue
                name = ".".join(prefix + parts)
            else:
                name = ".".join(prefix + parts + [stem])
            if stem == "__main__":
                left_out[name] = "runs a program when imported (a package's __main__)"
            elif name in _RUNS_ON_IMPORT:
                left_out[name] = _RUNS_ON_IMPORT[name]
            elif stem in _TEST_PARTS or stem.startswith("test_"):
                left_out[name] = "a test suite (not a library module)"
            else:
                names.append(name)
    return sorted(names), left_out


# --------------------------------------------------------------------------- the child

class _Timeout(BaseException):
    """The per-function time limit (a BaseException: nothing in pellucid catches it)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def _size(code: Any) -> int:
    """Code units of ``code`` and of the code objects nested in it."""
    return len(code.co_code) // 2 + sum(_size(c) for c in code.co_consts if hasattr(c, "co_code"))


def _one(record: Any, timeout: float) -> Dict[str, Any]:
    from pellucid.decompiler.api import _checked_for
    from pellucid.decompiler.fallback import MARKER

    fn = record.function
    out: Dict[str, Any] = {"name": record.key, "instructions": _size(fn.__code__)}
    start = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        checked = _checked_for(fn.__code__, fn)
    except _Timeout:
        out["outcome"] = "timeout"
        out["detail"] = "more than %g s" % timeout
        return out
    except Exception as exc:
        out["outcome"] = "raises"
        out["detail"] = "%s: %s" % (type(exc).__name__, exc)
        return out
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        out["seconds"] = time.perf_counter() - start
    attempts = checked.attempts
    out["verify_seconds"] = sum(a.seconds for a in attempts)
    work = re.search(r"\((\d+) steps, (\d+) states\)", attempts[0].reason)
    if work and checked.forced is None:
        # (of the first form's outermost code object: see pellucid.verify's budget)
        from pellucid.bytecode.normalize import normalize

        out["steps"], out["states"] = int(work.group(1)), int(work.group(2))
        out["size"] = len(normalize(fn.__code__)) + len(normalize(checked.result.code))
    out["attempts"] = [[a.form, a.ok, a.reason[:400], round(a.seconds, 4)] for a in attempts]
    if checked.result is None:
        out["outcome"] = "not proven"
        out["differs"] = all(a.reason.startswith("differs") for a in attempts)
        out["detail"] = checked.refusal(fn.__code__.co_name)[:600]
    else:
        out["outcome"] = "verified"
        out["fallback"] = MARKER in checked.result.source
        out["refused"] = not attempts[0].ok
        if out["refused"]:
            out["detail"] = "structured form refused: " + attempts[0].reason[:400]
    return out


def child(module_name: str, timeout: float) -> None:
    """Import one module, sweep its functions, print one JSON object per line."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "swap"))
    proto = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # a module printing on import must not garble the protocol
    import warnings
    warnings.simplefilter("ignore")
    import importlib

    import swap_targets
    import pellucid  # noqa: F401

    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 120)
    try:
        module = importlib.import_module(module_name)
    except _Timeout:
        proto.write(json.dumps({"module": module_name, "skipped": "import took more than 120 s"}) + "\n")
        return
    except BaseException as exc:
        proto.write(json.dumps({"module": module_name, "skipped": "cannot be imported: %s: %s"
                                % (type(exc).__name__, str(exc)[:200])}) + "\n")
        return
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if not swap_targets.is_pure_python(module):
        proto.write(json.dumps({"module": module_name, "skipped": "not pure Python"}) + "\n")
        return
    found = swap_targets.collect_functions([module])[0]
    records = swap_targets.unique_codes(found.functions)
    proto.write(json.dumps({"module": module_name, "functions": len(records)}) + "\n")
    proto.flush()
    for record in records:
        try:
            row = _one(record, timeout)
        except BaseException as exc:  # the sweep itself must go on
            row = {"name": record.key, "outcome": "raises",
                   "detail": "sweep: %s: %s" % (type(exc).__name__, exc)}
        row["module"] = module_name
        proto.write(json.dumps(row) + "\n")
        proto.flush()


# --------------------------------------------------------------------------- the parent

def _run_module(name: str, timeout: float) -> Tuple[str, List[Dict[str, Any]], Optional[str]]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "src")] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--timeout", str(timeout)]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                              universal_newlines=True, timeout=max(600.0, 50 * timeout))
        out, err, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode()
        err, rc = "module timed out", -1
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    problem = None
    if rc != 0:
        problem = "child exited with %s: %s" % (rc, err.strip().splitlines()[-1:] or "")
    return name, rows, problem


def _percentile(values: List[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    k = min(len(values) - 1, max(0, int(round(q * (len(values) - 1)))))
    return values[k]


def summarise(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    fns = [r for r in rows if "outcome" in r]
    times = [r["verify_seconds"] for r in fns if "verify_seconds" in r]
    verified = [r for r in fns if r["outcome"] == "verified"]
    not_proven = [r for r in fns if r["outcome"] in ("not proven", "timeout")]
    return {
        "functions": len(fns),
        "verified": len(verified),
        "fallbacks": sum(1 for r in verified if r.get("fallback")),
        "refused": sum(1 for r in verified if r.get("refused")),
        "raises": sum(1 for r in fns if r["outcome"] == "raises"),
        "not proven": len(not_proven),
        "differs": sum(1 for r in not_proven if r.get("differs")),
        "timeouts": sum(1 for r in fns if r["outcome"] == "timeout"),
        "verify p50 ms": round(1000 * _percentile(times, 0.50), 2),
        "verify p99 ms": round(1000 * _percentile(times, 0.99), 2),
        "verify max ms": round(1000 * max(times or [0.0]), 1),
        # (the share of its budget the outermost code object of the first form used, at most)
        "budget used max %": round(100 * max([_budget_share(r) for r in fns] or [0.0]), 1),
    }


def _budget_share(row: Dict[str, Any]) -> float:
    from pellucid.verify import (STATES_BASE, STATES_PER_INSTRUCTION, STEPS_BASE,
                                 STEPS_PER_INSTRUCTION)
    if "steps" not in row or "size" not in row:
        return 0.0
    return max(row["steps"] / (STEPS_BASE + STEPS_PER_INSTRUCTION * row["size"]),
               row["states"] / (STATES_BASE + STATES_PER_INSTRUCTION * row["size"]))


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", help="only these modules and their submodules")
    ap.add_argument("--jobs", type=int, default=1, help="modules swept at once (processes)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per function")
    ap.add_argument("--json", help="write every row and the summary to this file")
    ap.add_argument("--slowest", type=int, default=10, help="list the N slowest verifications")
    ap.add_argument("--package", action="append", default=[],
                    help="sweep this installed package instead of the stdlib (repeatable)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.timeout)
        return 0
    # (the children get this checkout's src on their path; the summary needs it here too)
    sys.path.insert(0, os.path.join(ROOT, "src"))
    if args.package:
        names, left_out = [], {}
        for package in args.package:
            got, out = package_modules(package)
            names += got
            left_out.update(out)
    else:
        names, left_out = stdlib_modules()
    if args.modules:
        names = [n for n in names if any(n == m or n.startswith(m + ".") for m in args.modules)]
    version = "%d.%d" % sys.version_info[:2]
    rows: List[Dict[str, Any]] = []
    skipped: Dict[str, str] = {}
    start = time.time()
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for name, got, problem in pool.map(lambda n: _run_module(n, args.timeout), names):
            for r in got:
                if "skipped" in r:
                    skipped[name] = r["skipped"]
                elif "outcome" in r:
                    rows.append(r)
            if problem and name not in skipped:
                skipped[name] = problem if not got else "(partly swept) " + problem
            print("%-40s %4d functions%s" % (name, sum(1 for r in got if "outcome" in r),
                                             ("  " + skipped[name][:80]) if name in skipped else ""),
                  file=sys.stderr, flush=True)
    summary = summarise(rows)
    summary["python"] = version
    summary["modules"] = len(names) - len(skipped)
    summary["seconds"] = round(time.time() - start, 1)
    print("\nPython %s: %d modules swept (%d skipped, %d left out)" % (
        version, summary["modules"], len(skipped), len(left_out)))
    keys = ["functions", "verified", "fallbacks", "refused", "raises", "not proven", "differs",
            "timeouts", "verify p50 ms", "verify p99 ms", "verify max ms", "budget used max %"]
    print(" | ".join(keys))
    print(" | ".join(str(summary[k]) for k in keys))
    n = max(1, summary["functions"])
    print("fallbacks %.3f%% of functions" % (100.0 * summary["fallbacks"] / n))
    for title, pick in (("raises", lambda r: r["outcome"] == "raises"),
                        ("not proven", lambda r: r["outcome"] in ("not proven", "timeout")),
                        ("fallback", lambda r: r.get("fallback")),
                        ("structured form refused", lambda r: r.get("refused"))):
        chosen = [r for r in rows if pick(r)]
        if chosen:
            print("\n%s (%d):" % (title, len(chosen)))
            for r in chosen:
                detail = r.get("detail") or ""
                if not detail and r.get("attempts"):
                    detail = r["attempts"][-1][0] + ": " + r["attempts"][-1][2]
                print("  %s: %s" % (r["name"], detail[:300]))
    timed = sorted((r for r in rows if "verify_seconds" in r), key=lambda r: -r["verify_seconds"])
    if args.slowest and timed:
        print("\nslowest verifications:")
        for r in timed[:args.slowest]:
            print("  %8.1f ms  %s (%d instructions)" % (1000 * r["verify_seconds"], r["name"],
                                                       r.get("instructions", 0)))
    if skipped:
        print("\nskipped modules (%d):" % len(skipped))
        for name in sorted(skipped):
            print("  %s: %s" % (name, skipped[name]))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"summary": summary, "rows": rows, "skipped": skipped,
                       "left_out": left_out}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
