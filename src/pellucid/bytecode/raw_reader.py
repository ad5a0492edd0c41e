"""``dis.get_instructions(code)`` without ``CACHE`` entries, read in two plain loops (3.11, 3.13, 3.14).

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
records with ``dis``'s over whole libraries; 3.13 and 3.14 have a reader of their own
(:func:`_reader_313`); 3.12's ``dis`` differs enough to need another, and 3.15's is not yet
compared (tests/test_raw_reader.py does that where a reader exists).
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


# What the argument of an opcode means to 3.13+'s reader: the kinds it resolves itself; every
# other opcode with an argument is resolved by dis's own ``ArgResolver``.
_R_NONE, _R_OTHER, _R_CONST, _R_NAME, _R_GLOBAL, _R_ATTR, _R_LOCAL = range(7)


def _reader_313() -> Optional[Callable[..., List[Any]]]:
    """3.13+'s ``dis.get_instructions`` in one loop over ``co_code``.

    3.13's ``dis`` reads each instruction through a generator chain (``_unpack_opargs``, then
    ``next`` on ``co_positions()`` for the instruction and again for each of its caches), asks
    ``_get_cache_size`` and ``_deoptop`` (a dict lookup on the name) several times per unit, and
    finds the jump targets with ``findlabels``, which keeps them in a list (quadratic in the jumps
    of a long function).  This makes the same records: the commonest arguments (none, a
    constant, a name, a local) are resolved here with per-opcode tables made from ``dis``'s own
    lists; all others (jumps, comparisons, the paired locals, intrinsics...) by ``dis``'s own
    ``ArgResolver``, given the same label map.
    """
    needed = ("ArgResolver", "_deoptop", "_all_opname", "_get_cache_size", "_cache_format",
              "_get_jump_target", "_get_instructions_bytes", "Positions", "Instruction",
              "_INT_OVERFLOW", "findlinestarts", "hasarg", "hasjump", "hasexc")
    if sys.version_info[:2] not in ((3, 13), (3, 14)) or not all(hasattr(dis, n) for n in needed):
        return None
    D: Any = dis
    if len(D.Instruction._fields) != 12 or D.Instruction._fields[-2:] != ("positions", "cache_info"):
        return None
    # (3.14 moves along the caches for each entry of cache_info; 3.13 reads each from the first)
    advancing = "cache_offset" in D._get_instructions_bytes.__code__.co_varnames
    op_ = D.opmap
    deop = [D._deoptop(op) for op in range(256)]
    names = list(D._all_opname)
    caches = [D._get_cache_size(names[d]) for d in deop]
    has_arg = [d in D.hasarg for d in deop]
    extended = op_["EXTENDED_ARG"]
    pairs = {op_[n] for n in ("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW",
                              "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST") if n in op_}
    kind = [_R_NONE] * 256
    # per opcode: (name, size, offset of its bytes from the instruction's) of its caches
    cache_layout: List[Optional[List[Tuple[str, int, int]]]] = [None] * 256
    for op in range(256):
        d = deop[op]
        if caches[op]:
            layout = []
            at = 2
            for name, size in D._cache_format[D.opname[d]].items():
                layout.append((name, size, at))
                if advancing:
                    at += 2 * size
            cache_layout[op] = layout
        if not has_arg[op]:
            continue
        # (the order of ArgResolver.get_argval_argrepr's tests)
        if d in D.hasconst:
            kind[op] = _R_CONST
        elif d in D.hasname:
            kind[op] = (_R_GLOBAL if d == op_["LOAD_GLOBAL"] else _R_ATTR if d == op_["LOAD_ATTR"]
                        else _R_OTHER if d == op_["LOAD_SUPER_ATTR"] else _R_NAME)
        elif d in D.hasjump or d in D.hasexc or d in pairs:
            kind[op] = _R_OTHER
        elif d in D.haslocal or d in D.hasfree:
            kind[op] = _R_LOCAL
        else:
            kind[op] = _R_OTHER
    jump_target = D._get_jump_target
    overflow = D._INT_OVERFLOW
    findlinestarts = D.findlinestarts
    ArgResolver = D.ArgResolver
    new = tuple.__new__
    Instruction = D.Instruction
    Positions = D.Positions
    no_position = new(Positions, (None, None, None, None))
    may_jump = [deop[op] in D.hasjrel or deop[op] in D.hasjabs for op in range(256)]

    def read(co: types.CodeType, positions: Optional[List[Any]] = None) -> List[Any]:
        """``positions``: ``list(co.co_positions())`` if the caller has it."""
        code = co.co_code
        linestarts = dict(findlinestarts(co))
        if positions is None:
            positions = list(co.co_positions())  # type: ignore[attr-defined]
        varname = co._varname_from_oparg  # type: ignore[attr-defined]
        co_names = co.co_names
        co_consts = co.co_consts
        # (_unpack_opargs; the jump targets as findlabels finds them, in a set)
        units: List[Tuple[int, int, int, Optional[int]]] = []
        targets: Set[int] = set()
        extended_arg = 0
        extended_args = 0
        skip = 0
        for i in range(0, len(code), 2):
            if skip:
                skip -= 1
                continue
            op = code[i]
            skip = caches[op]
            arg: Optional[int]
            if has_arg[op]:
                arg = code[i + 1] | extended_arg
                extended_arg = (arg << 8) if deop[op] == extended else 0
                if extended_arg >= overflow:
                    extended_arg -= 2 * overflow
                if may_jump[op]:
                    targets.add(jump_target(op, arg, i))
            else:
                arg = None
                extended_arg = 0
            if deop[op] == extended:
                extended_args += 1
                units.append((i, i, op, arg))
            else:
                units.append((i, i - extended_args * 2, op, arg))
                extended_args = 0
        labels_map = {offset: n + 1 for n, offset in enumerate(sorted(targets))}
        resolver = ArgResolver(co_consts=co_consts, names=co_names, varname_from_oparg=varname,
                               labels_map=labels_map)
        out = []
        append = out.append
        n_positions = len(positions)
        line_number = None
        for offset, start_offset, op, arg in units:
            starts_line = offset in linestarts
            if starts_line:
                line_number = linestarts[offset]
            argval: Any = None
            argrepr = ''
            if arg is not None:
                k = kind[op]
                if k == _R_LOCAL:
                    argval = argrepr = varname(arg)
                elif k == _R_CONST:
                    argval = co_consts[arg]
                    argrepr = repr(argval)
                elif k == _R_NAME:
                    argval = argrepr = co_names[arg]
                elif k == _R_GLOBAL:
                    argval = argrepr = co_names[arg // 2]
                    if (arg & 1) and argrepr:
                        argrepr = argrepr + " + NULL"
                elif k == _R_ATTR:
                    argval = argrepr = co_names[arg // 2]
                    if (arg & 1) and argrepr:
                        argrepr = argrepr + " + NULL|self"
                else:
                    argval, argrepr = resolver.get_argval_argrepr(op, arg, offset)
            at = offset >> 1
            if at < n_positions:
                p = positions[at]
                position = new(Positions, p) if len(p) == 4 else Positions(*p)
            else:
                position = no_position
            layout = cache_layout[op]
            cache_info = None if layout is None else [
                (name, size, code[offset + rel: offset + rel + 2 * size]) for name, size, rel in layout]
            append(new(Instruction, (names[op], op, arg, argval, argrepr, offset, start_offset,
                                     starts_line, line_number, labels_map.get(offset), position,
                                     cache_info)))
        return out

    return read


if READER is None:
    READER = _reader_313()
