"""Read a code object into the neutral instruction list (see :mod:`pellucid.bytecode.instruction`).

Three steps:

1. ``translate`` maps each raw ``dis`` instruction to zero or more neutral ones, using the tables
   in :mod:`pellucid.bytecode.opcode_tables` (method loads become ``LOAD_ATTR`` + ``PUSH_NULL``,
   ``KW_NAMES``/``CALL_KW``/``CALL_FUNCTION_KW`` become one ``CALL`` with keyword names, ...);
2. small pattern passes undo layouts that only some versions use (3.11+'s ``SEND`` loop becomes one
   ``YIELD_FROM``; 3.12+'s ``COPY 1; POP_JUMP_IF_X; POP_TOP`` becomes ``JUMP_IF_X_OR_POP``; 3.12+'s
   ``END_FOR`` is folded into ``FOR_ITER``'s exit);
3. jump targets become instruction indices and every instruction gets its exception handler from
   :mod:`pellucid.bytecode.exception_regions`.

>>> [i.op for i in normalize((lambda x: x.y(1)).__code__)]
['LOAD_FAST', 'LOAD_ATTR', 'PUSH_NULL', 'LOAD_CONST', 'CALL', 'RETURN_VALUE']
"""
import contextlib
import dis
import sys
import types
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from pellucid.bytecode import features as F
from pellucid.bytecode import hidden_slots as HS
from pellucid.bytecode import opcode_tables as T
from pellucid.bytecode.features import (
    BOOL_OPS_COPY_AND_TEST, CALL_HAS_NULL_SLOT, CLOSURE_LOADS_ARE_FAST_LOADS, DELEGATION_IS_SEND_LOOP,
    END_FOR_THEN_POP_TOP, FINALLY_SUBROUTINES, FOR_EXITS_THROUGH_END_FOR,
    FUNCTION_ATTRIBUTES_SET_SEPARATELY, GENERATOR_PROLOGUE, INSTRUCTION_LINE_NUMBER, INTRINSIC_CALLS,
    LOAD_ATTR_METHOD_BIT, LOAD_GLOBAL_PUSHES_NULL, NULL_ABOVE_CALLABLE, TO_BOOL_BEFORE_TESTS,
)
from pellucid.bytecode.exception_regions import HandlerInfo, handlers_by_offset
from pellucid.bytecode.instruction import Handler, Instr
from pellucid.bytecode.neutral_ops import JUMPS, NO_FALLTHROUGH
from pellucid.bytecode.raw_reader import READER as _READER



class CallSpec(tuple):
    """Argument of a neutral ``CALL``: ``(argc, kwnames, null_slot)``.

    ``null_slot`` says the callable occupies two stack slots (3.11+ ``NULL``/self convention and
    ≤3.10 ``LOAD_METHOD``); ``kwnames`` is a tuple of keyword names, or ``None`` when the names are
    a constant tuple on the stack (``CALL_FUNCTION_KW`` / ``CALL_KW``).
    """

    __slots__ = ()

    def __new__(cls, argc: int, kwnames: Optional[tuple], null_slot: bool) -> "CallSpec":
        return tuple.__new__(cls, (argc, kwnames, null_slot))


def _linear_instruction_reader() -> Optional[Any]:
    """``dis``'s instruction reader, with jump targets kept in a set.

    Up to 3.10 ``dis`` tests ``offset in labels`` against a *list* for every instruction,
    which makes reading a 100k-instruction function quadratic.  The same function, given a
    private globals dict whose ``findlabels`` returns a set, is linear; ``dis`` itself is left
    untouched.  ``None`` where not needed or not shaped as expected.
    """
    if sys.version_info >= (3, 11):  # (a private detail of ``dis``, not of the bytecode)
        return None
    reader = getattr(dis, "_get_instructions_bytes", None)
    labels = getattr(dis, "findlabels", None)
    if not isinstance(reader, types.FunctionType) or labels is None or \
            "findlabels" not in reader.__code__.co_names:
        return None
    private = dict(vars(dis))
    private["findlabels"] = lambda co_code: set(labels(co_code))
    return types.FunctionType(reader.__code__, private, reader.__name__, reader.__defaults__)


