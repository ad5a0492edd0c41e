"""Read Dynamo's guard manager into plain objects.

A cache entry's ``guard_manager`` (``torch._dynamo.guards.GuardManagerWrapper``) holds a tree of
C++ managers: each node is one value reached from the frame (``L['x']``, ``G['w'].bias`` ...) by an
accessor, and carries leaf guards on that value.  The C++ objects expose little besides their
class names, the accessor reprs and each leaf's ``verbose_code_parts()`` (Dynamo's text for the
check, followed by ``# user source line  # file:line in fn``).  This module turns that into
dataclasses: a :class:`SourceNode` tree with a Python expression per node, :class:`LeafCheck` s
with the parameters each check compares against parsed back into real objects (and verified to
print back to Dynamo's text), plus the relational and epilogue guards of the root::

    >>> tree = read_guard_tree(entry.guard_manager)            # doctest: +SKIP
    >>> [c.kind for c in tree.root.children[0].checks]         # doctest: +SKIP
    ['TENSOR_MATCH', 'DIMENSION_DYNAMIC_MARKING_GUARD', 'NO_TENSOR_ALIASING']

Nothing here imports torch at module level; the reader imports it when called.
"""
import ast
import builtins
import io
import json
import keyword
import re
import tokenize
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from pellucid.dynamo.comment_scan import UNSURE, comment_start

__all__ = [
    "UnsupportedGuardError", "CodePart", "LeafCheck", "DictInfo", "SourceNode", "RelationalCheck",
    "GuardTree", "read_guard_tree", "split_code_part", "iter_nodes",
]


class UnsupportedGuardError(Exception):
    """A guard (or accessor) pellucid cannot turn into Python and cannot delegate either.

    The message names the torch object or attribute that was missing or unexpected."""


_BUG_NOTE = re.compile(r"\(unknown (?P<kind>var|source) (?P<what>[^,()]+(?:\([^()]*\))*(?:\[[^\]]*\])*[^,()]*), please file a bug\)")


def without_bug_notes(comment: str, code: str) -> str:
    """torch's "(unknown var s75, please file a bug)" -- its shape environment kept no source
    line for a symbolic-shape guard -- said as what is known: the relation held when compiled.

    >>> without_bug_notes("(unknown var s75, please file a bug)", "L['x'].size()[0] == s75")
    "a shape relation that held when compiled; torch's shape environment recorded no line for its variable s75"
    """
    def known(m: "re.Match[str]") -> str:
        if m.group("kind") == "var":
            return ("a shape relation that held when compiled; torch's shape environment recorded "
                    "no line for its variable %s" % m.group("what").strip())
        return ("a shape relation that held when compiled; torch's shape environment recorded "
                "no line for %s" % m.group("what").strip())
    return _BUG_NOTE.sub(known, comment)


@dataclass
class CodePart:
    """One of Dynamo's ``verbose_code_parts``: the check's text and the comment Dynamo attached."""
    code: str
    comment: str = ""
    #: the user's source line the guard came from, when Dynamo recorded one
    user_line: Optional[str] = None
    #: ``file:line in function`` of that line
    location: Optional[str] = None
    raw: str = ""

    def describe(self) -> str:
        """A short ``from: <line>  (<file:line in fn>)`` note for a rendered check.

        >>> CodePart("x", user_line="y = x.sin()", location="a.py:3 in f").describe()
        'from: y = x.sin()  (a.py:3 in f)'
        """
        if self.user_line and self.location:
            return "from: %s  (%s)" % (self.user_line, self.location)
        if self.location:
            return "added by torch (%s)" % self.location
        return without_bug_notes(self.comment.lstrip("# "), self.code)


@dataclass
class LeafCheck:
    """One leaf guard on one value: its Dynamo kind, text and parsed parameters.

    ``params`` holds real objects (types, dtypes, DispatchKeySets, ints...) that the renderer binds
    by name.  When a guard's text could not be turned back into parameters, ``delegate_reason``
    says why and the renderer calls the Dynamo ``leaf`` object itself."""
    kind: str
    parts: List[CodePart]
    params: Dict[str, Any] = field(default_factory=dict)
    leaf: Any = field(default=None, repr=False, compare=False)
    delegate_reason: Optional[str] = None
    #: the expression of the value this guard checks (``L`` for root guards)
    subject: str = "L"

    @property
    def delegated(self) -> bool:
        """True when the rendered check calls Dynamo's leaf object instead of Python code."""
        return self.delegate_reason is not None


@dataclass
class DictInfo:
    """The checks a DictGuardManager makes without exposing them as leaf guards."""
    expected_type: Optional[type]
    #: entry count; inferred from the key managers (torch does not expose it)
    size: Optional[int]
    size_note: str = ""


@dataclass
class SourceNode:
    """A value the guards read, the checks on it, and the values read from it."""
    expr: str
    dynamo_source: str
    accessor: str
    manager_kind: str
    guarded_type: Optional[type] = field(default=None, repr=False)
    checks: List[LeafCheck] = field(default_factory=list)
    children: List["SourceNode"] = field(default_factory=list)
    dict_info: Optional[DictInfo] = None
    #: for a DictGuardManager's entries: "key" or "value" and the entry index
    dict_role: Optional[Tuple[str, int]] = None
    #: kinds of the relational guards this node takes part in (rendered after the tree)
    relational_kinds: List[str] = field(default_factory=list)


@dataclass
class RelationalCheck:
    """A guard relating several values (no aliasing, object identity, storage overlap, symbolic
    shapes compiled to C++): rendered once, after the tree."""
    kind: str
    parts: List[CodePart]
    subjects: List[str]
    params: Dict[str, Any] = field(default_factory=dict)
    leaf: Any = field(default=None, repr=False, compare=False)


@dataclass
class GuardTree:
    """Everything one guard manager checks, as plain objects."""
    root: SourceNode
    relational: List[RelationalCheck]
    epilogue: List[LeafCheck]
    #: the globals dict Dynamo's ``G`` accessor reads (the compiled function's module globals)
    globals_dict: Optional[Dict[str, Any]] = field(default=None, repr=False)
    #: names Dynamo's own guard code may use (``math``, ``torch``, sympy helpers...)
    closure_namespace: Dict[str, Any] = field(default_factory=dict, repr=False)

    def all_checks(self) -> List[LeafCheck]:
        """Every non-relational leaf check, tree order, then the epilogue."""
        out: List[LeafCheck] = []
        for node in iter_nodes(self.root):
            out.extend(node.checks)
        return out + list(self.epilogue)


def iter_nodes(node: SourceNode) -> List[SourceNode]:
    """``node`` and all nodes below it, parents first."""
    out = [node]
    for child in node.children:
        out.extend(iter_nodes(child))
    return out


# ------------------------------------------------------------------------------- text parsing

_LOCATION = re.compile(r"^(?P<loc>\S+:\d+ in \S+)(?P<rest>.*)$")


