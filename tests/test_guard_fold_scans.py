"""Text scans of guard folding: the one-pass forms give what the plain token loops give."""
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pellucid.dynamo.guard_fold import _TOKEN, _name_back, _split_comment, _string_spans

_PIECES = ["a", "x", "h_0", "e", "1", "1.5", "2e", " ", "\t", "\r", "#", "'", '"', "\\", ".", "[",
           "]", "(", ")", "_", "é", "'a'", '"b"', "'#'", "\\'", "  # ", "L['h']"]
_line = st.lists(st.sampled_from(_PIECES), max_size=16).map("".join)


def _split_by_tokens(line):
    at = 0
    for tok in _TOKEN.findall(line):
        if tok.startswith("#"):
            return line[:at], line[at:]
        at += len(tok)
    return line, ""


def _spans_by_tokens(code):
    spans, at = [], 0
    for tok in _TOKEN.findall(code):
        if tok[:1] in ("'", '"'):
            spans.append((at, at + len(tok)))
        at += len(tok)
    return spans


@settings(max_examples=3000, deadline=None)
@given(_line)
@example("if not (type(h['a#']) is int): return False  # h['a'], via 'x'")
@example("x = 'unclosed # not a string's end")
@example("\"a\\\"#\" # c")
def test_the_comment_and_strings_are_where_the_tokens_put_them(line):
    code, comment = _split_comment(line)
    assert (code, comment) == _split_by_tokens(line)
    assert _string_spans(code) == _spans_by_tokens(code)


@settings(max_examples=2000, deadline=None)
@given(_line, st.sampled_from(["h_0", "x", "a", "e"]))
@example("x = h_0['a']  # h_0", "h_0")
def test_putting_a_name_back_tokenwise_agrees_with_the_plain_form(line, name):
    code, comment = _split_by_tokens(line)
    plain = "".join("EXPR" if tok == name else tok for tok in _TOKEN.findall(code)) + comment
    assert _name_back(line, name, "EXPR") == plain
