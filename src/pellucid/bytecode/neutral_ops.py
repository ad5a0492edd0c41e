"""The neutral instruction set: every opcode :mod:`pellucid.bytecode.normalize` produces, with
its stack effect and how control leaves it.

One row per neutral opcode: how many values it pops and pushes (a function of its neutral
argument where that decides; the exception layout of the running Python where that decides,
see :mod:`pellucid.bytecode.features`), whether it goes on to the next instruction, jumps, or
ends the code's flow, and whether it can raise.  An instruction that reads below its operands
without consuming them (``LIST_APPEND 2``, ``COPY 3``) counts them as popped and pushed again,
so ``pops`` is also how deep it reaches.

The consumers (the decompiler's stack machine and structurer, the fallback, ``match``
decoding, the verifier) each either handle a row or refuse it by name; ``tests/test_neutral_ops``
checks that, and the verifier's own model against these stack effects.  A new neutral opcode
is a new row here first.

>>> stack_effect("CALL", (2, (), True))          # callable, NULL slot and two arguments
(4, 1)
>>> stack_effect("FOR_ITER", None), stack_effect("FOR_ITER", None, jump=True)
((1, 2), (1, 0))
>>> sorted(TERMINAL)
['RAISE_VARARGS', 'RERAISE', 'RETURN_VALUE']
"""
from typing import Any, Callable, Dict, NamedTuple, Optional, Tuple, Union

from pellucid.bytecode.features import (EXCEPTION_IS_ONE_VALUE, MAKE_FUNCTION_POPS_QUALNAME,
                                        MATCH_PUSHES_SUCCESS)

Count = Union[int, Callable[[Any], int]]

# How control leaves an instruction.
NEXT = "next"      # on to the next instruction
JUMP = "jump"      # always to its target
BRANCH = "branch"  # to its target or on to the next instruction
END = "end"        # nowhere in this code: it returns or raises


class NeutralOp(NamedTuple):
    """One neutral opcode: its stack effect (falling through, and when it jumps) and flow."""

    pops: Optional[Count]  # None: no fixed effect (no consumer may model it)
    pushes: Optional[Count]
    flow: str = NEXT
    raises: bool = True  # can raise (or run code that can)
    jump_pops: Optional[Count] = None  # BRANCH: the effect when it jumps, if not the same
    jump_pushes: Optional[Count] = None


def _op(pops: Count, pushes: Count, flow: str = NEXT, raises: bool = True,
        jump: Optional[Tuple[Count, Count]] = None) -> NeutralOp:
    return NeutralOp(pops, pushes, flow, raises, *(jump or (None, None)))


def _n(arg: Any) -> int:
    return arg if isinstance(arg, int) else 0


def _plus(k: int) -> Callable[[Any], int]:
    return lambda arg: _n(arg) + k


# Up to 3.10 an exception on the stack is three values (traceback, value, type) and a handler
# sits on three more of the exception handled before (features.EXCEPTION_IS_ONE_VALUE).
_EXC = 1 if EXCEPTION_IS_ONE_VALUE else 3
_MATCH_FLAG = 1 if MATCH_PUSHES_SUCCESS else 0


def _call_pops(arg: Any) -> int:
    argc, kwnames, null_slot = arg
    return argc + (2 if null_slot else 1) + (1 if kwnames is None else 0)


def _call_ex_pops(arg: Any) -> int:
    has_kw, null_slot = arg
    return 1 + bool(has_kw) + (2 if null_slot else 1)


def _make_function_pops(arg: Any) -> int:
    return 1 + MAKE_FUNCTION_POPS_QUALNAME + bin(_n(arg) & 0xF).count("1")


def _unpack_ex_pushes(arg: Any) -> int:
    before, after = arg
    return before + 1 + after


_UNFIXED = NeutralOp(None, None)

