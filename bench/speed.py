"""Decompiler speed: functions per second, the cost relative to ``compile()``, and linearity.

Three measurements on the running Python:

1. ``pellucid.decompile`` over every distinct function of the swap suite's stdlib targets
   (``tests/swap/swap_targets.py``): functions per second, and the slowest ten;
2. the ratio of that time to CPython's ``compile()`` of the same functions' source text
   (``inspect.getsource`` + ``textwrap.dedent``; functions without source, or whose source does
   not compile alone, are left out of the ratio only).  ``pellucid.decompile`` verifies by
   default: it builds the structured form, compiles it back, checks it equivalent with
   ``pellucid.verify`` and renders the text.  The wall-time figures (best of ``--repeat``) are
   for that whole call; the CPU-time figures (``time.process_time``, median of ``--repeat``,
   robust on a loaded machine) are given for it and for the decompile step alone
   (``verify=False``: structuring, clean-up passes and unparse);
3. linearity: synthetic functions of about 1k, 10k and 30k instructions (assignments mixed with
   ``if``/``else``, ``for`` and ``while``, built as source and compiled) are decompiled, and the
   time per instruction at the largest size is compared with the smallest.

Exit status 1 when a stdlib function takes more than ``--limit`` seconds (default 1) or the time
per instruction grows more than ``--growth`` times (default 3) from 1k to 30k instructions, unless
``--no-check``::

    python bench/speed.py
    python bench/speed.py json email --repeat 3 --no-check
"""
from __future__ import annotations

import argparse
import dis
import inspect
import os
import signal
import sys
import textwrap
import time
import types
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Sequence, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "swap"))
import swap_targets  # noqa: E402

SIZES = (1_000, 10_000, 30_000)


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout("timed out")


def timed(call: Callable[[], Any], timeout: float = 0.0) -> Tuple[float, Optional[BaseException]]:
    """Seconds ``call()`` took and the exception it raised, if any; interrupted after ``timeout``."""
    use_alarm = timeout > 0 and hasattr(signal, "setitimer")
    previous = signal.signal(signal.SIGALRM, _alarm) if use_alarm else None
    if use_alarm:
        signal.setitimer(signal.ITIMER_REAL, timeout)
    error: Optional[BaseException] = None
    started = time.perf_counter()
    try:
        call()
    except Exception as exc:
        error = exc
    finally:
        elapsed = time.perf_counter() - started
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    return elapsed, error


def cpu_median(call: Callable[[], Any], repeat: int) -> Optional[float]:
    """Median CPU seconds (``time.process_time``) of ``repeat`` calls; None when one raises."""
    times = []
    for _ in range(max(1, repeat)):
        start = time.process_time()
        try:
            call()
        except Exception:
            return None
        times.append(time.process_time() - start)
    times.sort()
    mid = len(times) // 2
    return times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2


def best_of(call: Callable[[], Any], repeat: int, timeout: float) -> Tuple[float, Optional[BaseException]]:
    """The fastest of ``repeat`` timings (stops at the first error)."""
    best, error = timed(call, timeout)
    for _ in range(repeat - 1):
        if error is not None:
            break
        elapsed, error = timed(call, timeout)
        best = min(best, elapsed)
    return best, error


