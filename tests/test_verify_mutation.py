"""Soundness of ``pellucid.verify`` by mutation (a fast subset; ``bench/verify_mutation.py`` runs
every construct case and stdlib functions).

Construct cases about loops, ``try``/``finally``, ``with`` and ``break`` are recompiled; their
decompiled source is edited (``mutation_support.py``: a statement moved across a loop or
``finally`` boundary, two calls swapped, an ``except`` dropped, a comparison changed, a ``break``
moved...) and compiled again.  Every mutant that behaves differently on the case's inputs must
be refused by the verifier.
"""
import sys

import pytest

import construct_cases
import mutation_support as ms

PY = "%d.%d" % sys.version_info[:2]
_WORDS = ("try", "finally", "loop", "break", "while", "for_", "with", "except", "continue")
PER_CASE = 4


def _subset():
    chosen = [c for c in construct_cases.load_all()
              if any(w in c.id for w in _WORDS) and sys.version_info[:2] >= c.min_version]
    return chosen[::3]


def test_mutants_that_behave_differently_are_refused():
    judged = []
    for case in _subset():
        judged.extend(ms.judge_case(case, limit=PER_CASE, timeout=5.0))
    differ = [j for j in judged if j.behaves_differently]
    unsound = [j for j in differ if j.verdict.ok]
    ops = {j.mutant.operator for j in differ}
    print("\nPython %s: %d mutants, %d behave differently, %d refused (kill rate %.1f%%); "
          "operators: %s" % (PY, len(judged), len(differ), len(differ) - len(unsound),
                             100.0 * (len(differ) - len(unsound)) / max(1, len(differ)),
                             ", ".join(sorted(ops))))
    assert not unsound, "the verifier accepted mutants that behave differently:\n" + "\n".join(
        "%s %s#%d: %s\n%s" % (j.case.id, j.mutant.operator, j.mutant.site, j.verdict.reason,
                               j.mutant.source) for j in unsound)
    # Not vacuous: many mutants, of the edits a structuring bug makes, change the behaviour.
    assert len(differ) >= 60
    assert {"swap", "out-of-loop", "into-finally", "drop-except", "compare"} <= ops


@pytest.mark.parametrize("op", sorted(ms.OPERATORS))
def test_every_operator_edits_something(op):
    src = (
        "def f(xs, g, h):\n"
        "    h(0)\n"
        "    for x in xs:\n"
        "        g(x)\n"
        "        if x < 1:\n"
        "            break\n"
        "    try:\n"
        "        g(1)\n"
        "        g(2)\n"
        "    except ValueError:\n"
        "        h(1)\n"
        "    except KeyError:\n"
        "        h(2)\n"
        "    finally:\n"
        "        h(3)\n"
        "        h(4)\n"
        "    while xs:\n"
        "        h(xs)\n"
        "        xs = xs[1:]\n"
        "    return x in xs\n")
    ns = {}
    exec(compile(src, "<mutation>", "exec"), ns)
    made = list(ms.mutants(ns["f"], limit=100, operators=[op]))
    assert made, op
    from pellucid.verify import check_equivalent
    for m in made:
        assert m.operator == op
        assert not check_equivalent(ns["f"].__code__, m.code, m.bindings).ok, m.source
