"""The comment scanner gives the tokenizer's split of a guard's text, or declines."""
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pellucid.dynamo.comment_scan import UNSURE, _scan, comment_start
import re

from pellucid.dynamo.guard_tree import (_LOCATION, _comment_at_separator, _comment_fields, split_code_part,
                                        split_comment_by_tokens)

# Pieces of Dynamo's guard text and of what could break a naive scanner.
_PIECES = ["L", "['x']", '["a#b"]', "'", '"', "#", " ", "  # ", "(", ")", "[", "]", "{", "}", ".",
           "0", "1", "07", "1e5", "0x1f", "1_0", "2j", "==", "!=", "!", "\\", "\n", "\t", "r'a'",
           "f'{x}'", "'''", "'\\''", "'\\n'", "é", "'é#'", "$", "?", ",", "type=<class 'dict'>",
           "___check_obj_id", "__dict__", "_modules", "x1", "not ", ":", "\r", "\x00", "'\\\n'"]


def _by_scanner(text):
    at = comment_start(text)
    if at is UNSURE:
        return None
    if at is None:
        return text, ""
    return text[:at], text[at:]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
@example("L['n'] == 3     # b = y + n  # t.py:11 in f")
@example("___check_type_id(L['a'], 1), type=<class 'dict'>  # y = x  # t.py:3 in f")
@example("L['a#b'] == 3  # x = '#'")
@example("L['\\'(']  # c")
@example("f('\\')  # ', x")
@example("not ___dict_contains('a', L['self'].__dict__)  # if self.a:  # m.py:9 in forward")
def test_scanner_agrees_with_the_tokenizer(text):
    got = _by_scanner(text)
    if got is not None:
        assert got == split_comment_by_tokens(text), text


# Pieces of the single-quoted form comment_start reads without _scan, and its edges.
_PLAIN_PIECES = ["L", "G", "['x']", "'", "#", " ", "(", ")", "[", "]", "{", "}", ".", ",", "0", "1",
                 "9", "07", "00", "1e5", "0x1f", "1_0", "2j", "0.05", "==", "!=", "!", "\\", "'a#'",
                 "x1", "_", "a", "é", "\x01", "\x7f", '"', "''", "f'", ", ", "type=<class 'dict'>",
                 "___check_obj_id(", "-", "<", "@", "$", "'b'", "((", "))", "[0]", "['k']", "[a]",
                 "[(", "{'a': 1}", "  ", "\t", "x,", "[1, 2]"]


@settings(max_examples=5000, deadline=None)
@given(st.lists(st.sampled_from(_PLAIN_PIECES), min_size=1, max_size=16).map("".join))
@example("___check_obj_id(G['m'].x, 140), type=<class 'module'>  # import m  # t.py:1 in f")
@example("L['a'] == 0  # c")
@example("x['a']'b' # c")
@example("f(0)] # c")
@example("f(g(h(i(j(k(l(m(x)))))))) # c")
@example("f(a, b  # c")
@example("x[(a)] # c")
@example("([)] # c")
@example("L" + "['a']._m[0].x" * 40 + " == 1e-05  # c")  # (one way to read it: no blow-up)
@example("f(" * 5 + "L['a'], " * 40 + "07 # c")
def test_the_plain_form_is_read_as_the_sure_tokens_read_it(text):
    if text[0] == " " or "\x00" in text:
        return  # (comment_start answers these before either way)
    assert comment_start(text) == _scan(text), text


@settings(max_examples=5000, deadline=None)
@given(st.lists(st.sampled_from(["(", ")", "[", "]", "{", "}", "a", "'k'", "0", " ", ",", "#"]),
                min_size=1, max_size=14).map("".join))
@example("x[a) # c")
@example("f(a] # c")
@example("f(x[0)] # c")
def test_brackets_decide_as_in_the_full_scan(text):
    if text[0] == " ":
        return
    assert comment_start(text) == _scan(text), text


@pytest.mark.parametrize("text, expected", [
    ("L['n'] == 3  # b = y + n  # t.py:11 in f", 13),
    ("L['a#b'] == 3", None),
    ("L['a\\'#'] == 3 # c", 15),
    ("___check_obj_id(G['m'], 140), type=<class 'module'>  # import m  # t.py:1 in f", 53),
])
def test_plain_guard_lines_need_no_tokenizer(text, expected):
    assert comment_start(text) == expected


@pytest.mark.parametrize("text", ["f'{x}' # c", "x = '''a#'''", "1e5 # c", ")a # c", "(a", "a\\\n# c",
                                  " x # c", "x $ # c"])
def test_scanner_declines_what_only_the_tokenizer_can_tell(text):
    assert comment_start(text) is UNSURE


def test_split_code_part_uses_the_same_split():
    part = split_code_part("L['k#'] == 3     # b = y + n  # t.py:11 in f")
    assert (part.code, part.user_line, part.location) == ("L['k#'] == 3", "b = y + n", "t.py:11 in f")


