"""Symbolic values ("terms") of the equivalence checker.

A term is a plain, hashable tuple whose first item names its kind.  Two programs computed "the
same value" exactly when they hold equal terms, so terms are built so that equality is meaningful
across the two programs:

* ``("arg", name)``            a parameter (or the caller's exception state) on entry;
* ``("const", type, key)``     a literal constant (``1``, ``1.0`` and ``True`` stay distinct);
* ``("tuple", items)``         a tuple, whether loaded as a constant or built on the stack;
* ``("r", epoch, i)``          the ``i``-th result of the effect number ``epoch`` (a call...);
* ``("b", epoch)``             the exact ``bool`` produced by effect ``epoch`` (a truth test...);
* ``("s", epoch)``             the ``str`` (maybe of a subclass) produced by effect ``epoch``
                               (a ``format`` or ``!r`` conversion);
* ``("e", epoch)``             the exception raised by effect ``epoch``;
* ``("g", name, epoch)``       a global read between effect ``epoch - 1`` and ``epoch``: no user
                               code can run between two reads with one epoch, so they agree;
* ``("cellv", name, epoch)``   a cell's content after user code (which may rebind it) ran;
* ``("v", k, maybe_unbound, kind)``  a variable introduced when two states are generalised at a
                               loop; ``kind`` is True when it stands for exact bools only,
                               ``"str"`` for strs only, ``"exc"`` for exception instances
                               only, ``"list"``/``"dict"``/``"set"`` for exact ones built here
                               only, else False;
* ``("list", epoch, k)``       the ``k``-th exact list built in an epoch; its contents live in
                               the program state while known (``machine.py``, "Lists"); negative
                               ``k``: a list user code may have seen, named alike by both programs;
* ``("not", t)``, ``("is", a, b)`` pure boolean results, and a few other pure constructors.

>>> const_term(1) == const_term(True)
False
>>> const_term((1, 2)) == ("tuple", (const_term(1), const_term(2)))
True
"""
import types
from typing import Any, Dict, Optional, Tuple

Term = Tuple[Any, ...]

UNBOUND: Term = ("unbound",)
NULL: Term = ("null",)
LASTI: Term = ("lasti",)

_PLAIN = (bool, int, str, bytes)
_SINGLETONS = {type(None): "None", type(Ellipsis): "Ellipsis", type(NotImplemented): "NotImplemented"}

# Kinds whose value is always an exact ``bool``: branching on them runs no user code.
BOOL_KINDS = frozenset({"b", "not", "is"})


def const_term(value: Any, code_keys: Optional[Dict[int, Term]] = None) -> Term:
    """The term of a constant from ``co_consts``.

    Code objects get the key their pairing with the other program gave them (``code_keys`` maps
    ``id(code)``); objects without a literal form are only equal to themselves.
    """
    tp = type(value)
    if tp in _SINGLETONS:
        return ("const", _SINGLETONS[tp], None)
    if tp in _PLAIN:
        return ("const", tp.__name__, value)
    if tp in (float, complex):
        # repr keeps -0.0 apart from 0.0 and makes nan equal to itself.
        return ("const", tp.__name__, repr(value))
    if tp is tuple:
        return ("tuple", tuple(const_term(v, code_keys) for v in value))
    if tp is frozenset:
        return ("const", "frozenset", frozenset(const_term(v, code_keys) for v in value))
    if tp is types.CodeType:
        if code_keys is not None and id(value) in code_keys:
            return code_keys[id(value)]
        return ("code", "unpaired", id(value))
    return ("const", "object", id(value))


def const_value(term: Term) -> Tuple[bool, Any]:
    """``(True, value)`` for constants whose Python value can be used for folding."""
    if term[0] == "const":
        kind, key = term[1], term[2]
        if kind == "None":
            return True, None
        if kind in ("bool", "int", "str", "bytes"):
            return True, key
        if kind == "float":
            return True, float(key)
    if term[0] == "tuple":
        items = []
        for t in term[1]:
            ok, v = const_value(t)
            if not ok:
                return False, None
            items.append(v)
        return True, tuple(items)
    return False, None


def is_singleton(term: Term) -> bool:
    return term[0] == "const" and term[1] in ("None", "Ellipsis", "NotImplemented", "bool")


def maybe_unbound(term: Term) -> bool:
    """Whether reading a variable holding ``term`` may raise (unbound local / empty cell)."""
    return (term[0] == "v" and term[2]) or term[0] == "cellv"


