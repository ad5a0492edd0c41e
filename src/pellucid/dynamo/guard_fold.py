"""Fold a rendered guard's repetition into loops: the same checks on each layer of a model,
written once, over a table of what differs.

A rendered guard (:mod:`pellucid.dynamo.guard_render`) checks every value Dynamo reads, one
line per check, a value's checks under a comment naming it.  A model's layers are read alike:
``h[0]`` and ``h[1]`` get the same lines but for the key and the objects compared.  This pass
finds such siblings -- consecutive values under one parent whose lines are equal token for
token but for string literals, numbers and bare names -- and writes them as::

    # the same checks on each of 2 values: generic_dict(...)['_modules'][_f0]
    for _f0, _f1 in (('0', obj_id_3), ('1', obj_id_9)):
        if not (type(generic_dict(...)['_modules'][_f0]) is GPT2Block): return False  # ...

Then each value that several lines read is read once, into a short local name, on the line
of its comment (``h_0 = h_modules['0']  # GPT2Block, via dict value 0``): a check on a
parameter of a layer reads ``bias`` instead of five nested ``generic_dict(...)`` calls.

Neither changes an answer.  A loop runs exactly the original lines, in their order, each with
the table's tokens put back (literals, or names bound before the guard runs; a guard assigns
nothing else); a name is read where the original read the same expression, and guard
expressions only read values (as Dynamo's guard manager reads each value once).  Each pass
checks its work -- unrolling every loop, and putting every name back, must give the original
text -- and otherwise leaves the text as it was.  Only the outermost repetition is folded.

>>> text = '''def g(L, G):
...     try:
...         # L['a']  (dict, via FrameLocalsGuardAccessor(key='a', framelocals_idx=0))
...         if not (type(L['a']) is dict): return False
...         # L['a']['x']  (int, via DictGetItemGuardAccessor('x'))
...         if not (type(L['a']['x']) is int and L['a']['x'] == 1): return False
...         # L['a']['y']  (int, via DictGetItemGuardAccessor('y'))
...         if not (type(L['a']['y']) is int and L['a']['y'] == 2): return False
...         # L['a']['z']  (int, via DictGetItemGuardAccessor('z'))
...         if not (type(L['a']['z']) is int and L['a']['z'] == 3): return False
...         return True
...     except Exception:
...         return False
... '''
>>> for line in fold(text)[0].splitlines()[2:8]: print(line)
        a = L['a']  # dict, via FrameLocalsGuardAccessor(key='a', framelocals_idx=0)
        if not (type(a) is dict): return False
        # the same checks on each of 3 values: L['a'][_f0]
        for _f0, _f1 in (('x', 1), ('y', 2), ('z', 3)):
            # L['a'][_f0]  (int, via DictGetItemGuardAccessor(_f0))
            if not (type(a[_f0]) is int and a[_f0] == _f1): return False
"""
import keyword
import re
from functools import lru_cache
from typing import List, Optional, Sequence, Tuple

_BODY = " " * 8
#: the renderer's comments that start a part of the guard (nothing nests across them)
_SECTIONS = tuple(_BODY + "# " + t for t in ("process-wide state", "guards relating several values",
                                             "run last by Dynamo"))
_NODE = re.compile(r"^ {8}# (?P<expr>.+?)  \((?P<type>[^()]*), via (?P<accessor>.*)\)$")
_TOKEN = re.compile(r"""#.*$|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[A-Za-z_]\w*|\s+|.""")
_LITERAL = re.compile(r"""^(?:'|"|\d)""")
#: the most values one folded line may take from its table (past that, a table reads worse)
MAX_COLUMNS = 12
#: the fewest lines a group of siblings must have to be worth a loop
MIN_LINES = 6


class _Node(object):
    def __init__(self, expr: str, start: int) -> None:
        self.expr = expr
        self.start = start  # first line of its own block
        self.end = start  # one past the last line of its subtree
        self.children: List["_Node"] = []


def _contains(outer: str, inner: str) -> bool:
    """Whether ``inner`` (an ancestor's expression) is part of ``outer``, not just a prefix of a
    longer name (``x.a`` is not part of ``x.ab``)."""
    at = outer.find(inner)
    while at >= 0:
        after = outer[at + len(inner):at + len(inner) + 1]
        if not (after.isalnum() or after == "_"):
            return True
        at = outer.find(inner, at + 1)
    return False