_LINEAR_READER = _linear_instruction_reader()


def raw_instructions(code: types.CodeType) -> List[dis.Instruction]:
    """``code``'s instructions as :mod:`dis` reads them (no ``CACHE`` entries); read once per
    code object within :func:`shared_results`.

    >>> raw_instructions((lambda: None).__code__)[-1].opname in ("RETURN_VALUE", "RETURN_CONST")
    True
    """
    return list(_shared_result("raw", code, _raw_instructions))


def unit_positions(code: types.CodeType) -> List[Any]:
    """3.11+: ``list(code.co_positions())``, one entry per code unit (index: offset // 2); read
    once per code object within :func:`shared_results`.  The raw reader and the decompiler's
    position tags (:func:`pellucid.bytecode.positions.position_units`) both need it, and on
    Dynamo's long functions making those tuples costs about as much as reading the
    instructions.

    >>> code = (lambda: None).__code__
    >>> sys.version_info < (3, 11) or unit_positions(code) == list(code.co_positions())
    True
    """
    return list(_shared_result("positions", code, _co_positions))


def shared_unit_positions(code: types.CodeType) -> List[Any]:
    """:func:`unit_positions` without the copy, for a reader that only looks (a copy per
    lookup was quadratic in functions of many ``try`` statements, each looking up one)."""
    return _shared_result("positions", code, _co_positions)  # type: ignore[no-any-return]


def _co_positions(code: types.CodeType) -> List[Any]:
    return list(code.co_positions())  # type: ignore[attr-defined]


def _raw_instructions(code: types.CodeType) -> List[dis.Instruction]:
    if _READER is not None:
        return _READER(code, _shared_result("positions", code, _co_positions))
    if _LINEAR_READER is not None:
        linestarts = dict(dis.findlinestarts(code))
        raw = _LINEAR_READER(code.co_code, code.co_varnames, code.co_names, code.co_consts,
                             code.co_cellvars + code.co_freevars, linestarts)
        return list(raw)
    return [i for i in dis.get_instructions(code) if i.opname != "CACHE"]


# The ops ``translate`` keeps as they are (``T.SAME``) that none of its other tests mention, so
# that answering them before those tests changes nothing.  ``GEN_START`` is dropped there, and
# ``LOAD_CLASSDEREF``, tested on its own, is kept alike.
_KEPT_AS_IS = T.SAME - {"GEN_START", "LOAD_CLASSDEREF"}


# (3.14+ folds ``x[1:2]``'s slice into a constant, built again where it is used; 3.15+ marks a
# lazy import in IMPORT_NAME's argument)
if F.CONSTANT_SLICES:
    _KEPT_AS_IS = _KEPT_AS_IS - {"LOAD_CONST"}
if F.LAZY_IMPORTS:
    _KEPT_AS_IS = _KEPT_AS_IS - {"IMPORT_NAME"}


