"""Snapshot of what pellucid makes of the swap corpus, to tell a refactor that changes nothing.

For every target of ``tests/swap/swap_targets.py`` on the running Python, writes one text file
holding, in a fixed order:

* ``pellucid.decompile()`` of each live function of the target (the swap suite's list, with
  defaults and closures) and of every code object nested in each module's compiled code (module
  and class bodies, comprehensions, lambdas), or the exception it raised;
* with ``--verify N``: for every N-th live function, the verdict of
  ``pellucid.verify.check_equivalent(fn.__code__, pellucid.recompile(fn))`` and its reason.

Two snapshots of the same Python are compared with ``diff -r``.  Usage::

    python bench/decompile_snapshot.py OUTDIR                 # all targets
    python bench/decompile_snapshot.py OUTDIR --verify 3 json # every 3rd code object verified
    PELLUCID_FORCE_FALLBACK=1 python bench/decompile_snapshot.py OUTDIR   # the fallback's text
"""
from __future__ import annotations

import argparse
import os
import sys
import types
from typing import Iterator, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "swap"))
import swap_targets  # noqa: E402

import pellucid  # noqa: E402
from pellucid.verify import check_equivalent  # noqa: E402


def nested_codes(code: types.CodeType, path: str) -> Iterator[Tuple[str, types.CodeType]]:
    """``code`` and every code object in its constants, depth first, each with a readable path."""
    yield path, code
    for i, const in enumerate(code.co_consts):
        if isinstance(const, types.CodeType):
            yield from nested_codes(const, "%s/%d:%s" % (path, i, const.co_name))


def _outcome(make) -> str:
    try:
        return make()
    except Exception as exc:  # the snapshot records failures, it does not stop at them
        return "!! %s: %s" % (type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")


def _verdict(fn: types.FunctionType) -> str:
    def run() -> str:
        result = check_equivalent(fn.__code__, pellucid.recompile(fn))
        return "ok" if result.ok else "not ok: %s" % str(getattr(result, "reason", result))[:300]
    return _outcome(run)


def snapshot(target: swap_targets.Target, verify_every: int) -> List[str]:
    out: List[str] = []
    modules = swap_targets.import_modules(target)
    count = 0
    for record_set in swap_targets.collect_functions(modules):
        for record in record_set.functions:
            out.append("=== function %s.%s" % (record_set.module, record.name))
            out.append(_outcome(lambda: pellucid.decompile(record.function)))
            if verify_every and count % verify_every == 0:
                out.append("--- verdict: %s" % _verdict(record.function))
            count += 1
    for module in modules:
        code = swap_targets.module_code(module)
        if code is None:
            continue
        for path, nested in nested_codes(code, swap_targets.module_name(module)):
            out.append("=== code %s" % path)
            out.append(_outcome(lambda: pellucid.decompile(nested)))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    parser.add_argument("targets", nargs="*", help="target names (default: all available)")
    parser.add_argument("--verify", type=int, default=0, metavar="N",
                        help="also record check_equivalent of every N-th function's recompile")
    args = parser.parse_args(argv)
    os.makedirs(args.outdir, exist_ok=True)
    targets = ([swap_targets.target_by_name(n) for n in args.targets] if args.targets
               else swap_targets.available_targets())
    for target in targets:
        lines = snapshot(target, args.verify)
        with open(os.path.join(args.outdir, target.name + ".txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        print("%-20s %d lines" % (target.name, len(lines)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
