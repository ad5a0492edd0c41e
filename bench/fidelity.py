"""Bytecode fidelity: how often ``pellucid.recompile`` gives back the very same bytecode.

For every function of the swap suite's stdlib targets (``tests/swap/swap_targets.py``; one
entry per distinct code object), on the running Python::

    new = pellucid.recompile(fn)

is compared with ``fn.__code__`` after normalisation (:func:`normalise`): the instruction
sequence from :func:`dis.get_instructions`, as opname plus argument value, with

* ``NOP``, ``EXTENDED_ARG``, ``CACHE`` and ``RESUME`` dropped, and line numbers and source
  positions ignored; 3.14's borrowed loads (``LOAD_FAST_BORROW``) read as plain ones;
* jump targets given as the index of the target instruction in that filtered sequence, not as a
  byte offset (so a dropped ``NOP`` or an ``EXTENDED_ARG`` does not shift anything);
* constants compared by type and value (code objects by name, frozensets order-free);
* the 3.11+ exception table likewise mapped to instruction indices, adjacent ranges merged;
* nested code objects in ``co_consts`` compared recursively, in order.

A function whose recompile raises counts as a mismatch and is listed separately.  Usage::

    python bench/fidelity.py                 # table per module, total percentage
    python bench/fidelity.py json email      # only these targets
    python bench/fidelity.py --json out.json --show-diff 5
"""
from __future__ import annotations

import argparse
import dis
import difflib
import json
import os
import signal
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Dict, Hashable, Iterable, List, Optional, Sequence, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "swap"))
import swap_targets  # noqa: E402

IGNORED_OPS = frozenset({"NOP", "EXTENDED_ARG", "CACHE", "RESUME"})
# 3.14+ loads a local without a new reference ("borrowed") where a pass after layout finds the
# reference cannot outlive the frame's own: the same load in the same place either way, so not a
# difference of shape.
SAME_OPS = {"LOAD_FAST_BORROW": "LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW": "LOAD_FAST_LOAD_FAST"}
JUMP_OPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs) | frozenset(getattr(dis, "hasjump", ()))
CONST_OPS = frozenset(dis.hasconst)

Op = Tuple[Hashable, ...]


def const_key(value: Any) -> Hashable:
    """A hashable, order-stable stand-in for a constant that tells ``1``, ``1.0`` and ``True`` apart."""
    if isinstance(value, types.CodeType):
        return ("code", value.co_name)
    if isinstance(value, tuple):
        return ("tuple", tuple(const_key(item) for item in value))
    if isinstance(value, frozenset):
        return ("frozenset", tuple(sorted((const_key(item) for item in value), key=repr)))
    return (type(value).__name__, repr(value))


def _first_kept_index(offsets: Sequence[int], offset: int) -> int:
    """Index of the first kept instruction at or after byte ``offset`` (len if none)."""
    low, high = 0, len(offsets)
    while low < high:
        middle = (low + high) // 2
        if offsets[middle] < offset:
            low = middle + 1
        else:
            high = middle
    return low


def normalise_instructions(instructions: Iterable[dis.Instruction]) -> List[Op]:
    """The comparable form of an instruction sequence (see the module docstring)."""
    kept = [ins for ins in instructions if ins.opname not in IGNORED_OPS]
    offsets = [ins.offset for ins in kept]
    out: List[Op] = []
    for ins in kept:
        if ins.opname in SAME_OPS:
            out.append((SAME_OPS[ins.opname], repr(ins.argval), ins.argrepr))
        elif ins.opcode in JUMP_OPS:
            out.append((ins.opname, "->", _first_kept_index(offsets, ins.argval)))
        elif ins.opcode in CONST_OPS:
            out.append((ins.opname, const_key(ins.argval)))
        elif ins.arg is None:
            out.append((ins.opname,))
        else:  # argrepr carries flag bits such as "NULL + name" that argval leaves out
            out.append((ins.opname, repr(ins.argval), ins.argrepr))
    return out


def _exception_entries(code: types.CodeType) -> List[Any]:
    parse = getattr(dis, "_parse_exception_table", None)
    if parse is None or not getattr(code, "co_exceptiontable", b""):
        return []
    try:
        return list(parse(code))
    except Exception:  # pragma: no cover - private API changed
        return []


