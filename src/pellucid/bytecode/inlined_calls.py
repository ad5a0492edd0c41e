"""3.14+ inline ``all``/``any``/``tuple`` (3.15: also ``list``/``set``) of a generator expression.

For ``all(x for x in xs)`` CPython 3.14 emits a test and two paths::

    LOAD_GLOBAL all; COPY 1; LOAD_COMMON_CONSTANT all; IS_OP 0; POP_JUMP_IF_FALSE slow
    NOT_TAKEN; POP_TOP; <make the generator>; FOR_ITER loop computing all() in place ...
    slow: PUSH_NULL; <make the generator>; CALL 1

When the name is the builtin, the first path computes what the call computes; otherwise the
second path calls whatever the name is bound to.  The second path alone is therefore the whole
meaning, and it is the 3.13 bytecode of the call: :func:`fold_inlined_calls` keeps only it (the
first path, and code only it reaches, is left out).  It does so only when the first path starts
by making the same generator as the second, so that nothing but CPython's own pattern is folded.
"""
import dis
import types
from typing import List, Set

from pellucid.bytecode import features as F
from pellucid.bytecode.exception_regions import table_entry_per_instruction

_BUILTINS = frozenset({"tuple", "list", "set", "<built-in function all>", "<built-in function any>"})
_ACCUMULATORS = {"tuple": "BUILD_LIST", "list": "BUILD_LIST", "set": "BUILD_SET"}
_TERMINAL = frozenset({"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_BACKWARD",
                       "JUMP_BACKWARD_NO_INTERRUPT"})
_JUMPS = frozenset({"FOR_ITER", "SEND", "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
                    "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"})
_IGNORED = frozenset({"NOT_TAKEN", "NOP"})


def _same(a: dis.Instruction, b: dis.Instruction) -> bool:
    return a.opname == b.opname and a.arg == b.arg and (a.argval is b.argval or a.argval == b.argval)


def _fast_path_start(raw: List[dis.Instruction], k: int, index: dict) -> int:
    """For ``raw[k]`` = ``COPY 1`` of an inlined call: the index of the slow path's PUSH_NULL
    after checking that the fast path makes the same generator; -1 if not that pattern."""
    if k + 4 >= len(raw) or raw[k].arg != 1:
        return -1
    const, is_op, jump = raw[k + 1], raw[k + 2], raw[k + 3]
    if const.opname != "LOAD_COMMON_CONSTANT" or const.argrepr not in _BUILTINS \
            or is_op.opname != "IS_OP" or is_op.arg != 0 or jump.opname != "POP_JUMP_IF_FALSE":
        return -1
    slow = index.get(jump.argval, -1)
    if slow < 0 or raw[slow].opname != "PUSH_NULL":
        return -1
    j = k + 4
    while j < len(raw) and raw[j].opname in _IGNORED:
        j += 1
    if j >= len(raw) or raw[j].opname != "POP_TOP":
        return -1
    j += 1
    acc = _ACCUMULATORS.get(const.argrepr)
    if acc is not None:
        if raw[j].opname != acc or raw[j].arg != 0:
            return -1
        j += 1
    # the generator is made the same way on both paths, up to and including ``CALL 0``; a jump
    # inside that code (``xs or ()``) goes to the same place of its own path
    s = slow + 1
    start_s, start_j = s, j
    inner_jumps = []  # (target index on the slow path, on the fast path)
    while s + 1 < len(raw) and j < len(raw) and _same_but_target(raw[s], raw[j]):
        if raw[s].opname in _JUMPS:
            inner_jumps.append((index.get(raw[s].argval, -1), index.get(raw[j].argval, -1)))
        if raw[s].opname == "CALL" and raw[s].arg == 0 and raw[s + 1].opname == "CALL" \
                and raw[s + 1].arg == 1:
            # (the generator's call; the fast path iterates it next)
            nxt = raw[j + 1] if j + 1 < len(raw) else None
            if nxt is None or nxt.opname not in ("FOR_ITER", "PUSH_NULL"):
                return -1
            if any(not (start_s < ts <= s and tj - start_j == ts - start_s) for ts, tj in inner_jumps):
                return -1
            return slow
        s += 1
        j += 1
    return -1


def _same_but_target(a: dis.Instruction, b: dis.Instruction) -> bool:
    """``a`` and ``b`` are the same instruction, or jumps of the same kind (whose targets the
    caller compares: ``argval`` is an absolute offset)."""
    if a.opname in _JUMPS:
        return a.opname == b.opname
    return _same(a, b)


def fold_inlined_calls(code: types.CodeType, raw: List[dis.Instruction]) -> List[dis.Instruction]:
    """``raw`` without the inlined fast paths of builtin calls on generator expressions.

    >>> def f(xs):
    ...     return all(x for x in xs)
    >>> ops = [i.opname for i in fold_inlined_calls(f.__code__, list(dis.get_instructions(f)))]
    >>> "IS_OP" in ops
    False
    """
    if not F.INLINED_BUILTIN_CALLS or not any(
            r.opname == "LOAD_COMMON_CONSTANT" and r.argrepr in _BUILTINS for r in raw):
        return raw
    index = {r.offset: k for k, r in enumerate(raw)}
    redirect = {}  # index of a ``COPY 1`` -> index of its slow path's PUSH_NULL
    for k, r in enumerate(raw):
        if r.opname == "COPY" and k >= 1:  # (the name may be a global, a local, a cell...)
            slow = _fast_path_start(raw, k, index)
            if slow >= 0:
                redirect[k] = slow
    if not redirect:
        return raw
    # What is still reached when each test goes straight to its slow path.
    entry_of = table_entry_per_instruction(code, raw)
    seen: Set[int] = set()
    work = [0]
    while work:
        k = work.pop()
        while k < len(raw) and k not in seen:
            seen.add(k)
            r = raw[k]
            if k in redirect:
                work.append(redirect[k])
                break
            e = entry_of[k]
            if e is not None:
                t = index.get(e.target)
                if t is not None and t not in seen:
                    work.append(t)
            if r.opname in _JUMPS and r.argval in index:
                work.append(index[r.argval])
            if r.opname in _TERMINAL:
                break
            k += 1
    # The load of the name stays; its slow path's PUSH_NULL follows it directly.
    return [r for k, r in enumerate(raw) if k in seen and k not in redirect]