def translate(raw: dis.Instruction, pending_kw: List[tuple], consts: tuple = ()) -> List[Instr]:
    """Neutral instructions for one raw instruction (``pending_kw`` carries 3.11's ``KW_NAMES``)."""
    op, arg, val, off = raw.opname, raw.arg, raw.argval, raw.offset
    line = raw.starts_line if isinstance(raw.starts_line, int) and raw.starts_line is not True else None
    if INSTRUCTION_LINE_NUMBER:
        line = raw.line_number
    if op in _KEPT_AS_IS:
        # (first: most instructions are these, and no test below picks one of them out)
        return [Instr(op, val, off, line)]

    # (annotations as strings: a nested def evaluates its annotations each time it is made,
    # and ``Optional[int]`` goes through typing's cache on every call of ``translate``)
    def one(name: "str", a: "object" = None, target: "Optional[int]" = None) -> "List[Instr]":
        return [Instr(name, a, off, line, target)]

    if op in T.NO_OPS:
        return []
    if op == "IMPORT_NAME" and F.LAZY_IMPORTS and arg & 1:
        # (bit 1, "eager", only says the import is where lazy ones are not allowed: in a
        # function, class or try; the recompiled import is in the same place)
        return one("LAZY_IMPORT_NAME", val)
    if op == "HIDDEN_SLOT_NOT_MODELLED":
        return one("UNSUPPORTED", val)
    if op == "LOAD_CONST" and (type(val) is slice or (type(val) is tuple and any(type(v) is slice for v in val))):
        # built where it is used, as before 3.14: ``x[1:2, 3]`` reads back as a subscript
        return _built_constant(val, off, line)
    if op == "TO_BOOL":
        return one("TO_BOOL")
    if op in T.JUMP_RENAMES:
        return one(T.JUMP_RENAMES[op], None, val)
    if op == "FOR_ITER":
        return one("FOR_ITER", None, val)
    if op == "LOAD_GLOBAL":
        if LOAD_GLOBAL_PUSHES_NULL and arg & 1:
            # 3.11/3.12 push the NULL below the global ("NULL + g"), 3.13 above it ("g + NULL");
            # it matters when an attribute is loaded from the global before the call.
            pair = [Instr("LOAD_GLOBAL", val, off, line), Instr("PUSH_NULL", None, off, line)]
            return pair if NULL_ABOVE_CALLABLE else pair[::-1]
        return one("LOAD_GLOBAL", val)
    if op == "LOAD_ATTR":
        if LOAD_ATTR_METHOD_BIT and arg & 1:
            return [Instr("LOAD_ATTR", val, off, line), Instr("PUSH_NULL", None, off, line)]
        return one("LOAD_ATTR", val)
    if op == "LOAD_METHOD":
        return [Instr("LOAD_ATTR", val, off, line), Instr("PUSH_NULL", None, off, line)]
    if op == "LOAD_SUPER_ATTR":
        out = [Instr("LOAD_SUPER_ATTR", (val, bool(arg & 2)), off, line)]
        if arg & 1:
            out.append(Instr("PUSH_NULL", None, off, line))
        return out
    if op in T.ALIASES:
        return one(T.ALIASES[op], val)
    if op in T.PAIRS:
        (a, b), (first, second) = T.PAIRS[op], val
        return [Instr(a, first, off, line), Instr(b, second, off, line)]
    if op == "LOAD_SMALL_INT":
        return one("LOAD_CONST", val)
    if op == "LOAD_COMMON_CONSTANT":
        if raw.argrepr in T.COMMON_CONSTANT_VALUES:
            return one("LOAD_CONST", val)
        if raw.argrepr in T.COMMON_BUILTINS:
            return one("LOAD_BUILTIN", raw.argrepr)
        return one(T.COMMON_CONSTANT_OPS.get(raw.argrepr, "UNSUPPORTED"), None if raw.argrepr in
                   T.COMMON_CONSTANT_OPS else "LOAD_COMMON_CONSTANT " + raw.argrepr)
    if op == "KW_NAMES":
        # 3.11's dis does not resolve the operand; it indexes co_consts.
        pending_kw.append(consts[arg])
        return []
    if op == "CALL_FUNCTION":
        return one("CALL", CallSpec(arg, (), False))
    if op == "CALL_METHOD":
        return one("CALL", CallSpec(arg, (), True))
    if op == "CALL_FUNCTION_KW":
        return one("CALL", CallSpec(arg, None, False))
    if op == "CALL":
        kw = pending_kw.pop() if pending_kw else ()
        return one("CALL", CallSpec(arg, kw, True))
    if op == "CALL_KW":
        return one("CALL", CallSpec(arg, None, True))
    if op == "CALL_FUNCTION_EX":
        return one("CALL_EX", (bool(arg & 1), CALL_HAS_NULL_SLOT))
    if op in T.BINARY_OPCODES:
        return one("BINARY", T.BINARY_OPCODES[op])
    if op in T.INPLACE_OPCODES:
        return one("INPLACE", T.INPLACE_OPCODES[op])
    if op == "BINARY_OP":
        sym = raw.argrepr
        if sym in T.BINARY_OP_OPS:
            return one(T.BINARY_OP_OPS[sym])
        if sym.endswith("=") and sym not in ("==",):
            return one("INPLACE", sym[:-1])
        return one("BINARY", sym)
    if op in T.UNARY_OPCODES:
        return one("UNARY", T.UNARY_OPCODES[op])
    if op == "BINARY_SUBSCR":
        return one("SUBSCR")
    if op == "BINARY_SLICE":
        return [Instr("BUILD_SLICE", 2, off, line), Instr("SUBSCR", None, off, line)]
    if op == "STORE_SLICE":
        return [Instr("BUILD_SLICE", 2, off, line), Instr("STORE_SUBSCR", None, off, line)]
    if op == "COMPARE_OP":
        sym = val if isinstance(val, str) else raw.argrepr
        if sym.startswith("bool(") and sym.endswith(")"):
            sym = sym[5:-1]
        if sym == "exception match":
            return one("EXC_MATCH2")
        return one("COMPARE", sym)
    if op == "IS_OP":
        return one("COMPARE", "is not" if arg else "is")
    if op == "CONTAINS_OP":
        return one("COMPARE", "not in" if arg else "in")
    if op == "JUMP_IF_NOT_EXC_MATCH":
        return [Instr("EXC_MATCH2", None, off, line), Instr("POP_JUMP_IF_FALSE", None, off, line, val)]
    if op == "DUP_TOP":
        return one("COPY", 1)
    if op == "DUP_TOP_TWO":
        return [Instr("COPY", 2, off, line), Instr("COPY", 2, off, line)]
    if op == "ROT_TWO":
        return one("SWAP", 2)
    if op == "ROT_THREE":
        return one("ROT", 3)
    if op == "ROT_FOUR":
        return one("ROT", 4)
    if op == "ROT_N":
        return one("ROT", arg)
    if op == "RETURN_CONST":
        return [Instr("LOAD_CONST", val, off, line), Instr("RETURN_VALUE", None, off, line)]
    if op == "FORMAT_VALUE":
        conv = T.CONVERSIONS[arg & 3]
        return one("FORMAT", (conv, bool(arg & 4)))
    if op == "FORMAT_SIMPLE":
        return one("FORMAT", (-1, False))
    if op == "FORMAT_WITH_SPEC":
        return one("FORMAT", (-1, True))
    if op == "BUILD_INTERPOLATION":  # 3.14 t-strings: (conversion, has a format spec)
        return one("BUILD_INTERPOLATION", (T.CONVERSIONS[(arg >> 2) & 3], bool(arg & 1)))
    if op == "BUILD_TEMPLATE":
        return one("BUILD_TEMPLATE")
    if op == "CONVERT_VALUE":
        return one("CONVERT", T.CONVERSIONS[arg])
    if op == "MAKE_FUNCTION":
        return one("MAKE_FUNCTION", 0 if FUNCTION_ATTRIBUTES_SET_SEPARATELY else arg)
    if op == "CALL_INTRINSIC_1":
        name = T.INTRINSIC_1.get(raw.argrepr, "UNSUPPORTED")
        if name is None:
            return []
        if name == "UNARY":
            return one("UNARY", "+")
        return one(name, raw.argrepr if name == "UNSUPPORTED" else None)
    if op == "CALL_INTRINSIC_2" and raw.argrepr in T.INTRINSIC_2:
        return one(T.INTRINSIC_2[raw.argrepr])
    if op == "UNPACK_EX":
        return one("UNPACK_EX", (arg & 0xFF, arg >> 8))
    if op == "SETUP_WITH":
        return one("BEFORE_WITH")
    if op == "LOAD_CLASSDEREF":
        return one("LOAD_CLASSDEREF", val)
    if op == "GEN_START":
        return []  # 3.10: pops the value a generator frame starts with (not modelled)
    if op in T.SAME:
        return one(op, val)
    return one("UNSUPPORTED", op)