def normalise_exception_table(code: types.CodeType, offsets: Sequence[int]) -> List[Op]:
    """The 3.11+ exception table as (start, end, target) instruction indices, depth, lasti."""
    merged: List[List[int]] = []
    for entry in _exception_entries(code):
        row = [_first_kept_index(offsets, entry.start), _first_kept_index(offsets, entry.end),
               _first_kept_index(offsets, entry.target), entry.depth, int(entry.lasti)]
        if row[0] == row[1]:
            continue
        if merged and merged[-1][1] == row[0] and merged[-1][2:] == row[2:]:
            merged[-1][1] = row[1]
        else:
            merged.append(row)
    return [tuple(row) for row in merged]


@dataclass
class NormalisedCode:
    """One code object in comparable form, with its nested code objects."""

    name: str
    ops: List[Op]
    handlers: List[Op]
    children: List["NormalisedCode"] = field(default_factory=list)
    instructions: List[dis.Instruction] = field(default_factory=list, repr=False, compare=False)


def normalise(code: types.CodeType) -> NormalisedCode:
    """Normalise ``code`` and, recursively, the code objects among its constants."""
    instructions = list(dis.get_instructions(code))
    offsets = [ins.offset for ins in instructions if ins.opname not in IGNORED_OPS]
    return NormalisedCode(
        name=getattr(code, "co_qualname", code.co_name),
        ops=normalise_instructions(instructions),
        handlers=normalise_exception_table(code, offsets),
        children=[normalise(c) for c in code.co_consts if isinstance(c, types.CodeType)],
        instructions=[ins for ins in instructions if ins.opname not in IGNORED_OPS],
    )


@dataclass
class Difference:
    """Where two normalised code trees first differ."""

    path: str
    what: str
    original: Optional[NormalisedCode]
    recompiled: Optional[NormalisedCode]


def first_difference(a: NormalisedCode, b: NormalisedCode, path: str = "") -> Optional[Difference]:
    """The first difference between two normalised trees, depth first, or None if equal."""
    here = f"{path}/{a.name}" if path else a.name
    if a.ops != b.ops:
        return Difference(here, "instructions", a, b)
    if a.handlers != b.handlers:
        return Difference(here, "exception table", a, b)
    if len(a.children) != len(b.children):
        return Difference(here, f"{len(a.children)} vs {len(b.children)} nested code objects", a, b)
    for left, right in zip(a.children, b.children):
        found = first_difference(left, right, here)
        if found is not None:
            return found
    return None


def compare_codes(original: types.CodeType, recompiled: types.CodeType) -> Optional[Difference]:
    """None when the two code objects are equal after normalisation, else the first difference."""
    return first_difference(normalise(original), normalise(recompiled))


def _op_text(op: Op) -> str:
    return " ".join(str(part) for part in op)


def side_by_side(a: Sequence[Op], b: Sequence[Op], width: int = 48, context: int = 3) -> List[str]:
    """Lines showing two op sequences next to each other, unchanged stretches shortened."""
    left = [f"{i:4} {_op_text(op)}" for i, op in enumerate(a)]
    right = [f"{i:4} {_op_text(op)}" for i, op in enumerate(b)]
    out = [f"  {'original':<{width}} | recompiled"]
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context):
        out.append(f"  {'...':<{width}} | ...")
        for tag, i1, i2, j1, j2 in group:
            for k in range(max(i2 - i1, j2 - j1)):
                l_text = left[i1 + k] if i1 + k < i2 else ""
                r_text = right[j1 + k] if j1 + k < j2 else ""
                mark = " " if tag == "equal" else "!"
                out.append(f"{mark} {l_text[:width]:<{width}} | {r_text[:width]}")
    return out


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout("recompile timed out")


def recompile_timed(recompile: Any, fn: types.FunctionType, timeout: float) -> types.CodeType:
    """``recompile(fn)``, interrupted by an alarm after ``timeout`` seconds (0: no limit)."""
    if timeout <= 0 or not hasattr(signal, "setitimer"):
        return recompile(fn)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return recompile(fn)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class ModuleFidelity:
    """Fidelity results for one module."""

    module: str
    total: int = 0
    equal: int = 0
    failures: List[Tuple[str, str]] = field(default_factory=list)
    mismatches: List[Tuple[str, Difference]] = field(default_factory=list)

    @property
    def percent(self) -> float:
        """Share of functions whose bytecode came back equal."""
        return 100.0 * self.equal / self.total if self.total else 100.0