def _tree(lines: List[str], lo: int, hi: int) -> List[_Node]:
    """The value nodes of ``lines[lo:hi]`` (the guard's body): top-level nodes, with children.
    A section comment (``# process-wide state``...) ends the tree part it follows."""
    roots: List[_Node] = []
    stack: List[_Node] = []
    for k in range(lo, hi):
        line = lines[k]
        m = _NODE.match(line)
        if m is None:
            if line.startswith(_SECTIONS):  # a section comment: nothing nests across it
                for n in stack:
                    n.end = k
                stack = []
            continue
        expr = m.group("expr")
        while stack and not _contains(expr, stack[-1].expr):
            stack.pop().end = k
        node = _Node(expr, k)
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    for n in stack:
        n.end = hi
    # a node's subtree ends where its next sibling (or its parent's end) begins
    def close(nodes: List[_Node], end: int) -> None:
        for i, n in enumerate(nodes):
            n.end = nodes[i + 1].start if i + 1 < len(nodes) else min(n.end, end) if n.end > n.start else end
            close(n.children, n.end)
    close(roots, hi)
    return roots


@lru_cache(maxsize=8192)
def _tokens(line: str) -> Tuple[str, ...]:
    """A line's tokens; a value's comment line (``# <expr>  (<type>, via <accessor>)``) is read
    as code after its ``# ``, so the keys in it can come from the table too.  (Kept: the
    layers of a model repeat their lines, in one guard and across guards.)"""
    if line.startswith("# ") and _NODE.match(_BODY + line):
        return ("# ",) + tuple(_TOKEN.findall(line[2:]))
    return tuple(_TOKEN.findall(line))


def _template(group: Sequence[List[str]]) -> Optional[Tuple[List[List[str]], List[List[str]]]]:
    """(template lines as tokens with ``None`` where a column goes, the columns' values per
    sibling) when the siblings' lines differ only in literals and bare names; else None."""
    first = group[0]
    if any(len(g) != len(first) for g in group):
        return None
    tokens = [[_tokens(line) for line in g] for g in group]
    template: List[List[str]] = []
    columns: List[List[str]] = [[] for _ in group]
    for k in range(len(first)):
        rows = [t[k] for t in tokens]
        head = rows[0]
        if all(r == head for r in rows):
            # (most lines of layers alike are the same line: no token differs)
            template.append(list(head))
            continue
        if any(len(r) != len(head) for r in rows):
            return None
        line: List[str] = []
        for j, values in enumerate(zip(*rows)):
            tok = values[0]
            if values.count(tok) == len(values):
                line.append(tok)
                continue
            if any(v.startswith("#") for v in values):
                return None  # a comment differs: it cannot come from a table
            bare = j == 0 or head[j - 1] != "."
            if not all(_LITERAL.match(v) or (bare and re.match(r"^[A-Za-z_]\w*$", v)) for v in values):
                return None
            line.append(None)  # type: ignore[arg-type]
            for i, v in enumerate(values):
                columns[i].append(v)
        template.append(line)
    return template, columns


def _loop(group_lines: Sequence[List[str]], names_used: str, expr: str) -> Optional[List[str]]:
    """The loop for a group of siblings' lines, or None when they do not fold."""
    made = _template(group_lines)
    if made is None:
        return None
    template, columns = made
    n_holes = len(columns[0])
    if n_holes == 0:
        return None
    in_comment = [line[:1] == ["# "] for line in template for tok in line if tok is None]
    # holes with the same values in every row share one loop variable
    distinct: List[Tuple[str, ...]] = []
    hole_var: List[int] = []
    for h in range(n_holes):
        values = tuple(col[h] for col in columns)
        if values not in distinct:
            distinct.append(values)
        hole_var.append(distinct.index(values))
    if len(distinct) > MAX_COLUMNS:
        return None
    # the table is evaluated before the loop: a name only a comment shows (a type's name) is
    # not bound, so a column no code line reads may hold literals only
    for d, values in enumerate(distinct):
        if all(in_comment[h] for h in range(n_holes) if hole_var[h] == d) \
                and not all(_LITERAL.match(v) for v in values):
            return None
    names = ["_f%d" % i for i in range(len(distinct))]
    if any(re.search(r"\b%s\b" % n, names_used) for n in names):
        return None
    out: List[str] = []
    hole = 0
    body: List[str] = []
    for line in template:
        text = []
        for tok in line:
            if tok is None:
                text.append(names[hole_var[hole]])
                hole += 1
            else:
                text.append(tok)
        body.append("    " + "".join(text))
    rows = [tuple(d[i] for d in distinct) for i in range(len(group_lines))]
    if len(names) == 1:
        head = "for %s in (%s,):" % (names[0], ", ".join(r[0] for r in rows)) if len(rows) == 1 else \
            "for %s in (%s):" % (names[0], ", ".join(r[0] for r in rows))
    else:
        head = "for %s in (%s):" % (", ".join(names), ", ".join("(%s)" % ", ".join(r) for r in rows))
    shown = body[0].strip()
    m = _NODE.match(_BODY + shown)
    what = m.group("expr") if m else expr
    out.append(_BODY + "# the same checks on each of %d values: %s" % (len(rows), what))
    out.append(_BODY + head)
    out.extend(_BODY + line for line in body)
    # proof: the loop, unrolled, is the original text
    for i, original in enumerate(group_lines):
        hole = 0
        unrolled = []
        for line in template:
            text = []
            for tok in line:
                if tok is None:
                    text.append(rows[i][hole_var[hole]])
                    hole += 1
                else:
                    text.append(tok)
            unrolled.append("".join(text))
        if unrolled != list(original):
            return None
    return out


