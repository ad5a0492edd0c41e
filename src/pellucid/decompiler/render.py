"""A whole code object as source: a module, a ``def``/``async def``, or a ``lambda``."""
import ast
import types
from typing import Any, Dict, Optional, Tuple

from pellucid.bytecode.features import AST_TYPE_PARAMS
from pellucid.decompiler.constants import ConstantPool
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
        return tidy_(ast.Module(stmts, [])), pool
    body = finish_function_body(code, stmts, sub)
    d = defaults or {}
    args = build_arguments(code, d.get("defaults", []), d.get("kwdefaults", {}), d.get("annotations", {}))
    fname = name or (code.co_name if code.co_name.isidentifier() else "__pellucid_function__")
    kind = ast.AsyncFunctionDef if kind_flags(code) & (CO_COROUTINE | CO_ASYNC_GENERATOR) else ast.FunctionDef
    node = kind(fname, args, body or [ast.Pass()], [], d.get("annotations", {}).get("return"))
    if AST_TYPE_PARAMS:
        node.type_params = []
    return tidy_(ast.Module([node], [])), pool


def _as_is(tree: ast.Module) -> ast.Module:
    return tree


def render_code(code: types.CodeType, func: Any = None, name: Optional[str] = None) -> str:
    """Readable source for ``code``; a lambda is shown as ``lambda ...: ...``.

    ``name`` renames the definition (a class attribute bound to a function of another name)."""
    pool = ConstantPool()
    defaults = defaults_of(func, pool) if func is not None else None
    tree, pool = code_to_ast(code, name=name, consts=pool, defaults=defaults)
    if code.co_name == "<lambda>" and len(tree.body) == 1:
        fn = tree.body[0]
        if len(fn.body) == 1 and isinstance(fn.body[0], ast.Return):
            value = fn.body[0].value or ast.Constant(None)
            return unparse(ast.Expression(ast.Lambda(fn.args, value)))
    return unparse(tree)


def defaults_of(func: Any, pool: ConstantPool) -> Dict[str, Any]:
    """Default values and annotations of a function object, as expressions."""
    out: Dict[str, Any] = {}
    defaults = getattr(func, "__defaults__", None) or ()
    out["defaults"] = [pool.expr(v) for v in defaults]
    kwd = getattr(func, "__kwdefaults__", None) or {}
    out["kwdefaults"] = {k: pool.expr(v) for k, v in kwd.items()}
    return out
