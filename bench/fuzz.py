"""Fuzzed round trips: a long sweep of generated programs through pellucid (issue 5).

``hypothesmith`` generates random valid Python programs; each is compiled as module code and
wrapped in a function, every module and function code object is decompiled and recompiled, and
where the program can be run safely its behaviour is compared (see ``tests/fuzz_support.py``
for exactly what is checked).  The bar is zero raises, zero non-compiling outputs, zero shape
mismatches and zero behaviour mismatches.  Usage, with any interpreter that has hypothesmith::

    python bench/fuzz.py                          # 10,000 programs, seed 0
    python bench/fuzz.py --count 500 --seed 3 --failures /tmp/fuzz-failures --json out.json
    python bench/fuzz.py --strategy grammar       # only hypothesmith.from_grammar()
    python bench/fuzz.py --all-codes              # also class bodies and comprehension code

Counts are printed at the end (and every ``--progress`` programs): programs generated, compiled
by CPython (per form), code objects checked, decompiled OK, raises (grouped by message),
non-compiling outputs, shape mismatches, behaviour mismatches (and how many forms were run),
time and rate.  ``--failures DIR`` saves each failing program (at most ``--keep`` per distinct
failure) as a ``.py`` file with the failures in a comment at the top, and the first program
per fallback reason as ``fallback-*.py`` (the fallback is not a failure, but a loop the
structurer could not handle).
"""
import argparse
import collections
import hashlib
import json
import os
import re
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
if os.path.isdir(os.path.join(ROOT, "src")):
    sys.path.insert(0, os.path.join(ROOT, "src"))

import fuzz_support  # noqa: E402

VERSION = "%d.%d" % sys.version_info[:2]


