"""Final readability passes over a decompiled tree that need whole statements to see.

Only rewrites that are exact: ``if not c: raise AssertionError(m)`` built from
``LOAD_ASSERTION_ERROR`` is what ``assert c, m`` compiles to (the name ``AssertionError`` there is
not looked up, so writing ``assert`` is also the only way to keep that behaviour).
"""
import ast
from typing import Optional

from pellucid.decompiler.structure import negate
from pellucid.decompiler.tree_nodes import all_nodes


class _Asserts(ast.NodeTransformer):
    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        if node.orelse or len(node.body) != 1 or not isinstance(node.body[0], ast.Raise):
            return node
        raise_ = node.body[0]
        msg = _assertion_message(raise_.exc)
        if msg is False or raise_.cause is not None:
            return node
        return ast.Assert(negate(node.test), msg)  # type: ignore[arg-type]


class _FailedAsserts(ast.NodeTransformer):
    """A raise of the builtin AssertionError left over (``assert <false constant>`` has no
    condition to test) is ``assert False``: a ``raise AssertionError`` would look the name up."""

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        msg = _assertion_message(node.exc)
        if msg is False or node.cause is not None:
            return node
        return ast.Assert(ast.Constant(False), msg)  # type: ignore[arg-type]


def _assertion_message(exc: Optional[ast.expr]) -> object:
    """The message of an AssertionError raised by ``assert`` (None if none); False otherwise."""
    if isinstance(exc, ast.Name) and getattr(exc, "_assertion", False):
        return None
    if isinstance(exc, ast.Call) and isinstance(exc.func, ast.Name) and getattr(exc.func, "_assertion", False) \
            and len(exc.args) == 1 and not exc.keywords:
        return exc.args[0]
    return False


def tidy(tree: ast.AST) -> ast.AST:
    """Apply the exact readability rewrites to ``tree`` in place.

    >>> import ast
    >>> t = ast.parse("if not x:\\n    raise AssertionError")
    >>> ast.unparse(tidy(t)) if hasattr(ast, 'unparse') else 'if not x:\\n    raise AssertionError'
    'if not x:\\n    raise AssertionError'
    """
    for node in all_nodes(tree):
        if getattr(node, "_assertion", False):
            break
    else:
        # Both passes only rewrite around a LOAD_ASSERTION_ERROR's name; one walk to find none
        # costs a fifth of the two transformer passes over a large (Dynamo) function.  (A plain
        # loop: a generator over the thousand nodes of a Dynamo function costs a third more.)
        return tree
    return _FailedAsserts().visit(_Asserts().visit(tree))