def _similar(a: _Node, b: _Node) -> bool:
    """A cheap first test: the same number of lines and of nested values."""
    return a.end - a.start == b.end - b.start and len(a.children) == len(b.children)


def fold(source: str) -> Tuple[str, int]:
    """``source`` (a rendered guard function) with repeated sibling values folded into loops,
    then each value read by several lines named once (:func:`name_values`); returns the text
    and how many loops were made."""
    text, loops = fold_loops(source)
    return name_values(text), loops


def fold_loops(source: str) -> Tuple[str, int]:
    """``source`` with repeated sibling values folded into loops, and how many loops."""
    lines = source.split("\n")
    try:
        lo = lines.index("    try:") + 1
        hi = max(k for k, line in enumerate(lines) if line == _BODY + "return True")
    except ValueError:
        return source, 0
    roots = _tree(lines, lo, hi)
    replacements: List[Tuple[int, int, List[str]]] = []

    def unit_lines(unit: Sequence[_Node]) -> Optional[List[str]]:
        body = lines[unit[0].start:unit[-1].end]
        if not all(ln.startswith(_BODY) for ln in body):
            return None
        return [ln[len(_BODY):] for ln in body]

    def visit(children: List[_Node]) -> None:
        i = 0
        while i < len(children):
            folded = None
            # a run of siblings alike (k = 1), or of pairs alike: a dict's entries come as
            # key, value, key, value...
            for k in (1, 2):
                units = []
                j = i
                while j + k <= len(children):
                    unit = children[j:j + k]
                    if units and not all(_similar(a, b) for a, b in zip(units[0], unit)):
                        break
                    units.append(unit)
                    j += k
                if len(units) < 2 or sum(u[-1].end - u[0].start for u in units) < MIN_LINES:
                    continue
                group = [unit_lines(u) for u in units]
                if any(g is None for g in group):
                    continue
                folded = _loop(group, source, units[0][-1].expr)  # type: ignore[arg-type]
                if folded is not None:
                    replacements.append((units[0][0].start, units[-1][-1].end, folded))
                    i = j
                    break
            if folded is None:
                visit(children[i].children)
                i += 1
    visit(roots)
    if not replacements:
        return source, 0
    out = list(lines)
    for start, end, new in sorted(replacements, reverse=True):
        out[start:end] = new
    return "\n".join(out), len(replacements)


# ------------------------------------------------------------------------------- naming values

_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_QUOTED = re.compile(_STRING.pattern + r"""|['"]""")
_ASSIGNED = re.compile(r"^ *[A-Za-z_]\w* = ")
_KEY = re.compile(r"(?:\[\s*'([A-Za-z_]\w*)'\s*\]|\.([A-Za-z_]\w*))$")


#: a line's code: its tokens (:data:`_TOKEN`) up to the first comment.  Only strings and
#: comments hold a quote or ``#``, so stepping over strings and other characters one at a time
#: stops where the tokens' comment starts (one C-level match, not a token loop in Python)
_CODE = re.compile(r"""(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^#])*""")


def _split_comment(line: str) -> Tuple[str, str]:
    """(code, comment) of a line: the comment starts at the first ``#`` outside a string."""
    at = line.find("#")
    if at < 0:
        return line, ""  # (every character is code: what :data:`_CODE` matches, all of it)
    if "'" not in line[:at] and '"' not in line[:at]:
        return line[:at], line[at:]  # (no string can start before the first ``#``)
    at = _CODE.match(line).end()  # type: ignore[union-attr]
    return line[:at], line[at:]