def _split_at_separators(text: str) -> List[str]:
    """``re.split(r"\\s+#\\s", text)``, by ``str.find`` on the few ``#`` of a comment.

    The pattern has no literal prefix, so the regular expression tries every position of the
    line; a GPT-2 guard has hundreds of these comments.  (``\\s`` is ``str.isspace``.)
    """
    out: List[str] = []
    start = pos = 0  # start of the current piece; where the next separator may begin
    end = len(text)
    while True:
        h = text.find("#", pos)
        if h < 0:
            break
        if h > pos and h + 1 < end and text[h - 1].isspace() and text[h + 1].isspace():
            b = h - 1
            while b > pos and text[b - 1].isspace():
                b -= 1
            out.append(text[start:b])
            start = pos = h + 2
        else:
            pos = h + 1  # (a separator's whitespace cannot reach back over this '#')
    out.append(text[start:])
    return out


#: split_code_part's memo value for one comment: (user line, location, the comment itself)
_CommentFields = Tuple[Optional[str], Optional[str], str]


def split_code_part(text: str, comments: Optional[Dict[str, _CommentFields]] = None
                    ) -> CodePart:
    """Split one verbose code part into the check and the comment Dynamo appended.

    The comment is where the tokenizer finds it, so a ``#`` inside a string key stays in the
    code (:func:`_comment_at_separator` gives the same answer for Dynamo's usual lines, and
    :mod:`pellucid.dynamo.comment_scan` for other plain lines, both faster).
    ``comments`` (optional) remembers each comment's user line and location: one read of a
    GPT-2 guard meets ~200 distinct comments in ~600 parts (every guard from one source line
    carries the same one).  The parts of one comment then share one string object for it, so
    the renderer's memo of comment texts hashes and compares each comment once, not per part.

    >>> p = split_code_part("L['n'] == 3     # b = y + n  # t.py:11 in f")
    >>> p.code, p.user_line, p.location
    ("L['n'] == 3", 'b = y + n', 't.py:11 in f')
    """
    known = _PARTS.get(text)
    if known is not None:
        return known
    part = _split_code_part(text, comments)
    if len(_PARTS) >= _PARTS_KEPT:
        _PARTS.clear()
    _PARTS[text] = part
    return part


#: split_code_part's answers by text, over all reads: the guards of a model's layers repeat
#: most of their parts word for word (the same checks on each layer's ``L['self']``), and a
#: part is a pure function of its text (nothing changes a CodePart once made)
_PARTS: Dict[str, CodePart] = {}
#: how many answers are kept at most (then the memo starts again: a few MB)
_PARTS_KEPT = 1 << 15


def _split_code_part(text: str, comments: Optional[Dict[str, _CommentFields]]) -> CodePart:
    h = text.find("#")
    if h < 0:
        # no comment, whoever looks (a tokenizer error falls back to "  # " too)
        return CodePart(text.rstrip(), "", None, None, text)
    # nearly every part Dynamo writes: _comment_at_separator's test, written out (~600 parts)
    if h >= 2 and text[h - 2:h + 2] == "  # " and _SIMPLE_CODE.fullmatch(text, 0, h) is not None:
        code, comment = text[:h], text[h:]
    else:
        found = comment_start(text)  # the tokenizer's answer for plain lines, much faster
        if found is UNSURE:
            code, comment = split_comment_by_tokens(text)
        elif found is None:
            code, comment = text, ""
        else:
            code, comment = text[:found], text[found:]  # type: ignore[misc]
    code = code.rstrip()
    comment = comment.strip()
    if not comment:
        return CodePart(code, comment, None, None, text)
    fields = comments.get(comment) if comments is not None else None
    if fields is None:
        user_line, location = _comment_fields(comment)
        fields = (user_line, location, comment)
        if comments is not None:
            comments[comment] = fields
    return CodePart(code, fields[2], fields[0], fields[1], text)  # (code, comment, user_line, location, raw)


#: a character of Dynamo's code outside and inside simple strings: printable ASCII but the two
#: quotes and the backslash
_CODE_CHAR = r"[ -!#-&(-\[\]-~]"
#: code whose strings are simple: one kind of quote, paired, no triple quote, no word character
#: before an opening quote (so no string prefix), nothing but _CODE_CHAR around and inside them
_SIMPLE_CODE = re.compile("|".join(
    r"{c}*(?:(?<![A-Za-z0-9_]){q}(?!{q}{q}){c}*{q}(?!{q}{q}){c}*)*".format(c=_CODE_CHAR, q=q)
    for q in ("'", '"')))


def _comment_at_separator(text: str) -> int:
    """The index of ``text``'s first ``#`` when the tokenizer split of ``text`` (that of
    :func:`split_comment_by_tokens`, stripped) is certainly there; -1 when this cannot tell.

    Dynamo writes ``f"{code:<60}  # {frame}"``.  When the first ``#`` (at ``h``) is that
    ``"  # "`` separator's, and the code before it is printable ASCII without backslashes whose
    strings are simple -- one kind of quote, paired, no triple quote, no word character before
    an opening quote (so no string prefix) -- each string ends at the next quote, so ``h`` is
    outside them.  The tokenizer then either yields its comment token at ``h`` or raises before
    it, and split_comment_by_tokens falls back to the first ``"  # "``, which is at ``h - 2``:
    the same split once stripped.  (So numbers like ``1e-05``, which the scanner leaves to the
    tokenizer, need no tokenizer here.)

    The code is checked by one match of :data:`_SIMPLE_CODE` (each alternative allows one kind
    of quote; a string is an opening quote not after a word character, characters other than
    quotes, a closing quote; the lookaheads refuse a quote followed by two more, which is where
    every triple quote starts): a GPT-2 guard has ~600 parts, and str methods per part and a
    loop over each part's strings cost about twice as much.
    """
    h = text.find("#")
    if h < 2 or text[h - 2:h + 2] != "  # ":
        return -1
    # (with endpos h, the pattern sees text[:h] as the whole string, lookaheads included)
    return h if _SIMPLE_CODE.fullmatch(text, 0, h) is not None else -1


def _comment_fields(comment: str) -> Tuple[Optional[str], Optional[str]]:
    """``(user_line, location)`` of a code part's (stripped, non-empty) comment."""
    j = comment.find("#", 1)
    if comment.startswith("# ") and j >= 3 and comment.count("#") == 2 \
            and comment[j - 1].isspace() and comment[j + 1:j + 2].isspace():
        # Dynamo's "# <user line>  # <file:line in fn>": the separators are the first "# " and
        # the second '#' with the spaces around it, the pieces what is between and after
        user, where = comment[2:j].strip(), comment[j + 1:].strip()
        if user and where:
            # (the loop below on these two pieces, written out for ~200 comments per read)
            m = _LOCATION.match(user) if " in " in user else None
            if m:
                return None, m.group("loc")
            m = _LOCATION.match(where) if " in " in where else None
            return (user, m.group("loc")) if m else (None, None)
        pieces = [p for p in (user, where) if p]
    else:
        pieces = [p for p in map(str.strip, _split_at_separators(" " + comment)) if p]
        pieces = [p[1:].strip() if p[0] == "#" else p for p in pieces]
    for i, piece in enumerate(pieces):
        # (_LOCATION needs " in " literally: most user lines are passed over without a match)
        m = _LOCATION.match(piece) if " in " in piece else None
        if m:
            return (pieces[i - 1] if i > 0 else None), m.group("loc")
    return None, None


