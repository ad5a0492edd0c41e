"""``decompile(SomeClass)``: a ``class`` statement holding the class's decompiled methods.

A class keeps no code object of its own after it is built (its body ran once, at definition
time), but what a researcher wants from it is its methods.  So a class is rendered as a class
statement whose body is every function defined in the class's own ``__dict__``, in definition
order, with the decorator that put it there (``@staticmethod``, ``@classmethod``, ``@property``
and its ``.setter``/``.deleter``, ``@functools.cached_property``), plus nested classes.  Data
attributes and objects without bytecode (C functions stored on the class, partials...) are left
out: their values are not bytecode.  A class with no Python methods at all raises
:class:`~pellucid.errors.DecompileError` saying why (implemented in C, or no methods).
"""
import ast
import functools
import inspect
import textwrap
import types
from typing import Any, Dict, List, Optional, Set

from pellucid.decompiler.inputs import class_message
from pellucid.decompiler.unparse38 import docstring_literal
from pellucid.errors import DecompileError

_INDENT = "    "


def render_class(cls: type, verify: bool = True) -> str:
    """Source of ``cls`` as a class statement with its methods, or DecompileError saying why not.

    ``verify``: each method is shown as :func:`pellucid.decompile` shows it with ``verify``."""
    text = _render(cls, set(), verify)
    if text is None:
        raise DecompileError(class_message(cls))
    return text


def _render(cls: type, seen: Set[int], verify: bool) -> Optional[str]:
    """The class statement, or None when neither it nor a nested class has Python methods."""
    if id(cls) in seen:  # a class stored inside itself: render it once
        return None
    seen.add(id(cls))
    members: List[str] = []
    found = False
    doc = vars(cls).get("__doc__")
    if isinstance(doc, str):
        members.append(docstring_literal(doc))
    first_name: Dict[int, str] = {}  # id(function) -> the attribute it was first rendered under
    for name, value in list(vars(cls).items()):
        if isinstance(value, types.FunctionType) and id(value) in first_name:
            members.append("%s = %s" % (name, first_name[id(value)]))  # an alias: 'ww = w'
            continue
        text = _annotations(value, verify) if name in ("__annotate_func__", "__annotate__") else None
        text = text if text is not None else _member(cls, name, value, seen, verify)
        if isinstance(value, types.FunctionType) and text is not None and name.isidentifier():
            first_name[id(value)] = name
        if text is not None:
            members.append(text)
            found = True
    if not found:
        return None
    return "%s:\n%s" % (_header(cls), "\n\n".join(textwrap.indent(m, _INDENT) for m in members))


def _annotations(value: Any, verify: bool) -> Optional[str]:
    """A class's own ``__annotate__`` (3.14+) as the annotated names it was made from
    (``x: int``), where :mod:`pellucid.decompiler.annotate_host` writes it so; with ``verify``
    only once that form is verified to compile back to it."""
    if not isinstance(value, types.FunctionType):
        return None
    from pellucid.decompiler.annotate_host import annotate_host_tree
    from pellucid.decompiler.constants import ConstantPool
    from pellucid.decompiler.unparse import unparse
    tree = annotate_host_tree(value.__code__, ConstantPool())
    if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.ClassDef) \
            or any(isinstance(st, ast.FunctionDef) for st in tree.body[0].body):
        return None
    if verify:
        from pellucid.decompiler.api import _checked_for
        try:
            if _checked_for(value.__code__, value).result is None:
                return None
        except Exception:  # noqa: BLE001 - not recompiled: the usual rendering says why
            return None
    return "\n".join(unparse(st).strip() for st in tree.body[0].body if isinstance(st, ast.AnnAssign))


def _header(cls: type) -> str:
    """``class Name(Base, metaclass=Meta)``; bases are shown by name, for reading."""
    name = cls.__name__ if cls.__name__.isidentifier() else "__pellucid_class__"
    args = [_name_of(base) for base in cls.__bases__ if base is not object]
    if type(cls) is not type:
        args.append("metaclass=%s" % _name_of(type(cls)))
    return "class %s(%s)" % (name, ", ".join(args)) if args else "class %s" % name


def _name_of(cls: type) -> str:
    qualname = getattr(cls, "__qualname__", "") or getattr(cls, "__name__", "")
    if all(part.isidentifier() for part in qualname.split(".")) and qualname:
        return qualname
    return "__pellucid_class__"


def _member(owner: type, name: str, value: Any, seen: Set[int], verify: bool) -> Optional[str]:
    if inspect.isclass(value):
        # Only classes defined inside this one, not aliases such as 'x = int'.
        if getattr(value, "__qualname__", "") == "%s.%s" % (owner.__qualname__, name):
            return _render(value, seen, verify)
        return None
    if isinstance(value, types.FunctionType):
        return _function(owner, name, value, [], verify)
    if isinstance(value, staticmethod):
        return _decorated(owner, name, value.__func__, "staticmethod", verify)
    if isinstance(value, classmethod):
        return _decorated(owner, name, value.__func__, "classmethod", verify)
    cached_property = getattr(functools, "cached_property", None)
    if cached_property is not None and isinstance(value, cached_property):
        return _decorated(owner, name, value.func, "functools.cached_property", verify)
    if isinstance(value, property):
        return _property(owner, name, value, verify)
    return None


def _decorated(owner: type, name: str, func: Any, decorator: str, verify: bool) -> Optional[str]:
    if not isinstance(func, types.FunctionType):  # e.g. staticmethod(len): no bytecode
        return None
    return _function(owner, name, func, [decorator], verify)


def _property(owner: type, name: str, prop: property, verify: bool) -> Optional[str]:
    parts: List[str] = []
    for accessor, decorator in (("fget", "property"), ("fset", "%s.setter" % name),
                                ("fdel", "%s.deleter" % name)):
        func = getattr(prop, accessor)
        if func is None:
            continue
        if not isinstance(func, types.FunctionType):
            return None  # property(operator.itemgetter(0)) and the like: not bytecode
        if not parts and accessor != "fget":
            parts.append("%s = property()" % name)  # setter-only property
        parts.append(_function(owner, name, func, [decorator], verify))
    return "\n\n".join(parts) if parts else None


def _function(owner: type, name: str, func: types.FunctionType, decorators: List[str],
              verify: bool) -> str:
    from pellucid.decompiler.api import render_checked

    code = func.__code__
    try:
        if code.co_name == "<lambda>" and not decorators:
            text = render_checked(code, func, None, verify)
            if text.startswith("#"):  # not verified: the comment goes above the assignment
                comment, _, text = text.partition("\n")
                return "%s\n%s = %s" % (comment, name, text)
            return "%s = %s" % (name, text)
        source = render_checked(code, func, name if name.isidentifier() else None, verify)
    except DecompileError as exc:
        raise DecompileError("could not decompile %s.%s: %s" % (owner.__qualname__, name, exc)) \
            from exc
    return "".join("@%s\n" % d for d in decorators) + source.rstrip("\n")
