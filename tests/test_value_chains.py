"""Long ``and``/``or`` values decompile structured, verified, and in time linear in their length.

Before 3.12 an ``and`` inside an ``or`` value (``x = (a and b) or (c and d) or ...``) jumps with
JUMP_IF_TRUE_OR_POP / JUMP_IF_FALSE_OR_POP, and the structurer read the rest of the chain once
from each arm of every operand: 2**n block walks for n operands, past the walk budget a
fallback (a state machine), and below it a source that doubled with every operand.  Each case
here is generated with 16 to 40 operands in many shapes (nesting both ways, ``not``,
conditional expressions, chained comparisons, walrus, calls) and places (assignment, return,
call argument, subscript, comprehension condition); the recompiled function must be the
structured form, verified, and behave as the original over a grid of operands whose truth
tests are logged (or raise).
"""
import builtins
import itertools
import random
import sys
import time
import types

import pytest

from pellucid.decompiler import structure
from pellucid.decompiler.api import checked_recompile
from pellucid.decompiler.fallback import MARKER
from pellucid.decompiler.recompile import recompile_full

# Decompiling and verifying a 40-operand chain takes well under a second; before the fix a
# 16-operand one spent seconds reaching the walk budget (3.11) and larger ones fell back.
LIMIT_S = 10.0


class V:
    """An operand whose truth tests and comparisons are logged; ``truth`` None: ``bool`` raises."""

    def __init__(self, log, name, truth, rank):
        self.log, self.name, self.truth, self.rank = log, name, truth, rank

    def __bool__(self):
        self.log.append(("bool", self.name))
        if self.truth is None:
            raise ValueError(self.name)
        return self.truth

    def _cmp(self, op, other, result):
        other_name = other.name if isinstance(other, V) else repr(other)
        self.log.append((op, self.name, other_name))
        # a comparison's result is tested too (chained comparisons, and/or operands)
        return V(self.log, "(%s%s%s)" % (self.name, op, other_name), result, self.rank)

    def __lt__(self, other):
        return self._cmp("<", other, self.rank < getattr(other, "rank", other))

    def __gt__(self, other):
        return self._cmp(">", other, self.rank > getattr(other, "rank", other))


def g(x, k):
    """A call inside the chain: logged, and its result tested by the chain."""
    x.log.append(("g", x.name, k))
    return V(x.log, "g%d(%s)" % (k, x.name), (k + x.rank) % 3 != 0, x.rank + k)


class Box:
    def __init__(self, log):
        self.log = log

    def __getitem__(self, key):
        self.log.append(("item", _shown(key)))
        return ("item", _shown(key))


def _shown(v):
    return ("V", v.name) if isinstance(v, V) else v


# operands: each uses the parameters ``a b c d`` (V objects) and the index ``j``
ATOMS = [
    "a", "not b", "a > %(j)d", "c < %(j)d", "a < b < c", "b < c < d < %(j)d", "(a if c else d)",
    "((w := g(c, %(j)d)) and w)", "g(d, %(j)d)", "not (a and b)", "(b or g(a, %(j)d))",
]


def _atom(j, rng):
    return rng.choice(ATOMS) % {"j": j}


def _tree(atoms, rng, kind):
    """``atoms`` joined by ``kind`` in groups of the other kind, nested at random."""
    if len(atoms) == 1:
        return atoms[0]
    other = "or" if kind == "and" else "and"
    groups = []
    rest = list(atoms)
    while rest:
        k = min(len(rest), rng.choice((1, 2, 2, 3)))
        group, rest = rest[:k], rest[k:]
        groups.append(group)
    if len(groups) == 1:
        groups = [[x] for x in groups[0]]
    parts = []
    for group in groups:
        e = _tree(group, rng, other)
        if len(group) > 1:
            e = "(%s)" % e
            if rng.random() < 0.15:
                e = "(not %s)" % e
            elif rng.random() < 0.1:
                e = "(%s if d else %s)" % (e, rng.choice(("a", "b")))
        parts.append(e)
    return (" %s " % kind).join(parts)


def _pairs(n, inner, outer, fmt="(a > %d %s b < %d)"):
    return (" %s " % outer).join(fmt % (j, inner, j) for j in range(n))