def split_comment_by_tokens(text: str) -> Tuple[str, str]:
    """``(code, comment)`` of one verbose code part, the comment found by the tokenizer."""
    code, comment = text, ""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                col = tok.start[1]
                code, comment = text[:col], text[col:]
                break
    except (tokenize.TokenError, IndentationError, SyntaxError):
        # not Python (e.g. "___check_type_id(...), type=<class 'dict'>"): fall back to the
        # first "  # " which is where get_verbose_code_part puts the comment
        at = text.find("  # ")
        if at >= 0:
            code, comment = text[:at], text[at:]
    return code, comment


#: literals whose value needs no parse: a quoted ASCII string without escapes, a decimal int
_PLAIN_STR = re.compile(r"'[^'\\\x00-\x1f\x7f]*'|\"[^\"\\\x00-\x1f\x7f]*\"")
_PLAIN_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
#: decimal floats (Dynamo's eps, dropout p...): float() rounds them as the parser does
_PLAIN_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+(?:e[-+]?[0-9]+)?|e[-+]?[0-9]+)")
_PLAIN_CONSTANTS = {"True": True, "False": False, "None": None}
#: a tuple of decimal ints as repr writes it: one with a trailing comma, or several
_PLAIN_INT_TUPLE = re.compile(r"\(-?(?:0|[1-9][0-9]*),\)|\(-?(?:0|[1-9][0-9]*)(?:, -?(?:0|[1-9][0-9]*))+\)")


def _literal(text: str) -> Tuple[bool, Any]:
    """(True, value) when ``text`` is a Python literal whose repr reads back the same."""
    text = text.strip()
    # the common keys and values of guards, read as literal_eval reads them, without a parse
    if text.isascii():
        # (no text is two of these forms, so the order only saves work: the hash lookup first)
        if text in _PLAIN_CONSTANTS:
            return True, _PLAIN_CONSTANTS[text]
        if _PLAIN_STR.fullmatch(text):
            return True, text[1:-1]
        if _PLAIN_INT.fullmatch(text):
            return True, int(text)
        if _PLAIN_FLOAT.fullmatch(text):
            return True, float(text)
        if _PLAIN_INT_TUPLE.fullmatch(text):  # (64,) (2, 3): Dynamo's normalized shapes
            return True, tuple(int(x) for x in text[1:-1].split(",") if x)
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None
    return True, value


def _literal_value(text: str) -> Any:
    """``ast.literal_eval(text)`` (raising as it does), without a parse for the plain literals
    :func:`_literal` reads directly."""
    ok, value = _literal(text)
    return value if ok else ast.literal_eval(text)


def _builtin_type_name(t: type) -> Optional[str]:
    name = getattr(t, "__name__", None)
    if name and getattr(builtins, name, None) is t:
        return name
    return None


# ---------------------------------------------------------------------------- the tree reader

def _require(obj: Any, name: str, what: str) -> Any:
    attr = getattr(obj, name, None)
    if attr is None:
        raise UnsupportedGuardError("%s has no %s (this torch's guard API differs)" % (what, name))
    return attr


def _accessor_text(accessor: Any) -> str:
    rep = getattr(accessor, "repr", None)
    if callable(rep):
        return rep()
    return type(accessor).__name__


_SUBSCRIPTABLE_LITERALS = (str, int, bytes, bool, float, type(None))


def _subscript(base: str, key: Any) -> str:
    return "%s[%r]" % (base, key)


def _is_literal_key(key: Any) -> bool:
    if isinstance(key, tuple):
        return all(_is_literal_key(k) for k in key)
    if type(key) is float:
        return key == key and key not in (float("inf"), float("-inf"))
    return type(key) in _SUBSCRIPTABLE_LITERALS


def _call_arg(text: str, cls: str) -> Optional[str]:
    """The text between ``Cls(`` and the final ``)`` of an accessor repr."""
    if text.startswith(cls + "(") and text.endswith(")"):
        return text[len(cls) + 1:-1]
    return None


def _attr_expr(base: str, name: str) -> str:
    if name.isidentifier() and not keyword.iskeyword(name):
        return "%s.%s" % (base, name)
    return "getattr(%s, %r)" % (base, name)


_FRAME_LOCALS_ACCESSOR = re.compile(r"^FrameLocalsGuardAccessor\(key=(.*), framelocals_idx=-?\d+\)$")
_TENSOR_PROPERTY_ACCESSOR = re.compile(r"^TensorPropertyGuardAccessor<TensorProperty::(\w+)>\((\d+)\)$")
_INDEXED_ACCESSOR = re.compile(r"^IndexedGuardAcc?ess?or\((\d+)\)$")
#: accessors whose expression is a fixed form around the parent's
_SIMPLE_ACCESSORS = {
    "GetGenericDictGuardAccessor": "generic_dict(%s)",
    "TypeGuardAccessor": "type(%s)",
    "TypeDictGuardAccessor": "type_dict(%s)",
    "TypeMROGuardAccessor": "%s.__mro__",
    "FuncDefaultsGuardAccessor": "func_defaults(%s)",
    "FuncKwDefaultsGuardAccessor": "func_kwdefaults(%s)",
    "ClosureGuardAccessor": "func_closure(%s)",
    "CodeGuardAccessor": "func_code(%s)",
    "WeakRefCallGuardAccessor": "%s()",
    "CallFunctionNoArgsGuardAccessor": "%s()",
}


#: the accessors that read a key or index given in their repr
_SUBSCRIPT_ACCESSORS = frozenset(["DictGetItemGuardAccessor", "GetItemGuardAccessor",
                                  "ListGetItemGuardAccessor", "TupleGetItemGuardAccessor"])


