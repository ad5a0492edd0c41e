"""Recompiled code that keeps the original's line numbers.

Code recompiled without a file of its own keeps the original ``co_filename``, so its line
numbers must be the original's too: tracebacks, ``frame.f_lineno``, ``inspect`` and debuggers
read the original file at those lines.  The stack machine tags every statement and expression
it builds with the source position of the instruction it came from (``_pos``, see
:mod:`pellucid.bytecode.positions`).  The decompiled source is then parsed back -- so what is
compiled is exactly what the text says -- and :func:`place_at_original_lines` walks that tree
alongside the decompiled one, node for node, copying the positions across.  Where the two trees
differ in shape, or a node has no tag, it gets the line (without columns) of the nearest
enclosing node that has one.
"""
import ast
import types
from typing import Any, List, Optional, Tuple, TypeVar

from pellucid.bytecode.features import AST_INDEX_WRAPPER, COLUMN_POSITIONS
from pellucid.bytecode.positions import Position

_Node = TypeVar("_Node", bound=ast.AST)


def at_first_line(node: _Node, code: types.CodeType) -> _Node:
    """Tag a ``def``/``class``/``lambda`` built from ``code`` with the line it started on."""
    if code.co_firstlineno > 0:
        node._pos = (code.co_firstlineno, None, None, None)  # type: ignore[attr-defined]
    return node


def place_at_original_lines(tree: ast.Module, decompiled: ast.Module, firstlineno: int) -> None:
    """Give every node of ``tree`` (``decompiled``'s source parsed back) an original position.

    A node whose twin in ``decompiled`` is tagged takes the twin's position, columns included
    (3.11+ tracebacks underline them in the original line).  An untagged statement takes the
    line of the first tagged node inside its twin (an ``if`` its test's, a ``try`` its first
    statement's); anything else the line of its parent.  Nodes outside any tagged one get
    ``firstlineno``.
    """
    work: List[Tuple[ast.AST, Optional[ast.AST], Position]] = [
        (tree, decompiled, (max(firstlineno, 1), None, None, None))]
    while work:
        node, twin, inherited = work.pop()
        if twin is not None and type(twin) is not type(node):
            if AST_INDEX_WRAPPER and isinstance(node, ast.Index):
                # 3.8's parser wraps a subscript in Index; the decompiler builds it bare.
                work.append((node.value, twin, inherited))  # type: ignore[attr-defined]
                continue
            twin = None  # the trees differ here: nothing below can be matched either
        own: Optional[Position] = getattr(twin, "_pos", None) if twin is not None else None
        if own is None and twin is not None and isinstance(node, ast.stmt):
            inner = _first_tagged(twin)
            own = _line_only(inner) if inner is not None else None
        if own is None and isinstance(twin, ast.BoolOp):
            # ``a or (b and c)`` over several lines: CPython gives each operator's jumps the
            # position of its own expression, and threads a jump to another only where the two
            # lines agree -- which decides whether a value's __bool__ runs once or twice.  So
            # an untagged ``and``/``or`` spans its operands, as the parsed source's would.
            own = _span(twin.values[0], twin.values[-1])
        position = own if own is not None else _line_only(inherited)
        if "lineno" in node._attributes:
            _set_position(node, position)
        for name in node._fields:
            value = getattr(node, name, None)
            other = getattr(twin, name, None) if twin is not None else None
            if isinstance(value, list):
                twins: List[Any] = other if isinstance(other, list) and len(other) == len(value) \
                    else [None] * len(value)
                for child, child_twin in zip(value, twins):
                    if isinstance(child, ast.AST):
                        work.append((child, child_twin if isinstance(child_twin, ast.AST) else None,
                                     position))
            elif isinstance(value, ast.AST):
                work.append((value, other if isinstance(other, ast.AST) else None, position))


def _line_only(position: Position) -> Position:
    return (position[0], None, None, None)


def _first_tagged(node: ast.AST) -> Optional[Position]:
    """The position of the first tagged node in ``node``, in source order."""
    todo = [node]
    while todo:
        current = todo.pop()
        found = getattr(current, "_pos", None)
        if found is not None:
            return found  # type: ignore[no-any-return]
        children: List[ast.AST] = []
        for name in current._fields:
            value = getattr(current, name, None)
            if isinstance(value, list):
                children.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                children.append(value)
        todo.extend(reversed(children))
    return None


def _span(first: ast.AST, last: ast.AST) -> Optional[Position]:
    """From the start of the first tagged node in ``first`` to the end of the last in ``last``."""
    start = _first_tagged(first)
    if start is None:
        return None
    end = _last_tagged(last)
    if end is None:
        # (lines only, ≤3.10: the start's line is what decides the operator's jumps'; without
        # it ``b and c`` took the line of the enclosing ``or``: inspect.isawaitable on 3.10)
        return _line_only(start)
    return (start[0], end[1], start[2], end[3])


def _last_tagged(node: ast.AST) -> Optional[Position]:
    """The position, among the tagged nodes in ``node``, that ends last."""
    found: Optional[Position] = None
    for current in ast.walk(node):
        mine = getattr(current, "_pos", None)
        if mine is not None and mine[1] is not None and (
                found is None or (mine[1], mine[3] or -1) > (found[1], found[3] or -1)):
            found = mine
    return found


def _set_position(node: ast.AST, position: Position) -> None:
    line, end_line, col, end_col = position
    if not COLUMN_POSITIONS:
        # Before 3.11 code objects hold lines only; the parsed columns are left as they are.
        node.lineno = line  # type: ignore[attr-defined]
        node.end_lineno = end_line if end_line is not None and end_line >= line else line  # type: ignore[attr-defined]
        return
    if end_line is None or col is None or end_col is None or end_line < line \
            or (end_line == line and end_col < col):
        # Columns of -1 compile to "no column information": a traceback shows the line with
        # nothing underlined, rather than columns of some other line.
        end_line, col, end_col = line, -1, -1
    node.lineno = line  # type: ignore[attr-defined]
    node.end_lineno = end_line  # type: ignore[attr-defined]
    node.col_offset = col  # type: ignore[attr-defined]
    node.end_col_offset = end_col  # type: ignore[attr-defined]
