"""Why recompiled bytecode differs: sort ``bench/fidelity.py``'s mismatches into categories.

Each function whose recompiled bytecode differs from the original is put in one category, chosen
from its *first* difference (the first unequal stretch of the normalised instruction sequences,
depth first through nested code objects, as :func:`fidelity.first_difference` finds it):

* ``fallback: <reason>`` -- the structured decompiler gave up and the state-machine fallback was
  used (the reason is the StructureError message the fallback records);
* ``exception table`` / ``nested code objects`` -- the instructions agree but the handlers or the
  number of nested code objects do not;
* otherwise a name for the shape of the first unequal stretch (``extra temporary``, ``condition
  sense``, ``jump target``, ``return None``, ``loop form`` ...), falling back to
  ``other: <original ops> -> <recompiled ops>``.

The categories are heuristics meant to point at the biggest families of differences, not proofs
of a cause; ``--show CATEGORY`` prints every member of a category side by side, with
``--source`` the decompiled source too.  Usage::

    python bench/fidelity_triage.py                      # counts per category, one example each
    python bench/fidelity_triage.py email json --examples 2
    python bench/fidelity_triage.py --show "extra temporary" --source --limit 5
"""
from __future__ import annotations

import argparse
import collections
import difflib
import os
import re
import sys
import types
from typing import Any, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fidelity  # noqa: E402
from fidelity import Difference, Op, swap_targets  # noqa: E402

_FALLBACK_REASON = re.compile(r"__pellucid_fallback__ = (['\"])(.*?)\1")
_LOADS = frozenset({"LOAD_FAST", "LOAD_NAME", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_FAST_CHECK",
                    "LOAD_FAST_LOAD_FAST", "LOAD_FAST_AND_CLEAR"})
_STORES = frozenset({"STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL", "STORE_FAST_STORE_FAST",
                     "STORE_FAST_LOAD_FAST"})
_LOOP_OPS = frozenset({"FOR_ITER", "GET_ITER", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
                       "END_FOR", "SETUP_LOOP", "POP_BLOCK"})
_STACK_OPS = frozenset({"DUP_TOP", "DUP_TOP_TWO", "ROT_TWO", "ROT_THREE", "ROT_FOUR", "ROT_N", "COPY",
                        "SWAP"})
_TRY_OPS = frozenset({"SETUP_FINALLY", "POP_EXCEPT", "RERAISE", "PUSH_EXC_INFO", "WITH_EXCEPT_START",
                      "CHECK_EXC_MATCH", "JUMP_IF_NOT_EXC_MATCH", "SETUP_WITH", "BEFORE_WITH",
                      "BEGIN_FINALLY", "END_FINALLY", "CALL_FINALLY", "POP_FINALLY", "SETUP_ASYNC_WITH",
                      "WITH_CLEANUP_START", "WITH_CLEANUP_FINISH"})
_RETURNS = frozenset({"RETURN_VALUE", "RETURN_CONST"})


def _name(op: Op) -> str:
    return str(op[0])


def _is_jump(op: Op) -> bool:
    return len(op) == 3 and op[1] == "->"


def _conditional(op: Op) -> bool:
    return _is_jump(op) and ("IF" in _name(op) or "OR_POP" in _name(op))


def first_unequal(a: Sequence[Op], b: Sequence[Op]) -> Tuple[int, int, int, int]:
    """``(i1, i2, j1, j2)``: the first stretch where ``a`` and ``b`` differ."""
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            return i1, i2, j1, j2
    return len(a), len(a), len(b), len(b)


def _shape(ops: Sequence[Op]) -> List[Op]:
    """``ops`` with jump targets left out: a jump whose target moved is not itself the change."""
    return [op[:1] if _is_jump(op) else op for op in ops]


def classify_ops(a: Sequence[Op], b: Sequence[Op]) -> str:
    """A category name for the first unequal stretch of two normalised op sequences.

    The stretch is found with jump targets left out, so a forward jump over the part that
    changed does not hide the change; when only targets differ the blocks were laid out in
    another order.
    """
    i1, i2, j1, j2 = first_unequal(_shape(a), _shape(b))
    if i1 == i2 == len(a) and j1 == j2 == len(b):
        return "block order (same instructions, other jump targets)"
    left, right = list(a[i1:i2]), list(b[j1:j2])
    ln, rn = [_name(o) for o in left], [_name(o) for o in right]
    both = set(ln) | set(rn)
    if not left and right and all(n in _STORES | _LOADS for n in rn) \
            and any(n in _STORES for n in rn):
        return "extra temporary (STORE/LOAD added)"
    if not right and left and all(n in _STORES | _LOADS for n in ln) \
            and any(n in _STORES for n in ln):
        return "missing temporary (STORE/LOAD dropped)"
    fused = {"LOAD_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST"}
    if both & fused and both <= fused | {"LOAD_FAST", "STORE_FAST"}:
        # 3.13 pairs LOAD_FAST/STORE_FAST into one instruction only within one source line
        return "superinstruction pairing (line numbers)"
    if left and right and all(_is_jump(o) for o in left + right):
        if len(left) == len(right) and all(_name(x) == _name(y) for x, y in zip(left, right)):
            return "jump target (same jumps, other targets)"
        if all(_conditional(o) for o in left + right):
            return "condition sense (IF_TRUE vs IF_FALSE)"
        return "jump kind (conditional vs unconditional)"
    if both & _TRY_OPS:
        return "try/with shape"
    if both & _RETURNS and ("LOAD_CONST" in both or "RETURN_CONST" in both) and \
            any(o[1:] == (("NoneType", "None"),) for o in left + right):
        return "return None"
    if both & _RETURNS:
        return "return placement"
    if both & _LOOP_OPS:
        return "loop form"
    if "UNARY_NOT" in both or ("COMPARE_OP" in both and {"IS_OP", "CONTAINS_OP"} & both):
        return "not folding / comparison"
    if both & _STACK_OPS:
        return "stack shuffle (DUP/ROT/COPY/SWAP)"
    if any(n.startswith("INPLACE_") for n in both) or any(
            len(o) == 3 and isinstance(o[2], str) and o[2].endswith("=") and o[2] not in ("==", "!=", "<=", ">=")
            for o in left + right if _name(o) == "BINARY_OP"):
        return "augmented assignment"
    if left and right and all(n == "LOAD_CONST" for n in ln + rn):
        return "constant value"
    if both & {"BUILD_LIST", "LIST_EXTEND", "BUILD_TUPLE", "LIST_TO_TUPLE", "BUILD_SET", "SET_UPDATE",
               "BUILD_MAP", "DICT_UPDATE", "BUILD_CONST_KEY_MAP"}:
        return "display building"
    if any(_is_jump(o) for o in left + right):
        return "branch shape (jumps with other instructions)"
    return "other: %s -> %s" % (" ".join(ln[:3]) or "-", " ".join(rn[:3]) or "-")


