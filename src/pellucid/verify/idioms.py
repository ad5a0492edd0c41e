"""Instruction sequences of the fallback that stand for one instruction of the original.

The decompiler's fallback (a state machine over basic blocks) cannot write some instructions as
one statement.  ``BEFORE_WITH`` and ``BEFORE_ASYNC_WITH`` become a *prologue* (3.11+; up to 3.10
the two checks raise ``AttributeError(name)``, as the special method lookups did; 3.14+, where
``LOAD_SPECIAL`` looks ``__exit__`` up first, the two checks come the other way round and both
messages end in ``(missed <name> method)``)::

    __pellucid_m = <manager>
    if not __pellucid_builtins.hasattr(__pellucid_builtins.type(__pellucid_m), '__enter__'):
        raise __pellucid_builtins.TypeError("'%s' object does not support the context manager protocol" % <tp_name>)
    if not __pellucid_builtins.hasattr(__pellucid_builtins.type(__pellucid_m), '__exit__'):
        raise __pellucid_builtins.TypeError("... protocol (missed __exit__ method)" % <tp_name>)
    __pellucid_enter = __pellucid_builtins.type(__pellucid_m).__enter__
    <exit slot> = __pellucid_builtins.type(__pellucid_m).__exit__.__get__(__pellucid_m)
    <result slot> = __pellucid_enter(__pellucid_m)

This module states, independently of the decompiler, exactly which text the verifier accepts
for it: it compiles that text itself (once per interpreter), and :func:`find_with_prologues`
finds code that is instruction for instruction the same -- the two slots excepted -- and whose
instructions all have one exception handler.  The machine then runs such a prologue as the one
effect ``("with_enter", manager)``, as it runs ``BEFORE_WITH``.

That is equivalent under an assumption the verifier makes (see ``pellucid.verify``): the
manager's type provides ``__enter__``/``__exit__`` the ordinary way -- looked up on the type,
no metaclass hook and no custom descriptor -- so neither lookup runs user code, and calling
``type(m).__enter__(m)`` is calling the bound special method.  (The message of the TypeError
for a missing method is CPython's, but for type names longer than 200 characters up to 3.13,
and from 3.14 for a class whose ``__module__`` was deleted.)
"""
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from pellucid.bytecode.features import (WITH_CHECKS_PROTOCOL, WITH_ERROR_NAMES_QUALIFIED_TYPE,
                                        WITH_LOADS_SPECIAL_METHODS)
from pellucid.bytecode.instruction import Instr
from pellucid.bytecode.normalize import normalize

_T = "__pellucid_builtins.type(__pellucid_m)"
if WITH_ERROR_NAMES_QUALIFIED_TYPE:
    # (3.14+ names the type as %T does: a heap type by module and qualified name, but for
    # builtins, __main__ or a module that is no str; a static type by its tp_name)
    _TP_NAME = ("((%s.__qualname__ if __pellucid_builtins.type(%s.__module__) is not "
                "__pellucid_builtins.str or %s.__module__ in ('builtins', '__main__') else "
                "%s.__module__ + '.' + %s.__qualname__) if %s.__flags__ & 512 else "
                "%s.__name__ if %s.__module__ == 'builtins' else %s.__module__ + '.' + "
                "%s.__name__)" % ((_T,) * 10))
else:
    # (tp_name: a class statement's type has its bare name, other types their dotted one)
    _TP_NAME = ("(%s.__name__ if %s.__flags__ & 768 == 512 or %s.__module__ == 'builtins' else "
                "%s.__module__ + '.' + %s.__name__)" % (_T, _T, _T, _T, _T))
_EXIT = "__pellucid_X_exit"  # placeholders for the two slots
_RESULT = "__pellucid_X_result"


def _prologue_checks(enter: str, exit_: str) -> Tuple[Tuple[str, str], ...]:
    """The special methods in the order the interpreter looks them up, each with the suffix of
    the TypeError it raises when that one is missing."""
    if WITH_LOADS_SPECIAL_METHODS:
        # (3.14+: LOAD_SPECIAL looks ``exit_`` up first; either message names the missing one)
        return ((exit_, " (missed %s method)" % exit_), (enter, " (missed %s method)" % enter))
    return ((enter, ""), (exit_, " (missed %s method)" % exit_))


