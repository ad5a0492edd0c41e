"""Local variables that the decompiled source of a function never binds.

A name is local to a function when the function binds it anywhere, even in code that never runs
or leaves no instruction: an annotation without a value (``A: int``) makes ``A`` local and
compiles to nothing, and 3.13 drops an ``except`` clause whose ``try`` body cannot raise.  Its
reads are then ``LOAD_FAST`` (``UnboundLocalError``).  Decompiled without the binding, the
same reads would look the name up as a global.  Each such local is declared again with an
annotation, which (in a function, 3.8-3.13) is not evaluated and leaves no code.
"""
import ast
import types
from typing import List, Set

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08


def _bound_or_deleted(body: List[ast.stmt]) -> Set[str]:
    """Names ``body`` binds or deletes in its own scope (comprehension targets included: 3.12+
    inlines comprehensions, whose variables are then the function's locals)."""
    names: Set[str] = set()
    work: List[ast.AST] = list(body)
    while work:
        node = work.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif type(node).__name__ in ("MatchAs", "MatchStar") and getattr(node, "name", None):
            names.add(node.name)  # type: ignore[attr-defined]
        elif type(node).__name__ == "MatchMapping" and getattr(node, "rest", None):
            names.add(node.rest)  # type: ignore[attr-defined]
        if isinstance(node, _DEFINITIONS):
            names.add(node.name)
            work.extend(node.decorator_list)
            if isinstance(node, ast.ClassDef):
                work.extend(node.bases)
                work.extend(node.keywords)
            else:
                work.append(node.args)
            continue
        if isinstance(node, ast.Lambda):
            work.append(node.args)
            continue
        work.extend(ast.iter_child_nodes(node))
    return names


def declare_unbound_locals(code: types.CodeType, body: List[ast.stmt]) -> List[ast.stmt]:
    """``body`` with ``name: None`` for each local of ``code`` (not an argument) that it never
    binds, after the docstring and declarations at its head."""
    nargs = code.co_argcount + code.co_kwonlyargcount
    nargs += bool(code.co_flags & _CO_VARARGS) + bool(code.co_flags & _CO_VARKEYWORDS)
    local = [n for n in code.co_varnames[nargs:] if n.isidentifier()]
    if not local:
        return body
    bound = _bound_or_deleted(body)
    missing = [n for n in local if n not in bound]
    if not missing:
        return body
    k = 0
    while k < len(body) and (isinstance(body[k], (ast.Global, ast.Nonlocal)) or (
            k == 0 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str))):
        k += 1
    decls: List[ast.stmt] = [ast.AnnAssign(ast.Name(n, ast.Store()), ast.Constant(None), None, 1)
                             for n in missing]
    return body[:k] + decls + body[k:]
