"""Stack slots that 3.14+ bytecode has and the neutral instructions do not.

From 3.14 a ``with`` statement keeps ``__exit__`` and the context manager in two slots
(``LOAD_SPECIAL`` loads an unbound method and its ``self``); up to 3.13 one slot held the bound
``__exit__``.  From 3.15 ``GET_ITER`` pushes two values (the iterator and an index or NULL),
and a ``SEND`` loop's receiver has a NULL beside it.  The neutral model keeps one slot for
each, so the decompiler and the verifier see the same stack on every version.

:func:`collapse` runs once over the raw instructions, following the stack through the
control-flow graph (jumps and exception handlers) with each slot marked *shown* or *hidden*,
and rewrites what touches hidden slots:

* the 3.14 ``with`` prologue ``COPY 1; LOAD_SPECIAL __exit__; SWAP 2; SWAP 3;
  LOAD_SPECIAL __enter__; CALL 0`` becomes one ``BEFORE_WITH`` (``BEFORE_ASYNC_WITH``) that
  pushes ``__exit__``, its hidden ``self`` and ``__enter__()``'s result;
* the ``__exit__`` call (``CALL 3`` with the hidden ``self`` as its self slot) becomes the
  3.13 ``CALL 2`` of the bound method;
* ``POP_TOP``/``COPY`` of a hidden slot are dropped; ``COPY n``, ``SWAP n``, ``LIST_APPEND n``
  and the like count only shown slots;
* 3.15: ``GET_ITER`` pushes one shown slot (``GET_ITER 3`` is ``GET_YIELD_FROM_ITER``),
  ``POP_ITER`` and ``END_SEND`` pop one; the ``PUSH_NULL`` before a ``SEND`` loop goes;
* exception handler depths count only shown slots.

Anything else that would consume a hidden slot is not modelled: that instruction becomes
``UNSUPPORTED`` rather than being guessed at.  What the pass decides depends only on these
layouts, never on names or values (except the ``with`` prologue, which is recognised whole).

It also reads 3.14's ``CALL_FUNCTION_EX``, whose keyword-arguments slot is always there: a
``PUSH_NULL`` just before it means no ``**kwargs``, as the flag in its argument did up to 3.13.
"""
import dis
import types
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Set, Tuple

from pellucid.bytecode import features as F
from pellucid.bytecode.exception_regions import table_entry_per_instruction

# Slot marks: a shown slot is the index of the raw instruction that pushed it (-1: not known,
# several); hidden slots are negative codes below that.
_UNKNOWN = -1
_H_WITH = -2  # a ``with``'s context manager, the self of its unbound ``__exit__``
_H_ITER = -3  # 3.15: what GET_ITER pushes beside the iterator (index or NULL)
_H_NULL = -4  # 3.15: the NULL beside a SEND loop's awaitable
_H_KWNULL = -5  # 3.14+: CALL_FUNCTION_EX's NULL for "no keyword arguments" (Dynamo may move it)

#: 3.14+: ``with`` loads ``__exit__`` and ``__enter__`` with LOAD_SPECIAL
WITH_SPECIAL = F.WITH_LOADS_SPECIAL_METHODS
#: 3.15+: GET_ITER pushes (iterator, index or NULL); POP_ITER and END_SEND pop both
ITER_PAIRS = F.ITERATORS_TAKE_TWO_SLOTS
#: 3.14+: CALL_FUNCTION_EX always takes a keyword-arguments slot (NULL: none)
CALL_EX_KWARGS_SLOT = F.CALL_EX_ALWAYS_HAS_KWARGS_SLOT
ACTIVE = WITH_SPECIAL or ITER_PAIRS or CALL_EX_KWARGS_SLOT

