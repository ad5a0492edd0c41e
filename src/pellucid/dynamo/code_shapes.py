"""Decompile each shape of Dynamo's transformed code once.

A model's layers make Dynamo compile the same function once per layer (a graph break in every
layer: hundreds of cache entries).  Their transformed code objects are the same bytecode with
other constants and other generated names: the graph each calls (``__compiled_fn_26_<uuid>``),
the resume function (``__resume_at_190_27``), the layer's index (``layers[7]``), the objects
without a literal form (bound as ``__pellucid_const_t9_...``).  Decompiling is a pure function of
the code object, so the source of one such code object is the source of another with those
tokens exchanged -- when each is one token the decompiler wrote for that constant or name alone.

:class:`ShapeCache` keeps, per shape, the first source decompiled with those tokens as slots,
and fills them for the next code object of the shape.  The result is compiled
(:func:`pellucid.decompiler.recompile.recompile_source`) and, like everything pellucid hands
back, verified by the caller; a source the verifier refuses is decompiled afresh.  Where a slot
cannot be told apart from other text (the constant's digits elsewhere in the source, a name
inside a comment), the shape is not kept and each code object is decompiled.

>>> shape_key(compile("x[7] + y", "f", "eval")) == shape_key(compile("x[9] + y", "f", "eval"))
True
"""
import io
import re
import tokenize
import types
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from pellucid.decompiler.constants import is_literal

#: names Dynamo makes afresh for each compile (a graph's function, a resume function)
_VOLATILE = re.compile(r"^(__compiled_fn_)\d+(_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12})?$"
                       r"|^(__resume_at_\d+_)\d+$")
#: the prefix of the names of constants without a literal form (``ConstantPool``)
_BOUND = "__pellucid_const_"
#: ints below this are kept in the key: 0 and 1 are also truth values (a decompiler may read a
#: test of them); larger ones only stand for themselves
_SMALLEST_SLOT_INT = 2
#: shapes kept per cache (a model has a handful of functions compiled per layer)
_MAX_SHAPES = 256

Key = Tuple[Any, ...]


def _normal_name(name: str) -> str:
    m = _VOLATILE.match(name)
    if m is None:
        return name
    return (m.group(1) + "#" + ("_uuid" if m.group(2) else "")) if m.group(1) else m.group(3) + "#"


def _slot_int(value: Any) -> bool:
    return type(value) is int and value >= _SMALLEST_SLOT_INT


def _literal_key(value: Any) -> Any:
    """A literal constant as the key compares it: its type and value, all the way down
    (``1 == 1.0 == True`` must not make two shapes one)."""
    if type(value) in (tuple, frozenset):
        inner = [_literal_key(v) for v in value]
        return (type(value).__name__, tuple(inner) if type(value) is tuple else frozenset(inner))
    return (type(value).__name__, value)


def _hint(value: Any) -> str:
    # (the constant's bound name says what it is: see ConstantPool._bind)
    hint = getattr(value, "__name__", type(value).__name__)
    return str(hint) if isinstance(hint, str) else type(value).__name__


def shape_key(code: types.CodeType) -> Optional[Key]:
    """What decompiling ``code`` depends on, with Dynamo's generated names, ints from 2 up and
    objects without a literal form abstracted to the pattern of their repetitions; None for a
    code object not kept by shape (one with nested code objects)."""
    ints: Dict[int, int] = {}
    objects: Dict[int, int] = {}
    consts: List[Any] = []
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            return None
        if _slot_int(c):
            consts.append(("int", ints.setdefault(c, len(ints))))
        elif is_literal(c):
            consts.append(_literal_key(c))
        else:
            consts.append(("obj", objects.setdefault(id(c), len(objects)), type(c), _hint(c)))
    from pellucid.decompiler.copy_propagation import enabled

    return (code.co_code, tuple(consts), tuple(_normal_name(n) for n in code.co_names),
            code.co_varnames, code.co_cellvars, code.co_freevars, code.co_argcount,
            getattr(code, "co_posonlyargcount", 0), code.co_kwonlyargcount, code.co_flags,
            code.co_nlocals, code.co_stacksize, code.co_firstlineno, code.co_filename, code.co_name,
            getattr(code, "co_qualname", None), getattr(code, "co_linetable", None),
            getattr(code, "co_lnotab", None) if not hasattr(code, "co_linetable") else None,
            getattr(code, "co_exceptiontable", None), enabled())


def _literal_ints(value: Any, out: set) -> None:
    if type(value) in (tuple, frozenset):
        for v in value:
            _literal_ints(v, out)
    elif type(value) is int:
        out.add(abs(value))


#: a slot of a template: ("name", index in co_names) | ("int", index in co_consts) |
#: ("bound", the constant's index in the bindings, the name's text after the tag)
Slot = Tuple[str, int, str]


class _Template:
    """One decompiled source with its code's generated names, ints and bound names as slots."""

    __slots__ = ("pieces", "head", "tag", "bound_consts")

    def __init__(self, pieces: List[Union[str, Slot]], head: str, tag: str,
                 bound_consts: List[int]) -> None:
        self.pieces = pieces
        self.head = head
        self.tag = tag
        #: per binding, in order: the index in co_consts of the constant it is bound to
        self.bound_consts = bound_consts