def _accessor_expr(accessor: Any, parent: SourceNode, child_mgr: Any, text: Optional[str] = None,
                   keys: Optional[Dict[str, Tuple[str, str]]] = None) -> str:
    """The Python expression for the value ``accessor`` reads from ``parent``'s value
    (``text``: its :func:`_accessor_text`, when the caller has it already).

    ``keys`` (optional) remembers the repr of the key each subscript accessor's text names, by
    that text (with the accessor's class): a GPT-2 guard reads ~270 dict entries through a
    few dozen distinct keys (``'_modules'``, ``'weight'``...)."""
    if text is None:
        text = _accessor_text(accessor)
    cls = type(accessor).__name__
    base = parent.expr
    # (the branches test distinct class names, so their order only saves comparisons: the
    # common kinds first)
    if cls in _SUBSCRIPT_ACCESSORS:
        known = keys.get(text) if keys is not None else None
        if known is not None and known[0] == cls:
            key_repr = known[1]
        else:
            inner = _call_arg(text, cls)
            ok, key = _literal(inner) if inner is not None else (False, None)
            if not ok or not _is_literal_key(key):
                raise UnsupportedGuardError("cannot read the key of %r as a Python literal" % text)
            key_repr = repr(key)
            if keys is not None:
                keys[text] = (cls, key_repr)
        # ("%s[%s]" % (base, repr(key)) is _subscript(base, key))
        if cls == "DictGetItemGuardAccessor" and not (base == "G" or parent.guarded_type is dict):
            # plain dicts read by subscript look the same as Dynamo's storage read; anything
            # else goes through dict_getitem so an override or __missing__ is not called
            return "dict_getitem(%s, %s)" % (base, key_repr)
        return "%s[%s]" % (base, key_repr)
    simple = _SIMPLE_ACCESSORS.get(cls)
    if simple is not None:
        return simple % base
    if cls == "FrameLocalsGuardAccessor":
        m = _FRAME_LOCALS_ACCESSOR.match(text)
        ok, key = _literal(m.group(1)) if m else (False, None)
        if not ok or not isinstance(key, str):
            raise UnsupportedGuardError("cannot read the local name from %r" % text)
        return _subscript(base, key)
    if cls == "GlobalsGuardAccessor":
        return "G"
    if cls in ("GetAttrGuardAccessor", "GenericGetAttrGuardAccessor"):
        getter = getattr(accessor, "get_attr_name", None)
        name = getter() if callable(getter) else _call_arg(text, cls)
        if not name:
            raise UnsupportedGuardError("cannot read the attribute name of %r" % text)
        if cls == "GenericGetAttrGuardAccessor":
            return "object.__getattribute__(%s, %r)" % (base, name)
        return _attr_expr(base, name)
    if cls == "GlobalWeakRefGuardAccessor":
        inner = _call_arg(text, cls)
        ok, name = _literal(inner) if inner is not None else (False, None)
        if not ok:
            name = inner
        if not isinstance(name, str) or not name:
            raise UnsupportedGuardError("cannot read the global name of %r" % text)
        return "global_weakref(G, %r)" % name
    if cls == "TupleIteratorGetItemAccessor":
        m = re.search(r"(\d+)\)?$", text)
        if not m:
            raise UnsupportedGuardError("cannot read the index of %r" % text)
        return "tuple_iterator_getitem(%s, %s)" % (base, m.group(1))
    # tensor properties (size/stride/storage_offset); torch names these accessors only in repr
    source = child_mgr.get_source() if hasattr(child_mgr, "get_source") else ""
    m = _TENSOR_PROPERTY_ACCESSOR.match(text)
    if m:
        prop, index = m.group(1), m.group(2)
        if prop == "SIZE":
            return "%s.size()[%s]" % (base, index)
        if prop == "STRIDE":
            return "%s.stride()[%s]" % (base, index)
        if prop == "STORAGE_OFFSET":
            return "%s.storage_offset()" % base
    # the accessor C++ symbolic shape guards read through: it hands on (index, value); torch
    # 2.13 spells its repr "IndexedGuardAccesor"
    m = _INDEXED_ACCESSOR.match(text)
    if m:
        return "(%s, %s)" % (m.group(1), base)
    raise UnsupportedGuardError("unknown guard accessor %s (%s) reading %s"
                                % (cls, text, source or "an unnamed value"))


class _Reader(object):
    """Walks one GuardManagerWrapper; keeps relational guards (shared by several nodes) apart."""

    def __init__(self, wrapper: Any) -> None:
        self.wrapper = wrapper
        self.closure_vars: Dict[str, Any] = dict(getattr(wrapper, "closure_vars", None) or {})
        try:
            # the helpers Dynamo's Python shape-guard text calls (Max, FloorDiv, math...)
            from torch.fx.experimental.symbolic_shapes import SYMPY_INTERP
            for key, value in SYMPY_INTERP.items():
                self.closure_vars.setdefault(key, value)
        except ImportError:
            pass
        #: split_code_part's memo of comment -> (user line, location) for this read
        self.comments: Dict[str, _CommentFields] = {}
        #: _accessor_expr's memo of the keys subscript accessors name, for this read
        self.keys: Dict[str, Tuple[str, str]] = {}
        self.relational_holders: Dict[int, Tuple[Any, List[SourceNode]]] = {}
        self.relational_order: List[int] = []
        try:
            from torch._C._dynamo.guards import RelationalGuard
            self.relational_type: Optional[type] = RelationalGuard
        except ImportError:
            self.relational_type = None

    # -- nodes
    def node(self, mgr: Any, expr: str, accessor: str, role: Optional[Tuple[str, int]] = None
             ) -> SourceNode:
        kind = type(mgr).__name__
        # (_require's checks written out: four calls for each of ~500 nodes)
        get_source = getattr(mgr, "get_source", None)
        if get_source is None:
            _require(mgr, "get_source", kind)
        source = get_source()
        # the type of the value the guards were made from: only a nicety for rendering
        get_type = getattr(mgr, "get_type_of_guarded_value", None)
        guarded: Optional[type] = None
        if callable(get_type):
            try:
                t = get_type()
            except Exception:  # noqa: BLE001
                t = None
            if isinstance(t, type):
                guarded = t
        # (expr, dynamo_source, accessor, manager_kind, guarded_type, checks, children,
        # dict_info, dict_role, relational_kinds): positional, for ~500 nodes
        node = SourceNode(expr, source, accessor, kind, guarded, [], [], None, role, [])
        relational_type = self.relational_type
        closure_vars, comments, checks = self.closure_vars, self.comments, node.checks
        get_leaf_guards = getattr(mgr, "get_leaf_guards", None)
        if get_leaf_guards is None:
            _require(mgr, "get_leaf_guards", kind)
        for leaf in get_leaf_guards():
            if relational_type is not None and isinstance(leaf, relational_type):
                key = id(leaf)
                if key not in self.relational_holders:
                    self.relational_holders[key] = (leaf, [])
                    self.relational_order.append(key)
                self.relational_holders[key][1].append(node)
                node.relational_kinds.append(type(leaf).__name__)
                continue
            checks.append(parse_leaf(leaf, node, closure_vars, False, comments))
        kv = getattr(mgr, "get_key_value_managers", None)
        if callable(kv):
            self.dict_entries(mgr, node, kv())
        get_accessors = getattr(mgr, "get_accessors", None)
        get_child_managers = getattr(mgr, "get_child_managers", None)
        if get_accessors is None or get_child_managers is None:
            _require(mgr, "get_accessors", kind)
            _require(mgr, "get_child_managers", kind)
        accessors = get_accessors()
        children = get_child_managers()
        if len(accessors) != len(children):
            raise UnsupportedGuardError("%s at %s: %d accessors but %d child managers"
                                        % (node.manager_kind, expr, len(accessors), len(children)))
        keys, out = self.keys, node.children
        for accessor, child in zip(accessors, children):
            rep = getattr(accessor, "repr", None)  # (_accessor_text written out)
            text = rep() if callable(rep) else type(accessor).__name__
            out.append(self.node(child, _accessor_expr(accessor, node, child, text, keys), text))
        return node

    def dict_entries(self, mgr: Any, node: SourceNode, pairs: Dict[int, Tuple[Any, Any]]) -> None:
        indices = sorted(pairs)
        with_keys = [i for i in indices if pairs[i][0] is not None]
        size: Optional[int] = None
        note = ""
        # DictGuardManager checks the dict's exact type and length in C++ without a leaf guard
        # and without exposing the length.  Dynamo installs key managers for every key when it
        # guards a dict's keys (guard_on_dict_keys_and_order), so keys 0..n-1 mean n entries.
        if indices and with_keys == list(range(len(indices))) and indices == with_keys:
            size = len(indices)
            note = "the DictGuardManager's built-in length check (inferred: one key guard per entry)"
        node.dict_info = DictInfo(expected_type=node.guarded_type, size=size, size_note=note)
        if size is None:
            raise UnsupportedGuardError(
                "DictGuardManager at %s guards entries %r only: its built-in length check cannot "
                "be recovered because torch exposes no accessor for the expected length"
                % (node.dynamo_source, indices))
        for i in indices:
            key_mgr, value_mgr = pairs[i]
            key_expr = "list(dict.keys(%s))[%d]" % (node.expr, i)
            key_node = None
            if key_mgr is not None:
                key_node = self.node(key_mgr, key_expr, "dict key %d" % i, ("key", i))
                node.children.append(key_node)
            if value_mgr is not None:
                value_expr = "list(dict.values(%s))[%d]" % (node.expr, i)
                key_value = _equals_key(key_node)
                if key_value is not None and node.guarded_type is dict:
                    # the key check above pins entry i to this key, so subscripting reads it
                    value_expr = _subscript(node.expr, key_value[0])
                node.children.append(self.node(value_mgr, value_expr, "dict value %d" % i,
                                               ("value", i)))

    def relational(self) -> List[RelationalCheck]:
        out = []
        for key in self.relational_order:
            leaf, holders = self.relational_holders[key]
            out.append(parse_relational(leaf, holders, self.closure_vars, self.comments))
        return out


