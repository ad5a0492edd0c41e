"""Comprehensions and generator expressions, from a nested code object (≤3.11, and every
``<genexpr>``) or from a loop inlined into the enclosing code (3.12+ list/set/dict comprehensions).

Either way the loop is first decompiled as statements (``for``/``if``/``continue`` around a
pseudo-statement that appends to the result), then read back as comprehension clauses.
"""
import ast
import types
from typing import Any, List, Optional, Tuple

from pellucid.decompiler import markers as M
from pellucid.decompiler.errors import StructureError
from pellucid.decompiler.stack_machine import ITEM, CompAppend


def _filter(stmt: ast.stmt) -> Optional[Tuple[ast.expr, List[ast.stmt]]]:
    """``stmt`` as one filter and what it guards: ``if t: S``, or a conditional expression as
    the test -- ``if c: <filter a: S> else: <filter b: S>`` (the compiler tests ``a`` or ``b``
    where ``(a if c else b)`` would be tested, so the structurer sees two copies of ``S``) is
    ``if (a if c else b): S``."""
    if not isinstance(stmt, ast.If):
        return None
    if not stmt.orelse:
        return stmt.test, stmt.body
    if len(stmt.body) != 1 or len(stmt.orelse) != 1:
        return None
    yes, no = _filter(stmt.body[0]), _filter(stmt.orelse[0])
    if yes is None or no is None or [ast.dump(s) for s in yes[1]] != [ast.dump(s) for s in no[1]]:
        return None
    return ast.IfExp(stmt.test, yes[0], no[0]), yes[1]


def clauses_from_loop(loop: ast.stmt) -> Tuple[List[ast.comprehension], Any]:
    """Split ``for ...: [if ...:] append(x)`` into comprehension clauses and the element."""
    gens: List[ast.comprehension] = []
    element: Any = None
    node: Any = loop
    while True:
        if isinstance(node, (ast.For, ast.AsyncFor)):
            if node.orelse:
                raise StructureError("comprehension loop with else")
            gens.append(ast.comprehension(node.target, node.iter, [],
                                          1 if isinstance(node, ast.AsyncFor) else 0))
            body = node.body
        else:
            raise StructureError("not a comprehension loop")
        while True:
            guarded = _filter(body[0]) if len(body) == 1 else None
            if guarded is not None:
                gens[-1].ifs.append(guarded[0])
                body = guarded[1]
                continue
            if len(body) >= 2 and isinstance(body[0], ast.If) and body[0].body == [] :
                raise StructureError("odd comprehension filter")
            if len(body) >= 2 and isinstance(body[0], ast.If) and len(body[0].body) == 1 \
                    and isinstance(body[0].body[0], ast.Continue) and not body[0].orelse:
                from pellucid.decompiler.structure import negate
                gens[-1].ifs.append(negate(body[0].test))
                body = body[1:]
                continue
            break
        if len(body) == 1 and isinstance(body[0], (ast.For, ast.AsyncFor)):
            node = body[0]
            continue
        if len(body) == 1 and isinstance(body[0], CompAppend):
            element = body[0]
            break
        if len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Yield):
            element = body[0].value
            break
        raise StructureError("comprehension body is not a single element")
    return gens, element


def make_comprehension(gens: List[ast.comprehension], element: Any) -> ast.expr:
    last = gens[-1]
    if isinstance(element, ast.Yield) and len(gens) > 1 and isinstance(last.target, ast.Name) \
            and last.target.id == ITEM and not last.ifs and not last.is_async \
            and isinstance(element.value, ast.Name) and element.value.id == ITEM:
        # ``(*xs for xs in xss)`` (3.15, PEP 798): the innermost loop yields each item of xs
        return ast.GeneratorExp(ast.Starred(last.iter, ast.Load()), gens[:-1])
    if isinstance(element, ast.Yield):
        return ast.GeneratorExp(element.value if element.value is not None else ast.Constant(None), gens)
    if element.kind == "list":
        return ast.ListComp(element.value, gens)
    if element.kind == "set":
        return ast.SetComp(element.value, gens)
    return ast.DictComp(element.key, element.value, gens)


class ComprehensionBuilder:
    """Mixin over the body decompiler."""

    def comprehension_from_code(self, code: types.CodeType, iterable: Any) -> ast.expr:
        stmts = self.nested_body(code, comprehension=True)
        if len(stmts) == 1 and isinstance(stmts[0], ast.Return) \
                and isinstance(stmts[0].value, (ast.ListComp, ast.SetComp, ast.DictComp)):
            comp = stmts[0].value  # the loop already folded over its accumulator
        else:
            # A generator expression: one loop yielding, then ``return None``.
            if stmts and isinstance(stmts[-1], ast.Return) and stmts[-1].value is None:
                stmts = stmts[:-1]
            if len(stmts) != 1:
                raise StructureError("comprehension code is not one loop")
            gens, element = clauses_from_loop(stmts[0])
            comp = make_comprehension(gens, element)
        it = iterable.value if isinstance(iterable, M.Iterator) else self.value(iterable)
        first = comp.generators[0]
        if not (isinstance(first.iter, ast.Name) and first.iter.id == ".0"):
            raise StructureError("comprehension does not iterate over its argument")
        first.iter = it
        return comp

    def inline_comprehension(self, loop: ast.stmt, stack: List[Any]) -> Optional[ast.expr]:
        """3.12+: a loop appending to an empty display on the stack is that comprehension."""
        if not stack:
            return None
        acc = stack[-1]
        empty_set = isinstance(acc, ast.Call) and isinstance(acc.func, ast.Name) \
            and acc.func.id == "set" and not acc.args  # BUILD_SET 0
        if not empty_set:
            if not isinstance(acc, (ast.List, ast.Set, ast.Dict)):
                return None
            if (isinstance(acc, ast.Dict) and acc.keys) or (not isinstance(acc, ast.Dict) and acc.elts):
                return None
        has_append = any(isinstance(n, CompAppend) for n in ast.walk(loop))
        if not has_append:
            return None
        gens, element = clauses_from_loop(loop)
        return make_comprehension(gens, element)
