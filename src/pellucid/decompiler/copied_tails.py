"""Two arms that end in copies of one tail: where they differ.

CPython 3.10+ copies a small exit (``store; return``) into each jump that reaches it, so the
short-circuit path of ``x = a < b < c`` and its fall-through path each carry their own copy of
``x = ...; return x``.  Walking the short-circuit arm with a placeholder for the ``and``/``or``'s
value and the other arm as it is gives two statement lists that are equal but for the
placeholder's position: what the other arm has there is the ``and``/``or``'s last operand.
"""
import ast
from typing import Any, List, Optional


def operand_at_hole(with_hole: List[ast.stmt], other: List[ast.stmt], hole: ast.expr) -> Optional[ast.expr]:
    """The node of ``other`` where ``with_hole`` has ``hole``, when the two lists are equal
    everywhere else and ``hole`` occurs once, in the first statement (no statement runs
    between the branch and the value's use, so the operand is evaluated where it was).

    >>> import ast
    >>> hole = ast.Name("H", ast.Load())
    >>> a = [ast.Return(ast.Call(ast.Name("g", ast.Load()), [hole], []))]
    >>> b = [ast.Return(ast.Call(ast.Name("g", ast.Load()), [ast.Name("y", ast.Load())], []))]
    >>> operand_at_hole(a, b, hole).id
    'y'
    """
    if not with_hole or len(with_hole) != len(other):
        return None
    found: List[ast.expr] = []
    if not _match(with_hole[0], other[0], hole, found) or len(found) != 1:
        return None
    for x, y in zip(with_hole[1:], other[1:]):
        if not _match(x, y, hole, found) or len(found) != 1:
            return None
    return found[0]


def _match(a: Any, b: Any, hole: ast.expr, found: List[ast.expr]) -> bool:
    if a is hole:
        if not isinstance(b, ast.expr):
            return False
        found.append(b)
        return True
    if a is b:
        return True
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_match(x, y, hole, found) for x, y in zip(a, b))
    if isinstance(a, ast.AST):
        if type(a) is not type(b):
            return False
        return all(_match(getattr(a, f, None), getattr(b, f, None), hole, found) for f in a._fields)
    return type(a) is type(b) and a == b