def _equals_key(key_node: Optional[SourceNode]) -> Optional[Tuple[Any]]:
    if key_node is None:
        return None
    for check in key_node.checks:
        if check.kind == "EQUALS_MATCH" and not check.delegated and "value" in check.params:
            value = check.params["value"]
            if type(value) in (str, int):
                return (value,)
    return None


def read_guard_tree(wrapper: Any) -> GuardTree:
    """Read a ``GuardManagerWrapper`` (a cache entry's ``guard_manager``) into a :class:`GuardTree`.

    >>> from torch._dynamo.eval_frame import _debug_get_cache_entry_list  # doctest: +SKIP
    >>> entry = _debug_get_cache_entry_list(f.__code__)[0]                  # doctest: +SKIP
    >>> read_guard_tree(entry.guard_manager).root.children[0].expr          # doctest: +SKIP
    "L['x']"

    Raises :class:`UnsupportedGuardError` naming the torch object when the tree uses an accessor
    or relational guard pellucid cannot express.
    """
    root_mgr = getattr(wrapper, "root", None)
    if root_mgr is None:
        raise UnsupportedGuardError("guard manager %r has no .root (RootGuardManager)" % (wrapper,))
    _REST_ARGS.clear()
    _KEY_SETS.clear()
    try:
        return _read(wrapper, root_mgr)
    finally:
        # (the memos of one read: nothing carries over to the next, even when this one fails)
        _REST_ARGS.clear()
        _KEY_SETS.clear()


def _read(wrapper: Any, root_mgr: Any) -> GuardTree:
    reader = _Reader(wrapper)
    root = reader.node(root_mgr, "L", "frame locals")
    epilogue: List[LeafCheck] = []
    get_epilogue = getattr(root_mgr, "get_epilogue_lambda_guards", None)
    if get_epilogue is None:
        raise UnsupportedGuardError("RootGuardManager has no get_epilogue_lambda_guards")
    for leaf in get_epilogue():
        epilogue.append(parse_leaf(leaf, root, reader.closure_vars, epilogue=True,
                                   comments=reader.comments))
    scope = getattr(wrapper, "global_scope", None) or {}
    return GuardTree(root=root, relational=reader.relational(), epilogue=epilogue,
                     globals_dict=scope.get("G"), closure_namespace=dict(reader.closure_vars))


# ---------------------------------------------------------------------------- leaf parsing

def _parts_of(leaf: Any, comments: Optional[Dict[str, _CommentFields]] = None
              ) -> List[CodePart]:
    getter = getattr(leaf, "verbose_code_parts", None)
    if not callable(getter):
        raise UnsupportedGuardError("%s has no verbose_code_parts()" % type(leaf).__name__)
    return [split_code_part(p, comments) for p in getter()]


def parse_leaf(leaf: Any, node: SourceNode, closure_vars: Dict[str, Any],
               epilogue: bool = False,
               comments: Optional[Dict[str, _CommentFields]] = None
               ) -> LeafCheck:
    """Turn one leaf guard into a :class:`LeafCheck` (parameters parsed, or a delegation).

    ``comments`` is :func:`split_code_part`'s memo, shared by the leaves of one read."""
    kind = type(leaf).__name__
    getter = getattr(leaf, "verbose_code_parts", None)  # (_parts_of written out)
    if not callable(getter):
        raise UnsupportedGuardError("%s has no verbose_code_parts()" % kind)
    # (kind, parts, params, leaf, delegate_reason, subject): positional, for ~500 leaves
    check = LeafCheck(kind, [split_code_part(p, comments) for p in getter()], {}, leaf, None,
                      node.expr)
    parser = _PARSERS.get(kind)
    reason: Optional[str]
    if parser is None:
        reason = "pellucid has no Python version of %s guards" % kind
    else:
        try:
            reason = parser(check, node, closure_vars, epilogue)
        except _Unparsed as exc:
            reason = str(exc)
    if reason is not None:
        if not callable(leaf):
            raise UnsupportedGuardError("%s guard on %s: %s, and the guard object is not callable"
                                        % (kind, node.expr, reason))
        check.delegate_reason = reason
        check.params = {}
    return check


class _Unparsed(Exception):
    """Dynamo's text for a guard did not have the expected form (the guard gets delegated)."""


def _one_part(check: LeafCheck) -> CodePart:
    if len(check.parts) != 1:
        raise _Unparsed("expected one code part, found %d" % len(check.parts))
    return check.parts[0]


_COMPILED: Dict[str, "re.Pattern[str]"] = {}


def _match(pattern: str, text: str) -> "re.Match[str]":
    compiled = _COMPILED.get(pattern)
    if compiled is None:
        # re's own cache is keyed on (type, pattern, flags) and checked per call: a dict of
        # our own is cheaper for the few hundred matches of a large guard
        compiled = _COMPILED[pattern] = re.compile(pattern, re.S)
    m = compiled.match(text)
    if not m:
        raise _Unparsed("text %r is not in the expected form" % text)
    return m


def _parse_type_match(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                      ) -> Optional[str]:
    m = _match(r"^_*check_type_id\((.*), (\d+)\)(, type=.*)?$", _one_part(check).code)
    type_id = int(m.group(2))
    check.params["type_id"] = type_id
    t = node.guarded_type
    # the manager's example type is the type the guard was made from; bind it only if its id
    # is the one the guard compares, otherwise keep comparing ids
    check.params["type"] = t if t is not None and id(t) == type_id else None
    return None


def _parse_id_match(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                    ) -> Optional[str]:
    m = _match(r"^_*check_obj_id\((.*), (\d+)\)(, type=(.*))?$", _one_part(check).code)
    check.params["obj_id"] = int(m.group(2))
    check.params["type_text"] = m.group(4) or ""
    return None


def _rhs(check: LeafCheck, node: SourceNode, op: str) -> str:
    code = _one_part(check).code
    prefix = node.dynamo_source + op
    if code.startswith(prefix):
        return code[len(prefix):]
    at = code.find(op)
    if at < 0:
        raise _Unparsed("no %r in %r" % (op.strip(), code))
    return code[at + len(op):]


