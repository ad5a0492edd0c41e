"""Every node of an ``ast`` tree, in one list: :func:`ast.walk` without its generators.

The decompiler asks "is this node inside that expression?" and "does this statement call
anything?" after nearly every instruction; on Dynamo's long functions the generator chain behind
``ast.walk`` (``iter_child_nodes`` over ``iter_fields``) was a fifth of the decompiler's time.
"""
import ast
from typing import Any, Dict, Iterable, List, Set

_AST = ast.AST
_Name = ast.Name
#: the expression contexts (a third of a tree's nodes: no fields, no children)
CONTEXTS = frozenset([ast.Load, ast.Store, ast.Del])


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
        if type(node) is _Name and type(node.id) is str:  # type: ignore[attr-defined]
            # (the commonest node: its only child can be its context)
            ctx = getattr(node, "ctx", None)
            if isinstance(ctx, _AST):
                append(ctx)
            elif type(ctx) is list:
                extend([v for v in ctx if isinstance(v, _AST)])
            continue
        # (child_nodes inlined: this runs for nearly every instruction decompiled)
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                extend([v for v in value if isinstance(v, _AST)])
            elif isinstance(value, _AST):
                append(value)
    return out


def child_nodes(node: ast.AST) -> List[ast.AST]:
    """The nodes directly below ``node``, as :func:`ast.iter_child_nodes` gives them (field
    order), in a list (for walks that need their own order or stop at scopes).

    >>> [type(n).__name__ for n in child_nodes(ast.parse("f(1)").body[0].value)]
    ['Name', 'Constant']
    """
    out: List[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if type(value) is list:
            out.extend([v for v in value if isinstance(v, _AST)])
        elif isinstance(value, _AST):
            out.append(value)
    return out


def name_ids(tree: ast.AST) -> Set[str]:
    """Every variable ``tree`` reads, writes or deletes by name (nested scopes included).

    >>> sorted(name_ids(ast.parse("x = y + f(x)")))
    ['f', 'x', 'y']
    """
    return set([node.id for node in all_nodes(tree) if isinstance(node, _Name)])  # type: ignore[attr-defined]


def copy_tree(value: Any, shared: Iterable[Any] = ()) -> Any:
    """A deep copy of an ``ast`` node or a list of them, as :func:`copy.deepcopy` makes it (a node
    reached twice is copied once) but without its generic machinery: nodes and lists are new,
    every other value (constants, names, code objects) is shared, being immutable here, and so
    are the nodes in ``shared`` (values the copy must keep referring to, not duplicate).

    >>> body = ast.parse("x = f(1)").body
    >>> new = copy_tree(body)
    >>> ast.dump(new[0]) == ast.dump(body[0]), new[0] is body[0], new[0].value is body[0].value
    (True, False, False)
    """
    memo: Dict[int, Any] = {id(v): v for v in shared}
    contexts = CONTEXTS

    def copy(v: Any) -> Any:
        if type(v) is list:
            return [copy(x) for x in v]
        if not isinstance(v, _AST) or type(v) in contexts:
            return v  # (contexts have no fields: one instance serves every node)
        done = memo.get(id(v))
        if done is None:
            cls = type(v)
            done = memo[id(v)] = cls.__new__(cls)
            done.__dict__.update({k: copy(x) for k, x in v.__dict__.items()})
        return done
    return copy(value)