def classify(diff: Difference, source: str) -> str:
    """The category of one mismatch (``source`` is the decompiled text of the function)."""
    found = _FALLBACK_REASON.search(source)
    if found is not None:
        return "fallback: " + re.sub(r"\d+", "N", found.group(2))[:80]
    if diff.what == "exception table":
        return "exception table"
    if diff.what.endswith("nested code objects"):
        return "nested code objects"
    assert diff.original is not None and diff.recompiled is not None
    return classify_ops(diff.original.ops, diff.recompiled.ops)


def excerpt(diff: Difference, context: int = 4) -> List[str]:
    """The first unequal stretch side by side, with ``context`` ops either side."""
    if diff.original is None or diff.recompiled is None:
        return []
    if diff.what != "instructions":
        return ["  original:   %s" % (diff.original.handlers,),
                "  recompiled: %s" % (diff.recompiled.handlers,)]
    a, b = diff.original.ops, diff.recompiled.ops
    i1, i2, j1, j2 = first_unequal(_shape(a), _shape(b))
    lo_a, lo_b = max(0, i1 - context), max(0, j1 - context)
    lines = fidelity.side_by_side(a[lo_a:i2 + context], b[lo_b:j2 + context], context=context)
    return lines


def collect(targets: Sequence[str], only: Optional[str]) -> List[Tuple[str, types.FunctionType, Difference]]:
    """Every mismatching function of the targets: (key, function, first difference)."""
    import pellucid

    found_all = []
    for target in swap_targets.selected_targets(list(targets)):
        for found in swap_targets.collect_target(target):
            if only and only not in found.module:
                continue
            for record in swap_targets.unique_codes(found.functions):
                try:
                    new = fidelity.recompile_timed(pellucid.recompile, record.function, 30.0)
                    difference = fidelity.compare_codes(record.code, new)
                except Exception as exc:  # counted as failures by fidelity.py; shown here as such
                    difference = Difference("", "recompile raised %s" % type(exc).__name__, None, None)
                if difference is not None:
                    found_all.append((record.key, record.function, difference))
    return found_all


def source_of(fn: Any) -> str:
    """Decompiled source of ``fn`` ('' if that raises)."""
    import pellucid

    try:
        return pellucid.decompile(fn)
    except Exception as exc:
        return "<decompile raised %s: %s>" % (type(exc).__name__, exc)


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("targets", nargs="*", help="swap targets (default: all)")
    parser.add_argument("--module", help="only modules whose name contains this")
    parser.add_argument("--examples", type=int, default=1, help="examples printed per category")
    parser.add_argument("--show", metavar="CATEGORY", help="print members of categories starting with this")
    parser.add_argument("--limit", type=int, default=10, help="at most this many members with --show")
    parser.add_argument("--source", action="store_true", help="print the decompiled source of examples")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    """Classify, print counts (largest first) and examples."""
    args = parse_args(argv)
    mismatches = collect(args.targets, args.module)
    groups: Dict[str, List[Tuple[str, Any, Difference, str]]] = collections.defaultdict(list)
    for key, fn, diff in mismatches:
        source = source_of(fn)
        category = diff.what if diff.original is None else classify(diff, source)
        groups[category].append((key, fn, diff, source))
    print("Python %s: %d mismatching functions" % (sys.version.split()[0], len(mismatches)))
    ranked = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    for category, members in ranked:
        print("  %5d  %s" % (len(members), category))
    for category, members in ranked:
        if args.show is not None and not category.startswith(args.show):
            continue
        count = args.limit if args.show is not None else args.examples
        for key, _, diff, source in members[:count]:
            print("\n=== [%s] %s (in %s)" % (category, key, diff.path))
            print("\n".join(excerpt(diff)))
            if args.source:
                print(source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
