"""Fuzzed round trips (issue 5): generated programs through decompile and recompile.

``hypothesmith`` generates random valid Python programs.  Each is compiled as module code and
wrapped in ``def __fuzz__():`` (and that nested in a closure); the module code and every function code object are decompiled,
the output must compile, the recompiled code must keep the shape of the original (argument
layout, kind flags, free/cell variables, names used) and, where the program is safe to run,
behave the same.  ``tests/fuzz_support.py`` has the details; ``bench/fuzz.py`` is the long
sweep over the same checks.

The runs are derandomized (the same programs on every run of one Python and hypothesis
version) and bounded: ``PELLUCID_FUZZ_EXAMPLES`` sets the number of programs per test (default
20; the pair of tests takes well under a minute per interpreter).  Set ``PELLUCID_FUZZ_SEED``
to an integer to explore other programs instead of the fixed ones.

All programs of a test are checked before it reports, so one run lists every failure.  A
failure whose signature matches ``KNOWN`` below is a known pellucid bug with its own strict
regression test (``tests/test_fuzz_regressions.py`` or ``tests/construct_cases_regressions.py``):
when only known bugs are hit the test is marked xfail naming them; any other failure fails it.
Remove a ``KNOWN`` entry when its bug is fixed.
"""
import importlib.util
import json
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

pytest.importorskip("hypothesis", reason="hypothesis is not installed for Python %d.%d"
                    % sys.version_info[:2])
pytest.importorskip("hypothesmith", reason="hypothesmith is not installed for Python %d.%d "
                    "(pip install hypothesmith)" % sys.version_info[:2])

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402