# (pops, pushes) of raw 3.14/3.15 opcodes whose counts do not depend on the argument; a value
# counts as popped when the instruction reads or replaces it.  The ones that do depend on it,
# or that this pass treats specially, are in ``_effect``.  Checked against ``dis.stack_effect``
# in tests/test_hidden_slots.py.
_FIXED = {
    "BINARY_OP": (2, 1), "BINARY_SLICE": (3, 1), "BUILD_TEMPLATE": (2, 1),
    "CALL_FUNCTION_EX": (4, 1), "CALL_INTRINSIC_1": (1, 1), "CALL_INTRINSIC_2": (2, 1),
    "CHECK_EG_MATCH": (2, 2), "CHECK_EXC_MATCH": (1, 1), "CLEANUP_THROW": (2, 1),
    "COMPARE_OP": (2, 1), "CONTAINS_OP": (2, 1), "CONVERT_VALUE": (1, 1), "COPY_FREE_VARS": (0, 0),
    "DELETE_ATTR": (1, 0), "DELETE_DEREF": (0, 0), "DELETE_FAST": (0, 0), "DELETE_GLOBAL": (0, 0),
    "DELETE_NAME": (0, 0), "DELETE_SUBSCR": (2, 0), "END_ASYNC_FOR": (2, 0), "END_FOR": (1, 0),
    "EXIT_INIT_CHECK": (1, 0), "EXTENDED_ARG": (0, 0), "FORMAT_SIMPLE": (1, 1),
    "FORMAT_WITH_SPEC": (2, 1), "GET_AITER": (1, 1), "GET_ANEXT": (0, 1), "GET_AWAITABLE": (1, 1),
    "GET_LEN": (0, 1), "GET_YIELD_FROM_ITER": (1, 1), "IMPORT_FROM": (0, 1), "IMPORT_NAME": (2, 1),
    "INTERPRETER_EXIT": (1, 0), "IS_OP": (2, 1), "JUMP_BACKWARD": (0, 0),
    "JUMP_BACKWARD_NO_INTERRUPT": (0, 0), "JUMP_FORWARD": (0, 0), "LOAD_BUILD_CLASS": (0, 1),
    "LOAD_COMMON_CONSTANT": (0, 1), "LOAD_CONST": (0, 1), "LOAD_DEREF": (0, 1), "LOAD_FAST": (0, 1),
    "LOAD_FAST_AND_CLEAR": (0, 1), "LOAD_FAST_BORROW": (0, 1), "LOAD_FAST_CHECK": (0, 1),
    "LOAD_FAST_BORROW_LOAD_FAST_BORROW": (0, 2), "LOAD_FAST_LOAD_FAST": (0, 2),
    "LOAD_FROM_DICT_OR_DEREF": (1, 1), "LOAD_FROM_DICT_OR_GLOBALS": (1, 1), "LOAD_LOCALS": (0, 1),
    "LOAD_NAME": (0, 1), "LOAD_SMALL_INT": (0, 1), "MAKE_CELL": (0, 0), "MAKE_FUNCTION": (1, 1),
    "MATCH_CLASS": (3, 1), "MATCH_KEYS": (0, 1), "MATCH_MAPPING": (0, 1), "MATCH_SEQUENCE": (0, 1),
    "NOP": (0, 0), "NOT_TAKEN": (0, 0), "POP_EXCEPT": (1, 0), "POP_JUMP_IF_FALSE": (1, 0),
    "POP_JUMP_IF_NONE": (1, 0), "POP_JUMP_IF_NOT_NONE": (1, 0), "POP_JUMP_IF_TRUE": (1, 0),
    "PUSH_EXC_INFO": (1, 2), "RERAISE": (1, 0), "RESUME": (0, 0), "RETURN_GENERATOR": (0, 1),
    "RETURN_VALUE": (1, 1), "SETUP_ANNOTATIONS": (0, 0), "SET_FUNCTION_ATTRIBUTE": (2, 1),
    "STORE_ATTR": (2, 0), "STORE_DEREF": (1, 0), "STORE_FAST": (1, 0), "STORE_FAST_LOAD_FAST": (1, 1),
    "STORE_FAST_STORE_FAST": (2, 0), "STORE_GLOBAL": (1, 0), "STORE_NAME": (1, 0),
    "STORE_SLICE": (4, 0), "STORE_SUBSCR": (3, 0), "TO_BOOL": (1, 1), "TRACE_RECORD": (0, 0),
    "UNARY_INVERT": (1, 1), "UNARY_NEGATIVE": (1, 1), "UNARY_NOT": (1, 1), "WITH_EXCEPT_START": (0, 1),
    "YIELD_VALUE": (1, 1), "CACHE": (0, 0), "PUSH_NULL": (0, 1), "POP_TOP": (1, 0),
}
# Opcodes whose argument counts values (pops(arg), pushes(arg)).
_COUNTED = {
    "BUILD_LIST": lambda n: (n, 1), "BUILD_SET": lambda n: (n, 1), "BUILD_TUPLE": lambda n: (n, 1),
    "BUILD_STRING": lambda n: (n, 1), "BUILD_SLICE": lambda n: (n, 1), "BUILD_MAP": lambda n: (2 * n, 1),
    "BUILD_INTERPOLATION": lambda n: (2 + (n & 1), 1), "CALL": lambda n: (n + 2, 1),
    "CALL_KW": lambda n: (n + 3, 1), "RAISE_VARARGS": lambda n: (n, 0),
    "UNPACK_SEQUENCE": lambda n: (1, n), "UNPACK_EX": lambda n: (1, (n & 0xFF) + (n >> 8) + 1),
    "LOAD_ATTR": lambda n: (1, 1 + (n & 1)), "LOAD_GLOBAL": lambda n: (0, 1 + (n & 1)),
    "LOAD_SUPER_ATTR": lambda n: (3, 1 + (n & 1)), "LOAD_SPECIAL": lambda n: (1, 2),
    "COPY": lambda n: (0, 1), "SWAP": lambda n: (0, 0),
    "LIST_APPEND": lambda n: (1, 0), "SET_ADD": lambda n: (1, 0), "LIST_EXTEND": lambda n: (1, 0),
    "SET_UPDATE": lambda n: (1, 0), "DICT_UPDATE": lambda n: (1, 0), "DICT_MERGE": lambda n: (1, 0),
    "MAP_ADD": lambda n: (2, 0),
    "FOR_ITER": lambda n: (0, 1), "SEND": lambda n: (1, 1),
    "GET_ITER": lambda n: (1, 2) if ITER_PAIRS else (1, 1),
    "POP_ITER": lambda n: (2, 0) if ITER_PAIRS else (1, 0),
    "END_SEND": lambda n: (3, 1) if ITER_PAIRS else (2, 1),
}
# Ops that reach below what they pop: the container is ``arg`` slots below the popped ones.
_REACH = {"LIST_APPEND": 1, "SET_ADD": 1, "LIST_EXTEND": 1, "SET_UPDATE": 1, "DICT_UPDATE": 1,
          "DICT_MERGE": 1, "MAP_ADD": 2}