@lru_cache(maxsize=8192)
def _code_tokens(line: str) -> Tuple[str, ...]:
    """The tokens of a line's code (:func:`_split_comment`).  Kept: the guards of a model's
    layers share most of their lines, and each line is read once per name put back."""
    return tuple(_TOKEN.findall(_split_comment(line)[0]))


@lru_cache(maxsize=8192)
def _in_code(line: str, old: str, new: str) -> str:
    """``_replace_at_boundaries`` in the code of a line, outside its strings; its comment left
    as it is.  (Kept, like :func:`_code_tokens`: the layers' guards repeat lines and values.)"""
    if old not in line:  # (the common case, and the same answer: nothing to replace)
        return line
    code, comment, spans = _code_parts(line)
    return _replace_at_boundaries(code, old, new, spans) + comment


@lru_cache(maxsize=4096)
def _code_parts(line: str) -> Tuple[str, str, Tuple[Tuple[int, int], ...]]:
    """(code, comment, the code's string spans) of a line: a line is read once per value
    above it that it may use, and a model's layers' guards share most lines, so the scans are
    kept (bounded: a few MB of lines at most)."""
    code, comment = _split_comment(line)
    return code, comment, tuple(_string_spans(code))


@lru_cache(maxsize=8192)
def _name_back(line: str, name: str, expr: str) -> str:
    """The line with the name token ``name`` (never text inside a string or a comment) read
    as ``expr`` again."""
    if name not in line:  # (the same answer: a line is the sum of its tokens)
        return line
    code, comment = _split_comment(line)
    return "".join(expr if tok == name else tok for tok in _TOKEN.findall(code)) + comment


def _string_spans(code: str) -> List[Tuple[int, int]]:
    """Where the strings of a line's code (no comment: :func:`_split_comment`) are.  Only a
    string token holds a quote there, so searching for strings finds the tokens' (a quote that
    starts no string is a token of its own: a span nothing starts inside)."""
    return [m.span() for m in _QUOTED.finditer(code)]


def _replace_at_boundaries(text: str, old: str, new: str,
                           strings: Sequence[Tuple[int, int]] = ()) -> str:
    """``text`` with each occurrence of the expression ``old`` that is not part of a longer
    name, nor starts inside one of the ``strings`` spans, replaced by ``new``."""
    if old not in text:
        return text  # (the common case: nothing to replace)
    out = []
    at = 0
    while True:
        k = text.find(old, at)
        if k < 0:
            out.append(text[at:])
            return "".join(out)
        before = text[k - 1:k]
        after = text[k + len(old):k + len(old) + 1]
        inside = any(a < k < b for a, b in strings)
        if inside or (before.isalnum() or before in ("_", ".")) or after.isalnum() or after == "_":
            out.append(text[at:k + 1])
            at = k + 1
            continue
        out.append(text[at:k])
        out.append(new)
        at = k + len(old)


_CONTAINERS = ("_modules", "_parameters", "_buffers")


def _candidates(expr: str, parent: Optional[str], owner: Optional[str]) -> List[str]:
    """Names for a value, best first: ``vars`` for an object's ``__dict__`` (``h_vars``), the
    module's ``_modules`` dict (``h_modules``), a submodule or parameter by its key (``mlp``,
    then ``h_0_mlp``), a list item by its index (``h_0``)."""
    if expr.startswith("generic_dict(") and expr.endswith(")") and parent:
        return ["%s_vars" % parent]
    m = _KEY.search(expr)
    key = (m.group(1) or m.group(2)) if m else None
    if key in _CONTAINERS and parent:
        return ["%s%s" % (owner or parent, key)]
    if key and key.strip("_"):
        plain = key.strip("_")
        return [plain] + (["%s_%s" % (owner, plain)] if owner else [])
    m = re.search(r"\[\s*'?(\d+)'?\s*\]$", expr)
    if m and (owner or parent):
        if expr.startswith("list(dict.keys("):
            return ["%s_key%s" % (parent, m.group(1))]
        return ["%s_%s" % (owner or parent, m.group(1))]
    return ["%s_item" % parent] if parent else ["value"]


@lru_cache(maxsize=16384)
def _read_through(expr: str, form: str, name: str) -> str:
    """A value's expression with an outer value's ``form`` read through its ``name``
    (:func:`_replace_at_boundaries`; kept: a model's layers' guards name the same values)."""
    return _replace_at_boundaries(expr, form, name)


