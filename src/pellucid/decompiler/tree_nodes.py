"""Every node of an ``ast`` tree, in one list: :func:`ast.walk` without its generators.

The decompiler asks "is this node inside that expression?" and "does this statement call
anything?" after nearly every instruction; on Dynamo's long functions the generator chain behind
``ast.walk`` (``iter_child_nodes`` over ``iter_fields``) was a fifth of the decompiler's time.
"""
import ast
from typing import List

_AST = ast.AST


def all_nodes(tree: ast.AST) -> List[ast.AST]:
    """``tree`` and every node below it, in :func:`ast.walk`'s order (breadth first, children in
    field order).  The list is built before it is returned, so changing the tree while reading
    it does not change what is listed.

    >>> [type(n).__name__ for n in all_nodes(ast.parse("x = f(1)").body[0])]
    ['Assign', 'Name', 'Call', 'Store', 'Name', 'Constant', 'Load']
    """
    out = [tree]
    append, extend = out.append, out.extend
    for node in out:  # (a list iterator sees what is appended while it runs)
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                extend([v for v in value if isinstance(v, _AST)])
            elif isinstance(value, _AST):
                append(value)
    return out
