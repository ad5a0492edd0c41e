"""A whole code object as source: a module, a ``def``/``async def``, or a ``lambda``."""
import ast
import types
from typing import Any, Dict, List, Optional, Tuple

from pellucid.bytecode.features import AST_TYPE_PARAMS
from pellucid.bytecode.normalize import shared_results
from pellucid.decompiler.constants import ConstantPool
from pellucid.decompiler.copy_propagation import fold_temporaries
from pellucid.decompiler.functions import build_arguments, finish_function_body, kind_flags, CO_COROUTINE, CO_ASYNC_GENERATOR
from pellucid.decompiler.statements_cleanup import tidy
from pellucid.decompiler.unparse import unparse



def is_module_code(code: types.CodeType) -> bool:
    return code.co_name == "<module>"


def code_to_ast(code: types.CodeType, name: Optional[str] = None,
                consts: Optional[ConstantPool] = None,
                defaults: Optional[Dict[str, Any]] = None) -> Tuple[ast.Module, ConstantPool]:
    """The module AST holding ``code`` (its body for module code, else one definition)."""
    pool = consts if consts is not None else ConstantPool()
    if is_module_code(code):
        from pellucid.decompiler.annotations_setup import imports_future_annotations
        pool.future_annotations = imports_future_annotations(code)
    from pellucid.decompiler.fallback import body_or_fallback  # fallback when no structured form
    stmts, sub = body_or_fallback(code, pool)
    from pellucid.decompiler.deferred_annotations import keeps_format_check
    if keeps_format_check(code, stmts):
        # (the fallback spells the builtin as builtins' attribute, which no global shadows)
        from pellucid.decompiler.fallback import _NoDeclarations, fallback_statements
        stmts, sub = fallback_statements(code, pool, "the format check raises the builtin "
                                         "NotImplementedError, which source names as a global", True), \
            _NoDeclarations()
    # tidy rewrites only around names LOAD_ASSERTION_ERROR made: none made, nothing to walk for
    tidy_ = tidy if pool.made_assertion else _as_is
    if is_module_code(code):
        if stmts and isinstance(stmts[-1], ast.Return) and stmts[-1].value is None:
            stmts = stmts[:-1]
        stmts = _with_module_declarations(_docstring_before_future(stmts), sub.declarations())
        return tidy_(fold_temporaries(ast.Module(stmts, []))), pool
    body = finish_function_body(code, stmts, sub, nested=False)
    d = defaults or {}
    args = build_arguments(code, d.get("defaults", []), d.get("kwdefaults", {}), d.get("annotations", {}))
    fname = name or (code.co_name if code.co_name.isidentifier() else "__pellucid_function__")
    kind = ast.AsyncFunctionDef if kind_flags(code) & (CO_COROUTINE | CO_ASYNC_GENERATOR) else ast.FunctionDef
    node = kind(fname, args, body or [ast.Pass()], [], d.get("annotations", {}).get("return"))
    if AST_TYPE_PARAMS:
        node.type_params = []
    return tidy_(fold_temporaries(ast.Module([node], []))), pool


def _is_doc_assignment(stmt: Any) -> bool:
    return isinstance(stmt, ast.Assign) and [ast.dump(t) for t in stmt.targets] == [
        ast.dump(ast.Name("__doc__", ast.Store()))]


