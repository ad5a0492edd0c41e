"""Where in the source each instruction of a code object came from.

The decompiler tags the statements and expressions it builds with these positions so that
recompiled code can carry the original's line numbers (tracebacks, ``frame.f_lineno``, debuggers
then point at the original source).  CPython keeps this in three formats: 3.11+ has full
positions (lines and columns) per code unit, 3.10 line ranges, 3.8/3.9 only where each line
starts.
"""
import dis
import types
from typing import Any, Dict, List, Optional, Tuple

from pellucid.bytecode.features import COLUMN_POSITIONS
from pellucid.bytecode.normalize import shared_unit_positions, unit_positions


Position = Tuple[int, Optional[int], Optional[int], Optional[int]]
"""``(line, end_line, column, end_column)``; everything but the line may be unknown (None)."""


def instruction_positions(code: types.CodeType) -> Dict[int, Position]:
    """Bytecode offset -> source position, for every instruction of ``code`` that has a line.

    Offsets without a line (3.10+ marks some instructions as having none, Dynamo's generated
    code often has none at all) are left out.

    >>> def f(x):
    ...     return x
    >>> line = f.__code__.co_firstlineno + 1  # of ``return x``
    >>> line in {p[0] for p in instruction_positions(f.__code__).values()}
    True
    """
    if COLUMN_POSITIONS:
        # (_is_line inlined, and one comprehension: this runs for every code unit, caches
        # included; ``co_positions`` gives an int or None, so ``type(...) is int`` is _is_line's
        # int-but-not-bool test)
        return {offset: position for offset, position in zip(range(0, 1 << 62, 2), code.co_positions())
                if type(position[0]) is int and position[0] > 0}  # type: ignore[misc]
    out: Dict[int, Position] = {}
    if hasattr(code, "co_lines"):
        for start, end, line in code.co_lines():
            if _is_line(line):
                for offset in range(start, end, 2):
                    out[offset] = (line, None, None, None)
        return out
    # 3.8/3.9: a line runs from where it starts to where the next one does.
    starts = sorted(dis.findlinestarts(code))
    size = len(code.co_code)
    for k, (start, line) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else size
        if _is_line(line):
            for offset in range(start, end, 2):
                out[offset] = (line, None, None, None)
    return out


def position_units(code: types.CodeType) -> List[Any]:
    """Per code unit (index: offset // 2), its position or None; an entry counts only if its
    line is an ``int`` above 0 (see :func:`position_at`): then it is what
    :func:`instruction_positions` gives for that offset.

    3.11+ gives ``co_positions()`` as it is, without a table built over every code unit: the
    decompiler looks up only the offsets of the instructions it runs, and the list is the one
    the raw reader needs anyway (:func:`pellucid.bytecode.normalize.unit_positions`).

    >>> def f(x):
    ...     return x
    >>> units = position_units(f.__code__)
    >>> {k * 2: position_at(units, k * 2) for k in range(len(units))
    ...  if position_at(units, k * 2) is not None} == instruction_positions(f.__code__)
    True
    """
    if COLUMN_POSITIONS:
        return unit_positions(code)
    out: List[Any] = [None] * (len(code.co_code) // 2)
    for offset, position in instruction_positions(code).items():
        out[offset >> 1] = position
    return out


def position_at(units: List[Any], offset: int) -> Optional[Position]:
    """The position :func:`instruction_positions` has for ``offset``, read from
    :func:`position_units` (None where it has none)."""
    at = offset >> 1
    position = units[at] if 0 <= at < len(units) else None
    if position is not None and type(position[0]) is int and position[0] > 0:
        return position  # type: ignore[no-any-return]
    return None


def _is_line(line: object) -> bool:
    return isinstance(line, int) and not isinstance(line, bool) and line > 0


_NOP = dis.opmap["NOP"]


def nop_line_before(code: types.CodeType, offset: int) -> Optional[int]:
    """The line of a ``NOP`` right before ``offset`` in ``code``, if there is one with a line.

    3.11+ keeps such a ``NOP`` where a statement that compiles to nothing of its own (``try:``
    on a line of its own) starts a line: it holds the statement's line.

    >>> def f():
    ...     try:
    ...         return g()
    ...     except E:
    ...         pass
    >>> ops = [(i.opname, i.offset) for i in dis.get_instructions(f)]
    >>> body = ops[2][1]  # after RESUME and the try's NOP (3.11+)
    >>> nop_line_before(f.__code__, body) in (None, f.__code__.co_firstlineno + 1)
    True
    """
    at = offset - 2
    # (an instruction the normaliser made -- a copy of an inlined finally body -- may have an
    # offset past the code's end)
    if at < 0 or at >= len(code.co_code) or code.co_code[at] != _NOP:
        return None
    units = shared_unit_positions(code) if COLUMN_POSITIONS else position_units(code)
    position = position_at(units, at)
    return position[0] if position is not None else None
