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

# The four layouts, by (the arm holding ``rest`` alone, the other arm's operator):
# ``rest`` when the test is false, ``b or rest`` when true   -> ``(test and b) or rest``
# ``rest`` when the test is false, ``b and rest`` when true  -> ``(not test or b) and rest``
# ``rest`` when the test is true, ``b and rest`` when false  -> ``(test or b) and rest``
# ``rest`` when the test is true, ``b or rest`` when false   -> ``(not test and b) or rest``


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


def _head_before(arm: ast.expr, rest: ast.expr, kind: type) -> Optional[List[ast.expr]]:
    """The operands of ``arm`` (a ``kind`` BoolOp) before ``rest``, which ends it (flattened
    into it when ``rest`` is a ``kind`` BoolOp too), or None."""
    if not isinstance(arm, ast.BoolOp) or not isinstance(arm.op, kind):
        return None
    if isinstance(rest, ast.BoolOp) and isinstance(rest.op, kind) and not getattr(rest, "_paren", False):
        tail = rest.values
        if len(arm.values) > len(tail) and all(_copies(x, y) for x, y in zip(arm.values[-len(tail):], tail)):
            return arm.values[:-len(tail)]
    if len(arm.values) > 1 and _copies(arm.values[-1], rest):
        return arm.values[:-1]
    return None


def shared_tail_chain(test: ast.expr, body: ast.expr, orelse: ast.expr, boolop: Any,
                      negate: Any) -> Optional[ast.expr]:
    """``body if test else orelse`` as one ``and``/``or`` when one arm is the other's last
    operand (copies of one reading), else None.  ``boolop(kind, a, b)`` and ``negate(e)`` are
    the structurer's builders.

    >>> import ast
    >>> from pellucid.decompiler.structure import boolop, negate
    >>> rest = ast.Name("r", ast.Load()); rest._seq = 7
    >>> body = ast.BoolOp(ast.Or(), [ast.Name("b", ast.Load()), rest])
    >>> e = shared_tail_chain(ast.Name("a", ast.Load()), body, rest, boolop, negate)
    >>> type(e.op).__name__, type(e.values[0].op).__name__, e.values[1] is rest
    ('Or', 'And', True)
    """
    for rest, other, rest_when_true in ((orelse, body, False), (body, orelse, True)):
        for kind in (ast.Or, ast.And):
            head = _head_before(other, rest, kind)
            if head is None:
                continue
            b = head[0] if len(head) == 1 else ast.BoolOp(kind(), list(head))
            # ``rest`` alone is what the test picks when the operand before it is falsy (or)
            # or truthy (and); the other arm adds ``b`` before it.
            if kind is ast.Or:
                first = boolop(ast.And, negate(test) if rest_when_true else test, _paren(b, ast.And))
            else:
                first = boolop(ast.Or, test if rest_when_true else negate(test), _paren(b, ast.Or))
            return boolop(kind, _paren(first, kind), rest)
    return None


def _paren(e: ast.expr, outer: type) -> ast.expr:
    """``e`` kept as one operand where it is a BoolOp of ``outer``'s kind (it was a group of its
    own: flattening it would change which operands short-circuit together)."""
    if isinstance(e, ast.BoolOp) and isinstance(e.op, outer):
        e._paren = True  # type: ignore[attr-defined]
    return e
