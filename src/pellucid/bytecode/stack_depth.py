"""Value-stack depth before each raw instruction, from CPython's own stack effects.

The structurer reads most things off the CFG, but one question only the stack answers: whether
a value pushed before a block (a ``for`` loop's iterator) is still there when another block
starts.  A ``for`` whose body always leaves (``break``/``return``/``raise`` on every path) has
no back edge, so no natural loop says which blocks are its body; the blocks that still hold the
iterator are.
"""
import dis
import types
from typing import Dict, List, Tuple

from pellucid.bytecode.features import EXCEPTION_TABLE
from pellucid.bytecode.opcode_tables import RAW_NO_FALLTHROUGH

_NO_FALLTHROUGH = RAW_NO_FALLTHROUGH


# (dis's lists as one set: tested for every instruction)
_JUMP_OPS = frozenset(dis.hasjabs) | frozenset(dis.hasjrel)


def entry_depths(code: types.CodeType) -> Dict[int, int]:
    """Stack depth before each reachable raw instruction, by offset.

    Exception handlers are entered with their depth from the 3.11+ exception table, or (3.8-3.10)
    from the ``SETUP_*`` instruction's jump effect, which counts the pushed exception values.
    Offsets whose depth could not be worked out are absent.

    >>> def f(xs):
    ...     for x in xs:
    ...         return x
    >>> depths = entry_depths(f.__code__)
    >>> max(depths.values()) >= 1
    True
    """
    from pellucid.bytecode.normalize import hidden_slot_facts, prepared_raw  # (normalize imports this layer's peers)

    facts = hidden_slot_facts(code)
    if facts is not None:
        return dict(facts.depths)  # (worked out while taking the hidden slots out)

    # The same raw list the neutral instructions came from: on 3.8 ``finally`` subroutines are
    # rewritten first and renumbered, and neutral offsets are those.
    raw = prepared_raw(code)
    index = {r.offset: k for k, r in enumerate(raw)}
    start = 1 if raw and raw[0].opname == "GEN_START" else 0
    work: List[Tuple[int, int]] = [(0, start)]
    if EXCEPTION_TABLE:
        for e in dis._parse_exception_table(code):  # type: ignore[attr-defined]
            if e.target in index:
                work.append((index[e.target], e.depth + 1 + (1 if e.lasti else 0)))
    out: Dict[int, int] = {}
    have_argument = dis.HAVE_ARGUMENT
    stack_effect = dis.stack_effect
    while work:
        k, depth = work.pop()
        while k < len(raw):
            r = raw[k]
            if r.offset in out:
                break
            out[r.offset] = depth
            op = r.opcode
            arg = r.arg if op >= have_argument else None  # (what dis.stack_effect takes)
            try:
                if op in _JUMP_OPS and r.argval in index:
                    work.append((index[r.argval], depth + stack_effect(op, arg, jump=True)))
                if r.opname in _NO_FALLTHROUGH:
                    break
                depth += stack_effect(op, arg, jump=False)
            except ValueError:
                break  # an opcode dis has no effect for: leave what follows unknown
            k += 1
    return out
