"""pellucid's own names in a class body: unbound at its end, so they are no class attributes.

A class body's local variables are the class's attributes.  The temporaries of the structured
decompiler (``__pellucid_t1``) and the fallback's state (``__pellucid_state``, its stack slots,
``import builtins as __pellucid_builtins``, its marker) would be left on the class; the body
ends by rebinding them all (``except ... as n`` may have unbound one) and deleting them.
"""
import ast
from typing import List, Set

OWN_PREFIX = "__pellucid"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)


def unbind_own_names(body: List[ast.stmt]) -> List[ast.stmt]:
    """``body`` followed by ``<own names> = None`` and ``del <own names>`` if it binds any."""
    names = sorted(n for n in _bound_names(body) if n.startswith(OWN_PREFIX))
    if not names:
        return body
    targets: List[ast.expr] = [ast.Name(n, ast.Store()) for n in names]
    rebind = ast.Assign(targets, ast.Constant(None))
    unbind = ast.Delete([ast.Name(n, ast.Del()) for n in names])
    return body + [rebind, unbind]


def _bound_names(body: List[ast.stmt]) -> Set[str]:
    """Names bound in the scope whose statements are ``body`` (not in nested scopes; a nested
    definition binds its own name, which is taken)."""
    names: Set[str] = set()
    work: List[ast.AST] = list(body)
    while work:
        node = work.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            # decorators, defaults, bases are evaluated in this scope
            work.extend(node.decorator_list)
            if isinstance(node, ast.ClassDef):
                work.extend(node.bases)
                work.extend(node.keywords)
            else:
                work.append(node.args)
            continue
        if isinstance(node, _SCOPES):
            continue  # a walrus in a comprehension binds here, but never a pellucid name
        work.extend(ast.iter_child_nodes(node))
    return names
