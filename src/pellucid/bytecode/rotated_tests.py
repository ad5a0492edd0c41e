"""Where the re-test of a 3.10+ rotated ``while`` begins, when it shares a block with the body.

CPython 3.10+ compiles ``while c: body`` as ``if c:`` (the guard) around a loop whose last
instructions test ``c`` again and jump back.  With no jump between the body's last statement
and the re-test, both sit in one basic block, and the structurer, which reads conditions off
whole blocks, sees no loop test: the result was ``if c: while True: body; if c: continue;
break``.  Starting a block where the re-test starts (a statement boundary, so the split changes
no semantics) lets the ``while`` be read as written.  The start is recognised by comparison with
the guard: the re-test is an instruction-for-instruction copy of it.
"""
from typing import Callable, Dict, List, Optional, Set

from pellucid.bytecode.cfg import CFG, Block
from pellucid.bytecode.features import ROTATED_LOOP_TESTS
from pellucid.bytecode.instruction import POP_JUMPS, Instr


# Stack effect of the first neutral instruction of a pair made from one raw instruction.
_FIRST_OF_PAIR = {"LOAD_FAST": 1, "LOAD_FAST_CHECK": 1, "LOAD_GLOBAL": 1, "LOAD_DEREF": 1,
                  "LOAD_CONST": 1, "LOAD_NAME": 1, "PUSH_NULL": 1, "LOAD_ATTR": 0,
                  "STORE_FAST": -1,
                  "BUILD_SLICE": -1}  # (3.12+ BINARY_SLICE/STORE_SLICE: BUILD_SLICE 2 + the subscript)


def rotated_test_starts(cfg: CFG, depths: Callable[[], Dict[int, int]]) -> Set[int]:
    """Instruction indices (into ``cfg.instrs``) at which a loop's re-test of its guard's
    condition starts inside a block; ``depths()`` gives ``stack_depth.entry_depths`` of the
    code (asked only for a loop that has a guard: a ``for`` has none, and working the depths
    out is a pass over the raw instructions).

    Empty before 3.10, whose ``while`` tests once at the top.
    """
    if not ROTATED_LOOP_TESTS:
        return set()
    starts: Set[int] = set()
    for header in cfg.blocks:
        if not cfg.is_loop_header(header):
            continue
        body = cfg.loop_body(header)
        guards = _guard_tests(cfg, header, body)
        if not guards:
            continue
        table = depths()
        for block in body:
            if block.last.op not in POP_JUMPS:
                continue
            k = _test_start(block, table)
            if k is None or k == 0:
                continue
            test = block.instrs[k:]
            # (the guard's test ends its block; what comes before it there does not matter)
            if any(_same_test(test, g[len(g) - len(test):]) for g in guards if len(g) >= len(test)):
                starts.add(block.start + k)
    return starts


def _guard_tests(cfg: CFG, header: Block, body: Set[Block]) -> List[List[Instr]]:
    """The blocks above the loop that decide whether it is entered (its dominators outside it
    that end in a test, nearest first, a few levels up)."""
    out: List[List[Instr]] = []
    b: Optional[Block] = cfg.idom.get(header)
    for _ in range(6):
        if b is None or b in body:
            break
        if b.last.op in POP_JUMPS:
            out.append(b.instrs)
        b = cfg.idom.get(b)
    return out


def _test_start(block: Block, depths: Dict[int, int]) -> Optional[int]:
    """The index in ``block`` after its last statement: the last instruction at the block's
    lowest stack depth (a statement boundary; from there the depth stays above it until the
    final jump).  The block may start above that depth (a ``for`` loop's next value)."""
    levels = _levels(block.instrs, depths)
    if levels is None:
        return None
    low = min(levels)
    return max(j for j, d in enumerate(levels) if d == low)


def _levels(instrs: List[Instr], depths: Dict[int, int]) -> Optional[List[int]]:
    """Stack depth before each neutral instruction.  One raw instruction may become two neutral
    ones at its offset (3.13's ``STORE_FAST_LOAD_FAST``, 3.12's ``LOAD_GLOBAL`` with a ``NULL``,
    ``LOAD_ATTR`` of a method); the second's depth follows from the first's effect."""
    out: List[int] = []
    for j, ins in enumerate(instrs):
        if j and ins.offset == instrs[j - 1].offset:
            step = _FIRST_OF_PAIR.get(instrs[j - 1].op)
            if step is None:
                return None
            out.append(out[-1] + step)
            continue
        d = depths.get(ins.offset)
        if d is None:
            return None
        out.append(d)
    return out


def _same_test(a: List[Instr], b: List[Instr]) -> bool:
    if len(a) != len(b) or len(a) < 2:
        return False
    for x, y in zip(a[:-1], b[:-1]):
        if x.op != y.op or x.arg != y.arg or (x.target is None) != (y.target is None):
            return False
    return a[-1].op in POP_JUMPS and b[-1].op in POP_JUMPS
