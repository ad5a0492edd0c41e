"""Module and class bodies whose ``__annotations__`` must be set up again on recompiling.

CPython starts a module or class body with SETUP_ANNOTATIONS (which creates ``__annotations__``)
when an annotated assignment appears anywhere in it outside nested definitions, even one that
stores nothing in ``__annotations__``: ``a.b: int = 1`` and ``a[0]: int`` only evaluate their
target and annotation, ``(x): int`` only its annotation, and under ``from __future__ import
annotations`` nothing at all.  Decompiled, those are plain stores and expressions, so the
recompiled body would lack ``__annotations__``.  An annotated statement must be written back.
"""
import ast
import types
from typing import Any, Callable, Dict, Iterator, List, Optional

from pellucid.bytecode.features import AST_TRY_STAR

# What a compiler's annotation search looks into: nested statement lists, not definitions.
# (``match`` is left out: where it is not searched, a statement is added, which is harmless.)
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try) \
    + ((getattr(ast, "TryStar"),) if AST_TRY_STAR else ())

# Expressions that read as an annotation: a name, a dotted or subscripted type, a string.
_ANNOTATION_LIKE = (ast.Name, ast.Attribute, ast.Subscript, ast.Constant)


def sets_up_annotations(code: types.CodeType, instrs: List[object]) -> bool:
    """Whether ``code`` (module or class body) creates ``__annotations__`` (at its start, after
    a class body's bookkeeping stores)."""
    return not code.co_flags & 0x01 and any(getattr(i, "op", None) == "SETUP_ANNOTATIONS"
                                            for i in instrs)


def _statement_lists(stmts: List[ast.stmt]) -> Iterator[List[ast.stmt]]:
    """``stmts`` and every statement list nested in it that the annotation search sees."""
    yield stmts
    for st in stmts:
        if not isinstance(st, _COMPOUND):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(st, field, None)
            if inner:
                yield from _statement_lists(inner)
        for h in getattr(st, "handlers", None) or []:
            yield from _statement_lists(h.body)


def _has_annotation(stmts: List[ast.stmt]) -> bool:
    return any(isinstance(st, ast.AnnAssign) for block in _statement_lists(stmts) for st in block)


def _join_pairs(stmts: List[ast.stmt], joined_of: Callable[[ast.stmt, ast.stmt], Optional[ast.stmt]],
                once: bool) -> bool:
    """Replace, in place, each two adjacent statements that ``joined_of`` makes one of (only
    the first pair with ``once``); whether any was."""
    found = False
    for block in _statement_lists(stmts):
        k = 0
        while k < len(block) - 1:
            joined = joined_of(block[k], block[k + 1])
            if joined is not None:
                block[k:k + 2] = [joined]
                if once:
                    return True
                found = True
            k += 1
    return found


def _store_then_expression(st: ast.stmt, nxt: ast.stmt) -> Optional[ast.stmt]:
    # ``a.b = v`` then the expression ``T``: value, store, the annotation evaluated and dropped
    if isinstance(st, ast.Assign) and len(st.targets) == 1 \
            and isinstance(st.targets[0], (ast.Attribute, ast.Subscript)) \
            and isinstance(nxt, ast.Expr) and isinstance(nxt.value, _ANNOTATION_LIKE) \
            and not getattr(st, "type_comment", None):
        return ast.AnnAssign(st.targets[0], nxt.value, st.value, 0)
    return None


def _store_then_annotation(st: ast.stmt, nxt: ast.stmt) -> Optional[ast.stmt]:
    # ``x = v`` then ``x: T``: value, store, then ``__annotations__['x'] = T``
    if isinstance(st, ast.Assign) and len(st.targets) == 1 \
            and isinstance(st.targets[0], ast.Name) and not getattr(st, "type_comment", None) \
            and isinstance(nxt, ast.AnnAssign) and nxt.value is None and nxt.simple \
            and isinstance(nxt.target, ast.Name) and nxt.target.id == st.targets[0].id:
        joined = ast.AnnAssign(st.targets[0], nxt.annotation, st.value, 1)
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset", "_pos"):
            if attr in st.__dict__:
                setattr(joined, attr, st.__dict__[attr])
        return joined
    return None


def join_stores_and_annotations(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """``x = v`` then ``x: T`` -> ``x: T = v``, in place, in a module or class body whose
    annotations are evaluated (before 3.14): the compiler writes the annotated assignment as
    exactly those two (value, store, then ``__annotations__['x'] = T``), so the joined form is
    the same code and reads as the source did (``lock: RLock = field(...)`` in a dataclass).

    >>> body = ast.parse("x = 0; x: int").body
    >>> [type(st).__name__ for st in join_stores_and_annotations(body)]
    ['AnnAssign']
    """
    _join_pairs(stmts, _store_then_annotation, once=False)
    return stmts


def keep_annotations_setup(stmts: List[ast.stmt], future_annotations: bool) -> List[ast.stmt]:
    """``stmts`` (a body that sets up ``__annotations__``) with an annotated statement in it.

    Where a store is followed by what reads as its annotation, the two become one annotated
    assignment (with ``from __future__ import annotations`` the annotation leaves no code, so
    there is nothing to pair).  Otherwise ``if None: (__annotations__): None`` is added, which
    the compiler drops entirely except for its effect of setting ``__annotations__`` up."""
    if _has_annotation(stmts):
        return stmts
    # (``a.b = v`` then the expression ``T`` is ``a.b: T = v``: the same code in a module or
    # class body; one such pair is enough to keep the setup)
    if not future_annotations and _join_pairs(stmts, _store_then_expression, once=True):
        return stmts
    marker = ast.AnnAssign(ast.Name("__annotations__", ast.Store()), ast.Constant(None), None, 0)
    return list(stmts) + [ast.If(ast.Constant(None), [marker], [])]


def spelled_annotation(text: str) -> Optional[ast.expr]:
    """The expression whose annotation ``from __future__ import annotations`` stores as ``text``,
    or None where the compiler would not write that expression back as the same text.

    >>> ast.dump(spelled_annotation("list[int]").value)
    "Name(id='list', ctx=Load())"
    """
    try:
        parsed = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    from pellucid.decompiler.unparse import unparse
    return parsed if unparse(ast.Expression(parsed)) == text else None


def spelled_annotations(annotations: Dict[str, ast.expr], code: types.CodeType,
                        pool: Any) -> Optional[Dict[str, ast.expr]]:
    """A function's ``annotations`` as written in its ``def``: where the source written imports
    the annotations future (``pool.future_annotations``) and ``code`` was compiled under it,
    the texts it stored become the expressions they spell; None where one has no such spelling.
    Elsewhere ``annotations`` as they are (a text stays a string literal)."""
    if not (pool.future_annotations and code.co_flags & 0x1000000):
        return annotations
    spelled = {}
    for name, ann in annotations.items():
        parsed = spelled_annotation(ann.value) \
            if isinstance(ann, ast.Constant) and isinstance(ann.value, str) else None
        if parsed is None:
            return None
        spelled[name] = parsed
    return spelled


def imports_future_annotations(code: types.CodeType) -> bool:
    """``code`` is a module's code that says ``from __future__ import annotations`` (not only
    compiled with the flag, which source would not repeat)."""
    return bool(code.co_flags & 0x1000000) and "__future__" in code.co_names \
        and any(isinstance(k, tuple) and "annotations" in k for k in code.co_consts)


def future_annotations(code: types.CodeType) -> bool:
    """``from __future__ import annotations`` is in effect for ``code``."""
    return bool(code.co_flags & 0x1000000)

