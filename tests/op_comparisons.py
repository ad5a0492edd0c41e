"""Which ops a function's source compares its ``op`` against: for tests that check a table of
ops a shortcut consults names exactly the ops the function has a branch for."""
import ast
import inspect
import textwrap
import types
from typing import Any, Set


def ops_compared(function: Any, module: types.ModuleType, shortcut: str) -> Set[str]:
    """Every op in ``op == "X"``, ``op != "X"``, ``op in ("X", ...)`` or ``op in TABLE`` (a name
    of ``module``) in ``function``'s source, leaving out the test against the table
    ``shortcut`` itself (the one being checked); any other comparison of ``op`` is an error."""
    tested: Set[str] = set()
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(function)))):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "op":
            for cmp_op, right in zip(node.ops, node.comparators):
                if isinstance(right, ast.Name) and right.id == shortcut:
                    continue
                if isinstance(cmp_op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Constant):
                    tested.add(right.value)
                elif isinstance(cmp_op, ast.In) and isinstance(right, (ast.Tuple, ast.Set, ast.List)):
                    tested.update(e.value for e in right.elts if isinstance(e, ast.Constant))
                elif isinstance(cmp_op, ast.In) and isinstance(right, ast.Name):
                    tested.update(getattr(module, right.id))
                else:
                    raise AssertionError("unexpected test of op: %s" % ast.dump(node))
    return tested
