"""``dis.get_instructions(code)`` without ``CACHE`` entries, read in two plain loops (3.11).

:func:`pellucid.bytecode.normalize.raw_instructions` reads every code object the decompiler and
the verifier look at; on a Dynamo function of ~600 instructions ``dis`` spends about a
millisecond, mostly in generator hops, list membership tests (``op in hasconst``...) per
instruction and ``Instruction.__new__``.  :data:`READER` makes the very same records (equal
``dis.Instruction`` tuples, field by field, of the same classes) with per-opcode tables
computed from ``dis``'s own lists at import.  It follows 3.11's ``dis._get_instructions_bytes``
step by step (``get_instructions`` with its defaults: no ``first_line``, no caches shown, not
adaptive): one loop unpacks the code units and finds the jump targets (``findlabels``), the
other makes the records.  Where the running Python is not 3.11, or ``dis`` is not shaped as
expected, :data:`READER` is ``None`` and ``dis`` is used.  It was checked by comparing its
records with ``dis``'s over whole libraries; other versions' ``dis`` differ enough (3.12's
arguments, 3.13's records) to need readers of their own.
"""
import dis
import sys
import types
from typing import Any, Callable, List, Optional, Set, Tuple

# What the argument of an opcode means (3.11's dis, in the order it tests them).
_NONE, _CONST, _CONST_UNKNOWN, _GLOBAL, _NAME, _JABS, _JREL, _JREL_BACK, _VARNAME, _COMPARE, \
    _FORMAT, _MAKE_FUNCTION, _BINARY_OP = range(13)


