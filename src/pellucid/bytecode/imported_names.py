"""Which names the original module bound by ``import``, as far as its method calls show.

CPython 3.11 and later compile ``name.attr(args)`` without the method-call optimisation when
``name`` is bound by an ``import`` statement at module level (the compiler looks the name up in
the module's symbol table, whatever scope the call is in): the callable is loaded as a plain
attribute with a ``NULL`` beside it, instead of ``LOAD_METHOD`` (3.11) or ``LOAD_ATTR`` with its
method bit (3.12+).  A decompiled function compiled on its own has no such imports around it, so
its calls would come out in the method form.  Both forms call the same thing; only the bytecode
differs.  :func:`import_bound_names` reads which names the original treated as imported, so the
recompiler can declare them the same way.
"""
import dis
import types
from typing import Iterator, List, Set, Tuple

from pellucid.bytecode.features import (IMPORTED_NAMES_CALLED_PLAINLY, LOAD_ATTR_METHOD_BIT,
                                        NULL_ABOVE_CALLABLE)
from pellucid.bytecode.normalize import raw_instructions

_NAME_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF", "LOAD_FAST_CHECK",
                         "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_GLOBALS"})


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _loaded_name(ins: dis.Instruction) -> str:
    """The name ``ins`` leaves on top of the stack ('' if it is not a plain name load)."""
    if ins.opname in _NAME_LOADS and isinstance(ins.argval, str):
        return ins.argval
    if ins.opname == "LOAD_FAST_LOAD_FAST" and isinstance(ins.argval, tuple):
        return str(ins.argval[1])
    return ""


def _method_bit(ins: dis.Instruction) -> bool:
    return ins.opname == "LOAD_METHOD" or (ins.opname == "LOAD_ATTR" and LOAD_ATTR_METHOD_BIT
                                          and bool((ins.arg or 0) & 1))


def _calls(code: types.CodeType) -> Tuple[Set[str], Set[str]]:
    """(names called on in the plain-attribute form, names called on in the method form)."""
    plain: Set[str] = set()
    method: Set[str] = set()
    instrs: List[dis.Instruction] = [i for i in raw_instructions(code)
                                     if i.opname not in ("CACHE", "EXTENDED_ARG", "NOP")]
    for k in range(len(instrs) - 1):
        attr = instrs[k + 1]
        if attr.opname not in ("LOAD_ATTR", "LOAD_METHOD"):
            continue  # (first: the cheaper test, and most pairs fail it)
        load = instrs[k]
        name = _loaded_name(load)
        if not name:
            continue
        if _method_bit(attr):
            method.add(name)
            continue
        if NULL_ABOVE_CALLABLE:
            # 3.13 pushes the NULL after the callable: ``name; LOAD_ATTR; PUSH_NULL``.
            if k + 2 < len(instrs) and instrs[k + 2].opname == "PUSH_NULL":
                plain.add(name)
        elif load.opname == "LOAD_GLOBAL":
            if (load.arg or 0) & 1:  # "NULL + name"
                plain.add(name)
        elif k > 0 and instrs[k - 1].opname == "PUSH_NULL":
            plain.add(name)
    return plain, method


def import_bound_names(code: types.CodeType) -> List[str]:
    """Names ``code`` (and the code nested in it) calls attributes of as a module-level import.

    Only 3.11+ tells the two forms apart.  A name also called on in the method form anywhere was
    not imported (the choice depends on the name alone), so it is left out; a plain-form call on
    a name that was not imported (``name.attr(*args)``, which never uses the method form) makes
    the same bytecode either way, so counting it is harmless.

    >>> module = compile("import os\\ndef f(): return os.getcwd()", "m", "exec")
    >>> import_bound_names(module) == (["os"] if sys.version_info >= (3, 11) else [])
    True
    """
    if not IMPORTED_NAMES_CALLED_PLAINLY:
        return []
    plain: Set[str] = set()
    method: Set[str] = set()
    for nested in _codes(code):
        p, m = _calls(nested)
        plain |= p
        method |= m
    return sorted(n for n in plain - method if n.isidentifier())
