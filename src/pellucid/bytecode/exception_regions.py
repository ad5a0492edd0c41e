"""Which exception handler covers each instruction — one model for every CPython version.

3.11+ stores this in the code object's exception table.  3.8–3.10 build it at run time with a
block stack (``SETUP_FINALLY``/``SETUP_WITH`` push, ``POP_BLOCK`` pops); here that block stack is
simulated over the control-flow graph once, giving the same answer the 3.11 table would: for each
raw offset, the handler's offset, the stack depth below the exception values, and ``lasti``.
"""
import dis
import types
from typing import Any, Dict, List, Optional, Tuple

from pellucid.bytecode.features import EXCEPTION_TABLE
from pellucid.bytecode.opcode_tables import RAW_NO_FALLTHROUGH

HandlerInfo = Tuple[int, int, bool]  # (target offset, depth, lasti)

_SETUPS = ("SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH")
_NO_FALLTHROUGH = RAW_NO_FALLTHROUGH


def handlers_by_offset(code: types.CodeType, raw: List[dis.Instruction],
                       depths: Optional[Dict[int, int]] = None) -> Dict[int, HandlerInfo]:
    """Innermost handler per raw offset (offsets with no handler are absent).

    >>> def f():
    ...     try: return 1
    ...     except: return 2
    >>> len(handlers_by_offset(f.__code__, list(dis.get_instructions(f)))) > 0
    True
    """
    if EXCEPTION_TABLE:
        return _from_table(code, raw, depths or {})
    return _from_block_stack(raw)


def _from_table(code: types.CodeType, raw: List[dis.Instruction],
                depths: Dict[int, int]) -> Dict[int, HandlerInfo]:
    """``depths``: 3.14+ handler depths by target offset that count only the slots the neutral
    instructions have (see :mod:`pellucid.bytecode.hidden_slots`)."""
    out: Dict[int, HandlerInfo] = {}
    for r, e in zip(raw, table_entry_per_instruction(code, raw)):
        if e is not None:
            out[r.offset] = (e.target, depths.get(e.target, e.depth), bool(e.lasti))
    return out


def table_entry_per_instruction(code: types.CodeType, raw: List[dis.Instruction]) -> List[Any]:
    """The 3.11+ exception-table entry covering each of ``raw`` (``None`` where none does), in
    the order of ``raw``.

    CPython writes the table's ranges disjoint, so both are walked once in offset order (a scan
    of the table per instruction was quadratic in functions of many ``try`` statements); ranges
    that overlap, which CPython never writes, are answered by the table's first entry holding
    the offset, as the interpreter would.

    >>> def f():
    ...     try: return 1
    ...     except: return 2
    >>> raw = list(dis.get_instructions(f))
    >>> any(e is not None for e in table_entry_per_instruction(f.__code__, raw))
    True
    """
    entries = list(dis._parse_exception_table(code))  # type: ignore[attr-defined]
    out: List[Any] = [None] * len(raw)
    if not entries:
        return out
    ordered = sorted(entries, key=lambda e: e.start)
    if all(a.end <= b.start for a, b in zip(ordered, ordered[1:])):
        j = 0
        for k in sorted(range(len(raw)), key=lambda k: raw[k].offset):
            offset = raw[k].offset
            while j < len(ordered) and ordered[j].end <= offset:
                j += 1
            if j == len(ordered):
                break
            if ordered[j].start <= offset:
                out[k] = ordered[j]
        return out
    for k, r in enumerate(raw):
        for e in entries:
            if e.start <= r.offset < e.end:
                out[k] = e
                break
    return out


def _from_block_stack(raw: List[dis.Instruction]) -> Dict[int, HandlerInfo]:
    index = {r.offset: k for k, r in enumerate(raw)}
    out: Dict[int, HandlerInfo] = {}
    seen: Dict[int, bool] = {}
    # Work items: (raw index, block stack as a tuple of (handler offset, depth), stack depth)
    # (3.10's GEN_START pops the value a generator frame starts with: start one deeper.)
    start_depth = 1 if raw and raw[0].opname == "GEN_START" else 0
    work: List[Tuple[int, Tuple[Tuple[int, int], ...], int]] = [(0, (), start_depth)]
    while work:
        k, blocks, depth = work.pop()
        while k < len(raw):
            r = raw[k]
            if r.offset in seen:
                break
            seen[r.offset] = True
            if blocks:
                target, hdepth = blocks[-1]
                out[r.offset] = (target, hdepth, False)
            op = r.opname
            arg = r.arg
            if op in _SETUPS:
                jump_effect = dis.stack_effect(r.opcode, arg, jump=True)
                # The handler sees ``depth`` values below the six exception values it gets.
                hdepth = depth + jump_effect - 6
                if op == "SETUP_WITH":
                    hdepth = depth  # the context manager's slot now holds __exit__
                if r.argval in index:
                    work.append((index[r.argval], blocks, depth + jump_effect))
                blocks = blocks + ((r.argval, hdepth),)
                depth += dis.stack_effect(r.opcode, arg, jump=False)
                k += 1
                continue
            if op == "POP_BLOCK":
                blocks = blocks[:-1]
                k += 1
                continue
            has_jump = r.opcode in dis.hasjabs or r.opcode in dis.hasjrel
            if has_jump and r.argval in index:
                try:
                    eff = dis.stack_effect(r.opcode, arg, jump=True)
                except ValueError:
                    eff = 0
                work.append((index[r.argval], blocks, depth + eff))
            if op in _NO_FALLTHROUGH:
                break
            try:
                depth += dis.stack_effect(r.opcode, arg, jump=False) if r.opcode >= dis.HAVE_ARGUMENT \
                    else dis.stack_effect(r.opcode)
            except ValueError:
                pass
            k += 1
    return out
