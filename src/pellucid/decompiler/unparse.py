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
        if isinstance(node, M.Marker) or type(node).__module__ != "ast" and not isinstance(node, ast.AST):
            raise ValueError("internal marker left in tree: %r" % (node,))
        if isinstance(node, M.Marker):
            raise ValueError("internal marker left in tree: %r" % (node,))
    ast.fix_missing_locations(tree)
    if sys.version_info >= (3, 9):
        return ast.unparse(tree)
    import astunparse  # type: ignore[import-not-found]

    return astunparse.unparse(tree).strip("\n")