def measure_module(found: swap_targets.ModuleFunctions, recompile: Any, timeout: float) -> ModuleFidelity:
    """Recompile every distinct code object of one module and compare it with the original."""
    result = ModuleFidelity(found.module)
    for record in swap_targets.unique_codes(found.functions):
        result.total += 1
        try:
            new = recompile_timed(recompile, record.function, timeout)
            difference = compare_codes(record.code, new)
        except Exception as exc:
            result.failures.append((record.key, f"{type(exc).__name__}: {exc}"))
            continue
        if difference is None:
            result.equal += 1
        else:
            result.mismatches.append((record.key, difference))
    return result


def print_table(results: Sequence[ModuleFidelity]) -> None:
    """Per-module table and the total line."""
    print(f"{'module':<28} {'functions':>9} {'equal':>6} {'differ':>6} {'failed':>6} {'equal %':>8}")
    for r in results:
        print(f"{r.module:<28} {r.total:>9} {r.equal:>6} {len(r.mismatches):>6} "
              f"{len(r.failures):>6} {r.percent:>7.1f}%")
    total = sum(r.total for r in results)
    equal = sum(r.equal for r in results)
    failed = sum(len(r.failures) for r in results)
    share = 100.0 * equal / total if total else 100.0
    print(f"{'TOTAL':<28} {total:>9} {equal:>6} {total - equal - failed:>6} {failed:>6} {share:>7.1f}%")


def print_failures(results: Sequence[ModuleFidelity], limit: int) -> None:
    """The functions whose recompile raised, most common errors first."""
    failures = [item for r in results for item in r.failures]
    if not failures:
        return
    counts: Dict[str, int] = {}
    for _, error in failures:
        head = error.split("\n", 1)[0][:100]
        counts[head] = counts.get(head, 0) + 1
    print(f"\n{len(failures)} functions failed to decompile/recompile; most common errors:")
    for error, count in sorted(counts.items(), key=lambda item: -item[1])[:10]:
        print(f"  {count:5}  {error}")
    for name, error in failures[:limit]:
        print(f"  {name}: {error.splitlines()[0][:200] if error else ''}")
    if len(failures) > limit:
        print(f"  ... {len(failures) - limit} more (raise --max-failures, or use --json)")


def print_diffs(results: Sequence[ModuleFidelity], count: int) -> None:
    """Side-by-side normalised instructions of the first ``count`` mismatching functions."""
    shown = 0
    for r in results:
        for name, diff in r.mismatches:
            if shown >= count:
                return
            shown += 1
            print(f"\n--- {name}: {diff.what} differ in {diff.path}")
            if diff.original is None or diff.recompiled is None:
                continue
            if diff.what == "exception table":
                print(f"  original:   {diff.original.handlers}\n  recompiled: {diff.recompiled.handlers}")
            else:
                print("\n".join(side_by_side(diff.original.ops, diff.recompiled.ops)))


def as_json(results: Sequence[ModuleFidelity]) -> Dict[str, Any]:
    """Machine-readable results."""
    total = sum(r.total for r in results)
    equal = sum(r.equal for r in results)
    return {
        "python": sys.version.split()[0],
        "total": total, "equal": equal,
        "percent": 100.0 * equal / total if total else 100.0,
        "modules": {
            r.module: {
                "total": r.total, "equal": r.equal, "percent": r.percent,
                "failed": [{"function": n, "error": e} for n, e in r.failures],
                "mismatched": [{"function": n, "where": d.path, "what": d.what} for n, d in r.mismatches],
            }
            for r in results
        },
    }


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("targets", nargs="*", help="swap targets to measure (default: all)")
    parser.add_argument("--json", metavar="PATH", help="write machine-readable results here")
    parser.add_argument("--show-diff", type=int, default=0, metavar="N",
                        help="print the first N mismatching functions side by side")
    parser.add_argument("--max-failures", type=int, default=20, metavar="N",
                        help="list at most N failed functions (default 20)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds allowed per recompile (0: no limit)")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    """Measure and print; exit status 0 (this is a measurement, not a check)."""
    args = parse_args(argv)
    import pellucid

    results: List[ModuleFidelity] = []
    for target in swap_targets.selected_targets(args.targets):
        for found in swap_targets.collect_target(target):
            results.append(measure_module(found, pellucid.recompile, args.timeout))
    print(f"Python {sys.version.split()[0]}: bytecode fidelity of pellucid.recompile")
    print_table(results)
    print_failures(results, args.max_failures)
    print_diffs(results, args.show_diff)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(as_json(results), handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
