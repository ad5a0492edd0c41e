"""The implicit ``return`` of module code and class bodies, which no source statement can say.

Module code and class bodies end each path with ``RETURN_VALUE`` (``None``, or a class body's
``__classcell__``), and the compiler copies that return into branches (3.10+ duplicates small
exit blocks), so the structured decompiler emits ``return`` statements where only falling off
the end is allowed.  :func:`drop_implicit_returns` rewrites them into what source can say:

* a ``return`` where execution would reach the end anyway (the last statement of the body, of
  an ``if`` branch, ``with`` or ``try`` body that is itself last ...) is dropped, with the dead
  statements after it;
* an ``if`` whose branch returns, followed by more statements, takes those statements into its
  other branch, so the return becomes last; a ``try`` (without ``finally``) whose ``except``
  clauses all return takes them into its ``else`` block;
* a ``return`` in the body of a loop that is itself last becomes ``break`` (the loop's ``else``
  is skipped either way, ``finally`` blocks run either way).

Any other ``return`` (inside a ``finally`` block, a nested loop, a loop followed by statements)
raises :class:`StructureError`, and the caller falls back.
"""
import ast
from typing import List

from pellucid.decompiler.errors import StructureError

# What a `return` at a given place means for the rest of the body.
_TAIL = "tail"        # nothing runs after this statement list: drop the return
_BREAKS = "breaks"    # directly in the body of a last loop: the return becomes `break`
_NONE = "none"        # anything else: no source form


def drop_implicit_returns(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """``stmts`` (a module or class body) without ``return`` statements; raises
    :class:`StructureError` for one that cannot be expressed without it."""
    return _block(list(stmts), _TAIL)


def _block(stmts: List[ast.stmt], ctx: str) -> List[ast.stmt]:
    out: List[ast.stmt] = []
    for i, s in enumerate(stmts):
        # a statement followed by a return is as good as last
        last = i == len(stmts) - 1 or isinstance(stmts[i + 1], ast.Return)
        if isinstance(s, ast.Return):
            # the statements after a return never run
            if ctx == _TAIL:
                return out
            if ctx == _BREAKS:
                out.append(ast.Break())
                return out
            raise StructureError("a return in module code or a class body that is not its end")
        if ctx == _TAIL and not last and isinstance(s, ast.If) and (
                _always_returns(s.body) or _always_returns(s.orelse)):
            rest = stmts[i + 1:]
            if not _always_returns(s.body):
                s.body = s.body + rest
            elif not _always_returns(s.orelse):
                s.orelse = s.orelse + rest
            out.append(_statement(s, _TAIL))
            return out
        if ctx == _TAIL and not last and isinstance(s, ast.Try) and not s.finalbody \
                and s.handlers and all(_always_returns(h.body) for h in s.handlers):
            # the statements after it run only when the body completes: its `else` block
            s.orelse = s.orelse + stmts[i + 1:]
            out.append(_statement(s, _TAIL))
            return out
        out.append(_statement(s, ctx if last or ctx == _BREAKS else _NONE))
    return out


def _statement(s: ast.stmt, ctx: str) -> ast.stmt:
    """``s`` with the returns of its blocks rewritten; ``ctx`` is what follows ``s``."""
    if isinstance(s, ast.If):
        s.body = _block(s.body, ctx) or [ast.Pass()]
        s.orelse = _block(s.orelse, ctx)
    elif isinstance(s, (ast.With, ast.AsyncWith)):
        s.body = _block(s.body, ctx) or [ast.Pass()]
    elif isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
        s.body = _block(s.body, _BREAKS if ctx == _TAIL else _NONE) or [ast.Pass()]
        s.orelse = _block(s.orelse, ctx)
    elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
        # in a last `try`, a return in the body skips the `else` block: dropping it would not
        body_ctx = _NONE if ctx == _TAIL and s.orelse else ctx  # type: ignore[attr-defined]
        s.body = _block(s.body, body_ctx) or [ast.Pass()]  # type: ignore[attr-defined]
        for h in s.handlers:  # type: ignore[attr-defined]
            h.body = _block(h.body, ctx) or [ast.Pass()]
        s.orelse = _block(s.orelse, ctx)  # type: ignore[attr-defined]
        # a return in `finally` would swallow the exception being propagated
        s.finalbody = _block(s.finalbody, _NONE)  # type: ignore[attr-defined]
    elif type(s).__name__ == "Match":
        for case in s.cases:  # type: ignore[attr-defined]
            case.body = _block(case.body, ctx) or [ast.Pass()]
    return s


def _always_returns(stmts: List[ast.stmt]) -> bool:
    if not stmts:
        return False
    s = stmts[-1]
    if isinstance(s, ast.Return):
        return True
    return isinstance(s, ast.If) and _always_returns(s.body) and _always_returns(s.orelse)
