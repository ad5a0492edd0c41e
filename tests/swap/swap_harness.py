"""Parent side of the swap suite: run :mod:`swap_runner` children and compare their outcomes.

For one target, :func:`run_target` starts two children of the running interpreter at once, each
in its own fresh temporary directory (CPython tests write scratch files into the current
directory): one runs the tests on the original code, one after swapping in
``pellucid.recompile``'d code.  Each child is time-boxed (``PELLUCID_SWAP_TIMEOUT`` seconds,
default 300) and killed with its whole process group when over.  Their per-test-id outcomes are
compared by :func:`compare_outcomes`: every test that passed on the original code must pass on
the swapped code.  Tests that regressed are run once more, alone, on swapped code; those that
pass then are reported as flaky instead of regressed.

The environment variable ``PELLUCID_SWAP_MODE=identity`` makes the "swapped" child use each
function's own code, which checks the harness without the decompiler.

The pure parts (:func:`parse_records`, :func:`compare_outcomes`) have unit tests in
``test_swap_harness.py``; ``bench/swap_report.py`` uses this module for a table over all targets.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "swap_runner.py")
MISSING = "missing"
"""Outcome given to a test id that one run has and the other has not."""

DEFAULT_TIMEOUT = float(os.environ.get("PELLUCID_SWAP_TIMEOUT", "300"))


def swap_mode() -> str:
    """``swap``, or ``identity`` when ``PELLUCID_SWAP_MODE`` asks for the harness check."""
    return "identity" if os.environ.get("PELLUCID_SWAP_MODE") == "identity" else "swap"


@dataclass
class ChildRun:
    """What one runner child reported."""

    mode: str
    meta: Dict[str, Any] = field(default_factory=dict)
    swap: Optional[Dict[str, Any]] = None
    done: Optional[Dict[str, Any]] = None
    fatal: Optional[str] = None
    outcomes: Dict[str, str] = field(default_factory=dict)
    details: Dict[str, str] = field(default_factory=dict)
    returncode: Optional[int] = None
    timed_out: bool = False
    seconds: float = 0.0
    log_tail: str = ""
    running: Optional[str] = None
    """The test that had started and not finished when the records end."""

    @property
    def complete(self) -> bool:
        """Whether the child ran every test and said so."""
        return self.done is not None and not self.timed_out and self.fatal is None

    def problem(self) -> Optional[str]:
        """Why the run is unusable or incomplete, or None."""
        during = f" while running {self.running}" if self.running else ""
        if self.timed_out:
            return f"{self.mode} run timed out after {self.seconds:.0f} s{during}"
        if self.fatal:
            return f"{self.mode} run failed{during}:\n{self.fatal}"
        if self.done is None:
            return (f"{self.mode} run died (exit status {self.returncode}) after "
                    f"{len(self.outcomes)} tests{during}; output ends:\n{self.log_tail}")
        return None


def parse_records(lines: Iterable[str], run: ChildRun) -> ChildRun:
    """Fill ``run`` from a child's record lines; a torn last line (the child died) is ignored."""
    for line in lines:
        try:
            record = ast.literal_eval(line)
        except (SyntaxError, ValueError):
            continue
        kind = record[0]
        if kind == "start":
            run.running = record[1]
        elif kind == "outcome":
            _, test_id, outcome, detail = record
            run.outcomes[test_id] = outcome
            if run.running == test_id:
                run.running = None
            if detail:
                run.details[test_id] = detail
        elif kind == "meta":
            run.meta = record[1]
        elif kind == "swap":
            run.swap = record[1]
        elif kind == "done":
            run.done = record[1]
        elif kind == "fatal":
            run.fatal = record[1]
    return run


@dataclass
class Comparison:
    """Per-test-id comparison of an original run with a swapped run."""

    regressed: Dict[str, Tuple[str, str]] = field(default_factory=dict)
    """Tests that passed originally and did not after swapping: id -> (original, swapped)."""
    fixed: List[str] = field(default_factory=list)
    """Tests that did not pass originally but passed after swapping."""
    only_swapped: List[str] = field(default_factory=list)
    """Test ids only the swapped run has (e.g. a fixture error that hid a whole class)."""
    passed: int = 0
    """How many tests passed originally."""


def compare_outcomes(original: Dict[str, str], swapped: Dict[str, str]) -> Comparison:
    """Compare two runs' outcomes by test id; a test missing after swapping has regressed."""
    result = Comparison()
    for test_id, before in sorted(original.items()):
        after = swapped.get(test_id, MISSING)
        if before == "pass":
            result.passed += 1
            if after != "pass":
                result.regressed[test_id] = (before, after)
        elif after == "pass":
            result.fixed.append(test_id)
    result.only_swapped = sorted(set(swapped) - set(original))
    return result


