"""Reading literals and call arguments out of Dynamo's guard text: the fast paths give what
the parser gives."""
import ast

from hypothesis import example, given, settings
from hypothesis import strategies as st

import builtins

from pellucid.dynamo.guard_tree import (
    _CLASS_DICT_SOURCE, _literal, _plain_source, _python_guard_exprs, _split_call_args, _split_call_args_parsed,
)

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
@example("(64,)")
@example("(2, 3)")
@example("(-1, 0, 7)")
@example("(-0,)")
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


_SOURCE_PIECES = ["L", "G", "['a']", "[0]", "[01]", "[-1]", ".x", ".None", ".class", ".__dict__",
                  ".match", "['é']", "[' ']", "['\\'']", "['#']", ".", "x", "(", ")", "[", "]",
                  " is ", "_0", "1", "é", " "]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_SOURCE_PIECES), max_size=8).map("".join))
@example("L['self']._modules['transformer']._modules['h']._modules['0'].__dict__")
@example("G['__import_torch'].nn.None")
def test_plain_sources_are_one_expression_over_L_and_G(text):
    if not _plain_source(text):
        return
    tree = ast.parse(text, mode="eval")
    assert {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} <= {"L", "G"}
    assert _split_call_args_parsed("'k', " + text) == ["'k'", text]
    assert _split_call_args("'k', " + text) == ["'k'", text]


def _names_by_parser(exprs, cv):
    out = {}
    for code in exprs:
        try:
            tree = ast.parse(code, mode="eval")
        except SyntaxError:
            return "guard text %r is not a Python expression" % code, {}
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and n.id not in ("L", "G"):
                if n.id in cv:
                    out[n.id] = cv[n.id]
                elif not hasattr(builtins, n.id):
                    return ("guard text %r uses %r, which Dynamo's guard namespace lacks"
                            % (code, n.id)), {}
    return None, out


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_SOURCE_PIECES + ["x", "len(", "Max"]), max_size=8)
                .map("".join), max_size=3))
@example(["G['a'].torch is G['b'].torch", "L['x'] is L['y'].z"])
@example(["L['x'] is x"])
def test_guard_expressions_name_what_the_parser_names(exprs):
    cv = {"x": object(), "Max": max}
    assert _python_guard_exprs(exprs, cv) == _names_by_parser(exprs, cv)


@settings(max_examples=3000, deadline=None)
@given(st.tuples(st.sampled_from(["dict(type(", "dict(", "type(", "dict(type( "]),
                 st.lists(st.sampled_from(_SOURCE_PIECES), max_size=5).map("".join),
                 st.sampled_from([")", ") ", "", "))"]),
                 st.sampled_from(["", ".__mro__[1]", ".__mro__[0]", ".__mro__[01]", ".__mro__[12]"]),
                 st.sampled_from([".__dict__)", ".__dict__", ".__dict__) "]),
                 st.sampled_from(["", "['k']", "['é']", "[0]", "['a'", "['a'].x"])).map("".join))
@example("dict(type(L['self'].config).__mro__[1].__dict__)")
@example("dict(type(L['self'].config).__dict__)['attribute_map']")
@example("dict(type(L).__dict__")
@example("dict(type(L)).__dict__)")
@example("dict(type(L.None).__dict__)")
def test_class_dict_sources_are_one_expression(text):
    if not (text.isascii() and _CLASS_DICT_SOURCE.fullmatch(text)):
        return
    assert _split_call_args_parsed("'k', " + text) == ["'k'", text]
    assert _split_call_args("'k', " + text) == ["'k'", text]
