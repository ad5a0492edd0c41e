"""A 3.14+ ``__annotate__`` function decompiled on its own, as the annotations that make it.

The compiler starts every ``__annotate__`` with ``if format > 2: raise NotImplementedError``,
whose exception is the builtin itself (``LOAD_COMMON_CONSTANT``): no statement compiles to
that but an annotation.  So the source of such a function is a definition carrying its
annotations, and the recompiled code is the ``__annotate__`` CPython makes for them:

* a ``def``'s (the function returns ``{'a': int, 'return': str}``) becomes
  ``def __pellucid_annotated__(a: int) -> str: pass``;
* a class body's (it fills a dict, ``d['x'] = int``) becomes ``class C: x: int``; a module's
  (each entry only if its statement ran) the module ``x: int``.

Where the original was made inside a class (a free variable ``__classdict__``) the definition
goes into a class of the same name.  Its other free variables become type parameters of the
host (``class C[T]:``, ``def f[T](a: T)``): what a generic class's or function's annotations
read, and read the same way (``LOAD_DEREF``, ``LOAD_FROM_DICT_OR_DEREF`` in a class) as a
variable of an enclosing function.  Any other shape (conditional annotations, a name the class
would mangle) gets no host: the usual forms apply.
"""
import ast
import types
from typing import Any, List, Optional

from pellucid.decompiler.errors import StructureError

HOST_FUNCTION = "__pellucid_annotated__"
HOST_CLASS = "__pellucid_host__"
_NOTE = "pellucid: recompiles to the __annotate__ CPython makes for these annotations"


def _is_annotate_code(code: types.CodeType) -> bool:
    return code.co_name == "__annotate__" and code.co_varnames[:1] == ("format",) \
        and code.co_argcount == 1 and getattr(code, "co_posonlyargcount", 0) == 1 \
        and not code.co_kwonlyargcount and not code.co_flags & 0x0C and not code.co_cellvars \
        and all(n == "__classdict__" or n.isidentifier() for n in code.co_freevars)


def _mangled_here(tree: ast.AST) -> bool:
    """Whether a class around ``tree`` would mangle one of its names (``__x``)."""
    for node in ast.walk(tree):
        for attr in ("id", "attr", "arg", "name"):
            v = getattr(node, attr, None)
            if isinstance(v, str) and v.startswith("__") and not v.endswith("__"):
                return True
    return False


def _function_host(annotations: "dict[str, ast.expr]") -> Optional[ast.FunctionDef]:
    names = list(annotations)
    ret = annotations.get("return")
    if "return" in annotations and names[-1] != "return":
        return None
    params = [n for n in names if n != "return"]
    if any(not n.isidentifier() for n in params):
        return None
    positional: List[ast.arg] = []
    vararg: Optional[ast.arg] = None
    kwonly: List[ast.arg] = []
    for n in params:
        value = annotations[n]
        if isinstance(value, ast.Starred):  # ``*args: *Ts``
            if vararg is not None:
                return None
            vararg = ast.arg(n, value)
        elif vararg is None:
            positional.append(ast.arg(n, value))
        else:
            kwonly.append(ast.arg(n, value))
    if ret is not None and isinstance(ret, ast.Starred):
        return None
    args = ast.arguments(posonlyargs=[], args=positional, vararg=vararg, kwonlyargs=kwonly,
                         kw_defaults=[None] * len(kwonly), kwarg=None, defaults=[])
    fn = ast.FunctionDef(HOST_FUNCTION, args, [ast.Expr(ast.Constant(_NOTE))], [], ret)
    fn.type_params = []  # (3.14+ only: AST_TYPE_PARAMS holds)
    return fn


