"""Reading literals and call arguments out of Dynamo's guard text: the fast paths give what
the parser gives."""
import ast

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pellucid.dynamo.guard_tree import _literal, _split_call_args

_PIECES = ["'", '"', "a", "#", "\\", "0", "1", "-", "_", ".", "e", " ", "é", "\t", "\n", "\x00",
           "True", "None", "(", ")", ",", "[", "]", "'x'", '"y"', "07", "1_0", "\udc80"]


def _by_parser(text):
    try:
        return True, ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=10).map("".join))
@example("'transformer'")
@example("-0")
@example("'a\\'b'")
def test_literal_reads_what_literal_eval_reads(text):
    got = _literal(text)
    ref = _by_parser(text)
    assert got[0] == ref[0] and type(got[1]) is type(ref[1]) and got[1] == ref[1], text


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=10).map("".join))
@example("'a, b', L['x'].y")
@example("f(a, (b, c)), 'é'")
def test_call_arguments_are_the_parser_segments(text):
    source = "f(%s)" % text
    try:
        call = ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError):
        return
    if not isinstance(call, ast.Call):
        return
    assert _split_call_args(text) == [ast.get_source_segment(source, a) or "" for a in call.args]