_TERMINAL = frozenset({"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_BACKWARD",
                       "JUMP_BACKWARD_NO_INTERRUPT"})
# Jumps whose argval is a target (END_ASYNC_FOR's names where its loop started: not a jump).
_JUMPS = frozenset({"FOR_ITER", "SEND", "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
                    "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"})
_NONE_LOADS = frozenset({"LOAD_CONST", "LOAD_COMMON_CONSTANT"})


def effect(opname: str, arg: Optional[int]) -> Optional[Tuple[int, int]]:
    """(pops, pushes) of a raw 3.14+ instruction as this pass counts them; None if unknown.

    >>> effect("CALL", 2)
    (4, 1)
    """
    fixed = _FIXED.get(opname)
    if fixed is not None:
        return fixed
    counted = _COUNTED.get(opname)
    if counted is not None:
        return counted(arg or 0)
    return None


class Collapsed(NamedTuple):
    """What :func:`collapse` gives: the rewritten raw instructions, the neutral stack depth
    before each reachable raw offset, the neutral depth of each handler (by target offset),
    and the offsets of all the raw instructions it was given (jumps may target one it
    dropped)."""

    raw: List[dis.Instruction]
    depths: Dict[int, int]
    handler_depths: Dict[int, int]
    offsets: List[int]


