"""Shortcuts the decompiler takes on long (Dynamo) functions give what the long way gives.

Each test runs both ways over the code objects of a few standard library modules (every
supported Python): the position table read per instruction against the one built over every
code unit, ``first_shared``'s answer from the statement's nodes against the one from its
evaluation order, and the statements-only locating of ``unparse`` against locating every node.
"""
import ast
import dis
import json
import textwrap
import types
from typing import Iterator, List

import pytest

from pellucid.bytecode.positions import instruction_positions, position_at, position_units
from pellucid.decompiler import sharing
from pellucid.decompiler.render import code_to_ast
from pellucid.decompiler.tree_nodes import all_nodes, copy_tree
from pellucid.decompiler.unparse import unparse


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _module_codes() -> List[types.CodeType]:
    out: List[types.CodeType] = []
    for module in (json.decoder, textwrap, dis):
        with open(module.__file__, encoding="utf-8") as fh:
            out.extend(_codes(compile(fh.read(), module.__file__, "exec")))
    return out


CODES = _module_codes()


def test_position_units_give_instruction_positions():
    for code in CODES:
        units = position_units(code)
        table = instruction_positions(code)
        for offset in range(-2, len(code.co_code) + 2, 2):
            assert position_at(units, offset) == table.get(offset), (code.co_name, offset)


def test_unparse_locating_statements_only_gives_the_same_text():
    checked = 0
    for code in CODES:
        if code.co_name.startswith("<") and code.co_name != "<module>":
            continue
        try:
            tree, _ = code_to_ast(code)
        except Exception:  # (the fallback's own errors are not what this test is about)
            continue
        every = unparse(copy_tree(tree))
        statements_only = copy_tree(tree)
        assert unparse(statements_only, locate_all=False) == every, code.co_name
        for node in ast.walk(statements_only):
            if isinstance(node, (ast.stmt, ast.excepthandler)):
                assert hasattr(node, "lineno"), code.co_name
        checked += 1
    assert checked > 50


def _shared_by_evaluation_order(stmt, stack):
    """``first_shared``'s test before its shortcut: counts from ``eval_order``."""
    counts = {}
    for node, _, _ in sharing.eval_order(stmt):
        if sharing.is_copied(node):
            counts[id(node)] = counts.get(id(node), 0) + 1
    on_stack = set()
    for v in stack:
        if isinstance(v, ast.AST):
            for n in all_nodes(v):
                if id(n) in counts:
                    on_stack.add(id(n))
    return any(c > 1 or i in on_stack for i, c in counts.items())


@pytest.mark.parametrize("source", [
    "f(a.b, a.b)",
    "x = g(h(1), [h(1)])",
    "y = (lambda: a.b)() + a.b",
    "z = [a.b for q in r] + [a.b]",
    "w = a.b",
])
def test_shared_from_nodes_agrees_with_evaluation_order(source):
    stmt = ast.parse(source).body[0]
    copied = [n for n in ast.walk(stmt) if isinstance(n, (ast.Attribute, ast.Call, ast.List))]
    # the same node object used twice, as COPY makes it; every node marked as copied
    for n in copied:
        n._copied = True
    first = next((n for n in ast.walk(stmt) if isinstance(n, ast.Attribute)), None)
    if first is not None and isinstance(stmt.value, ast.Call) and stmt.value.args:
        stmt.value.args[-1] = first
    for stack in ([], [first] if first is not None else [], [ast.Name("q", ast.Load())]):
        nodes = all_nodes(stmt)
        if not any(isinstance(n, sharing.SCOPES) for n in nodes):
            assert sharing._shared_in(nodes, stack) == _shared_by_evaluation_order(stmt, stack)
        elif not sharing._shared_in(nodes, stack):
            assert not _shared_by_evaluation_order(stmt, stack)
