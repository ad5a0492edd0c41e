"""The source writer: parentheses only where the grammar needs them, docstrings as docstrings,
long statements wrapped -- and the text always parses back to the same tree.

On 3.8 the writer is :mod:`pellucid.decompiler.unparse38` (astunparse's statements, pellucid's
expressions); on 3.9+ it is ``ast``'s own, with long calls and displays wrapped.  Either way a
wrong parenthesis changes the tree, so every case, and every module of a slice of the standard
library, is written and parsed again and compared with the tree it came from.
"""
import ast
import os
import sys
import sysconfig

import pytest

from pellucid.decompiler.unparse import LONG_LINE, unparse
from pellucid.decompiler.unparse38 import docstring_literal


def _same_tree(source):
    tree = ast.parse(source)
    text = unparse(tree)
    assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(source)), text
    return text


# (source, the text expected) -- the 3.8 readability items of issue 18 and their neighbours; a
# pair is (3.8's text, ast's own text on 3.9+) where ``ast.unparse`` adds parentheses of its own
EXACT = [
    ("while a < n:\n    a += 1", "while a < n:\n    a += 1"),
    ("def g():\n    x = yield a\n    yield a\n    y = (yield)", None),
    ("flags = re.VERBOSE | re.MULTILINE | re.DOTALL", "flags = re.VERBOSE | re.MULTILINE | re.DOTALL"),
    ("x = a - (b - c)", "x = a - (b - c)"),
    ("x = (a - b) - c", "x = a - b - c"),
    ("x = -a ** 2", "x = -a ** 2"),
    ("x = (-a) ** 2", "x = (-a) ** 2"),
    ("x = a ** -b", ("x = a ** -b", "x = a ** (-b)")),
    ("x = (a ** b) ** c", "x = (a ** b) ** c"),
    ("x = a ** b ** c", "x = a ** b ** c"),
    ("x = not a == b", "x = not a == b"),
    ("x = (not a) == b", "x = (not a) == b"),
    ("x = a if b else c if d else e", "x = a if b else c if d else e"),
    ("x = (a if b else c) if d else e", "x = (a if b else c) if d else e"),
    ("x = (lambda: 1) or 2", "x = (lambda: 1) or 2"),
    ("x = lambda: (yield)", None),
    ("x = (a, b)", "x = (a, b)"),
    ("f((a, b), *c, **d)", "f((a, b), *c, **d)"),
    ("x = a[1:2, 3]", "x = a[1:2, 3]"),
    ("x = (1).real", ("x = (1).real", "x = 1 .real")),
    ("x = (-1) .real", None),
    ("x = [i for i in (a if b else c) if i]", "x = [i for i in (a if b else c) if i]"),
    ("x = (y := 3)", "x = (y := 3)"),
    ("x = a < b < c", "x = a < b < c"),
    ("x = (a < b) < c", "x = (a < b) < c"),
    ("x = await_(a) if b else c", "x = await_(a) if b else c"),
    ("x = f'{a + b!r:>{w}}'", None),
    ("x = {**a, 'b': c}", "x = {**a, 'b': c}"),
    ("x = (a or b) and c", "x = (a or b) and c"),
    ("x = a or b and c", ("x = a or b and c", "x = a or (b and c)")),
    ("x = a + -1", "x = a + -1"),
    ("x = 2 ** -1", ("x = 2 ** -1", "x = 2 ** (-1)")),
    ("x = (-2) ** 2", "x = (-2) ** 2"),
    ("async def g():\n    return await a ** 2", None),
    ("del a, b[0]", "del a, b[0]"),
    ("for a, b in c, d:\n    pass", "for a, b in (c, d):\n    pass"),
]


# What ast.unparse of 3.9 and 3.10 writes (pellucid uses CPython's writer from 3.9 on): a space
# before a lambda's colon, parentheses around a for statement's target and iterable tuples;
# 3.11's writer dropped both.
WRITER_3_9_3_10 = {
    "x = (lambda: 1) or 2": "x = (lambda : 1) or 2",
    "for a, b in c, d:\n    pass": "for (a, b) in (c, d):\n    pass",
}