class _NotModelled(Exception):
    def __init__(self, index: int, why: str) -> None:
        super().__init__(why)
        self.index = index
        self.why = why


def _is_hidden(slot: int) -> bool:
    return slot <= _H_WITH


def _shown(stack: Tuple[int, ...]) -> int:
    return sum(1 for s in stack if s > _H_WITH)


def _with_prologue(raw: List[dis.Instruction], k: int) -> Optional[str]:
    """The neutral opcode of a 3.14+ ``with`` prologue starting at ``raw[k]``, or None."""
    if k + 5 >= len(raw):
        return None
    a, b, c, d, e, f = raw[k:k + 6]
    if not (a.opname == "COPY" and a.arg == 1 and b.opname == "LOAD_SPECIAL" and c.opname == "SWAP"
            and c.arg == 2 and d.opname == "SWAP" and d.arg == 3 and e.opname == "LOAD_SPECIAL"
            and f.opname == "CALL" and f.arg == 0):
        return None
    if (b.argrepr, e.argrepr) == ("__exit__", "__enter__"):
        return "BEFORE_WITH"
    if (b.argrepr, e.argrepr) == ("__aexit__", "__aenter__"):
        return "BEFORE_ASYNC_WITH"
    return None


def _own_iterator_op(code: object) -> Optional[str]:
    """3.15: a generator expression's code gets the iterable and calls ``iter()`` (or
    ``aiter()``) on it before it starts; the op it uses, or None."""
    if not isinstance(code, types.CodeType) or code.co_name != "<genexpr>" or not code.co_varnames \
            or code.co_varnames[0] != ".0":
        return None
    for ins in dis.get_instructions(code):
        if ins.opname in ("RESUME", "COPY_FREE_VARS", "MAKE_CELL", "NOP") or (
                ins.opname in ("LOAD_FAST", "LOAD_FAST_BORROW") and ins.argval == ".0"):
            continue
        return ins.opname if ins.opname in ("GET_ITER", "GET_AITER") else None
    return None


def _with_arg(ins: dis.Instruction, arg: int) -> dis.Instruction:
    return ins._replace(arg=arg, argval=arg, argrepr="")


def collapse(code: types.CodeType, raw: List[dis.Instruction]) -> Collapsed:
    """``raw`` (``code``'s instructions) with the hidden slots taken out.

    >>> def f(m):
    ...     with m as x:
    ...         return x
    >>> ops = [i.opname for i in collapse(f.__code__, list(dis.get_instructions(f))).raw]
    >>> "LOAD_SPECIAL" in ops
    False
    """
    # (1) the 3.14 ``with`` prologues become one pseudo-instruction
    work = list(raw)
    if WITH_SPECIAL:
        k = 0
        out: List[dis.Instruction] = []
        while k < len(work):
            kind = _with_prologue(work, k) if work[k].opname == "COPY" else None
            if kind is not None:
                out.append(work[k]._replace(opname=kind, arg=None, argval=None, argrepr=""))
                k += 6
                continue
            out.append(work[k])
            k += 1
        work = out
    try:
        kwnull: set = set()
        done = _rewrite(code, work, frozenset(), kwnull)
        if kwnull:
            # (some ``**kwargs`` NULL was pushed before other values and moved into place:
            # again, with it hidden from where it is pushed)
            done = _rewrite(code, work, frozenset(kwnull), set())
        return done._replace(offsets=[r.offset for r in raw])
    except _NotModelled as e:
        bad = work[e.index]
        work[e.index] = bad._replace(opname="HIDDEN_SLOT_NOT_MODELLED",
                                     argval="%s: %s" % (bad.opname, e.why))
        return Collapsed(work, {}, {}, [r.offset for r in raw])