#: every neutral opcode -> its :class:`NeutralOp`
NEUTRAL_OPS: Dict[str, NeutralOp] = {
    # loads
    "LOAD_CONST": _op(0, 1, raises=False),
    "LOAD_FAST": _op(0, 1),  # (unbound local)
    "LOAD_FAST_AND_CLEAR": _op(0, 1, raises=False),
    "LOAD_NAME": _op(0, 1),
    "LOAD_GLOBAL": _op(0, 1),
    "LOAD_DEREF": _op(0, 1),
    "LOAD_CLASSDEREF": _op(0, 1),
    "LOAD_CLOSURE": _op(0, 1, raises=False),
    "LOAD_LOCALS": _op(0, 1),
    "LOAD_BUILD_CLASS": _op(0, 1),
    "LOAD_ASSERTION_ERROR": _op(0, 1, raises=False),
    "LOAD_BUILTIN": _op(0, 1, raises=False),  # (3.14+ LOAD_COMMON_CONSTANT NotImplementedError)
    "PUSH_NULL": _op(0, 1, raises=False),
    "LOAD_FROM_DICT_OR_DEREF": _op(1, 1),
    "LOAD_FROM_DICT_OR_GLOBALS": _op(1, 1),
    "LOAD_ATTR": _op(1, 1),
    "LOAD_SUPER_ATTR": _op(3, 1),
    # stores and deletes
    "STORE_FAST": _op(1, 0, raises=False),
    "STORE_DEREF": _op(1, 0, raises=False),
    "STORE_NAME": _op(1, 0),
    "STORE_GLOBAL": _op(1, 0),
    "STORE_ATTR": _op(2, 0),
    "STORE_SUBSCR": _op(3, 0),
    "DELETE_FAST": _op(0, 0),
    "DELETE_NAME": _op(0, 0),
    "DELETE_GLOBAL": _op(0, 0),
    "DELETE_DEREF": _op(0, 0),
    "DELETE_ATTR": _op(1, 0),
    "DELETE_SUBSCR": _op(2, 0),
    # the stack itself
    "POP_TOP": _op(1, 0, raises=False),
    "COPY": _op(_n, _plus(1), raises=False),
    "SWAP": _op(_n, _n, raises=False),
    "ROT": _op(_n, _n, raises=False),
    "NOP": _op(0, 0, raises=False),  # (normalize drops it; a hand-made list may have it)
    # operators
    "BINARY": _op(2, 1),
    "INPLACE": _op(2, 1),
    "UNARY": _op(1, 1),
    "TO_BOOL": _op(1, 1),
    "COMPARE": _op(2, 1),
    "SUBSCR": _op(2, 1),
    "FORMAT": _op(lambda arg: 1 + bool(arg[1]), 1),
    "CONVERT": _op(1, 1),
    # 3.14 template strings: (value, its source text[, format spec]) -> Interpolation;
    # (strings, interpolations) -> Template
    "BUILD_INTERPOLATION": _op(lambda arg: 2 + bool(arg[1]), 1),
    "BUILD_TEMPLATE": _op(2, 1),
    # building values
    "BUILD_SLICE": _op(_n, 1),
    "BUILD_TUPLE": _op(_n, 1),
    "BUILD_LIST": _op(_n, 1),
    "BUILD_SET": _op(_n, 1),
    "BUILD_MAP": _op(lambda arg: 2 * _n(arg), 1),
    "BUILD_CONST_KEY_MAP": _op(_plus(1), 1),
    "BUILD_STRING": _op(_n, 1),
    "BUILD_TUPLE_UNPACK": _op(_n, 1),
    "BUILD_LIST_UNPACK": _op(_n, 1),
    "BUILD_SET_UNPACK": _op(_n, 1),
    "BUILD_MAP_UNPACK": _op(_n, 1),
    "BUILD_TUPLE_UNPACK_WITH_CALL": _op(_n, 1),
    "BUILD_MAP_UNPACK_WITH_CALL": _op(_n, 1),
    "LIST_APPEND": _op(_plus(1), _n),
    "SET_ADD": _op(_plus(1), _n),
    "MAP_ADD": _op(_plus(2), _n),
    "LIST_EXTEND": _op(_plus(1), _n),
    "SET_UPDATE": _op(_plus(1), _n),
    "DICT_UPDATE": _op(_plus(1), _n),
    "DICT_MERGE": _op(_plus(1), _n),
    "LIST_TO_TUPLE": _op(1, 1),
    "UNPACK_SEQUENCE": _op(1, _n),
    "UNPACK_EX": _op(1, _unpack_ex_pushes),
    # calls and functions
    "CALL": _op(_call_pops, 1),
    "CALL_EX": _op(_call_ex_pops, 1),
    "MAKE_FUNCTION": _op(_make_function_pops, 1),
    "SET_FUNCTION_ATTRIBUTE": _op(2, 1),
    # iteration, generators, coroutines
    "GET_ITER": _op(1, 1),
    "GET_YIELD_FROM_ITER": _op(1, 1),
    "GET_AWAITABLE": _op(1, 1),
    "GET_AITER": _op(1, 1),
    "GET_ANEXT": _op(1, 2),
    "FOR_ITER": _op(1, 2, BRANCH, jump=(1, 0)),  # exhausted: the iterator is gone
    "YIELD_VALUE": _op(1, 1),
    "YIELD_FROM": _op(2, 1),
    "END_SEND": _op(2, 1),  # (normalize drops it: see CLEANUP_THROW and YIELD_FROM)
    "CLEANUP_THROW": _op(3, 1),  # (with the END_SEND after it, which normalize drops)
    "ASYNC_GEN_WRAP": _op(1, 1),
    "STOPITERATION_ERROR": _op(1, 1),
    "END_ASYNC_FOR": _op(1 + (1 if EXCEPTION_IS_ONE_VALUE else 6), 0),  # the iterator, the exception
    # control flow
    "JUMP": _op(0, 0, JUMP, raises=False),
    "POP_JUMP_IF_FALSE": _op(1, 0, BRANCH),
    "POP_JUMP_IF_TRUE": _op(1, 0, BRANCH),
    "POP_JUMP_IF_NONE": _op(1, 0, BRANCH, raises=False),
    "POP_JUMP_IF_NOT_NONE": _op(1, 0, BRANCH, raises=False),
    "JUMP_IF_FALSE_OR_POP": _op(1, 0, BRANCH, jump=(1, 1)),  # keeps the value when it jumps
    "JUMP_IF_TRUE_OR_POP": _op(1, 0, BRANCH, jump=(1, 1)),
    "RETURN_VALUE": _op(1, 0, END),
    "RAISE_VARARGS": _op(_n, 0, END),
    "RERAISE": _op((lambda arg: 1 + bool(arg)) if EXCEPTION_IS_ONE_VALUE else 3, 0, END),
    # exceptions and ``with``
    "PUSH_EXC_INFO": _op(1, 2, raises=False),
    "POP_EXCEPT": _op(_EXC, 0, raises=False),
    "CHECK_EXC_MATCH": _op(2, 2),
    "EXC_MATCH2": _op(2, 1),
    "CHECK_EG_MATCH": _op(2, 2),
    "PREP_RERAISE_STAR": _op(2, 1),
    "BEFORE_WITH": _op(1, 2),
    "BEFORE_ASYNC_WITH": _op(1, 2),
    # (calls the ``__exit__`` below the exception, keeping everything)
    "WITH_EXCEPT_START": _op(4 if EXCEPTION_IS_ONE_VALUE else 7, 5 if EXCEPTION_IS_ONE_VALUE else 8),
    # imports, module and class bodies
    "IMPORT_NAME": _op(2, 1),
    "LAZY_IMPORT_NAME": _op(2, 1),  # 3.15 ``lazy import`` (PEP 810)
    "IMPORT_FROM": _op(1, 2),
    "IMPORT_STAR": _op(1, 0),
    "SETUP_ANNOTATIONS": _op(0, 0),
    "PRINT_EXPR": _op(1, 0),
    # ``match``
    "GET_LEN": _op(1, 2),
    "MATCH_MAPPING": _op(1, 2),
    "MATCH_SEQUENCE": _op(1, 2),
    "MATCH_KEYS": _op(2, 3 + _MATCH_FLAG),
    "MATCH_CLASS": _op(3, 1 + _MATCH_FLAG),
    "COPY_DICT_WITHOUT_KEYS": _op(2, 2),
    # PEP 695 type parameters
    "TYPEVAR": _op(1, 1),
    "PARAMSPEC": _op(1, 1),
    "TYPEVARTUPLE": _op(1, 1),
    "SUBSCRIPT_GENERIC": _op(1, 1),
    "TYPE_ALIAS": _op(1, 1),
    "TYPEVAR_WITH_BOUND": _op(2, 1),
    "TYPEVAR_WITH_CONSTRAINTS": _op(2, 1),
    "SET_FUNCTION_TYPE_PARAMS": _op(2, 1),
    "SET_TYPEPARAM_DEFAULT": _op(2, 1),
    # Kept under their raw names when a normalisation pass did not recognise their layout (3.8's
    # ``finally`` subroutines, a ``SEND`` outside a ``yield from`` loop...), and ``UNSUPPORTED``
    # (its argument: the raw opcode's name): their effect depends on what is on the stack or is
    # not known, so every consumer refuses them.
    "SEND": _UNFIXED,
    "END_FOR": _UNFIXED,
    "RETURN_GENERATOR": _UNFIXED,
    "BEGIN_FINALLY": _UNFIXED,
    "CALL_FINALLY": _UNFIXED,
    "POP_FINALLY": _UNFIXED,
    "END_FINALLY": _UNFIXED,
    "WITH_CLEANUP_START": _UNFIXED,
    "WITH_CLEANUP_FINISH": _UNFIXED,
    "UNSUPPORTED": _UNFIXED,
}


