"""Round-trip every generated loop/try/with shape (``tests/loop_try_shapes.py``) on this Python.

For each shape: decompile (structured, no fallback?), recompile, run original and recompiled on
the shape inputs (same results and logs?), and ask ``pellucid.verify.check_equivalent``.

    python bench/loop_try_shapes.py [--every N] [--show] [--only SUBSTRING]

Prints one line per shape that is not structured, not equal or not verified, then counts.
"""
import argparse
import builtins
import os
import signal
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "src"))

import loop_try_shapes as shapes  # noqa: E402
import pellucid  # noqa: E402
from pellucid.decompiler.fallback import MARKER  # noqa: E402
from pellucid.verify import check_equivalent  # noqa: E402


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def check(shape, verify=True):
    """Problems of one shape (an empty list when it round-trips, structured and verified)."""
    problems = []

    def load():
        ns = {"__name__": "shape", "__builtins__": builtins}
        exec(compile(shape.src, "<%s>" % shape.id, "exec"), ns)
        return ns["f"]

    original = load()
    try:
        text = pellucid.decompile(original)
        new = pellucid.recompile(original)
    except Exception as exc:
        return ["raises: %s: %s" % (type(exc).__name__, str(exc)[:200])]
    if MARKER in text:
        problems.append("fallback: " + text.split(MARKER, 1)[1].split("\n", 1)[0][:120])
    swapped = load()
    swapped.__code__ = new
    for items in shapes.INPUTS:
        signal.alarm(5)
        try:
            want = shapes.run(original, items)
            got = shapes.run(swapped, items)
        except _Timeout:
            got, want = "timeout", None
        finally:
            signal.alarm(0)
        if got != want:
            problems.append("differs on %r: %r != %r" % (items, got, want))
            break
    if verify:
        verdict = check_equivalent(original.__code__, new, original.__globals__)
        if not verdict.ok:
            problems.append("not verified: " + verdict.reason[:200])
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--every", type=int, default=1, help="check every N-th shape")
    ap.add_argument("--only", default="", help="only shapes whose id contains this")
    ap.add_argument("--show", action="store_true", help="print the decompiled text of failures")
    ap.add_argument("--no-verify", action="store_true")
    args = ap.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    counts = {"shapes": 0, "ok": 0, "fallback": 0, "differs": 0, "not verified": 0, "raises": 0}
    start = time.time()
    for shape in shapes.sample(args.every):
        if args.only not in shape.id:
            continue
        counts["shapes"] += 1
        problems = check(shape, not args.no_verify)
        if not problems:
            counts["ok"] += 1
            continue
        for p in problems:
            key = p.split(":")[0].split(" on ")[0]
            counts[key] = counts.get(key, 0) + 1
        print("%s: %s" % (shape.id, "; ".join(problems)))
        if args.show:
            ns = {"__name__": "shape"}
            exec(compile(shape.src, "<%s>" % shape.id, "exec"), ns)
            try:
                print(pellucid.decompile(ns["f"]))
            except Exception as exc:
                print("  (decompile raises %s)" % exc)
    print("Python %d.%d: %s (%.0f s)" % (sys.version_info[:2] + (counts, time.time() - start)))


if __name__ == "__main__":
    main()