def _fields_by_regex(comment):
    pieces = [p.strip() for p in re.split(r"\s+#\s", " " + comment) if p.strip()]
    pieces = [p[1:].strip() if p[0] == "#" else p for p in pieces]
    for i, piece in enumerate(pieces):
        m = _LOCATION.match(piece)
        if m:
            return (pieces[i - 1] if i > 0 else None), m.group("loc")
    return None, None


_COMMENT_BITS = st.lists(st.sampled_from(["#", " ", "  ", "\t", "x", "a = b", "t.py:3 in f", ":", "1",
                                           "m.py:12 in <listcomp>", "in", "\u3000", "#x", "x#", "("]),
                         max_size=6).map("".join)


@settings(max_examples=4000, deadline=None)
@given(st.one_of(
    _COMMENT_BITS.map(str.strip).filter(lambda c: c.startswith("#")),
    st.tuples(st.sampled_from(["# ", "#", "#  ", "# #"]), _COMMENT_BITS,
              st.sampled_from(["  # ", " # ", "# ", " #", "#", "\t#\t", "  #x", " #  "]), _COMMENT_BITS)
    .map("".join).map(str.strip).filter(lambda c: c.startswith("#"))))
@example("# b = y + n  # t.py:11 in f")
@example("# t.py:11 in f")
@example("#  # t.py:11 in f")
@example("# x #  t.py:1 in f")
@example("# x\t#\tt.py:1 in f")
def test_comment_fields_are_the_pieces_between_separators(comment):
    assert _comment_fields(comment) == _fields_by_regex(comment), comment


def _split_by_scanner_or_tokens(text):
    """split_code_part's (code, comment) as found before _comment_at_separator."""
    at = comment_start(text)
    if at is UNSURE:
        code, comment = split_comment_by_tokens(text)
    elif at is None:
        code, comment = text, ""
    else:
        code, comment = text[:at], text[at:]
    return code.rstrip(), comment.strip()


# Code before Dynamo's "  # " separator: simple strings and what could make them otherwise
# (prefixes, triple quotes, escapes, line breaks, the other quote), numbers the newer tokenizers
# raise on (07, 1e5x) or the scanner leaves to the tokenizer (1e-05), unmatched brackets.
_SEPARATOR_CODE = ["L", "['x']", "'", '"', "#", " ", "(", ")", "[", "]", "{", "}", ".", "0", "07",
                   "1e-05", "0.5", "1_0", "2j", "==", "!=", "!", "\\", "\n", "\t", "\r", "\x0c",
                   "\x00", "r'a'", "b'", "f'{x}'", "t'a'", "'''", '"""', "''", "'\\''", "é", "'é'",
                   "$", ",", "type=<class 'dict'>", "___check_obj_id", "x1", "f", "'a  # b'", "'#'",
                   '"a"', "\u3000"]


@settings(max_examples=5000, deadline=None)
@given(st.lists(st.sampled_from(_SEPARATOR_CODE), max_size=14).map("".join),
       st.sampled_from(["  # ", "   # ", "  #", " # ", "  #  ", "\t# "]),
       st.lists(st.sampled_from(["x = f(y)", "  # ", "t.py:3 in f", "'", "#", " ", '"']),
                max_size=4).map("".join))
@example("L['a'].eps == 1e-05", "  # ", "return F.layer_norm(  # normalization.py:228 in forward")
@example("f(07", "  # ", "c")
@example("x)", "  # ", "c")
@example("rb'a'", "  # ", "c")
@example("'a  # b'", "  # ", "c")
@example("''''a", "  # ", "'''  # c")  # (a triple-quoted string around the first '#')
@example("'\\'' '", "  # ", "'  # c")  # (an escaped quote)
def test_the_separator_split_is_the_tokenizer_split(code, separator, comment):
    text = code + separator + comment
    at = _comment_at_separator(text)
    if at < 0:
        return  # (split_code_part asks the scanner, then the tokenizer)
    assert text[at] == "#" and "#" not in text[:at]
    split = (text[:at].rstrip(), text[at:].strip())
    by_tokens = split_comment_by_tokens(text)
    assert split == (by_tokens[0].rstrip(), by_tokens[1].strip()), text
    assert split == _split_by_scanner_or_tokens(text), text


@pytest.mark.parametrize("text, expected", [
    ("L['n'] == 3  # b = y + n  # t.py:11 in f", 13),
    ("L['a'].eps == 1e-05  # return F.layer_norm(", 21),
    ("check_tensor(L['x'], Tensor, size=[2, 16])  # y = x", 44),
    ("L['a  # b'] == 3  # c", -1),      # the first '#' is in a string
    ("L[rb'a'] == 3  # c", -1),         # a string prefix
    ("L['a'] == \"b\"  # c", -1),       # both kinds of quote
    ("L['n'] == 3 # c", -1),            # not Dynamo's separator
])
def test_the_separator_split_takes_dynamo_lines_and_declines_the_rest(text, expected):
    assert _comment_at_separator(text) == expected