def _rewrite(code: types.CodeType, raw: List[dis.Instruction], kwnull: FrozenSet[int],
             found: Set[int]) -> Collapsed:
    """One pass over ``raw``; ``kwnull``: the PUSH_NULLs that are a CALL_FUNCTION_EX's empty
    keyword arguments, hidden; ``found`` collects such PUSH_NULLs not just before their call."""
    n = len(raw)
    index = {r.offset: k for k, r in enumerate(raw)}
    entry_of = table_entry_per_instruction(code, raw)
    states: List[Optional[Tuple[int, ...]]] = [None] * n
    action: Dict[int, object] = {}  # index -> "drop" | ("arg", n) | ("op", name, arg) | ("before", op)
    handler_depths: Dict[int, int] = {}
    short: set = set()  # handlers whose depth so far came from a stack shorter than theirs
    work: List[int] = []

    def reach(k: int, stack: Tuple[int, ...]) -> None:
        old = states[k]
        if old is None:
            states[k] = stack
            work.append(k)
            return
        if old == stack:
            return
        if len(old) != len(stack) or any(_is_hidden(a) != _is_hidden(b) for a, b in zip(old, stack)):
            raise _NotModelled(k, "stack layouts differ where paths meet")
        merged = tuple(a if a == b else (_UNKNOWN if not _is_hidden(a) else a) for a, b in zip(old, stack))
        if merged != old:
            states[k] = merged
            work.append(k)

    if n:
        reach(0, ())
    while work:
        k = work.pop()
        stack = states[k]
        assert stack is not None
        ins = raw[k]
        e = entry_of[k]
        if e is not None:
            depth = e.depth  # type: ignore[attr-defined]
            # 3.15 lets a range run on past where its stack was popped (after a loop ends):
            # the interpreter pops nothing then.  The handler's layout is the one of the
            # instructions that do have ``depth`` values, unless none has.
            if len(stack) >= depth:
                base = stack[:depth]
                shown = _shown(base)
                known = handler_depths.get(e.target)  # type: ignore[attr-defined]
                if known is not None and known != shown and e.target not in short:  # type: ignore[attr-defined]
                    raise _NotModelled(k, "handler entered with different layouts")
                handler_depths[e.target] = shown  # type: ignore[attr-defined]
                short.discard(e.target)  # type: ignore[attr-defined]
            elif e.target not in handler_depths or e.target in short:  # type: ignore[attr-defined]
                base = stack + (_UNKNOWN,) * (depth - len(stack))
                handler_depths[e.target] = _shown(base)  # type: ignore[attr-defined]
                short.add(e.target)  # type: ignore[attr-defined]
            else:
                base = None
            t = index.get(e.target)  # type: ignore[attr-defined]
            if t is not None and base is not None:
                reach(t, base + ((_UNKNOWN,) if e.lasti else ()) + (_UNKNOWN,))  # type: ignore[attr-defined]
        after = _step(code, raw, k, stack, action, kwnull, found)
        op = ins.opname
        if op in _JUMPS and ins.argval in index:
            reach(index[ins.argval], after)
        if op not in _TERMINAL and k + 1 < n:
            reach(k + 1, after)

    depths = {raw[k].offset: _shown(s) for k, s in enumerate(states) if s is not None}
    out: List[dis.Instruction] = []
    for k, r in enumerate(raw):
        a = action.get(k)
        if a is None:
            out.append(r)
        elif a == "drop":
            continue
        elif a[0] == "arg":  # type: ignore[index]
            out.append(_with_arg(r, a[1]))  # type: ignore[index]
        elif a[0] == "op":  # type: ignore[index]
            out.append(r._replace(opname=a[1], arg=a[2], argval=a[2], argrepr=""))  # type: ignore[index]
        elif a[0] == "before":  # type: ignore[index]
            out.append(r._replace(opname=a[1], arg=None, argval=None, argrepr=""))  # type: ignore[index]
            out.append(r)
    return Collapsed(out, depths, handler_depths, [])


