"""One value, several consumers: helpers for values the bytecode duplicated with ``COPY``.

The stack machine pushes the *same* AST node for both copies of a ``COPY``.  Most compiler
idioms fold the two uses back into one evaluation (chained comparisons, augmented assignment,
``a = b = v``, walrus); Dynamo's bytecode does not, and printing the node twice would evaluate it
twice (and, for a list display, make two lists where the program has one).  These helpers find
such nodes in a statement, in evaluation order, and replace nodes by identity without touching
trees that other branches of the walk still hold (copy on write).
"""
import ast
import copy
from typing import Any, Dict, List, Optional, Tuple

from pellucid.decompiler import markers as M
from pellucid.decompiler.tree_nodes import all_nodes


#: marks made by :func:`mark_copied` in this process: a walk that found no copied node below a
#: statement still holds while this count and the statement's own fields are unchanged
COPY_MARKS = [0]


def mark_copied(node: ast.expr) -> None:
    """Mark ``node`` as duplicated by a ``COPY`` (see :func:`is_copied`)."""
    node._copied = True  # type: ignore[attr-defined]
    COPY_MARKS[0] += 1


def is_copied(node: Any) -> bool:
    """A node some ``COPY`` duplicated, whose double evaluation would be visible."""
    return isinstance(node, ast.expr) and getattr(node, "_copied", False) and not trivial(node)


def trivial(node: Any) -> bool:
    """Loading it again gives the same value with no side effects (as far as the decompiler
    tracks: a name is re-read only where no statement in between writes it)."""
    return isinstance(node, (ast.Name, ast.Constant, M.Marker))


# Exact classes of stack values that have no copied node in them (see ``first_shared``).
_LEAVES = frozenset([ast.Name, ast.Constant])

# Parts of compound statements that run once, before anything else in them.
_HEAD_FIELDS = {ast.If: ("test",), ast.While: ("test",), ast.For: ("iter",), ast.AsyncFor: ("iter",),
                ast.With: ("items",), ast.AsyncWith: ("items",)}
SCOPES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _children(node: ast.AST) -> List[Tuple[ast.AST, bool]]:
    """Children in evaluation order, each with whether it may be skipped (conditional)."""
    if isinstance(node, ast.Assign):
        kids: List[ast.AST] = [node.value] + list(node.targets)
        return [(k, False) for k in kids]
    if isinstance(node, ast.Dict):
        out: List[Tuple[ast.AST, bool]] = []
        for k, v in zip(node.keys, node.values):
            if k is not None:
                out.append((k, False))
            out.append((v, False))
        return out
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
        return [(node.value, False), (node.slice, False)]
    if isinstance(node, ast.BoolOp):
        return [(v, i > 0) for i, v in enumerate(node.values)]
    if isinstance(node, ast.IfExp):
        return [(node.test, False), (node.body, True), (node.orelse, True)]
    if isinstance(node, ast.Compare):
        return [(node.left, False)] + [(c, i > 0) for i, c in enumerate(node.comparators)]
    head = _HEAD_FIELDS.get(type(node))
    if head is not None or isinstance(node, (ast.Try, ast.ExceptHandler)) or \
            type(node).__name__ in ("TryStar", "Match"):
        out = []
        for field, value in ast.iter_fields(node):
            cond = head is None or field not in head
            for v in (value if isinstance(value, list) else [value]):
                if isinstance(v, ast.AST):
                    out.append((v, cond))
        return out
    if isinstance(node, SCOPES):
        return []  # another scope (or a comprehension's own): not evaluated here and now
    return [(k, False) for k in ast.iter_child_nodes(node)]


def eval_order(tree: ast.AST) -> List[Tuple[ast.AST, bool, Tuple[ast.AST, ...]]]:
    """Nodes of ``tree`` in the order their evaluation completes (post-order, children in
    evaluation order): (node, conditional, ancestors).

    (A list built by plain recursion: a chain of ``yield from`` generators, one per level,
    cost more than the rest of the statement's handling in Dynamo's code.)"""
    out: List[Tuple[ast.AST, bool, Tuple[ast.AST, ...]]] = []
    append = out.append

    def rec(node: ast.AST, cond: bool, path: Tuple[ast.AST, ...]) -> None:
        below = path + (node,)
        for child, c in _children(node):
            rec(child, cond or c, below)
        append((node, cond, path))
    rec(tree, False, ())
    return out


def contains(tree: Any, target: ast.AST) -> bool:
    if not isinstance(tree, ast.AST):
        return False
    return target in all_nodes(tree)  # (identity: no node class defines ``__eq__``)


def replace_nodes(tree: Any, mapping: Dict[int, ast.AST], memo: Optional[Dict[int, Any]] = None) -> Any:
    """``tree`` with every node whose id is in ``mapping`` replaced; untouched subtrees (and the
    tree itself, when nothing matched) are the same objects, changed ones are fresh copies.

    A node met twice (a COPY'd value used twice) becomes one copy, so identity survives;
    ``memo`` carries that across several trees.
    """
    if not isinstance(tree, ast.AST):
        return tree
    hit = mapping.get(id(tree))
    if hit is not None:
        return hit
    if memo is None:
        memo = {}
    if id(tree) in memo:
        return memo[id(tree)]
    changes: Dict[str, Any] = {}
    for field, value in ast.iter_fields(tree):
        if isinstance(value, list):
            new_list = [replace_nodes(v, mapping, memo) for v in value]
            if any(a is not b for a, b in zip(new_list, value)):
                changes[field] = new_list
        elif isinstance(value, ast.AST):
            new = replace_nodes(value, mapping, memo)
            if new is not value:
                changes[field] = new
    result = tree
    if changes:
        result = copy.copy(tree)
        for field, value in changes.items():
            setattr(result, field, value)
    memo[id(tree)] = result
    return result


