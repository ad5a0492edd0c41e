"""Where the comment of one line of Python starts, without running the tokenizer.

Dynamo appends the user's source line to each guard's text as a comment.  The tokenizer finds
that comment exactly (a ``#`` inside a string key is not one), but a GPT-2 guard has hundreds
of such lines and ``tokenize`` costs more than everything else done with them.  This scanner
gives the tokenizer's answer for the plain lines Dynamo writes (names, numbers, operators,
brackets, simple quoted strings) and declines -- returns :data:`UNSURE` -- on anything where
the tokenizer could answer differently or raise (string prefixes, triple quotes, backslashes
outside strings, unusual characters or numbers, unbalanced brackets), so the caller then asks
the tokenizer.

>>> comment_start("L['a#b'] == 3  # x = 1")
15
>>> comment_start("L['n'] == 3") is None
True
>>> comment_start("f'{x}' # c") is UNSURE
True
"""
import re
from typing import Union

#: the answer when the scanner cannot be sure; the caller tokenizes
UNSURE = object()

# One token the scanner is sure of, as every tokenizer (3.8 to 3.14) reads it: a name not
# glued to a quote (no string prefix), a plain decimal integer (not 07, 1e5, 2j...), a quoted
# string on one line without control characters and not opening a triple quote, ``!=``, or a
# run of operators, spaces and brackets (a run per step, not a character: none of them starts
# another token here, so the match ends where it did, sooner).
_SURE_TOKENS = re.compile(r"""(?:
      [A-Za-z_][A-Za-z0-9_]*(?![A-Za-z0-9_'"])
    | (?:0|[1-9][0-9]*)(?![A-Za-z0-9_'"])
    | '(?!'')[^'\\\x00-\x1f\x7f]*(?:\\[^\x00-\x1f\x7f][^'\\\x00-\x1f\x7f]*)*'
    | "(?!"")[^"\\\x00-\x1f\x7f]*(?:\\[^\x00-\x1f\x7f][^"\\\x00-\x1f\x7f]*)*"
    | !=
    | [ .,:;=<>+\-*/%&|^~@()\[\]{}]+
    )*""", re.X)
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")  # on what _SURE_TOKENS matched
_NOT_BRACKET = re.compile(r"[^()\[\]{}]+")
#: str.translate table deleting every ASCII character but the brackets
_ASCII_BRACKETS_ONLY = {c: None for c in range(128) if chr(c) not in "()[]{}"}


def _outside_strings(prefix: str) -> str:
    """``prefix`` (sure tokens only) with its string tokens removed."""
    if "\\" not in prefix:
        # no escapes: each string is the text between two consecutive quotes of its kind, so
        # with one kind of quote in use, splitting at it leaves code and strings alternating
        if '"' not in prefix:
            return "".join(prefix.split("'")[0::2])
        if "'" not in prefix:
            return "".join(prefix.split('"')[0::2])
    return _STRING.sub("", prefix)


def _unmatched_brackets(code: str) -> str:
    """The brackets of ``code`` left once matched pairs are cancelled, innermost first.

    The result holds a closing bracket exactly when a stack of openers would meet a closing
    bracket with no opener or the wrong one on top; otherwise it is the openers left open.
    """
    brackets = code.translate(_ASCII_BRACKETS_ONLY) if code.isascii() else _NOT_BRACKET.sub("", code)
    while brackets:
        # cancelling adjacent pairs until none are left is what the stack does, in C; the pairs
        # left at the end do not depend on the order they go in (two pairs never share a
        # bracket), and "[]" first empties Dynamo's f(x['a'], y['b']) in one round
        shorter = brackets.replace("[]", "").replace("()", "").replace("{}", "")
        if len(shorter) == len(brackets):
            break
        brackets = shorter
    return brackets


# The fast path of comment_start.  The sure tokens again, but with brackets as tokens of their
# own that must pair up, so that one match that reaches a '#' answers for the line: the
# tokens before it are the ones _SURE_TOKENS reads (an operator run split at its brackets is
# still read whole there), the '#' is the first outside a string, and no bracket is left
# unmatched, which is what _scan works out afterwards.  Parentheses nest up to six deep,
# square brackets hold no brackets, braces are left to _scan.  Each token can be read in one
# way only (an operator run is matched whole; no shortcut for x['key'] beside the general
# form), so a line that does not match costs a pass, not a search through ways to split it.
_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?![A-Za-z0-9_'\"])"
_NUMBER = r"(?:0|[1-9][0-9]*)(?![A-Za-z0-9_'\"])"
_STRING1 = r"'(?!'')[^'\\\x00-\x1f\x7f]*(?:\\[^\x00-\x1f\x7f][^'\\\x00-\x1f\x7f]*)*'"
_STRING2 = r'"(?!"")[^"\\\x00-\x1f\x7f]*(?:\\[^\x00-\x1f\x7f][^"\\\x00-\x1f\x7f]*)*"'
_OPERATORS = r"[ .,:;=<>+\-*/%&|^~@]+(?![ .,:;=<>+\-*/%&|^~@])"
_TOKEN = "(?:%s)" % "|".join([_NAME, _OPERATORS, _STRING1, _NUMBER, _STRING2, "!="])
_SUBSCRIPT = r"\[%s*\]" % _TOKEN


def _nested(depth: int) -> str:
    inner = "(?:%s|%s)*" % (_TOKEN, _SUBSCRIPT)
    for _ in range(depth):
        inner = r"(?:%s|%s|\(%s\))*" % (_TOKEN, _SUBSCRIPT, inner)
    return inner


_PLAIN_LINE = re.compile(_nested(6) + "#")


def comment_start(text: str) -> Union[int, None, object]:
    """Index of the ``#`` that starts ``text``'s first comment token; None when the text has
    no comment; :data:`UNSURE` when only the tokenizer can tell."""
    if not text or text[0] == " " or "\x00" in text:
        # an indented first line (INDENT handling), or a null byte, which newer tokenizers
        # refuse wherever it is, even after the comment
        return UNSURE
    m = _PLAIN_LINE.match(text)
    if m is not None:
        return m.end() - 1
    return _scan(text)


def _scan(text: str) -> Union[int, None, object]:
    """:func:`comment_start` for a text that starts with a token and has no null byte, by the
    sure tokens a token at a time."""
    end = _SURE_TOKENS.match(text).end()  # type: ignore[union-attr]  # (matches "" at least)
    if end < len(text) and text[end] != "#":
        return UNSURE  # something only the tokenizer can tell
    prefix = text[:end]
    if "'" in prefix or '"' in prefix:
        prefix = _outside_strings(prefix)
    left = _unmatched_brackets(prefix)
    if ")" in left or "]" in left or "}" in left:
        return UNSURE  # an unmatched closing bracket: newer tokenizers raise
    if end < len(text):
        return end  # (an open bracket before a comment is fine: the error would come later)
    return None if not left else UNSURE
