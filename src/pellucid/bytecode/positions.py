"""Where in the source each instruction of a code object came from.

The decompiler tags the statements and expressions it builds with these positions so that
recompiled code can carry the original's line numbers (tracebacks, ``frame.f_lineno``, debuggers
then point at the original source).  CPython keeps this in three formats: 3.11+ has full
positions (lines and columns) per code unit, 3.10 line ranges, 3.8/3.9 only where each line
starts.
"""
import dis
import sys
import types
from typing import Dict, Optional, Tuple

PY = sys.version_info[:2]

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
    if PY >= (3, 11):
        # (_is_line inlined, and one comprehension: this runs for every code unit, caches
        # included; ``co_positions`` gives an int or None, so ``type(...) is int`` is _is_line's
        # int-but-not-bool test)
        return {offset: position for offset, position in zip(range(0, 1 << 62, 2), code.co_positions())
                if type(position[0]) is int and position[0] > 0}  # type: ignore[misc]
    out: Dict[int, Position] = {}
    if PY >= (3, 10):
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


def _is_line(line: object) -> bool:
    return isinstance(line, int) and not isinstance(line, bool) and line > 0
