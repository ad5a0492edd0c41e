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
14
>>> comment_start("L['n'] == 3") is None
True
>>> comment_start("f'{x}' # c") is UNSURE
True
"""
import re
from typing import List, Union

#: the answer when the scanner cannot be sure; the caller tokenizes
UNSURE = object()

# One token the scanner is sure of, as every tokenizer (3.8 to 3.14) reads it: a name not
# glued to a quote (no string prefix), a plain decimal integer (not 07, 1e5, 2j...), a quoted
# string on one line without control characters and not opening a triple quote, ``!=``, or an
# operator, space or bracket.
_SURE_TOKENS = re.compile(r"""(?:
      [A-Za-z_][A-Za-z0-9_]*(?![A-Za-z0-9_'"])
    | (?:0|[1-9][0-9]*)(?![A-Za-z0-9_'"])
    | '(?!'')[^'\\\x00-\x1f\x7f]*(?:\\[^\x00-\x1f\x7f][^'\\\x00-\x1f\x7f]*)*'
    | "(?!"")[^"\\\x00-\x1f\x7f]*(?:\\[^\x00-\x1f\x7f][^"\\\x00-\x1f\x7f]*)*"
    | !=
    | [ .,:;=<>+\-*/%&|^~@()\[\]{}]
    )*""", re.X)
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")  # on what _SURE_TOKENS matched
_BRACKET = re.compile(r"[()\[\]{}]")
_OPENER = {")": "(", "]": "[", "}": "{"}


def comment_start(text: str) -> Union[int, None, object]:
    """Index of the ``#`` that starts ``text``'s first comment token; None when the text has
    no comment; :data:`UNSURE` when only the tokenizer can tell."""
    if not text or text[0] == " " or "\x00" in text:
        # an indented first line (INDENT handling), or a null byte, which newer tokenizers
        # refuse wherever it is, even after the comment
        return UNSURE
    end = _SURE_TOKENS.match(text).end()  # type: ignore[union-attr]  # (matches "" at least)
    if end < len(text) and text[end] != "#":
        return UNSURE  # something only the tokenizer can tell
    stack: List[str] = []
    prefix = _STRING.sub("''", text[:end]) if ("'" in text or '"' in text) else text[:end]
    for b in _BRACKET.findall(prefix):
        if b in _OPENER:
            if not stack or stack.pop() != _OPENER[b]:
                return UNSURE  # an unmatched closing bracket: newer tokenizers raise
        else:
            stack.append(b)
    if end < len(text):
        return end  # (an open bracket before a comment is fine: the error would come later)
    return None if not stack else UNSURE