def is_bool(term: Term) -> bool:
    return (term[0] in BOOL_KINDS or (term[0] == "const" and term[1] == "bool")
            or (term[0] == "v" and term[3] is True))


def is_str(term: Term) -> bool:
    """Whether ``term`` is certainly a ``str`` (maybe of a subclass)."""
    return (term[0] in ("s", "str") or (term[0] == "const" and term[1] == "str")
            or (term[0] == "v" and term[3] == "str"))


def is_exception(term: Term) -> bool:
    """Whether ``term`` is certainly an exception instance (one an effect raised, an
    iterator's StopIteration)."""
    return term[0] in ("e", "stop", "unbound_exc") or (term[0] == "v" and term[3] == "exc")


def kind_of(a: Term, b: Term) -> Any:
    """The ``kind`` of a variable standing for ``a`` and ``b`` (see the module docstring)."""
    ka = term_kind(a)
    return ka if ka and ka == term_kind(b) else False


def term_kind(t: Term) -> Any:
    """What ``t`` is certainly: True (an exact bool), ``"str"``, ``"exc"``, ``"list"``,
    ``"dict"``, ``"set"``, or False (nothing known).  (A term is at most one of them.)"""
    k = t[0]
    if k in BOOL_KINDS:
        return True
    if k == "const":
        return True if t[1] == "bool" else ("str" if t[1] == "str" else False)
    if k == "v":
        return t[3]
    if k == "s" or k == "str":
        return "str"
    if k == "e" or k == "stop" or k == "unbound_exc":
        return "exc"
    if k in _CONTAINERS and len(t) == 3:
        return k
    return False


def container_kind(term: Term) -> Optional[str]:
    """``"list"``, ``"dict"`` or ``"set"`` when ``term`` is certainly an exact list, dict or set
    built here (see ``machine.py``, "Lists"), else None."""
    if term[0] in _CONTAINERS and len(term) == 3:
        return term[0]  # type: ignore[no-any-return]
    if term[0] == "v" and term[3] in _CONTAINERS:
        return term[3]  # type: ignore[no-any-return]
    return None


_CONTAINERS = ("list", "dict", "set")


def has_kind(term: Term, kind: Any) -> bool:
    """Whether ``term`` may stand where a variable of ``kind`` stands."""
    if kind is True:
        return is_bool(term)
    if kind == "str":
        return is_str(term)
    if kind == "exc":
        return is_exception(term)
    if kind in _CONTAINERS:
        return container_kind(term) == kind
    return True


def render(term: Any, depth: int = 0) -> str:
    """A short human-readable form of a term, for verdict messages."""
    try:
        return _render(term, depth)
    except Exception:
        return repr(term)


def _render(term: Any, depth: int) -> str:
    if not isinstance(term, tuple) or not term:
        return repr(term)
    if depth > 3:
        return "..."
    kind = term[0]
    sub = lambda t: _render(t, depth + 1)  # noqa: E731
    if not isinstance(kind, str):  # a tuple of terms (call arguments...)
        return "(" + ", ".join(sub(t) for t in term) + ")"
    if kind == "const":
        return "None" if term[1] == "None" else repr(term[2]) if term[1] != "object" else "<object>"
    if kind == "arg":
        return str(term[1])
    if kind == "tuple":
        return "(" + ", ".join(sub(t) for t in term[1]) + ("," if len(term[1]) == 1 else "") + ")"
    if kind == "r":
        return "r%d.%d" % (term[1], term[2])
    if kind == "b":
        return "bool%d" % term[1]
    if kind == "s":
        return "str%d" % term[1]
    if kind == "e":
        return "exc%d" % term[1]
    if kind == "g":
        return "%s@%d" % (term[1], term[2])
    if kind == "v":
        return "V%d" % term[1]
    if kind == "not":
        return "not " + sub(term[1])
    if kind == "is":
        return "%s is %s" % (sub(term[1]), sub(term[2]))
    if kind == "list":
        return "list#%s.%s" % (term[1], term[2])
    if kind == "known list":
        return "[" + ", ".join(sub(t) for t in term[2]) + "]"
    if kind == "method":
        return "%s.%s" % (sub(term[2]), term[1])
    if kind == "cellv":
        return "cell %s@%d" % (term[1], term[2])
    if kind in ("unbound", "null", "lasti"):
        return "<%s>" % kind
    return kind + "(" + ", ".join(sub(t) for t in term[1:]) + ")"
