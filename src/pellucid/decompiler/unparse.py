"""AST -> source text on every supported Python (3.8 has no ``ast.unparse``: use the backport)."""
import ast
import io
import sys
from typing import Any

from pellucid.decompiler import markers as M
from pellucid.decompiler.tree_nodes import child_nodes


_Unparser38 = None  # type: Any  # built on first use: astunparse exists only on 3.8


def unparse(tree: ast.AST) -> str:
    """Source text for ``tree``; fails loudly if a decompiler marker leaked into it.

    >>> unparse(ast.parse("x = 1"))
    'x = 1'
    """
    _check_and_locate(tree)
    if sys.version_info >= (3, 9):
        return ast.unparse(tree)
    global _Unparser38
    if _Unparser38 is None:
        _Unparser38 = _unparser_38()

    _fill_optional_fields(tree)
    out = io.StringIO()
    _Unparser38(tree, file=out)
    return out.getvalue().strip("\n")


#: (location attribute, its place in the inherited location, whether it is an end position)
_LOCATION = (("lineno", 0, False), ("col_offset", 1, False), ("end_lineno", 2, True),
             ("end_col_offset", 3, True))
_END_IF_NONE = sys.version_info >= (3, 9)  # 3.8's fix_missing_locations keeps an end set to None


def _check_and_locate(tree: ast.AST) -> None:
    """Fail if a decompiler marker is left in ``tree``, and give every node its location as
    :func:`ast.fix_missing_locations` does (the parent's, where the node has none).

    One walk instead of two: over a long (Dynamo) function each whole-tree pass costs about a
    millisecond, and ``fix_missing_locations`` recurses through generators.  The walk is
    depth-first in field order like ``fix_missing_locations``, so a node reached twice (values
    shared between statements) takes its location from the same parent.
    """
    work = [(tree, (1, 0, 1, 0))]
    pop, push = work.pop, work.append
    marker = M.Marker
    while work:
        node, inherited = pop()
        cls = type(node)
        # Markers and pseudo statements are ast.AST subclasses defined outside the ast module.
        if isinstance(node, marker) or cls.__module__ not in ("ast", "_ast"):
            raise ValueError("internal node left in tree: %r" % (node,))
        attributes = node._attributes
        if attributes:
            location = list(inherited)
            for name, k, is_end in _LOCATION:
                if name in attributes:
                    missing = getattr(node, name, None) is None if is_end and _END_IF_NONE \
                        else not hasattr(node, name)
                    if missing:
                        setattr(node, name, location[k])
                    else:
                        location[k] = getattr(node, name)
            inherited = tuple(location)
        for child in reversed(child_nodes(node)):
            push((child, inherited))


def _unparser_38() -> type:
    """astunparse's writer, with subscripts of tuples holding slices written as 3.8 parses them.

    The stack machine builds 3.9-shaped subscripts (``slice`` is the key expression itself).
    astunparse parenthesises a tuple key, and ``a[(1:2, 3)]`` is a syntax error: slices are
    only legal bare between the brackets (``a[1:2, 3]``, or ``a[1:2,]`` for one element).
    """
    import astunparse  # type: ignore[import-not-found]

    class Unparser38(astunparse.Unparser):  # type: ignore[misc]
        def _Subscript(self, t: ast.Subscript) -> None:
            key = t.slice
            if not (isinstance(key, ast.Tuple) and key.elts
                    and any(isinstance(e, ast.Slice) for e in key.elts)):
                super()._Subscript(t)
                return
            self.dispatch(t.value)
            self.write("[")
            for i, elt in enumerate(key.elts):
                if i:
                    self.write(", ")
                self.dispatch(elt)
            if len(key.elts) == 1:
                self.write(",")
            self.write("]")

    return Unparser38


def _fill_optional_fields(tree: ast.AST) -> None:
    """3.8's nodes built by hand lack optional fields (``Constant.kind``...) astunparse reads."""
    for node in ast.walk(tree):
        for field in node._fields:
            if not hasattr(node, field):
                setattr(node, field, [] if field in _LIST_FIELDS else None)


_LIST_FIELDS = {"body", "orelse", "finalbody", "handlers", "decorator_list", "targets", "elts",
                "keys", "values", "args", "keywords", "names", "ifs", "generators", "ops",
                "comparators", "posonlyargs", "kwonlyargs", "kw_defaults", "defaults", "bases",
                "type_ignores", "items", "dims"}