_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Failure|Exit|Interrupt|Warning)\b")


def error_line(detail: str) -> str:
    """The ``SomeError: message`` line of a traceback (its last line if there is none)."""
    lines = detail.strip().splitlines()
    for line in reversed(lines):
        if _EXCEPTION_LINE.match(line):
            return line
    return lines[-1] if lines else ""


def pellucid_path() -> Optional[str]:
    """The folder to put on ``PYTHONPATH`` for the child to import the same pellucid as we would."""
    spec = importlib.util.find_spec("pellucid")
    if spec is not None and spec.submodule_search_locations:
        return os.path.dirname(os.path.abspath(list(spec.submodule_search_locations)[0]))
    source = os.path.join(os.path.dirname(os.path.dirname(HERE)), "src")
    return source if os.path.isdir(os.path.join(source, "pellucid")) else None


def _site_dirs() -> List[str]:
    dirs = list(getattr(site, "getsitepackages", lambda: [])())
    user = getattr(site, "getusersitepackages", lambda: None)()
    return [os.path.abspath(d) for d in dirs + ([user] if user else [])]


def child_env() -> Dict[str, str]:
    """The child's environment: ours, plus pellucid's folder on ``PYTHONPATH`` if it needs it.

    A pellucid installed in site-packages is found by the child anyway (same interpreter), and
    putting site-packages on ``PYTHONPATH`` would let it shadow the standard library.
    """
    env = dict(os.environ)
    path = pellucid_path()
    if path and os.path.abspath(path) not in _site_dirs():
        env["PYTHONPATH"] = os.pathsep.join(p for p in (path, env.get("PYTHONPATH")) if p)
    env.pop("PELLUCID_SWAP_MODE", None)
    return env


class Child:
    """A running runner child in its own temporary directory and process group."""

    def __init__(self, target: str, mode: str, only: Optional[Sequence[str]] = None,
                 python: str = sys.executable) -> None:
        self.mode = mode
        self.workdir = tempfile.mkdtemp(prefix=f"pellucid-swap-{target.replace('.', '_')}-")
        self.output = os.path.join(self.workdir, "records.txt")
        self.log = os.path.join(self.workdir, "child.log")
        command = [python, RUNNER, target, "--mode", mode, "--output", self.output]
        if only:
            only_file = os.path.join(self.workdir, "only.txt")
            with open(only_file, "w", encoding="utf-8") as handle:
                handle.write("".join(f"{test_id}\n" for test_id in only))
            command += ["--only", only_file]
        self.started = time.perf_counter()
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                command, cwd=self.workdir, env=child_env(), stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )

    def finish(self, deadline: float) -> ChildRun:
        """Wait until ``deadline`` (a ``time.perf_counter`` value), kill if needed, and parse."""
        run = ChildRun(self.mode)
        try:
            run.returncode = self.process.wait(timeout=max(0.0, deadline - time.perf_counter()))
        except subprocess.TimeoutExpired:
            run.timed_out = True
            self._kill()
        run.seconds = time.perf_counter() - self.started
        self._kill()  # leftovers the tests may have started
        if os.path.exists(self.output):
            with open(self.output, encoding="utf-8", errors="replace") as handle:
                parse_records(handle, run)
        run.log_tail = _tail(self.log)
        shutil.rmtree(self.workdir, ignore_errors=True)
        return run

    def _kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()


def _tail(path: str, size: int = 3000) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - size))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def run_children(target: str, modes: Sequence[str], timeout: float = DEFAULT_TIMEOUT,
                 parallel: bool = True) -> List[ChildRun]:
    """Run one child per mode for ``target`` (at the same time if ``parallel``)."""
    if parallel:
        children = [Child(target, mode) for mode in modes]
        deadline = time.perf_counter() + timeout
        return [child.finish(deadline) for child in children]
    return [Child(target, mode).finish(time.perf_counter() + timeout) for mode in modes]