def _built_constant(val: Any, off: int, line: Optional[int]) -> List[Instr]:
    """A 3.14+ constant slice (or tuple holding slices) as the loads that build it."""
    if type(val) is slice:
        parts = [val.start, val.stop] + ([val.step] if val.step is not None else [])
        return [Instr("LOAD_CONST", p, off, line) for p in parts] + [Instr("BUILD_SLICE", len(parts), off, line)]
    if type(val) is tuple and any(type(v) is slice for v in val):
        out: List[Instr] = []
        for v in val:
            out.extend(_built_constant(v, off, line))
        return out + [Instr("BUILD_TUPLE", len(val), off, line)]
    return [Instr("LOAD_CONST", val, off, line)]


def _fold_send_loops(ins: List[Instr]) -> List[Instr]:
    """3.11+: ``LOAD_CONST None; SEND x; YIELD_VALUE; JUMP back; x: [END_SEND]`` -> ``YIELD_FROM``."""
    ops = [x.op for x in ins]
    if "SEND" not in ops and "END_SEND" not in ops:
        return ins  # (what the loop below makes of it, as a copy: only coroutines send)
    out: List[Instr] = []
    i = 0
    while i < len(ins):
        cur = ins[i]
        if (cur.op == "SEND" and i + 2 < len(ins) and ins[i + 1].op == "YIELD_VALUE"
                and ins[i + 2].op == "JUMP" and ins[i + 2].target == cur.offset):
            exit_off = cur.target
            j = i + 3
            # ``SEND``'s exit is the instruction after the loop; 3.12 adds END_SEND there.
            if j < len(ins) and ins[j].op == "END_SEND" and ins[j].offset == exit_off:
                j += 1
            out.append(Instr("YIELD_FROM", None, cur.offset, cur.lineno))
            # 3.12+ may put the loop's CLEANUP_THROW handler inline, just before END_SEND:
            # normal flow jumps over it.
            if (j + 2 < len(ins) and ins[j].op == "CLEANUP_THROW" and ins[j + 1].op == "END_SEND"
                    and ins[j + 1].offset in (exit_off, cur.arg)):
                out.append(Instr("JUMP", None, cur.offset, cur.lineno, ins[j + 2].offset))
                out.append(ins[j])
                i = j + 2
                continue
            i = j
            continue
        if cur.op == "END_SEND":  # only reached when SEND was folded: harmless leftover
            i += 1
            continue
        out.append(cur)
        i += 1
    return out


