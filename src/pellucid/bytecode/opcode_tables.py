"""Per-version opcode facts as plain tables: operator symbols, renames, intrinsics.

Adding a Python version (3.14: ``LOAD_SMALL_INT``, ``LOAD_FAST_BORROW``, ``NOT_TAKEN``, ``POP_ITER``...)
should mostly mean: rows here for raw opcodes that map onto neutral ones; a named fact in
:mod:`pellucid.bytecode.features` (with its releases in ``tests/test_features.py``) for each
thing that differs, asked by ``normalize``'s passes; and, only for a truly new neutral opcode, a
row in :data:`pellucid.bytecode.neutral_ops.NEUTRAL_OPS`, which ``tests/test_neutral_ops.py``
then makes every consumer handle or refuse.
"""
from pellucid.bytecode.neutral_ops import TERMINAL

# ≤3.10 spelled each binary operator as its own opcode; 3.11+ uses BINARY_OP with an argrepr.
BINARY_OPCODES = {
    "BINARY_ADD": "+", "BINARY_SUBTRACT": "-", "BINARY_MULTIPLY": "*", "BINARY_MATRIX_MULTIPLY": "@",
    "BINARY_TRUE_DIVIDE": "/", "BINARY_FLOOR_DIVIDE": "//", "BINARY_MODULO": "%", "BINARY_POWER": "**",
    "BINARY_LSHIFT": "<<", "BINARY_RSHIFT": ">>", "BINARY_AND": "&", "BINARY_OR": "|", "BINARY_XOR": "^",
}
INPLACE_OPCODES = {
    "INPLACE_ADD": "+", "INPLACE_SUBTRACT": "-", "INPLACE_MULTIPLY": "*", "INPLACE_MATRIX_MULTIPLY": "@",
    "INPLACE_TRUE_DIVIDE": "/", "INPLACE_FLOOR_DIVIDE": "//", "INPLACE_MODULO": "%", "INPLACE_POWER": "**",
    "INPLACE_LSHIFT": "<<", "INPLACE_RSHIFT": ">>", "INPLACE_AND": "&", "INPLACE_OR": "|", "INPLACE_XOR": "^",
}
UNARY_OPCODES = {
    "UNARY_POSITIVE": "+", "UNARY_NEGATIVE": "-", "UNARY_NOT": "not", "UNARY_INVERT": "~",
}

# 3.12's CALL_INTRINSIC_1 operand names (from dis's argrepr) -> neutral opcode, or None to drop.
INTRINSIC_1 = {
    "INTRINSIC_PRINT": "PRINT_EXPR",
    "INTRINSIC_IMPORT_STAR": "IMPORT_STAR",
    "INTRINSIC_STOPITERATION_ERROR": "STOPITERATION_ERROR",
    "INTRINSIC_ASYNC_GEN_WRAP": None,
    "INTRINSIC_UNARY_POSITIVE": "UNARY",
    "INTRINSIC_LIST_TO_TUPLE": "LIST_TO_TUPLE",
    "INTRINSIC_TYPEALIAS": "TYPE_ALIAS",
    # PEP 695 type parameters (pellucid.decompiler.type_params)
    "INTRINSIC_TYPEVAR": "TYPEVAR",
    "INTRINSIC_PARAMSPEC": "PARAMSPEC",
    "INTRINSIC_TYPEVARTUPLE": "TYPEVARTUPLE",
    "INTRINSIC_SUBSCRIPT_GENERIC": "SUBSCRIPT_GENERIC",
}

# 3.12's CALL_INTRINSIC_2 operand names -> neutral opcode (the PEP 695 ones; the others, such
# as except*'s INTRINSIC_PREP_RERAISE_STAR, stay UNSUPPORTED "CALL_INTRINSIC_2").
INTRINSIC_2 = {
    "INTRINSIC_TYPEVAR_WITH_BOUND": "TYPEVAR_WITH_BOUND",
    "INTRINSIC_TYPEVAR_WITH_CONSTRAINTS": "TYPEVAR_WITH_CONSTRAINTS",
    "INTRINSIC_SET_FUNCTION_TYPE_PARAMS": "SET_FUNCTION_TYPE_PARAMS",
    "INTRINSIC_SET_TYPEPARAM_DEFAULT": "SET_TYPEPARAM_DEFAULT",
    "INTRINSIC_PREP_RERAISE_STAR": "PREP_RERAISE_STAR",  # 3.12+ (3.11: an opcode of its own)
}

# FORMAT_VALUE's low bits (≤3.12) and CONVERT_VALUE's argument (3.13) name a conversion.
CONVERSIONS = {0: -1, 1: ord("s"), 2: ord("r"), 3: ord("a")}

# Opcodes that only exist for the interpreter's bookkeeping and have no effect on the stack
# or on what the program computes.
NO_OPS = frozenset({
    "NOP", "EXTENDED_ARG", "CACHE", "RESUME", "PRECALL", "COPY_FREE_VARS", "MAKE_CELL",
    "NOT_TAKEN", "INTERPRETER_EXIT", "TRACE_RECORD",
    "SETUP_FINALLY", "SETUP_ASYNC_WITH", "POP_BLOCK", "SETUP_CLEANUP",
})

