"""The version-neutral instruction every layer above ``bytecode/`` works on.

CPython's raw opcodes differ between 3.8 and 3.13 (``CALL_FUNCTION`` vs ``PRECALL``/``CALL`` vs
``CALL_KW``, ``BINARY_ADD`` vs ``BINARY_OP``...).  :mod:`pellucid.bytecode.normalize` rewrites them
into this one small vocabulary, so the decompiler never needs to ask which Python it runs on.
"""
from typing import Any, List, NamedTuple, Optional


class Handler(NamedTuple):
    """Where an exception raised by an instruction goes: handler index and stack depth there."""

    target: int  # index of the handler's first instruction
    depth: int  # stack depth (below the pushed exception values) on entry
    lasti: bool  # 3.11+: the handler also receives the raising instruction's offset
    # The handler in force when this one is entered (None: none).  Not always the handler of
    # the instruction at ``target``: up to 3.10 a ``finally`` body starting with ``try`` begins
    # with a SETUP_FINALLY that the neutral list drops, so its first kept instruction is already
    # inside the inner ``try`` -- which does not enclose the outer one.
    outer: Optional["Handler"] = None


class Instr:
    """One neutral instruction.

    ``op`` is a neutral opcode name (see ``NEUTRAL_OPS`` in :mod:`pellucid.bytecode.neutral_ops`),
    ``arg`` its already-decoded argument (a name, a constant, a count...), ``target`` the index of the
    instruction a jump goes to, ``offset`` the raw bytecode offset it came from (for messages and line
    tables), ``handler`` the innermost exception handler covering it.

    >>> Instr("LOAD_FAST", "x", offset=0)
    Instr(LOAD_FAST 'x' @0)
    """

    __slots__ = ("op", "arg", "offset", "lineno", "target", "handler", "index")

    def __init__(self, op: str, arg: Any = None, offset: int = -1, lineno: Optional[int] = None,
                 target: Optional[int] = None) -> None:
        self.op = op
        self.arg = arg
        self.offset = offset
        self.lineno = lineno
        self.target = target  # raw offset until ``finalize`` turns it into an index
        self.handler: Optional[Handler] = None
        self.index = -1

    def __repr__(self) -> str:
        arg = "" if self.arg is None else " " + repr(self.arg)
        tgt = "" if self.target is None else " ->%d" % self.target
        return "Instr(%s%s%s @%d)" % (self.op, arg, tgt, self.offset)


# Neutral conditional jumps: those that pop their condition, and ``and``/``or``'s, which keep it
# on the stack when they jump.
from pellucid.bytecode.neutral_ops import POP_JUMPS, VALUE_JUMPS  # noqa: E402,F401  (re-exported)


def listing(instrs: List[Instr]) -> str:
    """A readable one-instruction-per-line dump of neutral instructions, for debugging.

    >>> print(listing([Instr("LOAD_CONST", 1, offset=0), Instr("RETURN_VALUE", offset=2)]))
       0 LOAD_CONST 1
       1 RETURN_VALUE
    """
    lines = []
    for i, ins in enumerate(instrs):
        arg = "" if ins.arg is None else " " + repr(ins.arg)
        tgt = "" if ins.target is None else " -> %d" % ins.target
        exc = "" if ins.handler is None else "  [exc -> %d]" % ins.handler.target
        lines.append("%4d %s%s%s%s" % (i, ins.op, arg, tgt, exc))
    return "\n".join(lines)
