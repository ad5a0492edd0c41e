"""Decompiler linearity: CPU time per instruction of generated functions of growing size.

For each shape (below) a function of about 1k, 10k, 30k and 100k instructions is generated as
source, compiled, and decompiled with ``pellucid.decompile(code, verify=False)`` (the decompile
step alone: structuring, clean-up passes and unparse; not the compile-back and verification of
``verify=True``).  CPU time (``time.process_time``, median of ``--repeat``) is reported per
instruction, with the growth exponent ``k`` of ``time ~ instructions**k`` fitted (least squares,
log-log) over the sizes measured: 1.0 is linear, 2.0 quadratic.

Shapes: ``straight`` (assignments), ``elif`` (one long if/elif chain), ``loops`` (many for and
while loops), ``try`` (try/except nested three deep, repeated), ``literals`` (big list, dict and
set displays of non-constant items), ``boolean`` (long and/or expressions), ``calls`` (nested
calls and attribute chains), ``mixed`` (bench/speed.py's synthetic function).

Exit status 1 when an exponent exceeds ``--max-exponent`` (default 1.25) or a decompile fails,
unless ``--no-check``::

    python bench/speed_scaling.py
    python bench/speed_scaling.py elif try --sizes 1000 10000 --repeat 3
"""
from __future__ import annotations

import argparse
import dis
import math
import os
import statistics
import sys
import time
import types
from typing import Callable, Dict, List, Optional, Sequence, Tuple

SIZES = (1_000, 10_000, 30_000, 100_000)


def _straight(n: int) -> List[str]:
    out = []
    for i in range(n):
        out += ["    v%d = a * %d + b" % (i % 50, i), "    total += v%d - c" % (i % 50)]
    return out


def _elif(n: int) -> List[str]:
    out = ["    if a == 0:", "        total = 1"]
    for i in range(1, n):
        out += ["    elif a == %d:" % i, "        total = b + %d" % i]
    out += ["    else:", "        total = c"]
    return out


def _loops(n: int) -> List[str]:
    out = []
    for i in range(n):
        if i % 2:
            out += ["    for x in items:", "        total += x * %d" % i]
        else:
            out += ["    while total > %d:" % (i * 10 + 1000), "        total //= 2"]
    return out


def _try(n: int) -> List[str]:
    out = []
    for i in range(n):
        out += ["    try:",
                "        try:",
                "            try:",
                "                total += a / %d" % (i + 1),
                "            except ZeroDivisionError:",
                "                total = %d" % i,
                "        except (TypeError, ValueError) as e%d:" % (i % 10),
                "            total -= b",
                "    except Exception:",
                "        total = c"]
    return out


