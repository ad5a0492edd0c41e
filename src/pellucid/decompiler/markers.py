"""Stack values that are not Python expressions: NULL slots, iterators, with-exits, exceptions...

They are ``ast.AST`` nodes so they can sit inside half-built trees, but not ``ast.expr``
subclasses: code that lists ``ast.expr.__subclasses__()`` (CPython's own test_ast does) must not see
them.  Every one of them must be gone before a tree is unparsed (the unparser rejects unknown
nodes, which catches leaks early).
"""
import ast
from typing import Any


class Marker(ast.AST):
    """Base of all non-expression stack values."""

    _fields = ("value",)

    def __init__(self, value: Any = None, is_async: bool = False) -> None:
        super().__init__()
        self.value = value
        self.is_async = is_async  # ``async for``/``async with`` iterators and managers

    def __repr__(self) -> str:
        return "<%s %s>" % (type(self).__name__, ast.dump(self.value) if isinstance(self.value, ast.AST) else self.value)


class Null(Marker):
    """The NULL that 3.11+ calls (and ≤3.10 method calls) keep beside the callable."""


class Iterator(Marker):
    """``iter(value)`` held by a ``for`` loop or comprehension."""


class NextValue(Marker):
    """The item ``FOR_ITER`` just pushed (``value`` is the Iterator)."""


class WithExit(Marker):
    """The bound ``__exit__``/``__aexit__`` a ``with`` statement keeps on the stack."""


class WithEnter(Marker):
    """The result of ``__enter__`` (``value`` = context expression); stored by ``as`` or popped."""


class Exc(Marker):
    """The exception being handled (3.11: one value; ≤3.10 the value part of the triple)."""


class ExcPart(Marker):
    """≤3.10: the traceback/type parts of the exception triple; never used by user code."""


class SavedExc(Marker):
    """The previous exception state PUSH_EXC_INFO (or ≤3.10 handler entry) saves."""


class ExcMatch(Marker):
    """Condition "the exception matches ``value``" (``except value:``)."""


class UnpackItem(Marker):
    """One slot of an ``UNPACK_SEQUENCE``/``UNPACK_EX`` in progress (``value`` = UnpackGroup)."""


class Awaitable(Marker):
    """``GET_AWAITABLE``/``GET_YIELD_FROM_ITER`` result awaiting its ``YIELD_FROM``."""


class SavedLocal(Marker):
    """3.12 inlined comprehension: the saved outer value of the comprehension variable."""


class FunctionStub(Marker):
    """A function being built by MAKE_FUNCTION (3.13 adds attributes afterwards)."""


class ClassBuilder(Marker):
    """``__build_class__`` loaded for a ``class`` statement."""