def _parse_equals(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                  ) -> Optional[str]:
    text = _rhs(check, node, " == ")
    ok, value = _literal(text)
    if not ok:
        value = _dotted_torch(text)
        if value is _NOTHING:
            return "the compared value %r is not a Python literal" % text
    if node.guarded_type is not None and type(value) is not node.guarded_type:
        return "the compared value %r reads back as %s, not %s" % (
            text, type(value).__name__, node.guarded_type.__name__)
    if repr(value) != text:
        return "the compared value %r does not print back the same" % text
    check.params["value"] = value
    return None


_NOTHING = object()
_DOTTED_TORCH = re.compile(r"^torch(\.[A-Za-z_]\w*)+$")


def _dotted_torch(text: str) -> Any:
    """``torch.float32``-style names resolved on the torch module (exact objects, not reprs)."""
    if not _DOTTED_TORCH.match(text):
        return _NOTHING
    import torch
    obj: Any = torch
    for name in text.split(".")[1:]:
        obj = getattr(obj, name, _NOTHING)
        if obj is _NOTHING:
            return _NOTHING
    return obj


def _no_params(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool) -> Optional[str]:
    _one_part(check)
    return None


def _parse_length(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                  ) -> Optional[str]:
    code = _one_part(check).code
    if code.startswith("not "):
        check.params["length"] = 0
        return None
    m = _match(r"^len\((.*)\) == (\d+)$", code)
    check.params["length"] = int(m.group(2))
    return None


#: the DispatchKeySet rebuilt from each key list TENSOR_MATCH text names (a GPT-2 guard's 29
#: tensors have two or three key sets between them; rebuilding one costs ~10 us); emptied at
#: the start and end of each read_guard_tree, like _REST_ARGS.  (The renderer binds one name
#: per distinct key set whichever object it meets, so sharing one object changes nothing.)
_KEY_SETS: Dict[str, Any] = {}


def _parse_tensor_match(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                        ) -> Optional[str]:
    m = _match(r"^check_tensor\((?P<ref>.*), (?P<ptype>[\w.]+), DispatchKeySet\((?P<keys>[^)]*)\), "
               r"(?P<dtype>torch\.\w+), device=(?P<dev>None|-?\d+), "
               r"requires_grad=(?P<rg>True|False), size=(?P<size>\[[^\]]*\]), "
               r"stride=(?P<stride>\[[^\]]*\])\)$", _one_part(check).code)
    # (every group at once, in the pattern's order)
    _, ptype, key_names, dtype_text, dev, rg, size_text, stride_text = m.groups()
    keys = _KEY_SETS.get(key_names)
    if keys is None:
        from pellucid.dynamo.guard_helpers import dispatch_key_set
        names = [k.strip() for k in key_names.split(",") if k.strip()]
        try:
            keys = dispatch_key_set(*names)
        except AttributeError as exc:
            return "unknown dispatch key in %r (%s)" % (key_names, exc)
        if str(keys) != "DispatchKeySet(%s)" % key_names:
            return "dispatch keys %r do not rebuild to the same set (%s)" % (key_names, keys)
        if len(_KEY_SETS) >= 256:
            _KEY_SETS.clear()  # (callers other than read_guard_tree: keep the memo small)
        _KEY_SETS[key_names] = keys
    t = node.guarded_type
    if t is None or t.__qualname__ != ptype:
        return "tensor type %s is not the manager's guarded type %r" % (ptype, t)
    dtype = _dotted_torch(dtype_text)
    if dtype is _NOTHING:
        return "unknown dtype %s" % dtype_text
    size = _int_list(size_text)
    stride = _int_list(stride_text)
    check.params.update(tensor_type=t, dispatch_keys=keys, dtype=dtype,
                        device_index=_literal_value(dev),
                        requires_grad=rg == "True", size=size, stride=stride)
    return None


_PLAIN_INT_LIST = re.compile(r"\[(?:-?(?:0|[1-9][0-9]*)(?:, -?(?:0|[1-9][0-9]*))*)?\]")


def _int_list(text: str) -> Any:
    """``ast.literal_eval(text)`` for Dynamo's ``[2, 3]`` sizes, without a parse when plain."""
    if _PLAIN_INT_LIST.fullmatch(text):
        return [int(x) for x in text[1:-1].split(", ")] if len(text) > 2 else []
    return ast.literal_eval(text)


def _parse_dispatch_key_set(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                            ) -> Optional[str]:
    m = _match(r"^.*\.raw_repr\(\) == DispatchKeySet\(([^)]*)\)\.raw_repr\(\)$", _one_part(check).code)
    from pellucid.dynamo.guard_helpers import dispatch_key_set
    names = [k.strip() for k in m.group(1).split(",") if k.strip()]
    keys = dispatch_key_set(*names)
    if str(keys) != "DispatchKeySet(%s)" % m.group(1):
        return "dispatch keys %r do not rebuild to the same set" % m.group(1)
    check.params["dispatch_keys"] = keys
    return None


_DIM_ABSENT = re.compile(r"^hasattr\((?P<ref>.*), '(?P<attr>\w+)'\) == False$")
_DIM_SUBSET = re.compile(r"^\(\(getattr\((?P<ref>.*), '(?P<attr>\w+)', set\(\)\)\.issubset\((?P<set>.*)\)\) "
                         r"if hasattr\((?P=ref), '(?P=attr)'\) else True\)$")
_DIM_DEPENDENT = re.compile(r"^\(\(getattr\((?P<ref>.*), '(?P<attr>\w+)', None\) == (?P<value>.*)\) "
                            r"if hasattr\((?P=ref), '(?P<gate>\w+)'\) else True\)$")


def _parse_dim_marking(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                       ) -> Optional[str]:
    items: List[Tuple[str, ...]] = []
    for part in check.parts:
        m = _DIM_ABSENT.match(part.code)
        if m:
            items.append(("absent", m.group("attr")))
            continue
        m = _DIM_SUBSET.match(part.code)
        if m:
            ok, value = _literal(m.group("set"))
            if not ok:
                return "marked dimensions %r are not a literal" % m.group("set")
            items.append(("subset", m.group("attr"), value))
            continue
        m = _DIM_DEPENDENT.match(part.code)
        if m:
            ok, value = _literal(m.group("value"))
            if not ok:
                return "expected %s %r is not a literal" % (m.group("attr"), m.group("value"))
            items.append(("dependent", m.group("attr"), value, m.group("gate")))
            continue
        return "dimension-marking text %r is not in a known form" % part.code
    check.params["items"] = items
    return None


def _parse_dict_contains(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                         ) -> Optional[str]:
    code = _one_part(check).code
    m = _match(r"^(not )?_*dict_contains\((.*)\)$", code)
    args = _split_call_args(m.group(2))
    ok, key = _literal(args[0]) if args else (False, None)
    if not ok or len(args) != 2:
        return "the key in %r is not a literal" % code
    check.params.update(contains=not m.group(1), key=key)
    return None


def _parse_set_contains(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                        ) -> Optional[str]:
    code = _one_part(check).code
    m = _match(r"^(not )?set\.__contains__\((.*)\)$", code)
    args = _split_call_args(m.group(2))
    ok, item = _literal(args[-1]) if args else (False, None)
    if not ok or len(args) != 2:
        return "the item in %r is not a literal" % code
    check.params.update(contains=not m.group(1), item=item)
    return None