_OPPOSITE = {"POP_JUMP_IF_FALSE": "POP_JUMP_IF_TRUE", "POP_JUMP_IF_TRUE": "POP_JUMP_IF_FALSE"}


def _unthread_value_jumps(ins: List[Instr]) -> None:
    """3.14: in ``a and b or c`` a false ``a`` jumps straight to where ``b or``'s test goes on
    when false, the ``POP_TOP`` of its ``COPY 1; POP_JUMP_IF_TRUE; POP_TOP``, since testing
    ``a`` again there could only fall through.  Aim it at that test again (its outcome is
    known), so each ``COPY 1; POP_JUMP_IF_X; POP_TOP`` stays a ``JUMP_IF_X_OR_POP`` whose
    ``POP_TOP`` nothing jumps to; CPython threads it the same way again when it compiles the
    ``and``/``or``."""
    at = {x.offset: k for k, x in reversed(list(enumerate(ins)))}
    for i in range(len(ins) - 2):
        a, j = ins[i], ins[i + 1]
        if not (a.op == "COPY" and a.arg == 1 and j.op in _OPPOSITE and ins[i + 2].op == "POP_TOP"):
            continue
        t = at.get(j.target)  # type: ignore[arg-type]
        if t is not None and t >= 2 and ins[t].op == "POP_TOP" and ins[t - 1].op == _OPPOSITE[j.op] \
                and ins[t - 2].op == "COPY" and ins[t - 2].arg == 1:
            j.target = ins[t - 2].offset


def _fold_copy_jumps(ins: List[Instr]) -> List[Instr]:
    """3.12+: ``COPY 1; POP_JUMP_IF_X t; POP_TOP`` is exactly ``JUMP_IF_X_OR_POP t``."""
    _unthread_value_jumps(ins)
    out: List[Instr] = []
    i = 0
    while i < len(ins):
        a = ins[i]
        if (a.op == "COPY" and a.arg == 1 and i + 2 < len(ins)
                and ins[i + 1].op in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE")
                and ins[i + 2].op == "POP_TOP"):
            j = ins[i + 1]
            kind = "JUMP_IF_FALSE_OR_POP" if j.op == "POP_JUMP_IF_FALSE" else "JUMP_IF_TRUE_OR_POP"
            out.append(Instr(kind, None, a.offset, a.lineno, j.target))
            i += 3
            continue
        out.append(a)
        i += 1
    return out


