"""A conditional expression whose arms share their last operand: one ``and``/``or`` value.

Before 3.12 an ``and`` inside an ``or`` value (``x = (a and b) or rest``) tests ``a`` with a
plain conditional jump (to ``rest`` when false) and ``b`` with JUMP_IF_TRUE_OR_POP (to the end
when true, to ``rest`` when false).  Read as branches, ``a``'s arms are ``b or rest`` and
``rest``: the conditional expression ``(b or rest) if a else rest``, with ``rest`` read once
and copied into both arms (the structurer remembers that walk).  That is ``(a and b) or rest``,
which evaluates the same operands in the same order, and written so it stays one copy of
``rest``: nested chains stay linear in size instead of doubling with every operand.
"""
import ast
from typing import Any, List, Optional

from pellucid.decompiler.tree_nodes import all_nodes

def _copies(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are copies of one reading of the same code: equal trees whose values
    were computed by the same instructions (the stack machine numbers each value it makes,
    and a copy keeps the number; two readings of code written twice number theirs apart)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    seqs_a = [n.__dict__.get("_seq") for n in all_nodes(a)]
    seqs_b = [n.__dict__.get("_seq") for n in all_nodes(b)]
    if seqs_a != seqs_b or not any(s is not None for s in seqs_a):
        return False
    return ast.dump(a) == ast.dump(b)


def _operands(e: ast.expr, kind: type) -> List[ast.expr]:
    if isinstance(e, ast.BoolOp) and isinstance(e.op, kind) and not getattr(e, "_paren", False):
        return list(e.values)
    return [e]


def _common_tail(a: List[ast.expr], b: List[ast.expr]) -> int:
    """How many operands ``a`` and ``b`` end with that are copies of each other."""
    k = 0
    while k < len(a) and k < len(b) and _copies(a[-1 - k], b[-1 - k]):
        k += 1
    return k


def _joined(kind: type, values: List[ast.expr]) -> ast.expr:
    return values[0] if len(values) == 1 else ast.BoolOp(kind(), list(values))


def shared_tail_chain(test: ast.expr, body: ast.expr, orelse: ast.expr, boolop: Any,
                      negate: Any) -> Optional[ast.expr]:
    """``body if test else orelse`` as one ``and``/``or`` when both arms end in the same
    operands (copies of one reading), else None.  ``boolop(kind, a, b)`` and ``negate(e)``
    are the structurer's builders.

    >>> import ast
    >>> from pellucid.decompiler.structure import boolop, negate
    >>> rest = ast.Name("r", ast.Load()); rest._seq = 7
    >>> body = ast.BoolOp(ast.Or(), [ast.Name("b", ast.Load()), rest])
    >>> e = shared_tail_chain(ast.Name("a", ast.Load()), body, rest, boolop, negate)
    >>> type(e.op).__name__, type(e.values[0].op).__name__, e.values[1] is rest
    ('Or', 'And', True)
    """
    for kind in (ast.Or, ast.And):
        # (an arm that is the whole shared tail may be a group in the other: ``(x or (b or
        # a)) if t else (b or a)``)
        for ops_b, ops_o in ((_operands(body, kind), _operands(orelse, kind)),
                             (_operands(body, kind), [orelse]), ([body], _operands(orelse, kind))):
            k = _common_tail(ops_b, ops_o)
            if 0 < k and not (k == len(ops_b) and k == len(ops_o)):
                break
        else:
            continue
        # (of the two copies, the one kept as a group where it was one: the source's shape)
        rest = [x if getattr(x, "_paren", False) else y for x, y in zip(ops_b[-k:], ops_o[-k:])]
        head_b, head_o = ops_b[:-k], ops_o[:-k]
        if head_b and head_o:
            # ``(x and r) if t else (y and r)``: ``(x if t else y) and r``, the choice read
            # again (its arms may share a tail of the other kind: ``(t and x) or y``)
            hb, ho = _joined(kind, head_b), _joined(kind, head_o)
            first = shared_tail_chain(test, hb, ho, boolop, negate)
            if first is None:
                first = ast.IfExp(test, hb, ho)
        elif head_b:
            # ``rest`` alone when the test is false, ``b <kind> rest`` when true: ``(test and b)
            # or rest`` / ``(not test or b) and rest``
            b = _joined(kind, head_b)
            first = boolop(ast.And, test, _paren(b, ast.And)) if kind is ast.Or \
                else boolop(ast.Or, negate(test), _paren(b, ast.Or))
        else:
            # ``rest`` alone when the test is true: ``(not test and b) or rest`` / ``(test or
            # b) and rest``
            b = _joined(kind, head_o)
            first = boolop(ast.And, negate(test), _paren(b, ast.And)) if kind is ast.Or \
                else boolop(ast.Or, test, _paren(b, ast.Or))
        out = _paren(first, kind)
        for r in rest:
            out = boolop(kind, out, r)
        _untagged(out)
        return out
    return None


def _untagged(e: ast.expr) -> None:
    """Leave the and/or nodes made here without a source position of their own (the stack
    machine would tag them with the instruction that runs next, where the arms meet -- on
    another line when the value is a multi-line call's argument); untagged, each spans its
    operands when recompiled (``source_lines``), as in the original, so 3.11's optimiser
    threads its jumps the same way (bool() of an operand runs once: webbrowser's
    UnixBrowser._invoke)."""
    for node in ast.walk(e):
        if isinstance(node, ast.BoolOp) and "_pos" not in node.__dict__:
            node._pos = None  # type: ignore[attr-defined]


def _paren(e: ast.expr, outer: type) -> ast.expr:
    """``e`` kept as one operand where it is a BoolOp of ``outer``'s kind (it was a group of its
    own: flattening it would change which operands short-circuit together)."""
    if isinstance(e, ast.BoolOp) and isinstance(e.op, outer):
        e._paren = True  # type: ignore[attr-defined]
    return e