# name -> expression of n operands
CHAINS = {
    "or_of_ands": lambda n, rng: _pairs(n // 2, "and", "or"),
    "and_of_ors": lambda n, rng: _pairs(n // 2, "or", "and"),
    "or_of_and_nots": lambda n, rng: " or ".join("(not a > %d and b < %d)" % (j, j) for j in range(n // 2)),
    "or_of_ands_of_ors": lambda n, rng: " or ".join("(a > %d and (b < %d or c))" % (j, j) for j in range(n // 3)),
    "and_of_ors_of_ands": lambda n, rng: " and ".join("(a > %d or (b < %d and c))" % (j, j) for j in range(n // 3)),
    "or_of_chained": lambda n, rng: " or ".join("(a < %d < b and c)" % j for j in range(n // 2)),
    "or_of_ifexp_ands": lambda n, rng: " or ".join("((a if b > %d else c) and b < %d)" % (j, j) for j in range(n // 2)),
    "or_of_walrus_ands": lambda n, rng: " or ".join("((y := g(a, %d)) and y > %d)" % (j, j) for j in range(n // 2)),
    "random_or": lambda n, rng: _tree([_atom(j, rng) for j in range(n)], rng, "or"),
    "random_and": lambda n, rng: _tree([_atom(j, rng) for j in range(n)], rng, "and"),
}

# where the chain's value goes: template of the function body, ``%s`` the chain
PLACES = {
    "assign": "    x = %s\n    return x\n",
    "return": "    return %s\n",
    "call_arg": "    return g(%s, 1)\n",
    "subscript": "    return box[%s]\n",
    "comprehension": "    return [i for i in (a, b) if %s]\n",
    "condition": "    if %s:\n        return 1\n    return 2\n",
}

CASES = {}
for _name, _make in CHAINS.items():
    for _n in (16, 40):
        for _place, _template in PLACES.items():
            if _place == "comprehension" and not _name.startswith("random"):
                continue
            _rng = random.Random("%s-%d-%s" % (_name, _n, _place))
            _chain = _make(_n, _rng)
            if _place == "comprehension":
                _chain = _chain.replace("a > ", "i > ").replace("(a if", "(i if")
            CASES["%s_%d_%s" % (_name, _n, _place)] = (
                "def f(a, b, c, d, box):\n" + _template % _chain)


def _inputs():
    """Operands' truths (True/False, and one raising at a time) and two orders of ranks."""
    truths = list(itertools.product((True, False), repeat=4))
    for k in range(4):
        for other in (True, False):
            t = [other] * 4
            t[k] = None
            truths.append(tuple(t))
    for ranks in ((1, 2, 3, 0), (3, 1, 0, 2)):
        for t in truths:
            yield t, ranks


def _run(func, truths, ranks):
    log = []
    vals = [V(log, n, t, r) for n, t, r in zip("abcd", truths, ranks)]
    try:
        out = ("value", _shown(func(*vals, Box(log))))
    except Exception as exc:
        out = ("raise", type(exc).__name__, exc.args)
    if isinstance(out[1], list):
        out = ("value", [_shown(v) for v in out[1]])
    return out, log


def _walks_counted():
    """Count the structurer's block walks (``run_block`` calls) while decompiling."""
    counter = [0]
    original = structure.Structurer.run_block

    def counted(self, *args, **kw):
        counter[0] += 1
        return original(self, *args, **kw)
    return counter, original, counted


VERSION = "%d.%d" % sys.version_info[:2]

# Known failures, by case: the versions and why (strict: remove an entry when it passes).
# None is about the chain's length (each shape fails with a few operands too) and all failed
# before the linear reading as well.
# 3.14+ test ``a`` in ``(a or (b and c)) and d`` once (TO_BOOL) and jump past the group to the
# POP_TOP before ``d``: the short-circuit arm does not keep ``a`` (fallback, verified).
R14 = "3.14+: and/or whose short-circuit path changes the value ((a or (b and c)) and d)"
# The random mixes hit, by version: 3.8-3.10 "and/or whose operands contain statements" (a
# walrus or call operand in a nested group), 3.12-3.13 structured forms not verified, 3.14+
# R14; and on 3.8, 3.9 and 3.12 a structured form the checker accepted behaves differently:
# a nested group of the same kind (``(b or g(a, 7)) or a``) is flattened and ``__bool__``
# runs a different number of times (the differential grid here catches it).
RANDOM = "random mix of operands: not structured or not the same (see above)"
XFAIL = {
    "and_of_ors_of_ands_16_assign": ({"3.14", "3.15"}, R14),
    "and_of_ors_of_ands_16_call_arg": ({"3.14", "3.15"}, R14),
    "and_of_ors_of_ands_16_return": ({"3.14", "3.15"}, R14),
    "and_of_ors_of_ands_16_subscript": ({"3.14", "3.15"}, R14),
    "and_of_ors_of_ands_40_assign": ({"3.14", "3.15"}, R14),
    "and_of_ors_of_ands_40_call_arg": ({"3.14", "3.15"}, R14),
    "and_of_ors_of_ands_40_return": ({"3.14", "3.15"}, R14),
    "and_of_ors_of_ands_40_subscript": ({"3.14", "3.15"}, R14),
    "or_of_ands_of_ors_16_assign": ({"3.14", "3.15"}, R14),
    "or_of_ands_of_ors_16_call_arg": ({"3.14", "3.15"}, R14),
    "or_of_ands_of_ors_16_return": ({"3.14", "3.15"}, R14),
    "or_of_ands_of_ors_16_subscript": ({"3.14", "3.15"}, R14),
    "or_of_ands_of_ors_40_assign": ({"3.14", "3.15"}, R14),
    "or_of_ands_of_ors_40_call_arg": ({"3.14", "3.15"}, R14),
    "or_of_ands_of_ors_40_return": ({"3.14", "3.15"}, R14),
    "or_of_ands_of_ors_40_subscript": ({"3.14", "3.15"}, R14),
    "random_and_16_assign": ({"3.12", "3.13"}, RANDOM),
    "random_and_16_call_arg": ({"3.12", "3.13", "3.14", "3.15"}, RANDOM),
    "random_and_16_return": ({"3.12", "3.13", "3.14", "3.15"}, RANDOM),
    "random_and_16_subscript": ({"3.12", "3.13"}, RANDOM),
    "random_and_40_assign": ({"3.8", "3.9", "3.12", "3.13", "3.14", "3.15"}, RANDOM),
    "random_and_40_call_arg": ({"3.12", "3.13", "3.14", "3.15"}, RANDOM),
    "random_and_40_return": ({"3.8", "3.9", "3.10", "3.12", "3.13", "3.14", "3.15"}, RANDOM),
    "random_and_40_subscript": ({"3.14", "3.15"}, RANDOM),
    "random_or_16_assign": ({"3.12", "3.13"}, RANDOM),
    "random_or_16_call_arg": ({"3.10"}, RANDOM),
    "random_or_16_return": ({"3.8", "3.9", "3.10", "3.12", "3.13", "3.14", "3.15"}, RANDOM),
    "random_or_16_subscript": ({"3.10", "3.14", "3.15"}, RANDOM),
    "random_or_40_assign": ({"3.8", "3.9", "3.10", "3.12", "3.13", "3.14", "3.15"}, RANDOM),
    "random_or_40_call_arg": ({"3.8", "3.9", "3.12", "3.13"}, RANDOM),
    "random_or_40_return": ({"3.12", "3.13"}, RANDOM),
    "random_or_40_subscript": ({"3.12", "3.13", "3.14", "3.15"}, RANDOM),
}


def _params():
    for case_id in sorted(CASES):
        known = XFAIL.get(case_id)
        marks = [pytest.mark.xfail(strict=True, reason=known[1])] \
            if known is not None and VERSION in known[0] else []
        yield pytest.param(case_id, id=case_id, marks=marks)


@pytest.mark.parametrize("case_id", list(_params()))
def test_value_chain_structured_and_same(case_id, monkeypatch):
    src = CASES[case_id]
    ns = {"__name__": "value_chain_" + case_id, "__builtins__": builtins, "g": g}
    exec(compile(src, "<%s>" % case_id, "exec", dont_inherit=True), ns)
    func = ns["f"]
    counter, _, counted = _walks_counted()
    monkeypatch.setattr(structure.Structurer, "run_block", counted)
    start = time.process_time()
    checked = checked_recompile(func.__code__, lambda: recompile_full(
        func.__code__, None, func.__qualname__, write=False))
    spent = time.process_time() - start
    first = checked.attempts[0]
    assert first.form == "structured" and first.ok, "structured form not verified: %s" % first.reason
    assert MARKER not in checked.result.source, "a region fell back:\n" + checked.result.source
    assert spent < LIMIT_S, "decompiling took %.1f s" % spent
    # linear: a handful of block walks per block (2**n before), and a source of the chain's size
    blocks = sum(1 for ins in _instructions(func.__code__) if ins.opname.startswith(("POP_JUMP", "JUMP_IF")))
    assert counter[0] <= 12 * (blocks + 10), "%d block walks for %d branches" % (counter[0], blocks)
    assert len(checked.result.source) < 4 * len(src) + 400, checked.result.source
    glob = dict(ns)
    glob.update(checked.result.bindings)
    new = types.FunctionType(checked.result.code, glob, func.__name__, func.__defaults__,
                             func.__closure__)
    for truths, ranks in _inputs():
        assert _run(new, truths, ranks) == _run(func, truths, ranks), (truths, ranks)


def _instructions(code):
    import dis
    for ins in dis.get_instructions(code):
        yield ins
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _instructions(c)


def test_chain_walks_grow_linearly(monkeypatch):
    """Twice the operands, about twice the block walks (it was the square)."""
    counts = []
    for n in (20, 40, 80):
        src = "def f(a, b, c, d, box):\n" + PLACES["assign"] % _pairs(n, "and", "or")
        ns = {"__builtins__": builtins}
        exec(compile(src, "<chain>", "exec", dont_inherit=True), ns)
        code = ns["f"].__code__
        counter, _, counted = _walks_counted()
        monkeypatch.setattr(structure.Structurer, "run_block", counted)
        recompile_full(code, None, "f", write=False)
        counts.append(counter[0])
    assert counts[2] <= 2.5 * counts[1] and counts[1] <= 2.5 * counts[0], counts