_TRUTH_TESTS = ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE")


def _fold_to_bool(ins: List[Instr]) -> List[Instr]:
    """3.13: ``TO_BOOL`` before a truth test or ``not`` changes nothing; elsewhere it is ``bool()``."""
    out: List[Instr] = []
    for k, x in enumerate(ins):
        if x.op == "TO_BOOL" and k + 1 < len(ins) and (
                ins[k + 1].op in _TRUTH_TESTS or (ins[k + 1].op == "UNARY" and ins[k + 1].arg == "not")):
            continue
        out.append(x)
    return out


def _fold_end_for(ins: List[Instr]) -> List[Instr]:
    """3.12+: ``FOR_ITER`` jumps to ``END_FOR`` (3.13: ``END_FOR; POP_TOP``); aim past them instead."""
    by_offset = {x.offset: k for k, x in enumerate(ins)}
    drop = set()
    for x in ins:
        if x.op == "FOR_ITER" and x.target in by_offset:
            k = by_offset[x.target]
            if ins[k].op == "END_FOR":
                drop.add(k)
                nxt = k + 1
                if END_FOR_THEN_POP_TOP and nxt < len(ins) and ins[nxt].op == "POP_TOP":
                    drop.add(nxt)
                    nxt += 1
                x.target = ins[nxt].offset if nxt < len(ins) else None
    return [x for k, x in enumerate(ins) if k not in drop]


def _fold_generator_prologue(ins: List[Instr]) -> List[Instr]:
    """3.11+: ``RETURN_GENERATOR; POP_TOP`` only creates the generator object.  (3.15's
    generator expressions load their iterator ``.0`` before it.)"""
    first = 1 if len(ins) > 1 and ins[0].op == "LOAD_FAST" and ins[0].arg == ".0" else 0
    if len(ins) > first and ins[first].op == "RETURN_GENERATOR":
        skip = 2 if len(ins) > first + 1 and ins[first + 1].op == "POP_TOP" else 1
        return ins[:first] + ins[first + skip:]
    return ins


def prepared_raw(code: types.CodeType) -> List[dis.Instruction]:
    """The raw instructions the neutral ones are translated from (their ``offset``s)."""
    return list(_shared_result("prepared", code, _prepared_raw))


def _prepared_raw(code: types.CodeType) -> List[dis.Instruction]:
    facts = hidden_slot_facts(code)
    if facts is not None:
        return facts.raw
    raw = raw_instructions(code)
    if FINALLY_SUBROUTINES:  # BEGIN/CALL/POP/END_FINALLY subroutines -> 3.9's duplicated finally bodies
        from pellucid.bytecode.legacy_finally import rewrite
        raw = rewrite(raw)
    return raw


def hidden_slot_facts(code: types.CodeType) -> Optional[HS.Collapsed]:
    """3.14+: ``code``'s raw instructions with the slots the neutral model does not have taken
    out (:mod:`pellucid.bytecode.hidden_slots`), the stack depths and handler depths that go
    with them; None before 3.14.  Read once per code object within :func:`shared_results`."""
    if not HS.ACTIVE:
        return None
    return _shared_result("collapsed", code, _collapsed)[0]  # type: ignore[no-any-return]


def _collapsed(code: types.CodeType) -> List[HS.Collapsed]:
    from pellucid.bytecode.inlined_calls import fold_inlined_calls
    return [HS.collapse(code, fold_inlined_calls(code, raw_instructions(code)))]


#: (what, id(code)) -> (code, the result) while :func:`shared_results` is active
_shared: Optional[Dict[Tuple[str, int], Tuple[types.CodeType, List[Any]]]] = None