def make_template(code: types.CodeType, source: str, head: str, tag: str,
                  bindings: Dict[str, Any], compiled: types.CodeType) -> Optional[_Template]:
    """``source`` (decompiled from ``code``, starting with ``head``, its bound names tagged
    ``tag``, compiled to ``compiled``) with its slots found, or None when a slot's text is not
    only that slot's."""
    if not source.startswith(head) or any(isinstance(c, types.CodeType) for c in compiled.co_consts):
        return None  # (functions the source defines, the fallback's say: decompiled each time)
    body = source[len(head):]
    names: Dict[str, int] = {}
    for k, n in enumerate(code.co_names):
        if _normal_name(n) != n:
            if n in names:
                return None
            names[n] = k
    ints: Dict[str, int] = {}
    others: set = set()
    for k, c in enumerate(code.co_consts):
        if _slot_int(c):
            if repr(c) in ints:
                return None
            ints[repr(c)] = k
        elif is_literal(c):
            _literal_ints(c, others)
    if any(repr(v) in ints for v in others):
        return None  # (its digits also come from another constant)
    bound: Dict[str, int] = {}
    bound_consts: List[int] = []
    prefix = _BOUND + tag
    for j, (name, value) in enumerate(bindings.items()):
        if not name.startswith(prefix):
            return None
        at = [k for k, c in enumerate(code.co_consts) if c is value]
        if len(at) != 1:
            return None  # (bound to something else than one constant of the code: not kept)
        bound[name] = j
        bound_consts.append(at[0])
    bound_ids = {id(v) for v in bindings.values()}
    for c in code.co_consts:
        if not _slot_int(c) and not is_literal(c) and id(c) not in bound_ids:
            # the key abstracts it as bound to a name; the decompiler wrote it otherwise (3.14's
            # constant slices, ``a[300:]``): its text is not a slot, so the shape is not kept
            return None
    slots: Dict[str, Slot] = {}
    for n, k in names.items():
        slots[n] = ("name", k, "")
    for name, j in bound.items():
        slots[name] = ("bound", j, name[len(prefix):])
    pieces: List[Union[str, Slot]] = []
    lines = body.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    done = 0
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(body).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    for tok in tokens:
        slot: Optional[Slot] = None
        if tok.type == tokenize.NAME:
            slot = slots.get(tok.string)
        elif tok.type == tokenize.NUMBER and tok.string in ints:
            slot = ("int", ints[tok.string], "")
        elif tok.type in (tokenize.COMMENT, tokenize.STRING) or (
                tok.type not in (tokenize.NAME, tokenize.NUMBER) and tok.string.strip()
                and tok.type not in (tokenize.OP, tokenize.NEWLINE, tokenize.NL, tokenize.INDENT,
                                     tokenize.DEDENT, tokenize.ENDMARKER)):
            # a slot's text inside other text (a comment, a string, an f-string's parts): the
            # substitution would not know which is which
            if any(s in tok.string for s in slots) or any(re.search(r"\b%s\b" % re.escape(i), tok.string)
                                                           for i in ints):
                return None
        if slot is None:
            continue
        (row, col), (erow, ecol) = tok.start, tok.end
        begin, end = starts[row - 1] + col, starts[erow - 1] + ecol
        pieces.append(body[done:begin])
        pieces.append(slot)
        done = end
    pieces.append(body[done:])
    return _Template(pieces, head, tag, bound_consts)


def fill(template: _Template, code: types.CodeType, head: str, tag: str
         ) -> Optional[Tuple[str, Dict[str, Any]]]:
    """The source of ``code`` (of the template's shape) and its bindings, or None when a new
    name or number is already text of the template (the exchange would not be one to one)."""
    texts: List[str] = []
    new_texts = set()
    prefix = _BOUND + tag
    bound_names: Dict[int, str] = {}
    for piece in template.pieces:
        if isinstance(piece, str):
            texts.append(piece)
            continue
        kind, k, rest = piece
        if kind == "name":
            text = code.co_names[k]
        elif kind == "int":
            text = repr(code.co_consts[k])
        else:
            text = bound_names.setdefault(k, prefix + rest)
        texts.append(text)
        new_texts.add(text)
    plain = "".join(p for p in template.pieces if isinstance(p, str))
    for text in new_texts:
        if re.search(r"(?<![\w])%s(?![\w])" % re.escape(text), plain):
            return None
    bindings: Dict[str, Any] = {}
    for j, k in enumerate(template.bound_consts):
        name = bound_names.get(j)
        if name is None:
            return None  # (a binding whose name the source never wrote: not this shape's)
        bindings[name] = code.co_consts[k]
    return head + "".join(texts), bindings


class ShapeCache:
    """Per capture: a template per shape of transformed code decompiled so far."""

    def __init__(self) -> None:
        self.templates: Dict[Key, Optional[_Template]] = {}
        self.hits = 0

    def recompile(self, code: types.CodeType, path: str, head: str, tag: str,
                  recompile_full: Callable[..., Any], **kwargs: Any) -> Tuple[Any, bool]:
        """``recompile_full(code, path, header=head, const_tag=tag, **kwargs)``, or the same
        made from the template of ``code``'s shape; (the result, whether from a template)."""
        from pellucid.decompiler.recompile import recompile_source

        key = shape_key(code)
        template = self.templates.get(key) if key is not None else None
        if template is not None:
            filled = fill(template, code, head, tag)
            if filled is not None:
                source, bindings = filled
                try:
                    result = recompile_source(code, source, bindings, path,
                                              keep_locals=kwargs.get("keep_locals", False))
                except Exception:  # (a layout the template does not give: decompiled afresh)
                    pass
                else:
                    self.hits += 1
                    return result, True
        result = recompile_full(code, path, header=head, const_tag=tag, **kwargs)
        if key is not None and key not in self.templates and len(self.templates) < _MAX_SHAPES:
            self.templates[key] = make_template(code, result.source, head, tag, result.bindings,
                                                         result.code)
        return result, False
