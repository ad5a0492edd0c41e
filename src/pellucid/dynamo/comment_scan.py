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
from typing import List, Union

#: the answer when the scanner cannot be sure; the caller tokenizes
UNSURE = object()

_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_DIGITS = frozenset("0123456789")
_OPERATORS = frozenset(" .,:;=<>+-*/%&|^~@")
_CLOSE = {")": "(", "]": "[", "}": "{"}


def comment_start(text: str) -> Union[int, None, object]:
    """Index of the ``#`` that starts ``text``'s first comment token; None when the text has
    no comment; :data:`UNSURE` when only the tokenizer can tell."""
    if not text or text[0] == " " or "\x00" in text:
        # an indented first line (INDENT handling), or a null byte, which newer tokenizers
        # refuse wherever it is, even after the comment
        return UNSURE
    stack: List[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in _WORD:
            j = i + 1
            while j < n and text[j] in _WORD:
                j += 1
            if c in _DIGITS and not _plain_number(text[i:j]):
                return UNSURE  # 1e5, 0x1f, 07, 1_000, 2j: number syntax varies by version
            if j < n and text[j] in "'\"":
                return UNSURE  # a string prefix (r'', b'', f''...)
            i = j
        elif c == "'" or c == '"':
            if text.startswith(c * 3, i):
                return UNSURE
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1  # an escaped quote does not end the string
            if j >= n or any(ch < " " or ch == "\x7f" for ch in text[i:j]):
                return UNSURE  # unterminated, or a line break or control character inside
            i = j + 1
        elif c == "#":
            return i
        elif c in "([{":
            stack.append(c)
            i += 1
        elif c in _CLOSE:
            if not stack or stack.pop() != _CLOSE[c]:
                return UNSURE
            i += 1
        elif c == "!":
            if not text.startswith("!=", i):
                return UNSURE
            i += 2
        elif c in _OPERATORS:
            i += 1
        else:
            return UNSURE  # newline, tab, backslash, non-ASCII, ``$``, ``?``, backtick...
    return None if not stack else UNSURE


def _plain_number(word: str) -> bool:
    """A decimal integer that every tokenizer reads as one NUMBER token."""
    if not all(ch in _DIGITS for ch in word):
        return False
    return word == "0" or word[0] != "0"

