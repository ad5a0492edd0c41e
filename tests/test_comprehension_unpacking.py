"""When an extend of a display is read as an unpacking comprehension (PEP 798, 3.15).

3.15 compiles ``[*xs for xs in xss]`` as an inlined comprehension whose loop extends its empty
result display (``LIST_EXTEND`` reaching past the loop's iterator).  Dynamo's generated code
extends lists too, some of them built under other stack values: only the compiler's exact shape
is a comprehension, and only where the running Python has the syntax.
"""
import ast

import pytest

from pellucid.bytecode import features
from pellucid.decompiler import markers as M
from pellucid.decompiler.stack_machine import _comprehension_result


def _xs():
    return M.Iterator(ast.Name("xs", ast.Load()))


def test_empty_display_under_iterators_is_a_comprehension_only_with_the_syntax():
    assert _comprehension_result([ast.List([], ast.Load()), _xs()], 2) is features.COMPREHENSION_UNPACKING
    assert _comprehension_result([ast.Set([]), _xs(), _xs()], 3) is features.COMPREHENSION_UNPACKING
    assert _comprehension_result([ast.Dict([], []), _xs()], 2) is features.COMPREHENSION_UNPACKING


@pytest.mark.parametrize("stack, arg", [
    ([ast.List([ast.Constant(1)], ast.Load()), _xs()], 2),      # a display with items
    ([ast.List([], ast.Load()), ast.List([], ast.Load())], 2),  # Dynamo: a list under a list
    ([ast.List([], ast.Load()), _xs(), ast.Name("y", ast.Load())], 3),  # not only iterators
    ([_xs(), ast.List([], ast.Load())], 1),                      # the display above the iterator
])
def test_other_extends_are_extends(stack, arg):
    assert not _comprehension_result(stack, arg)


@pytest.mark.skipif(not features.COMPREHENSION_UNPACKING, reason="no unpacking in comprehensions before 3.15")
def test_unpacking_comprehensions_round_trip():
    import pellucid

    ns = {}
    exec("def f(xss, ds):\n    return [*xs for xs in xss], {*xs for xs in xss if xs}, {**d for d in ds}\n", ns)
    f = ns["f"]
    text = pellucid.decompile(f)
    assert "[*xs for xs in xss]" in text and "{**d for d in ds}" in text, text
    g = ns.copy()
    exec(text, g)
    args = ([[1, 2], [], [3]], [{1: 2}, {3: 4, 1: 5}])
    assert g["f"](*args) == f(*args)
