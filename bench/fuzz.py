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

Generation by hypothesmith costs more than the checks, so a sweep over several interpreters
generates once and checks a stored corpus on each::

    python3.13 bench/fuzz.py --write-corpus /tmp/corpus.jsonl --count 12000 --seed 1
    python3.8 bench/fuzz.py --corpus /tmp/corpus.jsonl --jobs 2 --json /tmp/fuzz-3.8.json

A corpus is JSON lines (a header, then one program per line), deduplicated, written as it is
generated (so a generation can be stopped at any time: ^C or SIGTERM).  ``--time-limit`` or
SIGTERM stop a corpus check early; the counts then cover the programs actually checked.  Programs the checking interpreter's ``compile()`` rejects (newer syntax) are counted
as read but not compiled; only compiled programs have code objects checked.

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
import signal
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
        self.programs_compiled = 0                # programs with at least one form compiled
        self.corpora = []                         # headers of the --corpus files
        self.not_checked = 0                      # corpus programs left when the sweep stopped
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

    def is_new(self, src):
        """Count ``src`` as generated; False if the same program was seen before."""
        self.generated += 1
        digest = hashlib.sha1(src.encode("utf-8", "surrogatepass")).digest()
        if digest in self.seen:  # hypothesis can hand the same program over again
            self.duplicates += 1
            return False
        self.seen.add(digest)
        return True

    def run_one(self, src):
        if not self.is_new(src):
            return
        t0 = time.monotonic()
        report = check(src, self.args)
        self.record(src, report, time.monotonic() - t0)

    def record(self, src, report, seconds):
        """Add the :class:`fuzz_support.Report` of one (new) program to the counts."""
        self.check_time += seconds
        if report.forms:
            self.programs_compiled += 1
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
            "source": ("corpus " + ", ".join(
                "%s (generated on Python %s, seed %s, strategy %s)" % (
                    path, h.get("python"), h.get("seed"), h.get("strategy"))
                for path, h in zip(self.args.corpus, self.corpora))
                if self.corpora else "hypothesis on this interpreter, seed %s, strategy %s" % (
                    self.args.seed, self.args.strategy)),
            "programs generated": self.generated,
            "duplicates (not checked again)": self.duplicates,
            "not reached (stopped early)": self.not_checked,
            "compiled by CPython (any form)": self.programs_compiled,
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


def check(src, args):
    """Check one program (``fuzz_support.check_program`` with the command line's options)."""
    return fuzz_support.check_program(src, behaviour=not args.no_behaviour,
                                      all_codes=args.all_codes, timeout=args.timeout)


def _check_in_worker(item):
    src, args = item
    t0 = time.monotonic()
    report = check(src, args)
    return report, time.monotonic() - t0


CORPUS_FORMAT = "pellucid fuzz corpus 1"


class CorpusWriter(object):
    """Writes generated programs (deduplicated, in generation order) to a corpus file: a JSON
    header line, then one JSON string per line.  Each program is flushed as it comes, so an
    interrupted generation keeps what it made."""

    def __init__(self, args):
        import hypothesis
        import hypothesmith

        self.args = args
        self.seen = set()
        self.generated = 0
        self.start = time.monotonic()
        self.fh = open(args.write_corpus, "w", encoding="utf-8")
        self.fh.write(json.dumps({"format": CORPUS_FORMAT, "python": VERSION, "seed": args.seed,
                                  "strategy": args.strategy, "hypothesis": hypothesis.__version__,
                                  "hypothesmith": getattr(hypothesmith, "__version__", "?")}) + "\n")

    def add(self, src):
        self.generated += 1
        digest = hashlib.sha1(src.encode("utf-8", "surrogatepass")).digest()
        if digest in self.seen:
            return
        self.seen.add(digest)
        # json.dumps escapes lone surrogates (hypothesis text can hold them), so they survive
        self.fh.write(json.dumps(src) + "\n")
        self.fh.flush()
        if self.args.progress and len(self.seen) % self.args.progress == 0:
            sys.stdout.write("%d programs written (%d generated), %.1f s\n"
                             % (len(self.seen), self.generated, time.monotonic() - self.start))
            sys.stdout.flush()

    def close(self):
        self.fh.close()
        sys.stdout.write("%s: %d distinct programs of %d generated on Python %s in %.1f s\n"
                         % (self.args.write_corpus, len(self.seen), self.generated, VERSION,
                            time.monotonic() - self.start))


