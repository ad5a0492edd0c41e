"""The neutral opcode table (``pellucid.bytecode.neutral_ops``) against what uses it.

* it names every opcode ``normalize`` can produce;
* every consumer -- the structured decompiler, the fallback, ``match`` decoding, the verifier --
  either handles each opcode of the table or refuses it by name, never both, and refuses every
  opcode without a fixed stack effect: a new opcode fails here until each of them decides;
* the verifier keeps its own model of what each opcode does (so it cannot share the
  decompiler's mistakes), but pops and pushes what the table says: each modelled opcode is run
  on a stack of unknown values over a marker and the stack is compared afterwards, on every way
  the instruction can go on (falling through, jumping, each answer to a question it asks).
"""
import dis
import re
import types

import pytest

from op_comparisons import ops_compared
from pellucid.bytecode import features, neutral_ops, normalize, opcode_tables
from pellucid.bytecode.instruction import Instr
from pellucid.bytecode.neutral_ops import FIXED, NEUTRAL_OPS, stack_effect
from pellucid.bytecode.normalize import CallSpec
from pellucid.decompiler import fallback, match, stack_machine
from pellucid.decompiler.body import BodyDecompiler
from pellucid.decompiler.errors import StructureError
from pellucid.decompiler.fallback import Fallback, FallbackError
from pellucid.decompiler.type_params import GenericParameters
from pellucid.verify import machine
from pellucid.verify.terms import NULL, const_term

OPS = frozenset(NEUTRAL_OPS)


# ---- the table names the vocabulary ---------------------------------------------------------

def test_table_names_every_op_normalize_writes():
    source = open(normalize.__file__, encoding="utf-8").read()
    written = set(re.findall(r'(?:one|Instr)\(\s*"([A-Z_0-9]+)"', source))
    written |= {"JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP", "LOAD_CLOSURE"}  # (passes)
    written |= set(opcode_tables.JUMP_RENAMES.values())
    written |= {v for v in opcode_tables.INTRINSIC_1.values() if v is not None and v != "UNARY"}
    written |= set(opcode_tables.INTRINSIC_2.values())
    written |= opcode_tables.SAME - {"GEN_START"}  # (dropped by translate)
    assert written - OPS == set()
    # and nothing else (NOP: the verifier and the fallback accept it in hand-made lists)
    assert OPS - written == {"NOP"}


def _codes(code):
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _codes(c)


def test_normalize_writes_only_table_ops():
    import json.decoder, textwrap, inspect as inspect_module, dataclasses  # noqa: E401
    seen = set()
    for module in (json.decoder, textwrap, inspect_module, dataclasses, dis):
        code = compile(open(module.__file__, encoding="utf-8").read(), module.__file__, "exec")
        for c in _codes(code):
            for ins in normalize.normalize(c):
                seen.add(ins.op)
                if ins.op in neutral_ops.HAS_TARGET:
                    assert ins.target is not None, ins
                elif ins.target is not None:
                    raise AssertionError("%r has a target but the table says it jumps nowhere" % ins)
    assert seen <= OPS
    assert len(seen) > 50