def _reader_311() -> Optional[Callable[..., List[Any]]]:
    needed = ("_deoptop", "_inline_cache_entries", "_all_opname", "_unpack_opargs", "findlabels",
              "_get_instructions_bytes", "_nb_ops", "FORMAT_VALUE_CONVERTERS", "MAKE_FUNCTION_FLAGS",
              "Positions", "Instruction", "UNKNOWN", "_INT_OVERFLOW", "cmp_op")
    if sys.version_info[:2] != (3, 11) or not all(hasattr(dis, n) for n in needed):
        return None
    D: Any = dis
    op_ = D.opmap
    deop = [D._deoptop(op) for op in range(256)]
    caches = [D._inline_cache_entries[d] for d in deop]
    names = list(D._all_opname)
    kind = [_NONE] * 256
    for op in range(256):
        d = deop[op]
        if d < D.HAVE_ARGUMENT:
            continue
        if d in D.hasconst:
            kind[op] = _CONST if d == op_["LOAD_CONST"] else _CONST_UNKNOWN
        elif d in D.hasname:
            kind[op] = _GLOBAL if d == op_["LOAD_GLOBAL"] else _NAME
        elif d in D.hasjabs:
            kind[op] = _JABS
        elif d in D.hasjrel:
            kind[op] = _JREL_BACK if D._is_backward_jump(d) else _JREL
        elif d in D.haslocal or d in D.hasfree:
            kind[op] = _VARNAME
        elif d in D.hascompare:
            kind[op] = _COMPARE
        elif d == op_["FORMAT_VALUE"]:
            kind[op] = _FORMAT
        elif d == op_["MAKE_FUNCTION"]:
            kind[op] = _MAKE_FUNCTION
        elif d == op_["BINARY_OP"]:
            kind[op] = _BINARY_OP
    # findlabels tests the opcode itself, not its deoptimised form
    label_kind = [_NONE] * 256
    for op in range(256):
        if op in D.hasjrel:
            label_kind[op] = _JREL_BACK if D._is_backward_jump(op) else _JREL
        elif op in D.hasjabs:
            label_kind[op] = _JABS
    have_argument = D.HAVE_ARGUMENT
    extended = op_["EXTENDED_ARG"]
    cache = op_["CACHE"]
    overflow = D._INT_OVERFLOW
    unknown = D.UNKNOWN
    cmp_op = D.cmp_op
    converters = D.FORMAT_VALUE_CONVERTERS
    make_flags = D.MAKE_FUNCTION_FLAGS
    nb_ops = D._nb_ops
    findlinestarts = D.findlinestarts
    new = tuple.__new__
    Instruction = D.Instruction
    Positions = D.Positions
    no_position = Positions()

    def read(co: types.CodeType, positions: Optional[List[Any]] = None) -> List[Any]:
        """``positions``: ``list(co.co_positions())`` if the caller has it (the decompiler
        reads it too, see :func:`pellucid.bytecode.normalize.unit_positions`)."""
        code = co.co_code
        linestarts = dict(findlinestarts(co))
        if positions is None:
            positions = list(co.co_positions())  # (made Positions only for the instructions kept)
        varname = co._varname_from_oparg  # type: ignore[attr-defined]
        co_names = co.co_names
        co_consts = co.co_consts
        # (_unpack_opargs, once for the labels and the instructions)
        units: List[Tuple[int, int, Optional[int]]] = []
        labels: Set[int] = set()
        extended_arg = 0
        skip = 0
        for i in range(0, len(code), 2):
            if skip:
                skip -= 1
                continue
            op = code[i]
            d = deop[op]
            skip = caches[op]
            if d >= have_argument:
                arg: Optional[int] = code[i + 1] | extended_arg
                extended_arg = (arg << 8) if d == extended else 0  # type: ignore[operator]
                if extended_arg >= overflow:
                    extended_arg -= 2 * overflow
                # (findlabels, in the same pass)
                k = label_kind[op]
                if k == _JREL:
                    labels.add(i + 2 + arg * 2)  # type: ignore[operator]
                elif k == _JREL_BACK:
                    labels.add(i + 2 - arg * 2)  # type: ignore[operator]
                elif k == _JABS:
                    labels.add(arg * 2)  # type: ignore[operator]
            else:
                arg = None
                extended_arg = 0
            units.append((i, op, arg))
        out = []
        append = out.append
        n_positions = len(positions)
        for offset, op, arg in units:
            if op == cache:
                continue  # (raw_instructions leaves out what dis calls CACHE, even unskipped)
            argval: Any = None
            argrepr = ''
            if arg is not None:
                argval = arg
                k = kind[op]
                if k == _NONE:
                    pass
                elif k == _CONST:
                    argval = co_consts[arg]
                    argrepr = repr(argval)
                elif k == _VARNAME:
                    argval = argrepr = varname(arg)
                elif k == _NAME:
                    argval = argrepr = co_names[arg]
                elif k == _GLOBAL:
                    argval = argrepr = co_names[arg // 2]
                    if (arg & 1) and argrepr:
                        argrepr = "NULL + " + argrepr
                elif k == _JREL:
                    argval = offset + 2 + arg * 2
                    argrepr = "to " + repr(argval)
                elif k == _JREL_BACK:
                    argval = offset + 2 - arg * 2
                    argrepr = "to " + repr(argval)
                elif k == _JABS:
                    argval = arg * 2
                    argrepr = "to " + repr(argval)
                elif k == _CONST_UNKNOWN:
                    argval = unknown
                elif k == _COMPARE:
                    argval = argrepr = cmp_op[arg]
                elif k == _FORMAT:
                    argval, argrepr = converters[arg & 0x3]
                    argval = (argval, bool(arg & 0x4))
                    if argval[1]:
                        if argrepr:
                            argrepr += ', '
                        argrepr += 'with format'
                elif k == _MAKE_FUNCTION:
                    argrepr = ', '.join(s for i, s in enumerate(make_flags) if arg & (1 << i))
                elif k == _BINARY_OP:
                    _, argrepr = nb_ops[arg]
            at = offset >> 1
            if at < n_positions:
                p = positions[at]
                position = new(Positions, p) if len(p) == 4 else Positions(*p)
            else:
                position = no_position
            append(new(Instruction, (names[op], op, arg, argval, argrepr, offset,
                                     linestarts.get(offset), offset in labels, position)))
        return out

    return read


#: ``code`` (and, optionally, the list of its ``co_positions()``) -> its instructions as
#: ``dis.get_instructions`` gives them, less ``CACHE``; or None
READER = _reader_311()