#: a plain literal (no parse needed to see where it ends) then the comma after it
_LITERAL_HEAD = re.compile(r"(?:'[^'\\\x00-\x1f\x7f]*'|\"[^\"\\\x00-\x1f\x7f]*\"|-?(?:0|[1-9][0-9]*)), ")
#: the arguments after a first literal argument, by the text after it (see _split_call_args);
#: emptied at the start and end of each read_guard_tree, so it only lives for one read
_REST_ARGS: Dict[str, Optional[List[str]]] = {}


def _split_call_args(text: str) -> List[str]:
    """Split ``a, f(b, c), 'd, e'`` at top-level commas (via the parser, so quoting is right).

    >>> _split_call_args("'k', G['m'].d.__dict__")
    ["'k'", "G['m'].d.__dict__"]
    """
    head = _LITERAL_HEAD.match(text)
    if head is None:
        return _split_call_args_parsed(text)
    # Dynamo's ``dict_contains('key', <the node's source>)``: the same source comes with each
    # key of one dict, so what follows the key is parsed once per read.  Any literal atom
    # parses alike, so ``f(0, rest)`` has the structure of ``f(key, rest)``.
    rest = text[head.end():]
    if rest in _REST_ARGS:
        args = _REST_ARGS[rest]
    elif _plain_source(rest) or (rest.isascii() and _CLASS_DICT_SOURCE.fullmatch(rest)):
        args = [rest]  # (one expression, all on one ASCII line: the parser's segment is rest)
    else:
        args = None
        source = "f(0, %s)" % rest
        try:
            call = ast.parse(source, mode="eval").body
        except SyntaxError:
            call = None
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                and call.func.col_offset == 0 and call.args
                and isinstance(call.args[0], ast.Constant) and call.args[0].col_offset == 2):
            # the whole text is one call of f whose first argument is the 0 put there
            args = _arg_segments(source, call)[1:]
        if len(_REST_ARGS) >= 4096:
            _REST_ARGS.clear()  # (callers other than read_guard_tree: keep the memo small)
        _REST_ARGS[rest] = args
    if args is None:
        return _split_call_args_parsed(text)  # (a form the shortcut does not vouch for)
    return [head.group()[:-2]] + args


#: a value read from the frame by subscripts with plain literal keys and attributes, as Dynamo
#: names the values it guards (``L['self']._modules['h'].__dict__``): one expression, which
#: parses, has no names but L and G, and is its own source segment; attribute names that are
#: keywords (``x.None``) do not parse, so they are left out
_PLAIN_SOURCE = re.compile(r"[LG](?:\['[^'\\\x00-\x1f\x7f]*'\]|\[(?:0|[1-9][0-9]*)\]"
                           r"|\.(?!(?:%s)(?![A-Za-z0-9_]))[A-Za-z_][A-Za-z0-9_]*)*"
                           % "|".join(keyword.kwlist))


#: Dynamo's class-attribute reads, ``dict(type(<plain source>).__mro__[1].__dict__)['k']``: one
#: expression too (its only other names are dict and type)
_CLASS_DICT_SOURCE = re.compile(r"dict\(type\((%s)\)(?:\.__mro__\[(?:0|[1-9][0-9]*)\])?\.__dict__\)"
                                r"(?:\['[^'\\\x00-\x1f\x7f]*'\])?" % _PLAIN_SOURCE.pattern)


def _plain_source(text: str) -> bool:
    """Whether ``text`` is a :data:`_PLAIN_SOURCE` expression, in ASCII."""
    return text.isascii() and _PLAIN_SOURCE.fullmatch(text) is not None


def _split_call_args_parsed(text: str) -> List[str]:
    try:
        call = ast.parse("f(%s)" % text, mode="eval").body
    except SyntaxError:
        return []
    assert isinstance(call, ast.Call)
    return _arg_segments("f(%s)" % text, call)


def _arg_segments(source: str, call: ast.Call) -> List[str]:
    """The source text of each positional argument of ``call``, parsed from ``source``."""
    if source.isascii() and "\n" not in source and "\r" not in source and "\x0c" not in source:
        # one line of ASCII: the parser's offsets index the string itself
        return [source[a.col_offset:a.end_col_offset] for a in call.args]  # type: ignore[misc]
    return [ast.get_source_segment(source, a) or "" for a in call.args]


def _parse_no_hasattr(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                      ) -> Optional[str]:
    m = _match(r"^not hasattr\((.*), ('.*'|\".*\")\)$", _one_part(check).code)
    attr = m.group(2)
    # (a quoted ASCII name without escapes is its own text; anything else is parsed)
    plain = attr.isascii() and _PLAIN_STR.fullmatch(attr)
    check.params["attr"] = attr[1:-1] if plain else ast.literal_eval(attr)
    return None


def _parse_tuple_iterator_len(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                              ) -> Optional[str]:
    m = _match(r"^_*tuple_iterator_len\((.*)\) == (\d+)$", _one_part(check).code)
    check.params["length"] = int(m.group(2))
    check.params["type"] = node.guarded_type
    if node.guarded_type is None:
        return "the iterator type the guard compares is not exposed"
    return None


def _parse_range_iterator(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                          ) -> Optional[str]:
    m = _match(r"^_*normalize_range_iter\((.*)\) == (\(.*\))$", _one_part(check).code)
    ok, value = _literal(m.group(2))
    if not ok or node.guarded_type is None:
        return "range iterator state %r not readable" % m.group(2)
    check.params.update(state=value, type=node.guarded_type)
    return None


def _parse_dict_version(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                        ) -> Optional[str]:
    m = _match(r"^_*dict_version\((.*)\) == (\d+)$", _one_part(check).code)
    check.params["version"] = int(m.group(2))
    return None


def _parse_mapping_keys(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                        ) -> Optional[str]:
    m = _match(r"^list\((.*)\.keys\(\)\) == (\[.*\])$", _one_part(check).code)
    ok, keys = _literal(m.group(2))
    if not ok:
        return "the keys %r are not literals" % m.group(2)
    check.params["keys"] = keys
    return None


def _parse_dual_level(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                      ) -> Optional[str]:
    m = _match(r"^torch\.autograd\.forward_ad\._current_level == (-?\d+)$", _one_part(check).code)
    check.params["level"] = int(m.group(1))
    return None


def _parse_global_state(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                        ) -> Optional[str]:
    m = _match(r"^___check_global_state\(\) against (\{.*\})$", _one_part(check).code)
    try:
        state = json.loads(m.group(1))
    except ValueError:
        return "the global-state snapshot is not JSON"
    # Dynamo's own snapshot object, when the wrapper still holds it, must say the same
    bound = cv.get("___check_global_state")
    snapshot = getattr(bound, "__self__", None)
    if snapshot is not None and hasattr(snapshot, "__getstate__"):
        if json.loads(snapshot.__getstate__()) != state:
            return "the global-state text and Dynamo's snapshot object disagree"
    check.params["state"] = state
    return None


def _parse_mode_stack(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                      ) -> Optional[str]:
    fn = cv.get("___check_torch_function_mode_stack")
    code = getattr(fn, "__code__", None)
    if code is None or "types" not in code.co_freevars or fn.__closure__ is None:
        return "the expected mode types are not reachable (closure var " \
               "___check_torch_function_mode_stack has no 'types' cell)"
    types = fn.__closure__[code.co_freevars.index("types")].cell_contents
    check.params["mode_types"] = list(types)
    return None