@pytest.mark.parametrize("source,expected", EXACT, ids=[c[0] for c in EXACT])
def test_parentheses_where_needed(source, expected):
    text = _same_tree(source)
    if isinstance(expected, tuple):
        expected = expected[sys.version_info >= (3, 9)]
    if (3, 9) <= sys.version_info < (3, 11) and source in WRITER_3_9_3_10:
        expected = WRITER_3_9_3_10[source]
    if expected is not None:
        assert text == expected


@pytest.mark.skipif(sys.version_info >= (3, 9), reason="the 3.8 writer")
@pytest.mark.parametrize("source,expected", [
    ("while a < n:\n    pass", "while a < n:"),
    ("def g():\n    yield a", "    yield a"),
    ("x = re.VERBOSE | re.MULTILINE | re.DOTALL", "x = re.VERBOSE | re.MULTILINE | re.DOTALL"),
    ("x = a * b + c", "x = a * b + c"),
])
def test_38_has_no_extra_parentheses(source, expected):
    assert expected in _same_tree(source).splitlines()


DOCSTRINGS = [
    "One line.",
    "Several\n    lines, indented.\n",
    'Quotes "inside" and at the end"',
    'Three """ in a row',
    "Backslash \\n kept, tab\tkept",
    "Control \x00\x07 characters",
    "",
    '"',
]


@pytest.mark.parametrize("doc", DOCSTRINGS, ids=range(len(DOCSTRINGS)))
def test_docstring_literal_round_trips(doc):
    literal = docstring_literal(doc)
    assert literal.startswith('"""') and literal.endswith('"""')
    assert ast.literal_eval(literal) == doc


@pytest.mark.skipif(sys.version_info >= (3, 9), reason="the 3.8 writer's docstrings")
def test_38_writes_docstrings_as_docstrings():
    source = 'def f():\n    """Line one.\n\n    Line two."""\n    return 1'
    text = _same_tree(source)
    assert '    """Line one.' in text.splitlines()
    assert "\\n" not in text


def test_long_statement_items_on_lines_of_their_own():
    args = ", ".join("argument_%d" % i for i in range(12))
    source = "result = some_function(%s, key=value)" % args
    text = _same_tree(source)
    if sys.version_info >= (3, 9):
        lines = text.splitlines()
        assert lines[0] == "result = some_function("
        assert lines[1].startswith("    argument_0, argument_1, ")
        assert lines[-2].endswith(" key=value,")
        assert lines[-1] == ")"
        assert len(lines) == 4
        assert all(len(line) <= LONG_LINE for line in lines)
    short = "result = f(a, b)"
    assert _same_tree(short) == short


@pytest.mark.parametrize("shape", [
    "return ({})",
    "x = [{}]",
    "g({})",
    "x = ({},)",
    "x = f(*a, {}, **k)",
])
def test_wrapped_statements_parse_back(shape):
    items = ", ".join("element_number_%d" % i for i in range(10))
    text = _same_tree(("def h():\n    " if shape.startswith("return") else "")
                      + shape.format(items))
    assert len(text.splitlines()) > 2 or sys.version_info < (3, 9)


_STDLIB = sysconfig.get_paths()["stdlib"]
_MODULES = ["argparse.py", "ast.py", "base64.py", "calendar.py", "configparser.py",
            "dataclasses.py", "datetime.py", "decimal.py", "difflib.py", "enum.py",
            "fractions.py", "ftplib.py", "functools.py", "heapq.py", "inspect.py",
            "ipaddress.py", "json/decoder.py", "locale.py", "pathlib.py", "pickle.py",
            "pprint.py", "random.py", "re.py", "shlex.py", "statistics.py", "string.py",
            "tarfile.py", "textwrap.py", "tokenize.py", "typing.py", "uuid.py", "zipfile.py"]


@pytest.mark.parametrize("name", _MODULES)
def test_stdlib_module_parses_back(name):
    path = os.path.join(_STDLIB, name)
    if not os.path.exists(path):
        pytest.skip("no %s in this Python" % name)
    with open(path, encoding="utf-8") as f:
        _same_tree(f.read())