def _load_support():
    spec = importlib.util.spec_from_file_location("_pellucid_fuzz_support",
                                                  os.path.join(HERE, "fuzz_support.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fuzz = _load_support()

EXAMPLES = int(os.environ.get("PELLUCID_FUZZ_EXAMPLES", "20"))
SEED = os.environ.get("PELLUCID_FUZZ_SEED")

# Known bugs: regular expression searched in "kind[code kind]: message\ndetail" of a failure ->
# the regression test that pins it.
KNOWN = {}


def _known(failure):
    text = "%s[%s]: %s\n%s" % (failure.kind, failure.code_kind, failure.message, failure.detail)
    for pattern, test in KNOWN.items():
        if re.search(pattern, text):
            return test
    return None


def _sweep(strategy, count):
    reports = []
    seen = set()

    @settings(max_examples=count, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), derandomize=SEED is None)
    @given(strategy)
    def run(src):
        if src not in seen:  # hypothesis may hand the same program over more than once
            seen.add(src)
            reports.append(fuzz.check_program(src))

    if SEED is not None:
        run = seed(int(SEED))(run)
    run()
    return reports


def _judge(reports):
    assert reports, "hypothesis generated no programs"
    assert any(r.forms for r in reports), "CPython compiled none of the generated programs"
    unknown, known = [], {}
    for report in reports:
        for failure in report.failures:
            test = _known(failure)
            if test is None:
                unknown.append((report.src, failure))
            else:
                known.setdefault(test, 0)
                known[test] += 1
    if unknown:
        lines = ["%d failure(s) in %d generated programs:" % (len(unknown), len(reports))]
        for src, failure in unknown[:10]:
            lines.append("")
            lines.append(str(failure))
            lines.append("--- program:")
            lines.append(src)
        if len(unknown) > 10:
            lines.append("... and %d more" % (len(unknown) - 10))
        pytest.fail("\n".join(lines), pytrace=False)
    if known:
        pytest.xfail("only known pellucid bugs: " + ", ".join(
            "%s (%d)" % item for item in sorted(known.items())))


pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")


def test_fuzz_grammar_programs():
    """Token-level programs (``hypothesmith.from_grammar()``): literals, odd expressions."""
    _judge(_sweep(fuzz.strategies()["grammar"], EXAMPLES))


def test_fuzz_node_programs():
    """Statement-level programs (``hypothesmith.from_node()``: modules, functions, compound
    statements)."""
    from hypothesis import strategies as st

    strategies = fuzz.strategies()
    mixed = st.one_of(strategies["module"], strategies["functiondef"], strategies["statements"])
    _judge(_sweep(mixed, EXAMPLES))


def test_fuzz_harness_passes_good_round_trips():
    """A program pellucid handles gives no failure, in both forms, behaviour compared."""
    report = fuzz.check_program("x = 1\nfor i in range(3):\n    x += i\n"
                                "def f(a, *b, c, **d):\n    return a + c\n")
    assert report.forms == ["module", "function", "closure"]
    assert report.codes_checked >= 3
    assert report.failures == [], [str(f) for f in report.failures]
    if hasattr(os, "fork"):
        assert report.behaviour_runs == 2

    assert fuzz.source_compiles("def f(:\n", compile("", "", "exec")) is not None
    closure = [c for _, c in fuzz.iter_codes(compile(
        "def o():\n x = 0\n def g():\n  nonlocal x\n  x = 1\n", "", "exec")) if c.co_name == "g"][0]
    assert fuzz.source_compiles("def g():\n    nonlocal x\n    x = 1\n", closure) is None
    assert fuzz.safe_to_run(compile("x = [1, 2]\nx.append(3)\n", "", "exec"))
    assert not fuzz.safe_to_run(compile("import os\n", "", "exec"))
    assert not fuzz.safe_to_run(compile("().__class__\n", "", "exec"))


def test_fuzz_harness_sees_failures(monkeypatch):
    """A broken 'decompiler' is caught in each category."""
    import pellucid

    def kinds(src="x = 1\n"):
        report = fuzz.check_program(src)
        return sorted(set(f.kind for f in report.failures if f.form == "module"))

    def boom(code):
        raise pellucid.DecompileError("boom")

    monkeypatch.setattr(pellucid, "decompile", boom)
    assert kinds() == ["raise"]
    monkeypatch.setattr(pellucid, "decompile", lambda code: "x = (\n")
    assert kinds() == ["noncompiling"]
    monkeypatch.setattr(pellucid, "decompile", lambda code: "x = 1\n")
    monkeypatch.setattr(pellucid, "recompile", lambda code: compile("x = len and 1\n", "", "exec"))
    assert kinds() == ["shape"]
    if hasattr(os, "fork"):
        monkeypatch.setattr(pellucid, "recompile", lambda code: compile("x = 2\n", "", "exec"))
        assert kinds() == ["behaviour"]


def test_fuzz_bench_checks_a_corpus(tmp_path, capsys):
    """``bench/fuzz.py --corpus``: stored programs are checked, duplicates and programs this
    interpreter cannot compile are counted as such, and the counts reach the JSON file."""
    spec = importlib.util.spec_from_file_location(
        "_pellucid_bench_fuzz", os.path.join(os.path.dirname(HERE), "bench", "fuzz.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    corpus = tmp_path / "corpus.jsonl"
    programs = ["x = 1\n", "x = 1\n", "def f(a):\n    return a\n", "x = (\n"]
    corpus.write_text("\n".join([json.dumps({"format": bench.CORPUS_FORMAT, "python": "3.x"})]
                                + [json.dumps(p) for p in programs]) + "\n")
    out = tmp_path / "counts.json"
    assert bench.main(["--corpus", str(corpus), "--json", str(out), "--progress", "0"]) == 0
    counts = json.loads(out.read_text())
    assert counts["programs generated"] == 3
    assert counts["duplicates (not checked again)"] == 1
    assert counts["compiled by CPython (any form)"] == 2
    assert counts["code objects checked"] >= 3
    assert counts["programs with a failure"] == 0
    assert "corpus " in counts["source"]
    capsys.readouterr()