def _literals(n: int) -> List[str]:
    rows = max(1, n // 40)
    out = []
    per = 40
    for r in range(rows):
        out.append("    l%d = [%s]" % (r % 20, ", ".join("a + %d" % (r * per + j) for j in range(per))))
        out.append("    d%d = {%s}" % (r % 20, ", ".join("'k%d': b * %d" % (j, j) for j in range(per))))
        out.append("    s%d = {%s}" % (r % 20, ", ".join("c - %d" % j for j in range(per // 2))))
    return out


def _boolean(n: int) -> List[str]:
    out = []
    for i in range(n):
        terms = " or ".join("(a > %d and b < %d)" % (i + j, j) for j in range(8))
        out.append("    flag%d = %s" % (i % 20, terms))
        out.append("    if %s:" % " and ".join("x%d" % (j % 3) for j in range(6)).replace(
            "x0", "a").replace("x1", "b").replace("x2", "c"))
        out.append("        total += %d" % i)
    return out


def _calls(n: int) -> List[str]:
    out = []
    for i in range(n):
        out.append("    total += f(g(a, b.c.d(%d), key=h(c)), *items, **kw)[%d].e" % (i, i % 5))
    return out


def _mixed(n: int) -> List[str]:
    out = []
    for i in range(n):
        kind = i % 5
        if kind == 0:
            out += ["    v%d = a * %d + b" % (i % 50, i), "    total += v%d - c" % (i % 50)]
        elif kind == 1:
            out += ["    if total > %d:" % i, "        total -= %d" % (i % 97), "    else:",
                    "        total += b * %d" % (i % 13)]
        elif kind == 2:
            out += ["    for item in items:", "        total += item * %d" % (i % 31)]
        elif kind == 3:
            out += ["    while total > %d:" % (i * 10 + 1000), "        total //= 2"]
        else:
            out += ["    if a and b > %d:" % (i % 7), "        items.append(total %% %d)" % (i + 1),
                    "        items.pop()"]
    return out


SHAPES: Dict[str, Callable[[int], List[str]]] = {
    "straight": _straight, "elif": _elif, "loops": _loops, "try": _try,
    "literals": _literals, "boolean": _boolean, "calls": _calls, "mixed": _mixed,
}


def shape_source(shape: str, blocks: int) -> str:
    """Source of one function ``generated(a, b, c, ...)`` made of ``blocks`` units of ``shape``."""
    head = ["def generated(a, b, c, f=None, g=None, h=None, items=(), kw={}):", "    total = 0"]
    return "\n".join(head + SHAPES[shape](blocks) + ["    return total"]) + "\n"


def count_instructions(code: types.CodeType) -> int:
    """Instructions in ``code`` and all code nested in it."""
    own = sum(1 for _ in dis.get_instructions(code))
    return own + sum(count_instructions(c) for c in code.co_consts if isinstance(c, types.CodeType))


def _compiled(source: str) -> types.CodeType:
    module = compile(source, "<generated>", "exec")
    return next(c for c in module.co_consts if isinstance(c, types.CodeType))


def generated_function(shape: str, instructions: int) -> types.CodeType:
    """A compiled function of ``shape`` with roughly ``instructions`` instructions."""
    probe = count_instructions(_compiled(shape_source(shape, 40)))
    per_block = max(1.0, probe / 40)
    return _compiled(shape_source(shape, max(1, round(instructions / per_block))))


def cpu_median(call: Callable[[], object], repeat: int) -> Tuple[float, Optional[str]]:
    """Median CPU seconds of ``repeat`` calls, and the first error's text (then no median)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        try:
            call()
        except Exception as exc:  # (reported, the sweep goes on)
            return time.process_time() - start, "%s: %s" % (type(exc).__name__, str(exc)[:120])
        times.append(time.process_time() - start)
    return statistics.median(times), None


def exponent(points: Sequence[Tuple[int, float]]) -> float:
    """Least-squares slope of log(time) over log(instructions)."""
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(max(t, 1e-9)) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else float("nan")


def measure(shape: str, sizes: Sequence[int], repeat: int,
            decompile: Callable[[types.CodeType], str]) -> Tuple[List[Tuple[int, float]], List[str]]:
    """(instructions, CPU seconds) per size of ``shape``, and the errors."""
    points, errors = [], []
    for size in sizes:
        try:
            code = generated_function(shape, size)
        except (RecursionError, MemoryError, SyntaxError) as exc:  # (a chain nested too deep)
            print("  %-9s %7d instr  CPython's compile() fails: %s" % (shape, size, exc), flush=True)
            break
        n = count_instructions(code)
        seconds, error = cpu_median(lambda: decompile(code), repeat)
        if error:
            errors.append("%s %d: %s" % (shape, n, error))
            print("  %-9s %7d instr  FAILED after %.2f s: %s" % (shape, n, seconds, error), flush=True)
            break
        points.append((n, seconds))
        print("  %-9s %7d instr  %8.3f s CPU  %7.2f us/instr" % (shape, n, seconds, seconds / n * 1e6),
              flush=True)
    return points, errors


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("shapes", nargs="*", help="shapes (default: all): %s" % ", ".join(SHAPES))
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--repeat", type=int, default=3, help="median of N CPU timings")
    parser.add_argument("--max-exponent", type=float, default=1.25)
    parser.add_argument("--no-check", action="store_true", help="always exit 0")
    args = parser.parse_args(argv)
    import pellucid

    print("Python %s: pellucid.decompile(verify=False) CPU time by function size" % sys.version.split()[0])
    problems: List[str] = []
    rows = []
    pellucid.decompile(generated_function("mixed", 300), verify=False)  # (imports, caches)
    for shape in args.shapes or list(SHAPES):
        points, errors = measure(shape, args.sizes, args.repeat,
                                 lambda code: pellucid.decompile(code, verify=False))
        problems += errors
        if len(points) >= 2:
            k = exponent(points)
            rows.append((shape, k, points))
            if k > args.max_exponent:
                problems.append("%s: time grows as instructions**%.2f (limit %.2f)"
                                % (shape, k, args.max_exponent))
    print("\nshape      exponent  us/instr by size")
    for shape, k, points in rows:
        print("%-9s  %8.2f  %s" % (shape, k, "  ".join("%d:%.1f" % (n, t / n * 1e6) for n, t in points)))
    for problem in problems:
        print("PROBLEM: %s" % problem)
    return 1 if problems and not args.no_check else 0


if __name__ == "__main__":
    sys.exit(main())