@contextlib.contextmanager
def shared_results() -> Iterator[None]:
    """Within the block, each code object is normalised once; later calls get a new list of
    the same :class:`Instr` objects (nothing outside this module changes an ``Instr``).

    prepare_debug decompiles Dynamo's code and then verifies the result against it, which
    normalises the same (long) code object twice.  The results are kept only for the block,
    so no code object (nor what its constants hold) is kept alive after it.

    >>> with shared_results():
    ...     a = normalize(shared_results.__code__); b = normalize(shared_results.__code__)
    >>> a == b, a is b, all(x is y for x, y in zip(a, b))
    (True, False, True)
    """
    global _shared
    outer = _shared
    if outer is None:
        _shared = {}
    try:
        yield
    finally:
        if outer is None:
            _shared = None


def normalize(code: types.CodeType) -> List[Instr]:
    """Return the neutral instruction list of ``code`` with jump targets as indices.

    >>> [i.op for i in normalize((lambda: None).__code__)]
    ['LOAD_CONST', 'RETURN_VALUE']
    """
    return list(_shared_result("neutral", code, _normalize))


def _shared_result(what: str, code: types.CodeType,
                   compute: Callable[[types.CodeType], List[Any]]) -> List[Any]:
    """``compute(code)``, remembered within :func:`shared_results` (callers copy the list)."""
    memo = _shared
    if memo is None:
        return compute(code)
    hit = memo.get((what, id(code)))
    if hit is None or hit[0] is not code:
        hit = (code, compute(code))
        memo[(what, id(code))] = hit  # (the entry holds ``code``: its id is not reused meanwhile)
    return hit[1]


def _normalize(code: types.CodeType) -> List[Instr]:
    raw = prepared_raw(code)
    pending_kw: List[tuple] = []
    ins: List[Instr] = []
    append, extend, consts, kept = ins.append, ins.extend, code.co_consts, _KEPT_AS_IS
    for r in raw:
        op = r.opname
        if op in kept:
            # (translate's first case inlined: most instructions are these)
            if INSTRUCTION_LINE_NUMBER:
                line = r.line_number  # type: ignore[attr-defined]
            else:
                line = r.starts_line if isinstance(r.starts_line, int) and r.starts_line is not True \
                    else None
            append(Instr(op, r.argval, r.offset, line))
        else:
            extend(translate(r, pending_kw, consts))
    if GENERATOR_PROLOGUE:
        ins = _fold_generator_prologue(ins)
    if DELEGATION_IS_SEND_LOOP:
        ins = _fold_send_loops(ins)
    if TO_BOOL_BEFORE_TESTS:
        ins = _fold_to_bool(ins)
    if CLOSURE_LOADS_ARE_FAST_LOADS:
        _closure_loads(code, ins)
    if FOR_EXITS_THROUGH_END_FOR:
        ins = _fold_end_for(ins)
    if BOOL_OPS_COPY_AND_TEST:
        ins = _fold_copy_jumps(ins)
    if INTRINSIC_CALLS:
        ins = _fold_intrinsic_results(ins)
    return _finalize(code, raw, ins)


def _fold_intrinsic_results(ins: List[Instr]) -> List[Instr]:
    """3.12+: ``from m import *`` (and the interactive echo) became ``CALL_INTRINSIC_1``, whose
    result (None) the next ``POP_TOP`` discards; the neutral ``IMPORT_STAR``/``PRINT_EXPR``
    leave nothing, as before 3.12, so that ``POP_TOP`` goes too."""
    drop = [k + 1 for k, x in enumerate(ins[:-1])
            if x.op in ("IMPORT_STAR", "PRINT_EXPR") and ins[k + 1].op == "POP_TOP"]
    if not drop:
        return ins
    gone = set(drop)
    return [x for k, x in enumerate(ins) if k not in gone]


