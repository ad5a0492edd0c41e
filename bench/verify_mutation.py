"""Is the verifier sound?  Mutants of recompiled functions must be refused.

Every construct case (``tests/construct_cases*.py``) and, with ``--stdlib``, every function of
the given stdlib modules is recompiled as :func:`pellucid.recompile` does it; its decompiled
source is then edited once per mutant (``tests/mutation_support.py``: statements swapped or moved
across a loop or ``finally`` boundary, an ``except`` dropped, a comparison changed, a ``break``
moved...) and compiled, and :func:`pellucid.check_equivalent` is asked about the mutant.

* Construct cases have inputs: each mutant also runs on them (in a child process, time-boxed).
  A mutant that behaves differently there must be refused; one the verifier accepts is a
  soundness bug and fails the run (exit status 1).  The *kill rate* is the share of the mutants
  that behave differently which the verifier refused (it must be 100%).
* Stdlib functions have no inputs: the share of mutants refused is reported, and the accepted
  ones are listed (an edit can leave the behaviour alone -- a constant in dead code -- or the
  verifier is wrong: read them).

Usage::

    python bench/verify_mutation.py                  # construct cases, 40 mutants each
    python bench/verify_mutation.py --limit 10 --json out.json
    python bench/verify_mutation.py --stdlib json textwrap --limit 20
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from typing import Any, Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "swap"))


def construct_run(limit: int, timeout: float, only: Optional[List[str]] = None) -> Dict[str, Any]:
    import construct_cases
    import mutation_support as ms

    per_op: Dict[str, List[int]] = {}  # operator -> [mutants, behave differently, refused of those]
    unsound: List[str] = []
    mutants = 0
    for case in construct_cases.load_all():
        if sys.version_info[:2] < case.min_version or (only and case.id not in only):
            continue
        for j in ms.judge_case(case, limit=limit, timeout=timeout):
            mutants += 1
            row = per_op.setdefault(j.mutant.operator, [0, 0, 0])
            row[0] += 1
            if j.behaves_differently:
                row[1] += 1
                if not j.verdict.ok:
                    row[2] += 1
                else:
                    unsound.append("%s %s#%d: accepted (%s)\n%s" % (
                        case.id, j.mutant.operator, j.mutant.site, j.verdict.reason,
                        j.mutant.source))
    differ = sum(r[1] for r in per_op.values())
    killed = sum(r[2] for r in per_op.values())
    return {"mutants": mutants, "behave differently": differ, "killed": killed,
            "kill rate": round(100.0 * killed / differ, 2) if differ else None,
            "per operator": per_op, "unsound": unsound}


def stdlib_run(modules: List[str], limit: int) -> Dict[str, Any]:
    import mutation_support as ms
    import swap_targets
    from pellucid.verify import check_equivalent

    refused = total = 0
    accepted: List[str] = []
    per_op: Dict[str, List[int]] = {}
    for name in modules:
        module = importlib.import_module(name)
        for record in swap_targets.unique_codes(swap_targets.collect_functions([module])[0].functions):
            fn = record.function
            for m in ms.mutants(fn, limit):
                total += 1
                verdict = check_equivalent(fn.__code__, m.code, m.bindings)
                row = per_op.setdefault(m.operator, [0, 0])
                row[0] += 1
                if verdict.ok:
                    accepted.append("%s %s#%d: %s" % (record.key, m.operator, m.site, verdict.reason))
                else:
                    refused += 1
                    row[1] += 1
    return {"mutants": total, "refused": refused,
            "refused %": round(100.0 * refused / total, 2) if total else None,
            "per operator": per_op, "accepted": accepted}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=40, help="mutants per function")
    ap.add_argument("--timeout", type=float, default=5.0, help="seconds per mutant's calls")
    ap.add_argument("--cases", nargs="*", help="only these construct cases")
    ap.add_argument("--stdlib", nargs="*", help="also these stdlib modules (no behaviour check)")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    version = "%d.%d" % sys.version_info[:2]
    start = time.time()
    out: Dict[str, Any] = {"python": version, "limit": args.limit}
    out["constructs"] = construct_run(args.limit, args.timeout, args.cases)
    c = out["constructs"]
    print("Python %s, construct cases: %d mutants, %d behave differently on the inputs, %d refused"
          " -> kill rate %s%%" % (version, c["mutants"], c["behave differently"], c["killed"],
                                 c["kill rate"]))
    for op, (n, d, k) in sorted(c["per operator"].items()):
        print("  %-15s %5d mutants, %5d behave differently, %5d refused" % (op, n, d, k))
    for u in c["unsound"]:
        print("UNSOUND: " + u)
    if args.stdlib:
        out["stdlib"] = stdlib_run(args.stdlib, args.limit)
        s = out["stdlib"]
        print("stdlib %s: %d mutants, %d refused (%s%%)" % (" ".join(args.stdlib), s["mutants"],
                                                            s["refused"], s["refused %"]))
        for op, (n, k) in sorted(s["per operator"].items()):
            print("  %-15s %5d mutants, %5d refused" % (op, n, k))
        for a in s["accepted"]:
            print("  accepted: " + a)
    out["seconds"] = round(time.time() - start, 1)
    print("%.0f s" % out["seconds"])
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 1 if c["unsound"] else 0


if __name__ == "__main__":
    sys.exit(main())