def _docstring_before_future(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """A module's ``__doc__ = '...'`` written as its docstring when ``from __future__`` imports
    follow, which only a docstring may precede (both compile to the same code)."""
    if len(stmts) >= 2 and _is_doc_assignment(stmts[0]) and isinstance(stmts[0].value, ast.Constant) \
            and isinstance(stmts[0].value.value, str) and isinstance(stmts[1], ast.ImportFrom) \
            and stmts[1].module == "__future__":
        return [ast.copy_location(ast.Expr(stmts[0].value), stmts[0])] + stmts[1:]
    return stmts


def _with_module_declarations(stmts: List[ast.stmt], decls: List[ast.stmt]) -> List[ast.stmt]:
    """``stmts`` of module code with its ``global`` declaration: a name declared global anywhere
    in a module (``class A: global A``, ``def f(): global A``) is stored and loaded with the
    ``*_GLOBAL`` opcodes at its top level too, which only such a declaration gives.  It goes
    after the docstring and ``from __future__`` imports, which must come first."""
    if not decls:
        return stmts
    k = 0
    first = stmts[0] if stmts else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
            and isinstance(first.value.value, str):
        k = 1
    elif _is_doc_assignment(first):
        k = 1  # (a docstring written as the assignment it compiles to)
    while k < len(stmts) and isinstance(stmts[k], ast.ImportFrom) and stmts[k].module == "__future__":
        k += 1
    return stmts[:k] + decls + stmts[k:]


def _as_is(tree: ast.Module) -> ast.Module:
    return tree


def render_code(code: types.CodeType, func: Any = None, name: Optional[str] = None) -> str:
    """Readable source for ``code``; a lambda is shown as ``lambda ...: ...``.

    ``name`` renames the definition (a class attribute bound to a function of another name)."""
    # the structuring, the body's finish and the scope pass each read a code object's
    # instructions (and 3.11+ positions): read them once per code object
    with shared_results():
        return _render_code(code, func, name)


def _render_code(code: types.CodeType, func: Any, name: Optional[str]) -> str:
    pool = ConstantPool()
    from pellucid.decompiler.annotate_host import annotate_host_tree, lazy_value_host_tree
    host = annotate_host_tree(code, pool) or lazy_value_host_tree(code, pool)
    if host is not None:  # (the definition whose annotations make it: what recompile compiles)
        return unparse(host, locate_all=False)
    defaults = defaults_of(func, pool) if func is not None else None
    tree, pool = code_to_ast(code, name=name, consts=pool, defaults=defaults)
    if code.co_name == "<lambda>" and len(tree.body) == 1:
        fn = tree.body[0]
        if len(fn.body) == 1 and isinstance(fn.body[0], ast.Return):
            value = fn.body[0].value or ast.Constant(None)
            return unparse(ast.Expression(ast.Lambda(fn.args, value)), locate_all=False)
    # (the text is all that is kept of the tree: only what the writer reads is located)
    return closure_comment(code, func) + unparse(tree, locate_all=False)


def defaults_of(func: Any, pool: ConstantPool) -> Dict[str, Any]:
    """Default values and annotations of a function object, as expressions.

    (For reading: a default that is a plain list, dict or set is written as its display, which
    makes an equal object where the function holds one.)"""
    out: Dict[str, Any] = {}
    defaults = getattr(func, "__defaults__", None) or ()
    out["defaults"] = [_value_expr(v, pool) for v in defaults]
    kwd = getattr(func, "__kwdefaults__", None) or {}
    out["kwdefaults"] = {k: _value_expr(v, pool) for k, v in kwd.items()}
    annotations = getattr(func, "__annotations__", None)
    if isinstance(annotations, dict):
        out["annotations"] = {k: _annotation_expr(v, pool) for k, v in annotations.items()
                              if isinstance(k, str)}
    return out


_DISPLAYS = (list, dict, set)


def _value_expr(value: Any, pool: ConstantPool) -> ast.expr:
    if type(value) in _DISPLAYS and len(repr(value)) <= 200:
        try:
            tree = ast.parse(repr(value), mode="eval")
            if eval(compile(tree, "<default>", "eval"), {"__builtins__": {}}) == value:  # noqa: S307
                return tree.body
        except Exception:  # noqa: BLE001 - not a plain display
            pass
    return pool.expr(value)


def _annotation_expr(value: Any, pool: ConstantPool) -> ast.expr:
    """An annotation as the expression that names it: a class by its (qualified) name, a
    string annotation (``from __future__ import annotations``) as the expression it spells,
    a typing construct as its repr (``list[int]``, ``typing.Optional[str]``)."""
    text = None
    if isinstance(value, str):
        text = value
    elif isinstance(value, type):
        module = getattr(value, "__module__", "")
        qualname = getattr(value, "__qualname__", "")
        text = qualname if module == "builtins" else "%s.%s" % (module, qualname)
    elif value is None:
        return ast.Constant(None)
    elif getattr(type(value), "__module__", "") in ("typing", "types", "typing_extensions"):
        text = repr(value)
    if text is not None:
        try:
            return ast.parse(text, mode="eval").body
        except SyntaxError:
            if isinstance(value, str):
                return ast.Constant(value)
    return pool.expr(value)


def closure_comment(code: types.CodeType, func: Any) -> str:
    """``# closure: name = value, ...`` for a function object's free variables (empty cells
    and long reprs shortened), or the empty string."""
    cells = getattr(func, "__closure__", None)
    if not cells or not code.co_freevars or len(cells) != len(code.co_freevars):
        return ""
    parts = []
    for name, cell in zip(code.co_freevars, cells):
        try:
            text = repr(cell.cell_contents)
        except ValueError:
            text = "<empty>"
        except Exception:  # noqa: BLE001 - a repr that fails
            text = "<%s>" % type(cell.cell_contents).__name__
        text = " ".join(text.split())
        if len(text) > 60:
            text = text[:57] + "..."
        parts.append("%s = %s" % (name, text))
    return "# closure: %s\n" % ", ".join(parts)