# Jumps: every raw spelling -> the neutral one.
JUMP_RENAMES = {
    "JUMP_FORWARD": "JUMP", "JUMP_ABSOLUTE": "JUMP", "JUMP_BACKWARD": "JUMP",
    "JUMP_BACKWARD_NO_INTERRUPT": "JUMP", "JUMP_NO_INTERRUPT": "JUMP", "JUMP": "JUMP",
    "POP_JUMP_IF_FALSE": "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE", "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_IF_NONE": "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE", "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "JUMP_IF_FALSE_OR_POP": "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP": "JUMP_IF_TRUE_OR_POP",
}

# Raw opcodes that keep their name and whose argval is already the neutral argument.
SAME = frozenset({
    "LOAD_CONST", "LOAD_FAST", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_CLOSURE",
    "STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF", "STORE_ATTR",
    "DELETE_FAST", "DELETE_NAME", "DELETE_GLOBAL", "DELETE_DEREF", "DELETE_ATTR",
    "POP_TOP", "RETURN_VALUE", "BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_MAP",
    "BUILD_CONST_KEY_MAP", "BUILD_STRING", "BUILD_SLICE", "LIST_APPEND", "SET_ADD", "MAP_ADD",
    "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "LIST_TO_TUPLE",
    "UNPACK_SEQUENCE", "STORE_SUBSCR", "DELETE_SUBSCR", "GET_ITER", "GET_YIELD_FROM_ITER",
    "YIELD_VALUE", "YIELD_FROM", "GET_AWAITABLE", "GET_AITER", "GET_ANEXT", "END_ASYNC_FOR",
    "BEFORE_ASYNC_WITH", "BEFORE_WITH", "WITH_EXCEPT_START", "PUSH_EXC_INFO", "POP_EXCEPT",
    "CHECK_EXC_MATCH", "CHECK_EG_MATCH", "PREP_RERAISE_STAR", "RAISE_VARARGS", "RERAISE",
    "IMPORT_NAME", "IMPORT_FROM", "IMPORT_STAR", "LOAD_BUILD_CLASS", "LOAD_ASSERTION_ERROR",
    "SETUP_ANNOTATIONS", "PRINT_EXPR", "LOAD_LOCALS", "LOAD_FROM_DICT_OR_DEREF",
    "LOAD_FROM_DICT_OR_GLOBALS", "GET_LEN", "MATCH_MAPPING", "MATCH_SEQUENCE", "MATCH_KEYS",
    "MATCH_CLASS", "COPY_DICT_WITHOUT_KEYS", "PUSH_NULL", "COPY", "SWAP", "BUILD_TUPLE_UNPACK",
    "BUILD_LIST_UNPACK", "BUILD_SET_UNPACK", "BUILD_MAP_UNPACK", "BUILD_MAP_UNPACK_WITH_CALL",
    "BUILD_TUPLE_UNPACK_WITH_CALL", "WITH_CLEANUP_START", "WITH_CLEANUP_FINISH", "END_FINALLY",
    "BEGIN_FINALLY", "CALL_FINALLY", "POP_FINALLY", "LOAD_FAST_AND_CLEAR", "END_SEND",
    "CLEANUP_THROW", "ASYNC_GEN_WRAP", "SET_FUNCTION_ATTRIBUTE", "RETURN_GENERATOR", "GEN_START",
    "SEND", "END_FOR",
})

# Raw opcodes after which control never reaches the next instruction: those that become a neutral
# unconditional jump, return or raise.
RAW_NO_FALLTHROUGH = frozenset(
    [raw for raw, neutral in JUMP_RENAMES.items() if neutral == "JUMP"] + ["RETURN_CONST"]) | TERMINAL

# 3.14+: spellings that only say how the interpreter manages a reference or which stack slot an
# operand is read from; the neutral opcode does the same.  (``POP_ITER`` pops one iterator on
# 3.14; 3.15's two-slot iterators are made one slot by :mod:`pellucid.bytecode.hidden_slots`.)
ALIASES = {
    "LOAD_FAST_BORROW": "LOAD_FAST",
    "LOAD_FAST_CHECK": "LOAD_FAST",
    "POP_ITER": "POP_TOP",
}

# Superinstructions: two neutral instructions, each taking one of the pair ``argval``.
PAIRS = {
    "LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
    "LOAD_FAST_BORROW_LOAD_FAST_BORROW": ("LOAD_FAST", "LOAD_FAST"),
    "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST"),
    "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST"),
}

# 3.14+ ``LOAD_COMMON_CONSTANT`` operands (by the name ``dis`` shows) that are plain constants:
# the neutral ``LOAD_CONST`` of the value.  The other operands (``tuple``, ``all``, ``any``,
# ``list``, ``set``) only appear in inlined builtin calls, which
# :mod:`pellucid.bytecode.inlined_calls` folds back into calls.
COMMON_CONSTANT_VALUES = frozenset({"None", "''", "True", "False", "-1"})
COMMON_CONSTANT_OPS = {"AssertionError": "LOAD_ASSERTION_ERROR"}
# ... and builtins that compiler-made code loads: the neutral ``LOAD_BUILTIN`` of the name
# (``raise NotImplementedError`` in a PEP 649 ``__annotate__`` function).
COMMON_BUILTINS = frozenset({"NotImplementedError"})

# BINARY_OP argreprs that are not operators (3.14 folded BINARY_SUBSCR into BINARY_OP).
BINARY_OP_OPS = {"[]": "SUBSCR"}
