"""AST -> source text on every supported Python (3.8 has no ``ast.unparse``: use the backport)."""
import ast
import sys

from pellucid.decompiler import markers as M


def unparse(tree: ast.AST) -> str:
    """Source text for ``tree``; fails loudly if a decompiler marker leaked into it.

    >>> unparse(ast.parse("x = 1"))
    'x = 1'
    """
    for node in ast.walk(tree):
        # Markers and pseudo statements are ast.AST subclasses defined outside the ast module.
        if isinstance(node, M.Marker) or type(node).__module__ not in ("ast", "_ast"):
            raise ValueError("internal node left in tree: %r" % (node,))
    ast.fix_missing_locations(tree)
    if sys.version_info >= (3, 9):
        return ast.unparse(tree)
    import astunparse  # type: ignore[import-not-found]

    _fill_optional_fields(tree)

    return astunparse.unparse(tree).strip("\n")


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
