"""Python source as HTML lines for the report: escaped, coloured by token, one string per line.

Uses only the standard library's tokenizer (the report needs no pygments); text that does not
tokenize (a C++ kernel, a half file) is shown escaped and uncoloured.

>>> highlight_lines("x = 1  # one\\n")
['x <span class="op">=</span> <span class="num">1</span>  <span class="com"># one</span>']
"""
import html
import io
import keyword
import tokenize
from typing import Dict, List, Tuple

_BUILTIN_CONSTS = {"True", "False", "None"}


def _css(tok: tokenize.TokenInfo) -> str:
    if tok.type == tokenize.COMMENT:
        return "com"
    if tok.type == tokenize.STRING:
        return "str"
    if tok.type == tokenize.NUMBER:
        return "num"
    if tok.type == tokenize.OP:
        return "op"
    if tok.type == tokenize.NAME:
        if tok.string in _BUILTIN_CONSTS:
            return "const"
        if keyword.iskeyword(tok.string):
            return "kw"
    ftype = getattr(tokenize, "FSTRING_START", None)
    if ftype is not None and tok.type in (ftype, tokenize.FSTRING_MIDDLE, tokenize.FSTRING_END):  # type: ignore[attr-defined]
        return "str"
    return ""


def highlight_lines(source: str) -> List[str]:
    """``source``'s lines as HTML (no trailing newline); coloured where it tokenizes."""
    lines = source.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    spans: Dict[int, List[Tuple[int, int, str]]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            css = _css(tok)
            if not css:
                continue
            (r0, c0), (r1, c1) = tok.start, tok.end
            for row in range(r0, r1 + 1):
                if row - 1 >= len(lines):
                    break
                start = c0 if row == r0 else 0
                end = c1 if row == r1 else len(lines[row - 1])
                spans.setdefault(row, []).append((start, end, css))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        spans = {}
    out = []
    for row, line in enumerate(lines, 1):
        parts = []
        at = 0
        for start, end, css in sorted(spans.get(row, ())):
            if start < at:
                continue
            parts.append(html.escape(line[at:start]))
            parts.append('<span class="%s">%s</span>' % (css, html.escape(line[start:end])))
            at = end
        parts.append(html.escape(line[at:]))
        out.append("".join(parts))
    return out