def _count(c: Optional[Count], arg: Any) -> int:
    if c is None:
        raise ValueError("no fixed stack effect")
    return c(arg) if callable(c) else c


def stack_effect(op: str, arg: Any, jump: bool = False) -> Tuple[int, int]:
    """``(popped, pushed)`` by neutral ``op`` with neutral argument ``arg``, on the way that
    falls through or (``jump=True``) the way that jumps.  :class:`KeyError` for an op not in the
    table, :class:`ValueError` for one with no fixed effect.

    >>> stack_effect("JUMP_IF_TRUE_OR_POP", None), stack_effect("JUMP_IF_TRUE_OR_POP", None, True)
    ((1, 0), (1, 1))
    """
    info = NEUTRAL_OPS[op]
    if jump and info.jump_pops is not None:
        return _count(info.jump_pops, arg), _count(info.jump_pushes, arg)
    return _count(info.pops, arg), _count(info.pushes, arg)


#: ops whose effect the table fixes (any other must be refused by every consumer)
FIXED = frozenset(op for op, info in NEUTRAL_OPS.items() if info.pops is not None)
#: ops that end the code's flow without a jump: return and raise
TERMINAL = frozenset(op for op, info in NEUTRAL_OPS.items() if info.flow == END)
#: jumps that may not be taken: they pop their condition, or (``and``/``or``) keep it on a jump
CONDITIONAL_JUMPS = frozenset(op for op, info in NEUTRAL_OPS.items()
                              if info.flow == BRANCH and op != "FOR_ITER")
POP_JUMPS = frozenset(op for op in CONDITIONAL_JUMPS if NEUTRAL_OPS[op].jump_pops is None)
VALUE_JUMPS = CONDITIONAL_JUMPS - POP_JUMPS
#: jumps, conditional or not (``FOR_ITER`` has a target too, but is a loop's header)
JUMPS = CONDITIONAL_JUMPS | frozenset(op for op, info in NEUTRAL_OPS.items() if info.flow == JUMP)
#: ops after which control never reaches the next instruction
NO_FALLTHROUGH = frozenset(op for op, info in NEUTRAL_OPS.items() if info.flow in (JUMP, END))
#: ops with a jump target (``Instr.target``)
HAS_TARGET = JUMPS | {"FOR_ITER"}
