"""Swap-suite table for the running interpreter, without pytest.

Runs the same children as ``tests/swap`` (see ``tests/swap/swap_harness.py``) for every target,
or for the targets named, and prints per target: functions found and swapped, closures, functions
swapped in re-executed module copies, members without bytecode, tests, regressions, and the time
each child took::

    python bench/swap_report.py                     # all targets, decompiled code
    python bench/swap_report.py json email --json swap.json
    python bench/swap_report.py --list-no-bytecode  # also name what has no bytecode

Exit status 1 when any target has a problem (a function that did not swap, a regressed test, a
child that crashed or timed out).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "swap"))
import swap_harness  # noqa: E402
import swap_targets  # noqa: E402

COLUMNS = (
    ("target", "{:<14}"), ("functions", "{:>9}"), ("swapped", "{:>7}"), ("closures", "{:>8}"),
    ("hook_swapped", "{:>12}"), ("no_bytecode", "{:>11}"), ("tests", "{:>6}"), ("passed", "{:>6}"),
    ("regressed", "{:>9}"), ("flaky", "{:>5}"), ("original_s", "{:>10}"), ("swapped_s", "{:>9}"),
)


def format_row(values: Dict[str, Any]) -> str:
    """One table line."""
    return "  ".join(fmt.format(values.get(name, "")) for name, fmt in COLUMNS)


def header() -> str:
    """The table's header line."""
    return "  ".join(fmt.format(name) for name, fmt in COLUMNS)


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("targets", nargs="*", help="targets to run (default: all available)")
    parser.add_argument("--mode", choices=("swap", "identity"), default=None,
                        help="identity swaps each function for its own code (harness check)")
    parser.add_argument("--json", metavar="PATH", help="write every report as JSON here")
    parser.add_argument("--timeout", type=float, default=swap_harness.DEFAULT_TIMEOUT,
                        help="seconds per child run")
    parser.add_argument("--serial", action="store_true",
                        help="run the original and swapped child one after the other")
    parser.add_argument("--list-no-bytecode", action="store_true",
                        help="print what has no Python bytecode, per target")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    """Run every selected target and print the table."""
    args = parse_args(argv)
    targets = swap_targets.selected_targets(args.targets)
    print(f"Python {sys.version.split()[0]}, mode {args.mode or swap_harness.swap_mode()}")
    print(header())
    reports = []
    started = time.perf_counter()
    for target in targets:
        report = swap_harness.run_target(target.name, args.mode, args.timeout, not args.serial)
        reports.append(report)
        print(format_row(report.counts()), flush=True)
    print(f"total: {sum(r.counts()['functions'] for r in reports)} functions, "
          f"{time.perf_counter() - started:.0f} s")
    bad = [r for r in reports if r.problems()]
    for report in reports:
        if args.list_no_bytecode:
            for module, name, reason in (report.swapped.swap or {}).get("no_bytecode", []):
                print(f"  no bytecode: {module}.{name}: {reason}")
        if report.flaky:
            print(f"{report.target}: flaky (passed when re-run): {', '.join(report.flaky)}")
    for report in bad:
        print(f"\n== {report.target}")
        print("\n\n".join(report.problems()))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump([r.as_dict() for r in reports], handle, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