def _prologue_source(enter: str, exit_: str, what: str) -> str:
    lines = ["def __pellucid_prologue(__pellucid_builtins, __pellucid_m):"]
    for name, suffix in _prologue_checks(enter, exit_):
        lines.append("    if not __pellucid_builtins.hasattr(%s, %r):" % (_T, name))
        if WITH_CHECKS_PROTOCOL:
            lines.append("        raise __pellucid_builtins.TypeError(\"'%%s' object does not "
                         "support the %s protocol%s\" %% %s)" % (what, suffix, _TP_NAME))
        else:
            # (up to 3.10 the special method's lookup raises AttributeError(name): the
            # fallback's ``_protocol_check`` writes the same)
            lines.append("        raise __pellucid_builtins.AttributeError(%r)" % name)
    lines.append("    __pellucid_enter = %s.%s" % (_T, enter))
    lines.append("    %s = %s.%s.__get__(__pellucid_m)" % (_EXIT, _T, exit_))
    lines.append("    %s = __pellucid_enter(__pellucid_m)" % _RESULT)
    return "\n".join(lines) + "\n"


# (kind, the prologue's instructions after the function's own start): compiled on first use
_TEMPLATES: Optional[List[Tuple[str, List[Instr]]]] = None


def _templates() -> List[Tuple[str, List[Instr]]]:
    global _TEMPLATES
    if _TEMPLATES is None:
        out = []
        for kind, names in (("with_enter", ("__enter__", "__exit__", "context manager")),
                            ("async_with_enter", ("__aenter__", "__aexit__",
                                                  "asynchronous context manager"))):
            ns: Dict[str, Any] = {}
            exec(compile(_prologue_source(*names), "<pellucid.verify idiom>", "exec"), ns)
            out.append((kind, _body(normalize(ns["__pellucid_prologue"].__code__))))
        _TEMPLATES = out
    return _TEMPLATES


_MODULE = "__pellucid_X_module"  # placeholders of the import-from idiom
_NAME = "\x00name"


def _import_from_source() -> str:
    m = _MODULE
    return (
        "def __pellucid_idiom(__pellucid_builtins, __pellucid_ok, %(m)s):\n"
        "    if not __pellucid_ok:\n"
        "        %(r)s = __pellucid_builtins.__import__('sys').modules.get('%%s.%%s' %% "
        "(%(m)s.__name__, %(n)r))\n"
        "        if %(r)s is None:\n"
        "            raise __pellucid_builtins.ImportError('cannot import name %%r from %%r (%%s)' "
        "%% (%(n)r, %(m)s.__name__, __pellucid_builtins.getattr(%(m)s, '__file__', None) or "
        "'unknown location'), name=%(m)s.__name__)\n" % {"m": m, "r": _RESULT, "n": _NAME})


_IMPORT_FROM: Optional[List[Instr]] = None


def _import_from_template() -> List[Instr]:
    global _IMPORT_FROM
    if _IMPORT_FROM is None:
        ns: Dict[str, Any] = {}
        exec(compile(_import_from_source(), "<pellucid.verify idiom>", "exec"), ns)
        _IMPORT_FROM = _body(normalize(ns["__pellucid_idiom"].__code__))
    return _IMPORT_FROM


def _body(instrs: List[Instr]) -> List[Instr]:
    """A compiled idiom without the ``return None`` copies the compiler ends it with (a jump
    there is a jump to the idiom's end)."""
    end = len(instrs)
    while end >= 2 and [(i.op, i.arg) for i in instrs[end - 2:end]] == [
            ("LOAD_CONST", None), ("RETURN_VALUE", None)]:
        end -= 2
    assert end < len(instrs), "an idiom must end with the implicit return"
    return instrs[:end]