class Sweep(object):
    def __init__(self, args):
        self.args = args
        self.generated = 0
        self.duplicates = 0
        self.seen = set()
        self.compiled = collections.Counter()     # form -> programs
        self.codes_checked = 0
        self.behaviour_runs = 0
        self.failing_programs = 0
        self.by_kind = collections.Counter()      # failure kind -> failures
        self.by_signature = collections.Counter()
        self.examples = {}                        # signature -> first failure text
        self.saved = collections.Counter()
        self.fallbacks = collections.Counter()    # fallback reason -> decompiled code objects
        self.start = time.monotonic()
        self.check_time = 0.0

    def run_one(self, src):
        self.generated += 1
        digest = hashlib.sha1(src.encode("utf-8", "surrogatepass")).digest()
        if digest in self.seen:  # hypothesis can hand the same program over again
            self.duplicates += 1
            return
        self.seen.add(digest)
        t0 = time.monotonic()
        report = fuzz_support.check_program(src, behaviour=not self.args.no_behaviour,
                                            all_codes=self.args.all_codes,
                                            timeout=self.args.timeout)
        self.check_time += time.monotonic() - t0
        for form in report.forms:
            self.compiled[form] += 1
        self.codes_checked += report.codes_checked
        for reason in report.fallbacks:
            reason = re.sub(r"\d+", "N", reason)[:120]
            if not self.fallbacks[reason]:
                self.save_fallback(src, reason)
            self.fallbacks[reason] += 1
        self.behaviour_runs += report.behaviour_runs
        if report.failures:
            self.failing_programs += 1
            signatures = []
            for failure in report.failures:
                sig = failure.signature()
                signatures.append(sig)
                self.by_kind[failure.kind] += 1
                self.by_signature[sig] += 1
                self.examples.setdefault(sig, "%s\n--- program:\n%s" % (failure, src))
            self.save(src, report, signatures)
        if self.args.progress and self.generated % self.args.progress == 0:
            self.print_summary(partial=True)

    def save(self, src, report, signatures):
        if not self.args.failures:
            return
        fresh = [s for s in set(signatures) if self.saved[s] < self.args.keep]
        if not fresh:
            return
        for s in set(signatures):
            self.saved[s] += 1
        directory = os.path.join(self.args.failures, VERSION)
        os.makedirs(directory, exist_ok=True)
        digest = hashlib.sha1(src.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        kinds = sorted(set(f.kind for f in report.failures))
        path = os.path.join(directory, "%s-%s.py" % ("-".join(kinds), digest))
        header = ["# pellucid fuzz failure on Python %s (bench/fuzz.py)" % VERSION]
        for failure in report.failures:
            for line in str(failure).splitlines():
                header.append("# " + line)
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
            fh.write("\n".join(header) + "\n# --- program:\n" + src)

    def save_fallback(self, src, reason):
        """The first program per fallback reason (not a failure: something to structure)."""
        if not self.args.failures:
            return
        directory = os.path.join(self.args.failures, VERSION)
        os.makedirs(directory, exist_ok=True)
        digest = hashlib.sha1(src.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        with open(os.path.join(directory, "fallback-%s.py" % digest), "w", encoding="utf-8",
                  errors="surrogatepass") as fh:
            fh.write("# pellucid fuzz on Python %s: the decompiled source uses the fallback: %s\n"
                     "# --- program:\n%s" % (VERSION, reason, src))

    def summary(self):
        elapsed = time.monotonic() - self.start
        return {
            "python": VERSION,
            "seed": self.args.seed,
            "strategy": self.args.strategy,
            "programs generated": self.generated,
            "duplicates (not checked again)": self.duplicates,
            "compiled by CPython (module form)": self.compiled["module"],
            "compiled by CPython (function form)": self.compiled["function"],
            "compiled by CPython (closure form)": self.compiled["closure"],
            "code objects checked": self.codes_checked,
            "programs with a failure": self.failing_programs,
            "raises": self.by_kind["raise"],
            "non-compiling outputs": self.by_kind["noncompiling"],
            "shape mismatches": self.by_kind["shape"],
            "behaviour mismatches": self.by_kind["behaviour"],
            "behaviour compared (forms run)": self.behaviour_runs,
            "seconds": round(elapsed, 1),
            "seconds in pellucid checks": round(self.check_time, 1),
            "programs per second": round(self.generated / elapsed, 2) if elapsed else None,
            "fallbacks used (not failures)": sum(self.fallbacks.values()),
            "distinct failures": dict(self.by_signature.most_common()),
            "fallback reasons": dict(self.fallbacks.most_common()),
        }

    def print_summary(self, partial=False):
        data = self.summary()
        out = sys.stdout
        out.write("\n== pellucid fuzz, Python %s%s\n" % (VERSION, " (so far)" if partial else ""))
        for key, value in data.items():
            if key not in ("distinct failures", "fallback reasons"):
                out.write("  %-36s %s\n" % (key, value))
        if data["distinct failures"]:
            out.write("  distinct failures (count  kind[code kind]: message):\n")
            for sig, n in data["distinct failures"].items():
                out.write("    %6d  %s\n" % (n, sig))
        if data["fallback reasons"]:
            out.write("  fallback reasons (count  reason):\n")
            for reason, n in data["fallback reasons"].items():
                out.write("    %6d  %s\n" % (n, reason))
        out.flush()


def main(argv=None):
    warnings.simplefilter("ignore")  # generated programs are full of SyntaxWarnings
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10000, help="programs to generate (10000)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (0)")
    parser.add_argument("--strategy", default="mix",
                        help="mix (default), grammar, module, functiondef or statements")
    parser.add_argument("--json", metavar="FILE", help="write the counts as JSON")
    parser.add_argument("--failures", metavar="DIR", help="save failing programs under DIR/<version>/")
    parser.add_argument("--keep", type=int, default=5, help="programs saved per distinct failure (5)")
    parser.add_argument("--all-codes", action="store_true",
                        help="also decompile class bodies and comprehension code objects alone")
    parser.add_argument("--no-behaviour", action="store_true", help="skip the behaviour comparison")
    parser.add_argument("--timeout", type=float, default=1.0,
                        help="seconds the original program may run (1.0)")
    parser.add_argument("--progress", type=int, default=500, help="print counts every N programs")
    parser.add_argument("--show", type=int, default=0, help="print the first failure of N signatures")
    args = parser.parse_args(argv)

    try:
        import hypothesmith  # noqa: F401
        from hypothesis import HealthCheck, Phase, given, seed, settings
        from hypothesis import strategies as st
    except ImportError as exc:
        sys.stderr.write("bench/fuzz.py needs hypothesis and hypothesmith on Python %s: %s\n"
                         % (VERSION, exc))
        return 2
    strategies = fuzz_support.strategies()
    if args.strategy == "mix":
        strategy = st.one_of(list(strategies.values()))
    elif args.strategy in strategies:
        strategy = strategies[args.strategy]
    else:
        parser.error("unknown strategy %r; choose mix or one of %s" % (args.strategy, ", ".join(strategies)))

    sweep = Sweep(args)

    @seed(args.seed)
    @settings(max_examples=args.count, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), derandomize=False)
    @given(strategy)
    def sweep_programs(src):
        sweep.run_one(src)

    try:
        sweep_programs()
    except KeyboardInterrupt:
        sys.stdout.write("\ninterrupted\n")
    sweep.print_summary()
    for sig in list(sweep.by_signature)[:args.show]:
        sys.stdout.write("\n--- %s\n%s\n" % (sig, sweep.examples[sig]))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(sweep.summary(), fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