@dataclass
class TargetReport:
    """Everything the swap suite learnt about one target on the running interpreter."""

    target: str
    python: str
    original: ChildRun
    swapped: ChildRun
    comparison: Comparison
    flaky: List[str] = field(default_factory=list)

    def swap_failures(self) -> List[Tuple[str, str]]:
        """(function, error) for every function that could not be swapped."""
        failures = list((self.swapped.swap or {}).get("failures", []))
        for item in (self.swapped.done or {}).get("failures", []):
            if tuple(item) not in {tuple(f) for f in failures}:
                failures.append(item)
        return [tuple(item) for item in failures]

    def problems(self) -> List[str]:
        """Everything wrong, one message each; empty when the target passes the suite."""
        out = []
        for run in (self.original, self.swapped):
            problem = run.problem()
            if problem:
                out.append(problem)
        if self.swapped.swap is None and not self.swapped.fatal:
            out.append("the swapped run never reported its swap")
        failures = self.swap_failures()
        if failures:
            lines = "\n".join(f"  {name}: {error}" for name, error in failures[:50])
            more = f"\n  ... and {len(failures) - 50} more" if len(failures) > 50 else ""
            out.append(f"{len(failures)} functions could not be swapped:\n{lines}{more}")
        if self.comparison.regressed:
            out.append(self._regressions_text())
        return out

    def _regressions_text(self, limit: int = 30) -> str:
        items = sorted(self.comparison.regressed.items())
        lines = []
        for test_id, (before, after) in items[:limit]:
            last = error_line(self.swapped.details.get(test_id, ""))
            lines.append(f"  {test_id}: {before} -> {after}  {last[:200]}")
        more = f"\n  ... and {len(items) - limit} more" if len(items) > limit else ""
        return (f"{len(items)} of {self.comparison.passed} tests that passed on the original "
                f"code did not pass after swapping:\n" + "\n".join(lines) + more)

    def counts(self) -> Dict[str, Any]:
        """The numbers a summary table shows."""
        swap = self.swapped.swap or {}
        done = self.swapped.done or {}
        return {
            "target": self.target, "python": self.python,
            "functions": swap.get("functions", 0),
            "swapped": swap.get("functions", 0) - swap.get("failed", 0) if self.swapped.swap else 0,
            "closures": swap.get("closures", 0),
            "hook_swapped": done.get("hook_swapped", 0),
            "no_bytecode": len(swap.get("no_bytecode", [])),
            "tests": len(self.original.outcomes), "passed": self.comparison.passed,
            "regressed": len(self.comparison.regressed), "flaky": len(self.flaky),
            "original_s": round(self.original.seconds, 1),
            "swapped_s": round(self.swapped.seconds, 1),
        }

    def summary(self) -> str:
        """One line of counts."""
        c = self.counts()
        return (f"{c['target']} (Python {c['python']}): swapped {c['swapped']}/{c['functions']} "
                f"functions (+{c['closures']} closures, +{c['hook_swapped']} in re-executed "
                f"modules), {c['no_bytecode']} without bytecode; {c['passed']} tests passed "
                f"originally, {c['regressed']} regressed, {c['flaky']} flaky; "
                f"{c['original_s']} s / {c['swapped_s']} s")

    def as_dict(self) -> Dict[str, Any]:
        """Machine-readable form (for ``PELLUCID_SWAP_REPORT_DIR`` and bench/swap_report.py)."""
        return {
            **self.counts(),
            "swap_failures": [list(item) for item in self.swap_failures()],
            "no_bytecode_list": [list(item) for item in (self.swapped.swap or {}).get("no_bytecode", [])],
            "regressed_ids": {k: list(v) for k, v in sorted(self.comparison.regressed.items())},
            "flaky_ids": list(self.flaky),
            "problems": self.problems(),
            "hooked_modules": (self.swapped.done or {}).get("hooked_modules", []),
            "per_module": (self.swapped.swap or {}).get("modules", {}),
            "original_outcomes": _tally(self.original.outcomes),
            "swapped_outcomes": _tally(self.swapped.outcomes),
            "swap_seconds": (self.swapped.swap or {}).get("seconds"),
        }


def _tally(outcomes: Dict[str, str]) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for outcome in outcomes.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


def run_target(target: str, mode: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT,
               parallel: bool = True, rerun: bool = True) -> TargetReport:
    """Run ``target``'s tests on original and swapped code and compare them (see module doc)."""
    mode = mode or swap_mode()
    original, swapped = run_children(target, ("original", mode), timeout, parallel)
    comparison = compare_outcomes(original.outcomes, swapped.outcomes)
    report = TargetReport(target, sys.version.split()[0], original, swapped, comparison)
    if rerun and comparison.regressed and swapped.complete:
        again = Child(target, mode, only=sorted(comparison.regressed)).finish(
            time.perf_counter() + timeout)
        report.flaky = sorted(t for t in comparison.regressed if again.outcomes.get(t) == "pass")
        for test_id in report.flaky:
            del comparison.regressed[test_id]
    return report