def _step(code: types.CodeType, raw: List[dis.Instruction], k: int, stack: Tuple[int, ...],
          action: Dict[int, object], kwnull: FrozenSet[int], found: Set[int]) -> Tuple[int, ...]:
    """The stack after ``raw[k]``; records in ``action`` how to rewrite it."""
    ins = raw[k]
    op, arg = ins.opname, ins.arg
    depth = len(stack)

    def need(count: int) -> None:
        if depth < count:
            raise _NotModelled(k, "stack underflow")

    if op in ("BEFORE_WITH", "BEFORE_ASYNC_WITH"):
        need(1)
        if _is_hidden(stack[-1]):
            raise _NotModelled(k, "context manager in a hidden slot")
        return stack[:-1] + (k, _H_WITH, k)
    if op == "COPY":
        need(arg)
        src = stack[-arg]
        if _is_hidden(src):
            action[k] = "drop"
        else:
            shown = _shown(stack[depth - arg + 1:]) + 1
            if shown != arg:
                action[k] = ("arg", shown)
        return stack + (src,)
    if op == "SWAP":
        need(arg)
        lst = list(stack)
        lst[-1], lst[-arg] = lst[-arg], lst[-1]
        before = [i for i in range(depth) if not _is_hidden(stack[i])]
        order = list(range(depth))
        order[-1], order[-arg] = order[-arg], order[-1]
        after_ = [order[i] for i in range(depth) if not _is_hidden(lst[i])]
        if before == after_:
            action[k] = "drop"
        else:
            diff = [j for j in range(len(before)) if before[j] != after_[j]]
            m = len(before) - diff[0]
            if len(diff) != 2 or diff[1] != len(before) - 1 or after_[diff[0]] != before[-1] \
                    or after_[-1] != before[diff[0]]:
                raise _NotModelled(k, "SWAP moves a hidden slot")
            if m != arg:
                action[k] = ("arg", m)
        return tuple(lst)
    if op in _REACH:
        popped = _REACH[op]
        need(arg + popped)
        if any(_is_hidden(s) for s in stack[-popped:]) or _is_hidden(stack[-(arg + popped)]):
            raise _NotModelled(k, "container or value in a hidden slot")
        shown = _shown(stack[depth - arg - popped + 1:depth - popped]) + 1
        if shown != arg:
            action[k] = ("arg", shown)
        return stack[:-popped]
    if op == "POP_TOP":
        need(1)
        if _is_hidden(stack[-1]):
            action[k] = "drop"
        return stack[:-1]
    if op == "CALL":
        need(arg + 2)
        self_slot = stack[-(arg + 1)]
        rest = stack[-(arg + 2):]
        if self_slot == _H_WITH and arg >= 1 and not any(_is_hidden(s) for s in rest[:1] + rest[2:]):
            action[k] = ("arg", arg - 1)  # ``__exit__`` of the context manager, bound
            return stack[:-(arg + 2)] + (k,)
        if any(_is_hidden(s) for s in rest):
            raise _NotModelled(k, "call with a hidden slot")
        if arg == 0 and ITER_PAIRS and rest[0] >= 0:
            own = _made_function_iterates(code, raw, rest[0])
            if own is not None:
                action[k] = ("before", own)
        return stack[:-(arg + 2)] + (k,)
    if op == "CALL_FUNCTION_EX" and CALL_EX_KWARGS_SLOT:
        need(4)
        kw = stack[-1]
        if any(_is_hidden(s) for s in stack[-4:-1]) or (_is_hidden(kw) and kw != _H_KWNULL):
            raise _NotModelled(k, "call with a hidden slot")
        if kw == _H_KWNULL:
            action[k] = ("arg", 0)
        elif kw >= 0 and kw == k - 1 and raw[kw].opname == "PUSH_NULL":
            action[kw] = "drop"
            action[k] = ("arg", 0)
        else:
            if kw >= 0 and raw[kw].opname == "PUSH_NULL":
                found.add(kw)
            action[k] = ("arg", 1)
        return stack[:-4] + (k,)
    if op == "PUSH_NULL" and k in kwnull:
        action[k] = "drop"
        return stack + (_H_KWNULL,)
    if ITER_PAIRS:
        if op in ("GET_ITER", "GET_AITER") and _genexpr_prologue(code, raw, k):
            need(1)
            action[k] = "drop"
            return stack[:-1] + ((k, _H_ITER) if op == "GET_ITER" else (k,))
        if op == "GET_ITER":
            need(1)
            if _is_hidden(stack[-1]):
                raise _NotModelled(k, "iterable in a hidden slot")
            if arg == 3:
                action[k] = ("op", "GET_YIELD_FROM_ITER", None)
            elif arg == 0:
                action[k] = ("op", "GET_ITER", None)
            else:
                raise _NotModelled(k, "GET_ITER %r" % (arg,))
            return stack[:-1] + (k, _H_ITER)
        if op == "POP_ITER":
            need(2)
            if stack[-1] != _H_ITER or _is_hidden(stack[-2]):
                raise _NotModelled(k, "no iterator pair")
            action[k] = ("op", "POP_TOP", None)
            return stack[:-2]
        if op == "FOR_ITER":
            need(2)
            if stack[-1] != _H_ITER or _is_hidden(stack[-2]):
                raise _NotModelled(k, "no iterator pair")
            return stack + (k,)
        if op == "SEND":
            need(3)
            if stack[-2] not in (_H_ITER, _H_NULL) or _is_hidden(stack[-3]) or _is_hidden(stack[-1]):
                raise _NotModelled(k, "no receiver pair")
            return stack[:-1] + (k,)
        if op == "END_SEND":
            need(3)
            if stack[-2] not in (_H_ITER, _H_NULL) or _is_hidden(stack[-3]) or _is_hidden(stack[-1]):
                raise _NotModelled(k, "no receiver pair")
            return stack[:-3] + (k,)
        if op == "PUSH_NULL" and k + 2 < len(raw) and raw[k + 1].opname in _NONE_LOADS \
                and raw[k + 1].argval is None and raw[k + 2].opname == "SEND":
            action[k] = "drop"
            return stack + (_H_NULL,)
    counts = effect(op, arg)
    if counts is None:
        raise _NotModelled(k, "opcode not in the table")
    pops, pushes = counts
    need(pops)
    if pops and any(_is_hidden(s) for s in stack[depth - pops:]):
        raise _NotModelled(k, "%s would consume a hidden slot" % op)
    return stack[:depth - pops] + (k,) * pushes


def _genexpr_prologue(code: types.CodeType, raw: List[dis.Instruction], k: int) -> bool:
    """3.15: ``LOAD_FAST .0; GET_ITER; RETURN_GENERATOR`` at the start of a generator
    expression (the neutral code, like 3.14's, gets an iterator as ``.0``)."""
    return (code.co_name == "<genexpr>" and k >= 1 and k + 1 < len(raw)
            and raw[k + 1].opname == "RETURN_GENERATOR"
            and raw[k - 1].opname in ("LOAD_FAST", "LOAD_FAST_BORROW") and raw[k - 1].argval == ".0")


def _made_function_iterates(code: types.CodeType, raw: List[dis.Instruction], k: int) -> Optional[str]:
    """The op that the generator expression made by ``raw[k]`` applies to its argument first
    (3.15 moved it from the caller into the genexpr), or None."""
    while k >= 0 and raw[k].opname == "SET_FUNCTION_ATTRIBUTE":
        k -= 1  # (its function is what the instruction before it made, in compiler output)
    if k < 1 or raw[k].opname != "MAKE_FUNCTION" or raw[k - 1].opname != "LOAD_CONST":
        return None
    return _own_iterator_op(raw[k - 1].argval)