def _parse_default_device(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                          ) -> Optional[str]:
    m = _match(r"^utils_device\.CURRENT_DEVICE == (.*)$", _one_part(check).code)
    text = m.group(1)
    if text == "None":
        check.params["device"] = None
        return None
    d = re.match(r"^device\(type='(\w+)'(?:, index=(\d+))?\)$", text)
    if not d:
        return "default device %r not readable" % text
    import torch
    dev = torch.device(d.group(1), int(d.group(2))) if d.group(2) else torch.device(d.group(1))
    if repr(dev) != text:
        return "default device %r does not print back the same" % text
    check.params["device"] = dev
    return None


def _parse_lambda(check: LeafCheck, node: SourceNode, cv: Dict[str, Any], ep: bool
                  ) -> Optional[str]:
    if len(check.parts) == 1:
        m = re.match(r"^torch\._functorch\.aot_autograd\.utils\.top_saved_tensors_hooks ids == (.*)$",
                     check.parts[0].code)
        if m:
            ok, ids = _literal(m.group(1))
            if ok and (ids is None or isinstance(ids, tuple)):
                check.params["saved_tensors_hooks"] = ids
                return None
    if not ep:
        return "a Python lambda inside Dynamo with no source of its own"
    # epilogue lambdas run Dynamo-generated Python (symbolic shape guards, object aliasing) on
    # the frame locals; their text is that Python, so it is rendered as is
    exprs = [part.code for part in check.parts]
    reason, names = _python_guard_exprs(exprs, cv)
    if reason is not None:
        return reason
    check.params["exprs"] = exprs
    check.params["names"] = names
    return None


_FRAME_NAMES = ("L", "G")


def _python_guard_exprs(exprs: List[str], cv: Dict[str, Any]
                        ) -> Tuple[Optional[str], Dict[str, Any]]:
    """``(None, names)`` when every one of ``exprs`` is a Python expression over L, G and names
    Dynamo's guard code has, ``names`` being those of Dynamo's (name -> object, first use
    first); ``(reason, {})`` for the first expression that is not.

    One parse per expression serves both answers (shape guards can be long).
    """
    out: Dict[str, Any] = {}
    for code in exprs:
        left, is_, right = code.partition(" is ")
        if is_ and _plain_source(left) and _plain_source(right):
            continue  # Dynamo's object-aliasing form: an expression with no names but L and G
        try:
            tree = ast.parse(code, mode="eval")
        except SyntaxError:
            return "guard text %r is not a Python expression" % code, {}
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and n.id not in _FRAME_NAMES:
                if n.id in cv:
                    out[n.id] = cv[n.id]
                elif not hasattr(builtins, n.id):
                    return ("guard text %r uses %r, which Dynamo's guard namespace lacks"
                            % (code, n.id)), {}
    return None, out


_PARSERS: Dict[str, Callable[[LeafCheck, SourceNode, Dict[str, Any], bool], Optional[str]]] = {
    "TYPE_MATCH": _parse_type_match,
    "ID_MATCH": _parse_id_match,
    "EQUALS_MATCH": _parse_equals,
    "TRUE_MATCH": _no_params,
    "FALSE_MATCH": _no_params,
    "NONE_MATCH": _no_params,
    "NOT_NONE": _no_params,
    "FLOAT_IS_NAN": _no_params,
    "COMPLEX_IS_NAN": _no_params,
    "LENGTH_CHECK": _parse_length,
    "DICT_LENGTH": _parse_length,
    "TENSOR_MATCH": _parse_tensor_match,
    "DISPATCH_KEY_SET_MATCH": _parse_dispatch_key_set,
    "DIMENSION_DYNAMIC_MARKING_GUARD": _parse_dim_marking,
    "DICT_CONTAINS": _parse_dict_contains,
    "SET_CONTAINS": _parse_set_contains,
    "NO_HASATTR": _parse_no_hasattr,
    "TUPLE_ITERATOR_LEN": _parse_tuple_iterator_len,
    "RANGE_ITERATOR_MATCH": _parse_range_iterator,
    "DICT_VERSION": _parse_dict_version,
    "MAPPING_KEYS_MATCH": _parse_mapping_keys,
    "DUAL_LEVEL_MATCH": _parse_dual_level,
    "GLOBAL_STATE": _parse_global_state,
    "TORCH_FUNCTION_MODE_STACK": _parse_mode_stack,
    "DEFAULT_DEVICE": _parse_default_device,
    "LAMBDA_GUARD": _parse_lambda,
}


# ------------------------------------------------------------------------- relational guards

def parse_relational(leaf: Any, holders: List[SourceNode], closure_vars: Dict[str, Any],
                     comments: Optional[Dict[str, _CommentFields]] = None
                     ) -> RelationalCheck:
    """Turn a relational guard and the nodes that hold it into a :class:`RelationalCheck`."""
    kind = type(leaf).__name__
    parts = _parts_of(leaf, comments)
    subjects = [n.expr for n in holders]
    check = RelationalCheck(kind=kind, parts=parts, subjects=subjects, leaf=leaf)
    if kind in ("NO_TENSOR_ALIASING", "OBJECT_ALIASING"):
        if kind == "OBJECT_ALIASING" and len(holders) != 2:
            raise UnsupportedGuardError("OBJECT_ALIASING held by %d managers, expected 2" % len(holders))
        # order the values as Dynamo's text lists them, where it does
        if parts and kind == "NO_TENSOR_ALIASING":
            m = re.match(r"^check_no_aliasing\((.*)\)$", parts[0].code)
            if m:
                order = _split_call_args(m.group(1))
                by_source = {n.dynamo_source: n.expr for n in holders}
                if sorted(order) == sorted(by_source):
                    check.subjects = [by_source[s] for s in order]
        return check
    if kind == "STORAGE_OVERLAPPING":
        m = re.match(r"^check_overlapping\(overlapping=\[(.*)\], non_overlapping=\[(.*)\]\)$",
                     parts[0].code if parts else "")
        by_source = {n.dynamo_source: n.expr for n in holders}
        if not m:
            raise UnsupportedGuardError("STORAGE_OVERLAPPING text %r not readable"
                                        % (parts[0].code if parts else None))
        groups = []
        for text in (m.group(1), m.group(2)):
            names = _split_call_args(text) if text.strip() else []
            if any(n not in by_source for n in names):
                raise UnsupportedGuardError("STORAGE_OVERLAPPING names %r not all among its "
                                            "managers %r" % (names, sorted(by_source)))
            groups.append([by_source[n] for n in names])
        check.params.update(overlapping=groups[0], non_overlapping=groups[1])
        return check
    if kind == "SYMBOLIC_SHAPE_GUARD":
        # C++-compiled shape guards; their verbose parts are the Python form of the same checks
        exprs = [part.code for part in parts]
        reason, free = _python_guard_exprs(exprs, closure_vars)
        if reason is not None:
            raise UnsupportedGuardError("SYMBOLIC_SHAPE_GUARD: %s" % reason)
        check.params["exprs"] = exprs
        check.params["names"] = free
        return check
    raise UnsupportedGuardError("unknown relational guard %s on %s (relational guards cannot be "
                                "called on one value, so pellucid cannot delegate it)"
                                % (kind, ", ".join(subjects)))