def read_corpus(path):
    """``(header, [program source])`` of a corpus written by ``--write-corpus``."""
    with open(path, encoding="utf-8") as fh:
        header = json.loads(fh.readline())
        if not isinstance(header, dict) or header.get("format") != CORPUS_FORMAT:
            raise SystemExit("%s is not a pellucid fuzz corpus" % path)
        return header, [json.loads(line) for line in fh if line.strip()]


def check_corpus(args, sweep):
    """Check the programs of ``args.corpus`` (from ``args.start``, at most ``args.count``), with
    ``args.jobs`` worker processes."""
    programs = []
    for path in args.corpus:
        header, more = read_corpus(path)
        sweep.corpora.append(header)
        programs.extend(more)
    programs = programs[args.start:]
    if args.count is not None:
        programs = programs[:args.count]
    # deduplicated up front (workers need the list), counted as "generated" only once checked,
    # so a sweep stopped early (--time-limit, SIGTERM, ^C) reports what it really did
    fresh, seen = [], set()
    for src in programs:
        digest = hashlib.sha1(src.encode("utf-8", "surrogatepass")).digest()
        if digest in seen:
            sweep.duplicates += 1
        else:
            seen.add(digest)
            fresh.append(src)
    deadline = time.monotonic() + args.time_limit if args.time_limit else None
    if args.jobs <= 1:
        results = (_check_in_worker((src, args)) for src in fresh)
        pool = None
    else:
        import multiprocessing

        # fork: workers inherit sys.path and the imported pellucid; chunks of one keep a slow
        # program from holding others back
        pool = multiprocessing.get_context("fork").Pool(args.jobs)
        results = pool.imap(_check_in_worker, [(src, args) for src in fresh], chunksize=1)
    done = 0
    try:
        for src, (report, seconds) in zip(fresh, results):
            sweep.generated += 1
            sweep.record(src, report, seconds)
            done += 1
            if deadline is not None and time.monotonic() > deadline:
                sys.stdout.write("\ntime limit reached\n")
                break
            if args.progress and done % args.progress == 0:
                sweep.print_summary(partial=True)
    except KeyboardInterrupt:
        sys.stdout.write("\ninterrupted\n")
    finally:
        sweep.not_checked = len(fresh) - done
        if pool is not None:
            pool.terminate()
            pool.join()


def _interrupt(signum, frame):
    raise KeyboardInterrupt()


def main(argv=None):
    warnings.simplefilter("ignore")  # generated programs are full of SyntaxWarnings
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=None,
                        help="programs to generate (10000), or to take from --corpus (all)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (0)")
    parser.add_argument("--strategy", default="mix",
                        help="mix (default), grammar, module, functiondef or statements")
    parser.add_argument("--write-corpus", metavar="FILE",
                        help="only generate: write the programs to FILE (JSON lines), check nothing")
    parser.add_argument("--corpus", metavar="FILE", action="append",
                        help="check the programs of FILE (from --write-corpus) instead of "
                             "generating; repeat to check several corpora one after the other")
    parser.add_argument("--start", type=int, default=0, help="first program of --corpus to take (0)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes for --corpus (1)")
    parser.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                        help="--corpus: stop taking programs after SECONDS and report")
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
    if args.corpus and args.write_corpus:
        parser.error("--corpus and --write-corpus do not go together")

    # SIGTERM stops a sweep like ^C (background jobs ignore SIGINT): counts are still reported
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return _run(parser, args)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(parser, args):
    sweep = Sweep(args)
    if args.corpus:
        check_corpus(args, sweep)
    else:
        if args.count is None:
            args.count = 10000
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
            parser.error("unknown strategy %r; choose mix or one of %s"
                         % (args.strategy, ", ".join(strategies)))

        writer = CorpusWriter(args) if args.write_corpus else None

        @seed(args.seed)
        @settings(max_examples=args.count, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), derandomize=False)
        @given(strategy)
        def sweep_programs(src):
            if writer is not None:
                writer.add(src)
            else:
                sweep.run_one(src)

        try:
            sweep_programs()
        except KeyboardInterrupt:
            sys.stdout.write("\ninterrupted\n")
        if writer is not None:
            writer.close()
            return 0
    sweep.print_summary()
    for sig in list(sweep.by_signature)[:args.show]:
        sys.stdout.write("\n--- %s\n%s\n" % (sig, sweep.examples[sig]))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(sweep.summary(), fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