def annotate_host_tree(code: types.CodeType, pool: Any) -> Optional[ast.Module]:
    """The source that compiles to ``code``, a compiler-made ``__annotate__``, or None.

    >>> class C:
    ...     x: int
    >>> tree = annotate_host_tree(C.__annotate__.__code__, ConstantPool())  # doctest: +SKIP
    >>> print(ast.unparse(tree))  # doctest: +SKIP
    class C:
        x: int
    """
    if not _is_annotate_code(code):
        return None
    from pellucid.decompiler.deferred_annotations import _instructions_after_format_check, \
        annotate_entries, function_annotations
    dec = types.SimpleNamespace(consts=pool)
    stub = types.SimpleNamespace(value=code)
    try:
        _, ins, k = _instructions_after_format_check(dec, code)
        body_kind = k < len(ins) and ins[k].op == "BUILD_MAP" and ins[k].arg == 0
        if body_kind:
            entries = annotate_entries(dec, stub)  # type: ignore[arg-type]
        else:
            annotations = function_annotations(dec, stub)  # type: ignore[arg-type]
    except StructureError:
        return None
    in_class = "__classdict__" in code.co_freevars
    params = [ast.TypeVar(n, None) for n in code.co_freevars if n != "__classdict__"]
    if body_kind:
        if not entries or any(not name.isidentifier() for name, _, _ in entries):
            return None
        if not in_class:
            # A module's: every annotation is conditional (on the statement having run),
            # numbered in order; a module of the annotated statements numbers them alike.
            if code.co_freevars or [cond for _, _, cond in entries] != list(range(len(entries))):
                return None
            return ast.fix_missing_locations(ast.Module(
                [ast.AnnAssign(ast.Name(name, ast.Store()), annotation, None, 1)
                 for name, annotation, _ in entries], []))
        if any(cond is not None for _, _, cond in entries):
            return None
        body: List[ast.stmt] = [ast.Expr(ast.Constant(_NOTE))]
        body += [ast.AnnAssign(ast.Name(name, ast.Store()), annotation, None, 1)
                 for name, annotation, _ in entries]
    else:
        fn = _function_host(annotations)
        if fn is None:
            return None
        if not in_class:
            fn.type_params = params
            return ast.fix_missing_locations(ast.Module([fn], []))
        body = [fn]
    qual = getattr(code, "co_qualname", "").split(".")
    name = qual[-2] if len(qual) >= 2 and qual[-2].isidentifier() else HOST_CLASS
    host = ast.ClassDef(name, [], [], body, [])
    host.type_params = params
    if _mangled_here(host):
        return None
    return ast.fix_missing_locations(ast.Module([host], []))



def _is_lazy_value_code(code: types.CodeType) -> bool:
    return code.co_varnames[:1] == (".format",) and code.co_argcount == 1 \
        and code.co_name.isidentifier() and not code.co_name.startswith("__") \
        and not code.co_kwonlyargcount and not code.co_flags & 0x0C and not code.co_cellvars \
        and all(n == "__classdict__" or n.isidentifier() for n in code.co_freevars)


def lazy_value_host_tree(code: types.CodeType, pool: Any) -> Optional[ast.Module]:
    """The source that compiles to ``code``, a 3.14+ lazily evaluated value's function (a type
    alias's value, a type parameter's bound or default), or None.

    Decompiled on its own, its format check keeps the builtin NotImplementedError, which only
    such a value compiles to; the value's function is the same for all three kinds, so it is
    written as a type alias of the function's name: ``type _Func = Callable[..., Any]``.
    """
    if not _is_lazy_value_code(code):
        return None
    from pellucid.decompiler.deferred_annotations import keeps_format_check
    from pellucid.decompiler.fallback import body_or_fallback
    try:
        stmts, _ = body_or_fallback(code, pool)
    except StructureError:
        return None
    if len(stmts) != 2 or not keeps_format_check(code, stmts) or not isinstance(stmts[1], ast.Return) \
            or stmts[1].value is None:
        return None
    params = [ast.TypeVar(n, None) for n in code.co_freevars if n != "__classdict__"]
    if any(p.name == code.co_name for p in params):
        return None
    in_class = "__classdict__" in code.co_freevars
    alias = ast.TypeAlias(ast.Name(code.co_name, ast.Store()), [] if in_class else params, stmts[1].value)
    if not in_class:
        return ast.fix_missing_locations(ast.Module([alias], []))
    qual = getattr(code, "co_qualname", "").split(".")
    name = qual[-2] if len(qual) >= 2 and qual[-2].isidentifier() else HOST_CLASS
    host = ast.ClassDef(name, [], [], [alias], [])
    host.type_params = params  # (read through the class namespace first, as the original's)
    if _mangled_here(host):
        return None
    return ast.fix_missing_locations(ast.Module([host], []))