def replace_in_stack(stack: List[Any], mapping: Dict[int, ast.AST],
                     memo: Optional[Dict[int, Any]] = None) -> None:
    if memo is None:
        memo = {}
    for k, v in enumerate(stack):
        if isinstance(v, ast.AST) and not isinstance(v, M.Marker):
            stack[k] = replace_nodes(v, mapping, memo)


def first_shared(stmt: ast.AST, stack: List[Any],
                 nodes: Optional[List[ast.AST]] = None) -> Optional[Tuple[ast.AST, bool, bool]]:
    """A copied node that ``stmt`` evaluates and that is used again (later in ``stmt`` or by a
    value still on the stack): (node, conditional, evaluated first), or None.

    The node is the outermost shared one around the first shared evaluation to complete, so
    giving it a temporary leaves no shared node around its first use.  ``evaluated first``
    says nothing with an effect runs before it in ``stmt`` (so it can be assigned to a
    temporary in a statement of its own just before).  ``nodes``: :func:`all_nodes` of
    ``stmt``, if the caller has it.
    """
    # (``_copied`` tested first: it is rare, and the walk runs for every statement; a loop, not
    # ``any`` over a generator)
    if nodes is None:
        nodes = all_nodes(stmt)
    for n in nodes:
        if getattr(n, "_copied", False) and is_copied(n):
            break
    else:
        # The common case (every statement is asked): one flat walk answers it, without
        # building the evaluation order (a recursion per node).  It sees every node
        # eval_order does (and those of nested scopes besides), so it never misses one.
        return None
    if not _shared_in(nodes, stack):
        return None  # (the answer below too, without the evaluation order)
    items = eval_order(stmt)
    counts: Dict[int, int] = {}
    for node, _, _ in items:
        if is_copied(node):
            counts[id(node)] = counts.get(id(node), 0) + 1
    if not counts:
        # Nothing in ``stmt`` was copied: no need to walk the stack (Dynamo's code keeps dozens
        # of values there across many statements, and this runs for every statement).
        return None
    on_stack = set()
    for v in stack:
        if type(v) in _LEAVES:
            # (``counts`` holds only copied nodes that are not ``trivial``: never a name or a
            # constant, nor the context below a name; Dynamo's stacks hold dozens of these)
            continue
        if isinstance(v, ast.AST) and not isinstance(v, M.Marker):
            for n in all_nodes(v):
                if id(n) in counts:
                    on_stack.add(id(n))
    shared = set(i for i, n in counts.items() if n > 1 or i in on_stack)
    if not shared:
        return None
    for node, _, path in items:
        if id(node) in shared:
            cand = next((a for a in path if id(a) in shared), node)
            break
    else:
        return None
    before: List[ast.AST] = []
    for node, cond, _ in items:
        if node is cand:
            inside = set(id(n) for n in all_nodes(cand))
            first = all(id(n) in inside or trivial(n) or not isinstance(n, ast.expr) for n in before)
            return cand, cond, first
        before.append(node)
    return None


def _shared_in(nodes: List[ast.AST], stack: List[Any]) -> bool:
    """False when ``first_shared`` finds no shared node, as far as :func:`all_nodes` of the
    statement (``nodes``) tells: where no node in it opens a scope, it has the very nodes
    :func:`eval_order` lists (each as often: the children that order leaves out are
    operators and contexts, never a copied node), so the counts below are the ones
    ``first_shared`` makes.  True when they are not known that way, or some node is shared."""
    counts: Dict[int, int] = {}
    for n in nodes:
        if isinstance(n, SCOPES):
            return True  # (eval_order leaves out what is inside: count it as first_shared does)
        if getattr(n, "_copied", False) and is_copied(n):
            counts[id(n)] = counts.get(id(n), 0) + 1
    if any(c > 1 for c in counts.values()):
        return True
    for v in stack:
        if type(v) in _LEAVES:
            continue  # (as in first_shared)
        if isinstance(v, ast.AST) and not isinstance(v, M.Marker):
            for n in all_nodes(v):
                if id(n) in counts:
                    return True
    return False


def replace_first(stmt: ast.AST, node: ast.AST, new: ast.AST) -> ast.AST:
    """``stmt`` with the first use of ``node`` (in evaluation order) replaced by ``new``; the
    nodes around it are copied, the rest of the tree is shared."""
    def rec(tree: ast.AST) -> Optional[ast.AST]:
        if tree is node:
            return new
        for child, _ in _children(tree):
            got = rec(child)
            if got is None:
                continue
            clone = copy.copy(tree)
            for field, value in ast.iter_fields(tree):
                if isinstance(value, list) and any(v is child for v in value):
                    lst = list(value)
                    lst[next(i for i, v in enumerate(lst) if v is child)] = got
                    setattr(clone, field, lst)
                    return clone
                if value is child:
                    setattr(clone, field, got)
                    return clone
        return None
    result = rec(stmt)
    return stmt if result is None else result