class ImportFrom(NamedTuple):
    """The fallback's lookup for ``from m import name`` when ``m.name`` raised AttributeError
    (IMPORT_FROM's second half, see ``machine._import_from``), at ``start`` (where it tests
    ``__pellucid_ok``) up to ``end``::

        if not __pellucid_ok:
            <slot> = __pellucid_builtins.__import__('sys').modules.get('%s.%s' % (<m>.__name__, <name>))
            if <slot> is None:
                raise __pellucid_builtins.ImportError('cannot import name %r from %r (%s)' % (...), name=<m>.__name__)

    (The message is CPython's, but for a partially initialised module, where CPython adds that
    the cause is most likely a circular import.)"""

    start: int
    end: int
    module_slot: str
    result_slot: str
    name: str


def find_import_froms(instrs: List[Instr]) -> Dict[int, ImportFrom]:
    """The fallback's import-from lookups in ``instrs``, by start index."""
    out: Dict[int, ImportFrom] = {}
    template = None
    for k, ins in enumerate(instrs):
        if ins.op == "LOAD_FAST" and ins.arg == "__pellucid_ok":
            if template is None:
                template = _import_from_template()
            found = _match_idiom(instrs, k, template)
            if found is not None:
                out[k] = ImportFrom(k, k + len(template), found[_MODULE], found[_RESULT],
                                    found[_NAME])
    return out


class Prologue(NamedTuple):
    """A fallback prologue found at index ``start`` (just after ``__pellucid_m = ...``) up to
    ``end`` (the next instruction): ``kind`` of effect, and the slots it binds."""

    kind: str
    start: int
    end: int
    exit_slot: str
    result_slot: str


_FAST = ("LOAD_FAST", "STORE_FAST")


def find_with_prologues(instrs: List[Instr]) -> Dict[int, Prologue]:
    """The with-statement prologues of the fallback in ``instrs``, by start index."""
    out: Dict[int, Prologue] = {}
    for k, ins in enumerate(instrs[:-1]):
        if ins.op == "STORE_FAST" and ins.arg == "__pellucid_m":
            for kind, template in _templates():
                found = _match(instrs, k + 1, template)
                if found is not None:
                    out[k + 1] = Prologue(kind, k + 1, k + 1 + len(template), *found)
                    break
    return out


def _match(instrs: List[Instr], start: int, template: List[Instr]) -> Optional[Tuple[str, str]]:
    found = _match_idiom(instrs, start, template)
    if found is None or set(found) != {_EXIT, _RESULT} or found[_EXIT] == found[_RESULT]:
        return None
    return found[_EXIT], found[_RESULT]


_SLOTS = (_EXIT, _RESULT, _MODULE)


def _match_idiom(instrs: List[Instr], start: int, template: List[Instr]) -> Optional[Dict[str, str]]:
    """Whether ``instrs`` from ``start`` are ``template`` instruction for instruction (all with
    one exception handler): the candidate's names for the template's placeholders (slots
    ``__pellucid_s<k>``, and the str constant standing for ``_NAME``), else None."""
    if start + len(template) > len(instrs):
        return None
    found: Dict[str, str] = {}
    handler = instrs[start].handler
    for k, t in enumerate(template):
        c = instrs[start + k]
        if c.op != t.op or c.handler != handler:
            return None
        if t.target is not None or c.target is not None:
            if t.target is None or c.target is None or c.target - start != min(t.target,
                                                                              len(template)):
                return None
        if c.op in _FAST and t.arg in _SLOTS:
            if not (isinstance(c.arg, str) and c.arg.startswith("__pellucid_s")):
                return None
            if found.setdefault(t.arg, c.arg) != c.arg:
                return None
        elif c.op == "LOAD_CONST" and t.arg == _NAME:
            if type(c.arg) is not str or found.setdefault(_NAME, c.arg) != c.arg:
                return None
        elif type(c.arg) is not type(t.arg) or c.arg != t.arg:
            return None
    if len(set(v for k, v in found.items() if k != _NAME)) != len(found) - (_NAME in found):
        return None  # (two placeholders, one slot)
    return found