def function_source(fn: types.FunctionType) -> Optional[str]:
    """The function's own source text, dedented, or None when there is none that compiles."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        compile(source, fn.__code__.co_filename, "exec")
    except Exception:
        return None
    return source


@dataclass
class FunctionTiming:
    """Timing of one stdlib function."""

    name: str
    instructions: int
    decompile: float
    compile: Optional[float]
    error: Optional[str]
    decompile_cpu: Optional[float] = None  # the same call, CPU seconds
    step_cpu: Optional[float] = None  # decompile(verify=False), CPU seconds
    compile_cpu: Optional[float] = None


@dataclass
class StdlibSpeed:
    """Step 1 and 2 over all functions."""

    timings: List[FunctionTiming] = field(default_factory=list)

    @property
    def total(self) -> float:
        return sum(t.decompile for t in self.timings)

    def ratio(self) -> Optional[float]:
        """Decompile time / compile time over the functions that have source."""
        pairs = [(t.decompile, t.compile) for t in self.timings if t.compile]
        compile_time = sum(c for _, c in pairs)
        return sum(d for d, _ in pairs) / compile_time if compile_time else None

    def cpu_ratio(self, step: bool) -> Optional[float]:
        """CPU time of decompile (``step``: with ``verify=False``) / CPU time of compile, over
        the functions that have source and whose timings all succeeded."""
        rows = [t for t in self.timings
                if t.compile_cpu and t.decompile_cpu is not None and t.step_cpu is not None]
        compile_time = sum(t.compile_cpu for t in rows)  # type: ignore[misc]
        spent = sum((t.step_cpu if step else t.decompile_cpu) for t in rows)  # type: ignore[misc]
        return spent / compile_time if compile_time else None


def measure_stdlib(targets: Sequence[swap_targets.Target], decompile: Callable[..., str],
                   repeat: int, timeout: float) -> StdlibSpeed:
    """Time ``decompile`` and ``compile`` on every distinct function of ``targets``."""
    result = StdlibSpeed()
    for target in targets:
        for found in swap_targets.collect_target(target):
            for record in swap_targets.unique_codes(found.functions):
                fn = record.function
                elapsed, error = best_of(lambda: decompile(fn), repeat, timeout)
                source = function_source(fn)
                compile_time = compile_cpu = None
                decompile_cpu = step_cpu = None
                if error is None:
                    decompile_cpu = cpu_median(lambda: decompile(fn), repeat)
                    step_cpu = cpu_median(lambda: decompile(fn, verify=False), repeat)
                if source is not None:
                    filename = fn.__code__.co_filename
                    compile_time, _ = best_of(lambda: compile(source, filename, "exec"), repeat, 0)
                    compile_cpu = cpu_median(lambda: compile(source, filename, "exec"), max(3, repeat))
                result.timings.append(FunctionTiming(
                    record.key, _instruction_count(fn.__code__), elapsed, compile_time,
                    None if error is None else f"{type(error).__name__}: {error}",
                    decompile_cpu, step_cpu, compile_cpu))
    return result


def _instruction_count(code: types.CodeType) -> int:
    """Instructions in ``code`` and all code nested in it."""
    own = sum(1 for _ in dis.get_instructions(code))
    return own + sum(_instruction_count(c) for c in code.co_consts if isinstance(c, types.CodeType))


def synthetic_source(blocks: int) -> str:
    """Source of one function made of ``blocks`` small statement groups of mixed kinds."""
    lines = ["def synthetic(a, b, c):", "    total = 0", "    items = [a, b, c]"]
    for i in range(blocks):
        kind = i % 5
        if kind == 0:
            lines += [f"    v{i % 50} = a * {i} + b", f"    total += v{i % 50} - c"]
        elif kind == 1:
            lines += [f"    if total > {i}:", f"        total -= {i % 97}", "    else:",
                      f"        total += b * {i % 13}"]
        elif kind == 2:
            lines += ["    for item in items:", f"        total += item * {i % 31}"]
        elif kind == 3:
            lines += [f"    while total > {i * 10 + 1000}:", "        total //= 2"]
        else:
            lines += [f"    if a and b > {i % 7}:", f"        items.append(total % {i + 1})",
                      "        items.pop()"]
    lines.append("    return total")
    return "\n".join(lines) + "\n"


def synthetic_function(instructions: int) -> types.CodeType:
    """A compiled synthetic function with roughly ``instructions`` instructions."""
    probe = _function_code(synthetic_source(100))
    per_block = max(1.0, _instruction_count(probe) / 100)
    return _function_code(synthetic_source(max(1, round(instructions / per_block))))


def _function_code(source: str) -> types.CodeType:
    module = compile(source, "<synthetic>", "exec")
    return next(c for c in module.co_consts if isinstance(c, types.CodeType))


@dataclass
class LinearityPoint:
    """Decompile time of one synthetic function."""

    instructions: int
    seconds: float
    error: Optional[str]

    @property
    def per_instruction(self) -> float:
        return self.seconds / self.instructions


def measure_linearity(decompile: Callable[[Any], str], sizes: Sequence[int], repeat: int,
                      timeout: float) -> List[LinearityPoint]:
    """Decompile a synthetic function of each size."""
    points = []
    for size in sizes:
        code = synthetic_function(size)
        elapsed, error = best_of(lambda: decompile(code), repeat, timeout)
        points.append(LinearityPoint(_instruction_count(code), elapsed,
                                     None if error is None else f"{type(error).__name__}: {error}"))
    return points


def growth(points: Sequence[LinearityPoint]) -> float:
    """Time per instruction at the largest size over that at the smallest."""
    first, last = points[0], points[-1]
    return last.per_instruction / first.per_instruction if first.per_instruction else float("inf")


def report_stdlib(speed: StdlibSpeed, limit: float) -> List[str]:
    """Print steps 1 and 2; return the problems found."""
    timings = speed.timings
    failed = [t for t in timings if t.error]
    rate = len(timings) / speed.total if speed.total else float("inf")
    print(f"stdlib: {len(timings)} functions decompiled in {speed.total:.2f} s "
          f"= {rate:,.0f} functions/s ({len(failed)} raised)")
    ratio = speed.ratio()
    with_source = sum(1 for t in timings if t.compile)
    if ratio is not None:
        print(f"decompile / compile() time: {ratio:.1f}x (over the {with_source} functions with source)")
    full_cpu, step_cpu = speed.cpu_ratio(step=False), speed.cpu_ratio(step=True)
    if full_cpu is not None and step_cpu is not None:
        rows = [t for t in timings if t.compile_cpu and t.decompile_cpu is not None and t.step_cpu is not None]
        print(f"CPU time / compile() CPU time: decompile {full_cpu:.1f}x, decompile step alone "
              f"(verify=False) {step_cpu:.1f}x (over {len(rows)} functions; "
              f"compile() {sum(t.compile_cpu for t in rows):.2f} s CPU)")  # type: ignore[misc]
    print("slowest 10:")
    for t in sorted(timings, key=lambda t: -t.decompile)[:10]:
        note = f"  [{t.error[:60]}]" if t.error else ""
        print(f"  {t.decompile * 1000:9.1f} ms  {t.instructions:6} instr  {t.name}{note}")
    slow = [t for t in timings if t.decompile > limit]
    return [f"{t.name} took {t.decompile:.2f} s (limit {limit:g} s)" for t in slow]


def report_linearity(points: Sequence[LinearityPoint], max_growth: float) -> List[str]:
    """Print step 3; return the problems found."""
    print("linearity (synthetic functions):")
    for p in points:
        note = f"  [{p.error[:60]}]" if p.error else ""
        print(f"  {p.instructions:7} instr  {p.seconds:8.3f} s  {p.per_instruction * 1e6:8.2f} us/instr{note}")
    if any(p.error and "timed out" in p.error for p in points):
        return ["a synthetic function timed out: decompile time grows super-linearly"]
    if any(p.error for p in points):
        return ["a synthetic function failed to decompile, so linearity is unknown"]
    factor = growth(points)
    flag = "SUPER-LINEAR" if factor > max_growth else "ok"
    print(f"  time per instruction grows {factor:.2f}x from smallest to largest: {flag}")
    return [f"time per instruction grows {factor:.2f}x (limit {max_growth:g}x)"] if factor > max_growth else []


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("targets", nargs="*", help="swap targets to time (default: all)")
    parser.add_argument("--repeat", type=int, default=1, help="take the best of N timings")
    parser.add_argument("--limit", type=float, default=1.0, help="seconds allowed per stdlib function")
    parser.add_argument("--growth", type=float, default=3.0,
                        help="allowed growth of time per instruction from 1k to 30k instructions")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds after which one decompile is abandoned")
    parser.add_argument("--no-check", action="store_true", help="always exit 0")
    parser.add_argument("--skip-linearity", action="store_true")
    parser.add_argument("--skip-stdlib", action="store_true")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    """Run the measurements, print them, and check the limits."""
    args = parse_args(argv)
    import pellucid

    print(f"Python {sys.version.split()[0]}: pellucid.decompile speed")
    problems: List[str] = []
    if not args.skip_stdlib:
        targets = swap_targets.selected_targets(args.targets)
        speed = measure_stdlib(targets, pellucid.decompile, args.repeat, args.timeout)
        problems += report_stdlib(speed, args.limit)
    if not args.skip_linearity:
        points = measure_linearity(pellucid.decompile, SIZES, args.repeat, args.timeout)
        problems += report_linearity(points, args.growth)
    for problem in problems:
        print(f"PROBLEM: {problem}")
    return 1 if problems and not args.no_check else 0


if __name__ == "__main__":
    sys.exit(main())
