"""The check that lets a dumped Inductor file run (pellucid.dynamo.inductor_code), without torch:
code objects that differ in anything but file name and line numbers are told apart."""
import types

import pytest

from pellucid.dynamo.graph_files import INDUCTOR_MARK, graph_file_text, inductor_module_text
from pellucid.dynamo.inductor_code import codes_by_qualname, module_functions, same_code_but_lines

MODULE = '''\
import math
K = 3


class Runner:
    def __init__(self, partitions):
        self.partitions = partitions

    def call(self, args):
        a, b = args
        args.clear()
        out = [a * K + b, -0.0, (1, 2.5)]
        def inner(v=2):
            return v + 1
        return out, inner(), math.pi


def get_args():
    return [1, 2]


runner = Runner(partitions=[])
call = runner.call
'''


def _code(text, filename="m.py"):
    return compile(text, filename, "exec")


def test_same_code_with_other_lines_and_file_is_accepted():
    shifted = "# a header line\n# and another\n" + MODULE
    assert same_code_but_lines(_code(MODULE, "cache.py"), _code(shifted, "dump.py")) is None


@pytest.mark.parametrize("old, new", [
    ("a * K + b", "a * K - b"),         # another operation
    ("a * K + b", "b * K + a"),         # other locals
    ("a * K + b", "a * J + b"),         # another global name
    ("-0.0", "0.0"),                    # equal but not the same constant
    ("(1, 2.5)", "(1, 2.50001)"),       # inside a tuple constant
    ("(1, 2.5)", "(True, 2.5)"),        # 1 == True, other type
    ("v=2", "v=3"),                      # a default (a constant of the enclosing code)
    ("return v + 1", "return v + 2"),   # a nested function's body
    ("args.clear()", "args.clear() or None"),
    ("def get_args():", "def get_args(x=None):"),
])
def test_any_other_difference_is_refused(old, new):
    assert old in MODULE
    why = same_code_but_lines(_code(MODULE), _code(MODULE.replace(old, new, 1)))
    assert why is not None and isinstance(why, str)


def test_functions_are_found_by_qualified_name():
    codes = codes_by_qualname(_code(MODULE))
    assert {"Runner.__init__", "Runner.call", "Runner.call.<locals>.inner", "get_args"} <= set(codes)
    assert "Runner" not in codes  # a class body is not a function
    (call,) = codes["Runner.call"]
    assert call.co_name == "call"


def test_module_functions_are_the_module_level_ones_and_the_methods():
    namespace = {"__name__": "cmod"}
    exec(_code(MODULE, "/cache/cmod.py"), namespace)
    found = {fn.__qualname__ for fn in module_functions(namespace, "/cache/cmod.py")}
    assert found == {"Runner.__init__", "Runner.call", "get_args"}
    assert module_functions(namespace, "/elsewhere.py") == []


def test_inductor_file_keeps_inductors_text_below_the_header():
    text = graph_file_text("__compiled_fn_1", "inductor", "0/0", MODULE, "/cache/c1.py")
    assert inductor_module_text(text) == MODULE
    assert "/cache/c1.py" in text.split(INDUCTOR_MARK)[0]
    # an edited header (a statement above the mark) is not pellucid's header
    assert inductor_module_text("x = 1\n" + text) is None
    assert inductor_module_text(MODULE) is None
    assert isinstance(_code(text), types.CodeType)