def _closure_loads(code: types.CodeType, ins: List[Instr]) -> None:
    """3.13 assembles ``LOAD_CLOSURE`` as ``LOAD_FAST`` of the cell's slot, which pushes the cell
    itself (never unbound).  Where such loads build a new function's closure tuple they are
    ``LOAD_CLOSURE`` again, as up to 3.12.  (Not every ``LOAD_FAST`` of a cell variable's name:
    an inlined comprehension may make the slot a cell only inside itself.)"""
    if not (code.co_cellvars or code.co_freevars):
        return
    # A slot that holds its cell from the prologue on -- a free variable, or a cell variable the
    # code never stores to, deletes or saves (what an inlined comprehension does to a slot that is
    # a cell only inside it) -- pushes that cell at every LOAD_FAST: the compiler reads such a
    # variable with LOAD_DEREF, so its LOAD_FASTs are closure loads wherever they are.  Dynamo
    # (3.13+) builds closure tuples this way that it passes along as values, not to MAKE_FUNCTION.
    rebound = {x.arg for x in ins if x.op in ("STORE_FAST", "DELETE_FAST", "LOAD_FAST_AND_CLEAR")}
    always_cells = (set(code.co_cellvars) | set(code.co_freevars)) - rebound
    if always_cells:
        for x in ins:
            if x.op == "LOAD_FAST" and x.arg in always_cells:
                x.op = "LOAD_CLOSURE"
    for i, x in enumerate(ins):
        if x.op != "BUILD_TUPLE" or not x.arg or i + 3 >= len(ins) or i < x.arg:
            continue
        fn, make, attr = ins[i + 1], ins[i + 2], ins[i + 3]
        if fn.op != "LOAD_CONST" or not isinstance(fn.arg, types.CodeType) or make.op != "MAKE_FUNCTION" \
                or attr.op != "SET_FUNCTION_ATTRIBUTE" or attr.arg != 8:
            continue
        loads = ins[i - x.arg:i]
        if all(y.op == "LOAD_FAST" for y in loads) and tuple(y.arg for y in loads) == fn.arg.co_freevars:
            for y in loads:
                y.op = "LOAD_CLOSURE"


def _finalize(code: types.CodeType, raw: List[dis.Instruction], ins: List[Instr]) -> List[Instr]:
    facts = hidden_slot_facts(code)
    # (3.14+: jumps may go to an instruction that only moved a hidden slot, gone from ``raw``)
    raw_offsets = facts.offsets if facts is not None else [r.offset for r in raw]
    # Raw offset -> index of the first surviving neutral instruction at or after it.
    first_at: Dict[int, int] = {}
    k = len(ins)
    pos = len(ins)
    for off in reversed(raw_offsets):
        while pos > 0 and ins[pos - 1].offset >= off:
            pos -= 1
        first_at[off] = pos if pos < len(ins) else len(ins)
    del k
    end_index = len(ins)
    for idx, x in enumerate(ins):
        x.index = idx
        if x.target is not None:
            x.target = first_at.get(x.target, end_index)
    handlers = handlers_by_offset(code, raw, facts.handler_depths if facts is not None else None)
    if not handlers:
        return ins  # (no handler anywhere: nothing below applies; Dynamo's code has none)
    made: Dict[HandlerInfo, Optional[Handler]] = {}

    def handler(info: HandlerInfo) -> Optional[Handler]:
        # The enclosing handler is the one covering the raw instruction the handler starts at
        # (its offset), which may be an instruction the neutral list dropped.
        if info in made:
            return made[info]
        made[info] = None  # (a handler covering its own start would loop: treat as outermost)
        target_off, depth, lasti = info
        enclosing = handlers.get(target_off)
        outer = handler(enclosing) if enclosing is not None else None
        made[info] = Handler(first_at.get(target_off, end_index), depth, lasti, outer)
        return made[info]

    for x in ins:
        h = handlers.get(x.offset)
        if h is not None:
            x.handler = handler(h)
    # 3.12+ leaves jumps that cannot raise out of the exception table; giving them the handler
    # of the code they end keeps a condition and its jump in one block.
    for k in range(1, len(ins)):
        x = ins[k]
        if x.handler is None and x.op in _CANNOT_RAISE_JUMPS and ins[k - 1].handler is not None \
                and ins[k - 1].op not in _NO_FALLTHROUGH_OPS:
            x.handler = ins[k - 1].handler
    return ins


_CANNOT_RAISE_JUMPS = JUMPS
_NO_FALLTHROUGH_OPS = NO_FALLTHROUGH