@lru_cache(maxsize=8192)
def _options(expr: str, parent: Optional[str], owner: Optional[str]) -> Tuple[str, ...]:
    """:func:`_candidates` made identifiers (kept, as :func:`_read_through`)."""
    options = [re.sub(r"\W", "_", c) for c in _candidates(expr, parent, owner)]
    return tuple("_" + c if c[0].isdigit() else c for c in options)


def name_values(source: str) -> str:
    """``source`` with each value that several of its lines read bound to a short local name
    once, on the line of its comment (``attn = generic_dict(h_0)['_modules']['attn']  #
    GPT2Attention, via ...``), and read through that name.  Guard expressions only read (a dict
    item, an attribute, an object's ``__dict__``), as Dynamo's guard manager reads each value
    once, so reading it once changes no answer; putting every name back into the lines gives
    the original text, or the source is returned as it was."""
    lines = source.split("\n")
    try:
        lo = lines.index("    try:") + 1
        hi = max(k for k, line in enumerate(lines) if line == _BODY + "return True")
    except ValueError:
        return source
    roots = _tree(lines, lo, hi)
    import builtins

    code = "\n".join(line.split("  # ", 1)[0] for line in lines if not line.lstrip().startswith("#"))
    code = _STRING.sub("''", code)  # (names, not the text of strings)
    # (a keyword is no name: ``x.__class__`` read twice would be bound to ``class``, which made
    # transformers' FuyuModel's full_code file invalid)
    taken = set(re.findall(r"[A-Za-z_]\w*", code)) | set(dir(builtins)) | {"L", "G", "torch"} \
        | set(keyword.kwlist)
    new = list(lines)
    # which lines are a value's comment: a line in the range a value scans is no value's
    # whose line was rewritten (that value's own line is before its range, its children's
    # are rewritten after), and rewriting a line's code leaves a comment line as it was
    node_line = [lo <= k < hi and _NODE.match(line) is not None for k, line in enumerate(lines)]
    bindings: List[Tuple[str, str]] = []  # (name, the expression it stands for), in order

    def visit(nodes: List[_Node], scope: List[Tuple[str, str]], owner: Optional[str]) -> None:
        for node in nodes:
            # the value's expression as the lines now read it (outer values already named)
            cur = node.expr
            for sname, sform in scope:
                cur = _read_through(cur, sform, sname)
            uses = 0
            for k in range(node.start + 1, node.end):
                # (a line without ``cur`` or a NUL adds nothing: skip it before the regexes)
                line = new[k]
                if (cur in line or "\0" in line) and not node_line[k]:
                    uses += _in_code(line, cur, "\0").count("\0")
            inner = list(scope)
            inner_owner = owner
            if uses >= 2:
                parent = scope[-1][0] if scope else None
                options = _options(node.expr, parent, owner)
                name = next((c for c in options if c not in taken), None)
                n = 2
                while name is None:
                    if "%s_%d" % (options[-1], n) not in taken:
                        name = "%s_%d" % (options[-1], n)
                    n += 1
                taken.add(name)
                if not (name.endswith("_vars") or name.endswith(_CONTAINERS)):
                    inner_owner = name  # (the module or value the next names hang off)
                m = _NODE.match(new[node.start])
                new[node.start] = "%s%s = %s  # %s, via %s" % (
                    _BODY, name, cur, m.group("type"), m.group("accessor"))
                for k in range(node.start + 1, node.end):
                    new[k] = _in_code(new[k], cur, name)
                bindings.append((name, cur))
                inner.append((name, cur))
            visit(node.children, inner, inner_owner)
    visit(roots, [], None)
    if not bindings:
        return source
    # proof: put every name back (innermost first) and the checks read as before.  Putting
    # back a name the line does not hold is no change, so each line skips straight to the
    # innermost binding it still reads (names are unique): one pass, not bindings x lines.
    order = {name: i for i, (name, _) in enumerate(bindings)}
    restored = []
    for k, line in enumerate(new):
        if k < lo or k >= hi:
            restored.append(line)
            continue
        if _ASSIGNED.match(line) and line.startswith(_BODY) and not line.startswith(_BODY + " "):
            restored.append(None)
            continue
        bound = len(bindings)
        while True:
            read = [order[tok] for tok in _code_tokens(line) if tok in order]
            i = max((j for j in read if j < bound), default=-1)
            if i < 0:
                break
            line = _name_back(line, *bindings[i])
            bound = i
        restored.append(line)
    for k, line in enumerate(restored):
        if line is None:
            if not _NODE.match(lines[k]):
                return source
        elif line != lines[k]:
            return source
    return "\n".join(new)