def test_derived_sets():
    assert neutral_ops.TERMINAL == {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE"}
    assert neutral_ops.NO_FALLTHROUGH == neutral_ops.TERMINAL | {"JUMP"}
    assert neutral_ops.POP_JUMPS == {"POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE",
                                     "POP_JUMP_IF_NOT_NONE"}
    assert neutral_ops.VALUE_JUMPS == {"JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"}
    for raw in ("RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD",
                "JUMP_ABSOLUTE", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"):
        assert raw in opcode_tables.RAW_NO_FALLTHROUGH
    for raw in ("POP_JUMP_IF_FALSE", "FOR_ITER", "SEND", "YIELD_VALUE"):
        assert raw not in opcode_tables.RAW_NO_FALLTHROUGH


def test_fixed_effects_are_counts():
    for op in FIXED:
        arg = SAMPLE_ARGS.get(op, [None])[0]
        for jump in (False, True):
            pops, pushes = stack_effect(op, arg, jump)
            assert pops >= 0 and pushes >= 0, op
    for op in OPS - FIXED:
        with pytest.raises(ValueError):
            stack_effect(op, None)


# ---- every consumer handles or refuses each op ----------------------------------------------

def _methods(*classes):
    return {name[3:] for cls in classes for name in dir(cls) if name.startswith("op_")}


def _check_partition(handled, refused, what):
    handled, refused = set(handled) & OPS, set(refused)
    assert refused <= OPS, "%s refuses ops that are not in the table: %s" % (what, refused - OPS)
    assert handled & refused == set(), "%s both handles and refuses %s" % (what, handled & refused)
    missing = OPS - handled - refused
    assert missing == set(), "%s neither handles nor refuses %s" % (what, sorted(missing))
    unfixed = (OPS - FIXED) - refused - {"UNSUPPORTED"}
    assert unfixed == set(), "%s handles ops without a fixed effect: %s" % (what, sorted(unfixed))


def test_structured_decompiler_handles_or_refuses_each_op():
    handled = _methods(BodyDecompiler, GenericParameters)
    _check_partition(handled, stack_machine.NOT_STEPPED, "the structured decompiler")
    # what it reads off a block's end is what the structurer tests for
    for op in neutral_ops.CONDITIONAL_JUMPS | {"JUMP"}:
        assert stack_machine.NOT_STEPPED[op].startswith("structure")
    with pytest.raises(StructureError):
        BodyDecompiler.op_UNSUPPORTED(None, "X", [], [], Instr("UNSUPPORTED", "X"))


def test_stepping_a_refused_op_is_a_structure_error():
    body = BodyDecompiler((lambda: None).__code__)
    for op in stack_machine.NOT_STEPPED:
        with pytest.raises(StructureError):
            body.step(Instr(op, None, offset=0), [], [])


def test_fallback_handles_or_refuses_each_op():
    _check_partition(_methods(Fallback), fallback.REFUSED, "the fallback")
    with pytest.raises(FallbackError):
        Fallback.op_UNSUPPORTED(None, Instr("UNSUPPORTED", "X"), "X")


def test_match_decodes_only_table_ops():
    # _decode fails the pattern at any op not in _DECODED_OPS (test_match_starts checks that
    # list against its source): each op is decoded or refused.
    assert set(match._DECODED_OPS) <= FIXED
    assert set(match._MATCH_OPS) <= FIXED


def test_verifier_models_or_refuses_each_op():
    handled = set(machine._STEP_OPS) | set(machine._LIST_STEP_OPS) | set(machine._SIMPLE_EFFECTS) \
        | ops_compared(machine._effect_op, machine, None)
    _check_partition(handled, machine.UNMODELLED, "the verifier")


# ---- the verifier's model pops and pushes what the table says --------------------------------

# Neutral arguments to try each op with (a list: several where the effect depends on them).
SAMPLE_ARGS = {
    "LOAD_CONST": [7], "LOAD_FAST": ["x"], "LOAD_FAST_AND_CLEAR": ["x"], "LOAD_NAME": ["x"],
    "LOAD_GLOBAL": ["g"], "LOAD_DEREF": ["c"], "LOAD_CLASSDEREF": ["c"], "LOAD_CLOSURE": ["c"],
    "LOAD_FROM_DICT_OR_DEREF": ["c"], "LOAD_FROM_DICT_OR_GLOBALS": ["g"], "LOAD_ATTR": ["a"],
    "LOAD_SUPER_ATTR": [("a", True)], "STORE_FAST": ["x"], "STORE_DEREF": ["c"],
    "STORE_NAME": ["x"], "STORE_GLOBAL": ["g"], "STORE_ATTR": ["a"], "DELETE_FAST": ["x"],
    "DELETE_NAME": ["x"], "DELETE_GLOBAL": ["g"], "DELETE_DEREF": ["c"], "DELETE_ATTR": ["a"],
    "COPY": [1, 3], "SWAP": [2, 3], "ROT": [3, 4], "BINARY": ["+"], "INPLACE": ["+"],
    "UNARY": ["-", "not"], "COMPARE": ["<", "is"], "FORMAT": [(-1, False), (ord("r"), True)],
    "CONVERT": [ord("r")], "BUILD_SLICE": [2, 3], "BUILD_TUPLE": [0, 3], "BUILD_LIST": [0, 3],
    "BUILD_SET": [2], "BUILD_MAP": [2], "BUILD_CONST_KEY_MAP": [2], "BUILD_STRING": [3],
    "BUILD_TUPLE_UNPACK": [2], "BUILD_LIST_UNPACK": [2], "BUILD_SET_UNPACK": [2],
    "BUILD_MAP_UNPACK": [2], "BUILD_TUPLE_UNPACK_WITH_CALL": [2], "BUILD_MAP_UNPACK_WITH_CALL": [2],
    "LIST_APPEND": [1, 2], "SET_ADD": [2], "MAP_ADD": [2], "LIST_EXTEND": [1], "SET_UPDATE": [1],
    "DICT_UPDATE": [1], "DICT_MERGE": [2], "UNPACK_SEQUENCE": [3], "UNPACK_EX": [(1, 2)],
    "CALL": [CallSpec(2, (), True), CallSpec(1, ("k",), False), CallSpec(2, None, True)],
    "CALL_EX": [(True, True), (False, False)], "MAKE_FUNCTION": [0, 9],
    "SET_FUNCTION_ATTRIBUTE": [1], "GET_AWAITABLE": [0], "RAISE_VARARGS": [1, 2],
    "RERAISE": [0], "IMPORT_NAME": ["os"], "IMPORT_FROM": ["path"], "MATCH_CLASS": [1],
    "LAZY_IMPORT_NAME": ["os"], "LOAD_BUILTIN": ["NotImplementedError"],
    "BUILD_INTERPOLATION": [(-1, False), (ord("r"), True)],
}
_TARGET = 5  # a jump's target in the one-instruction programs below


def _values(n):
    return [("arg", "v%d" % k) for k in range(n)]


def _stack_for(op, arg, pops):
    """Values for ``op`` to work on: unknown ones, except where the checker needs to know more
    (that is part of its model, as the decompiler's is of the decompiler)."""
    values = _values(pops)
    if op in ("CALL", "CALL_EX") and arg[-1]:
        values[0] = NULL  # the callable's NULL slot (a NULL slot may not hold a value here)
    if op == "CALL" and arg[1] is None:
        values[-1] = const_term(("k",))  # CALL_FUNCTION_KW / CALL_KW: the names on the stack
    if op == "BUILD_CONST_KEY_MAP":
        values[-1] = const_term(tuple("k%d" % k for k in range(arg)))
    if op in ("END_ASYNC_FOR", "CLEANUP_THROW"):
        values = [("e", "exc%d" % k) for k in range(pops)]  # (an exception, never a NULL)
    return values


def _fresh_side():
    def f(x):
        def g():
            return x
        return g
    return machine.Side(f.__code__, {})  # (its instructions are replaced: only its frame counts)


def _outcomes(op, arg, pops):
    """Every way one ``op`` instruction goes on from a stack of ``pops`` values over a marker:
    ``(answers given, values left above the marker, pc after)`` for each."""
    marker = ("arg", "below")
    results = []
    work = [({}, False, ())]
    while work:
        facts, exhausted, how = work.pop()
        assert len(how) < 8, (op, how)
        side = _fresh_side()
        ins = Instr(op, arg, offset=0)
        ins.index = 0
        ins.target = _TARGET if op in neutral_ops.HAS_TARGET else None
        side.instrs = [ins]
        st = side.initial()
        st.vars.update({"x": ("arg", "xv"), "c": ("arg", "cv")})
        st.stack = [marker] + _stack_for(op, arg, pops)
        if op == "SET_FUNCTION_ATTRIBUTE":
            # (only a function built here, whose attributes it knows, is modelled: an unknown
            # callable's attributes are not pellucid's to set)
            fn = machine._fresh_function(st)
            st.heap[fn] = machine._func_contents(("arg", "code"), {})
            st.stack[-1] = fn
        if not features.EXCEPTION_IS_ONE_VALUE and op in ("POP_EXCEPT", "END_ASYNC_FOR"):
            # inside an ``except`` block: the six exception values end the stack
            st.ehstack.append((len(st.stack) - 6, machine.EXCINFO_ARG))
        for _ in range(8):
            ev = machine._step(side, st, ins, facts, 0)
            if ev is None:
                break
            if ev.kind == "decide":
                for answer in (True, False):
                    work.append((_with(facts, ev.key[1], answer), exhausted, how + (answer,)))
                st = None
                break
            if ev.kind in ("return", "unwind") or ev.ok is None:  # (it can only raise)
                st = None
                break
            assert ev.kind == "effect", ev.kind
            if ev.exhausted is not None:
                if exhausted:
                    ev.exhausted(st, ())
                    break
                work.append((facts, True, how + ("exhausted",)))
            pc = st.pc
            # (what the lockstep gives: a bool for a truth test, else results)
            ev.ok(st, (("b", 0),) if ev.bool_result else tuple(("r", 0, k) for k in range(ev.nres)))
            if st.pc != pc:
                break
        else:
            raise AssertionError("%s %r does not finish" % (op, arg))
        if st is not None and st.unwinding is None:
            assert st.stack[:1] == [marker], "%s %r reached below its operands" % (op, arg)
            results.append((how, len(st.stack) - 1, st.pc))
    return results


def _with(facts, key, answer):
    out = dict(facts)
    out[key] = answer
    return out


def _cases():
    for op in sorted(FIXED - machine.UNMODELLED - neutral_ops.TERMINAL):
        for arg in SAMPLE_ARGS.get(op, [None]):
            yield op, arg


@pytest.mark.parametrize("op,arg", list(_cases()))
def test_verifier_stack_effect_matches_table(op, arg):
    pops, pushes = stack_effect(op, arg)
    jump_pops, jump_pushes = stack_effect(op, arg, jump=True)
    info = NEUTRAL_OPS[op]
    outcomes = _outcomes(op, arg, pops)
    assert outcomes, "%s %r: the checker never goes on" % (op, arg)
    for how, depth, pc in outcomes:
        if pc == _TARGET:
            assert info.flow in (neutral_ops.JUMP, neutral_ops.BRANCH), (op, how)
            expected = pops - jump_pops + jump_pushes
        else:
            assert pc == 1 and info.flow in (neutral_ops.NEXT, neutral_ops.BRANCH), (op, how, pc)
            expected = pushes
        assert depth == expected, "%s %r (%s): %d values left, the table says %d" % (
            op, arg, how, depth, expected)


@pytest.mark.parametrize("op", sorted(neutral_ops.TERMINAL))
def test_verifier_terminal_ops_end_the_flow(op):
    pops, _ = stack_effect(op, SAMPLE_ARGS.get(op, [None])[0])
    for how, depth, pc in _outcomes(op, SAMPLE_ARGS.get(op, [None])[0], pops):
        raise AssertionError("%s went on to %d (%s)" % (op, pc, how))
