"""Symbolic execution of straight-line neutral instructions: the stack holds expressions.

Each instruction pops expressions and pushes a bigger one, or emits a statement.  Values that are
not Python expressions (an iterator held by a loop, a ``with``'s ``__exit__``, a NULL slot...) are
:mod:`pellucid.decompiler.markers`; statements that the structurer must finish (an ``except``
clause's ``as`` binding, a loop target) are emitted as assignments from those markers.
"""
import ast
import copy
import re
import types
from typing import Any, Callable, Dict, List, Optional

from pellucid.bytecode.features import (ASSERT_LOADS_GLOBAL_ASSERTION_ERROR, COMPREHENSION_UNPACKING,
                                        OVERWRITTEN_STORES_POPPED, PERCENT_FORMAT_AS_FSTRING)
from pellucid.bytecode.instruction import Instr
from pellucid.bytecode.positions import Position, position_at, position_units
from pellucid.decompiler import markers as M
from pellucid.decompiler.deferred_annotations import CONDITIONAL_SET, AnnotationMark, lazy_value_body
from pellucid.decompiler.errors import StructureError
from pellucid.decompiler.sharing import mark_copied
from pellucid.decompiler.tree_nodes import all_nodes


BINOPS = {
    "+": ast.Add, "-": ast.Sub, "*": ast.Mult, "@": ast.MatMult, "/": ast.Div, "//": ast.FloorDiv,
    "%": ast.Mod, "**": ast.Pow, "<<": ast.LShift, ">>": ast.RShift, "&": ast.BitAnd,
    "|": ast.BitOr, "^": ast.BitXor,
}
CMPOPS = {
    "<": ast.Lt, "<=": ast.LtE, "==": ast.Eq, "!=": ast.NotEq, ">": ast.Gt, ">=": ast.GtE,
    "is": ast.Is, "is not": ast.IsNot, "in": ast.In, "not in": ast.NotIn,
}
UNOPS = {"+": ast.UAdd, "-": ast.USub, "~": ast.Invert, "not": ast.Not}
INPLACE_FUNCS = {
    "+": "iadd", "-": "isub", "*": "imul", "@": "imatmul", "/": "itruediv", "//": "ifloordiv",
    "%": "imod", "**": "ipow", "<<": "ilshift", ">>": "irshift", "&": "iand", "|": "ior", "^": "ixor",
}


_PERCENT_UNIT = re.compile(r"%(%|[-+ #0]*([0-9]*)(?:\.([0-9]*))?(.))", re.S)


def _folded_percent_format(left: ast.expr, right: ast.expr) -> bool:
    """``left % right`` as written would be compiled as an f-string (see
    ``PERCENT_FORMAT_AS_FSTRING``): a string constant whose conversions are only ``s``, ``r``,
    ``a`` (a superset of the formats the compiler turns), and a tuple display."""
    if not (isinstance(left, ast.Constant) and type(left.value) is str and isinstance(right, ast.Tuple)):
        return False
    if any(isinstance(e, ast.Starred) for e in right.elts):
        return False
    units = [m for m in _PERCENT_UNIT.finditer(left.value) if m.group(1) != "%"]
    # (the compiler leaves a width or precision of three digits or more to ``%``)
    return bool(units) and all(m.group(4) in "sra" and len(m.group(2)) < 3
                               and len(m.group(3) or "") < 3 for m in units)


class Inplace(M.Marker):
    """``left op= right`` computed but not yet stored (an augmented assignment in progress)."""

    _fields = ("left", "op", "right")

    def __init__(self, left: ast.expr, op: str, right: ast.expr) -> None:
        super().__init__(None)
        self.left, self.op, self.right = left, op, right


class ImportModule(M.Marker):
    """Result of ``IMPORT_NAME``; ``names`` collects ``from ... import`` targets."""

    def __init__(self, name: str, level: int, fromlist: Any) -> None:
        super().__init__(name)
        self.level = level
        self.fromlist = fromlist
        self.names: List[ast.alias] = []
        self.lazy = False  # 3.15 ``lazy import``

    def statement(self, node: ast.stmt) -> ast.stmt:
        """``node`` (an import statement of this module), lazy if this import is."""
        if self.lazy:
            node.is_lazy = 1  # type: ignore[attr-defined]
        return node


class ImportAttr(M.Marker):
    """``IMPORT_FROM`` result: one name from a module (``value`` = ImportModule)."""

    def __init__(self, module: ImportModule, name: str) -> None:
        super().__init__(module)
        self.name = name


class UnpackGroup:
    """An unpacking assignment being filled in slot by slot."""

    def __init__(self, value: ast.expr, count: int, star: Optional[int]) -> None:
        self.value = value
        self.targets: List[Optional[ast.expr]] = [None] * count
        self.star = star
        self.parent: Optional[M.UnpackItem] = None


class Converted(M.Marker):
    """3.13 ``CONVERT_VALUE``: value with a pending ``!r``/``!s``/``!a``."""

    def __init__(self, value: ast.expr, conversion: int) -> None:
        super().__init__(value)
        self.conversion = conversion


#: the target given to a loop that yields its items without storing them
ITEM = "__pellucid_item"


class ExitResult(M.Marker):
    """What calling a ``with``'s ``__exit__(None, None, None)`` returned (always discarded)."""


class CompAppend(ast.AST):
    """Pseudo statement: a comprehension adds ``value`` (and ``key``) to its result."""

    _fields = ("kind", "key", "value")

    def __init__(self, kind: str, value: ast.expr, key: Optional[ast.expr] = None) -> None:
        super().__init__()
        self.kind, self.value, self.key = kind, value, key


class Reraise(ast.AST):
    """Pseudo statement: ``RERAISE`` — re-raise the exception being handled."""

    _fields = ()


class PopExcept(ast.AST):
    """Pseudo statement: ``POP_EXCEPT`` — leave an ``except`` clause."""

    _fields = ()


def _no_args() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])


def _is_none(v: Any) -> bool:
    return isinstance(v, ast.Constant) and v.value is None


def name_load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def same_expr(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are the same computation (one evaluation duplicated by COPY)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, ast.Name):
        return a.id == b.id
    if isinstance(a, ast.Constant):
        return type(a.value) is type(b.value) and a.value == b.value
    if isinstance(a, ast.Slice):
        return all(same_expr(getattr(a, f), getattr(b, f)) for f in ("lower", "upper", "step"))
    if isinstance(a, ast.Tuple):
        return len(a.elts) == len(b.elts) and all(same_expr(x, y) for x, y in zip(a.elts, b.elts))
    if isinstance(a, ast.Attribute):
        return a.attr == b.attr and same_expr(a.value, b.value)
    if isinstance(a, ast.Subscript):
        return same_expr(a.value, b.value) and same_expr(a.slice, b.slice)
    return False


def _empty_accumulator(v: Any) -> bool:
    """A comprehension's result being built (a display below its iterator, filled by the
    comprehension's statements)."""
    if getattr(v, "_copied", False):
        return False
    return isinstance(v, (ast.List, ast.Set, ast.Dict)) or _is_empty_set_call(v)


def _comprehension_result(stack: List[Any], arg: int) -> bool:
    """``stack[-arg]`` is an unpacking comprehension's result (PEP 798) being extended: the
    exact shape the compiler emits, an empty display with only its loops' iterators above.
    Elsewhere (Dynamo's code extends lists it builds under a loop's iterator too) the extend
    is an extend."""
    if not (COMPREHENSION_UNPACKING and arg > 1 and _empty_accumulator(stack[-arg])):
        return False
    result = stack[-arg]
    if isinstance(result, ast.Dict) and result.keys or isinstance(result, (ast.List, ast.Set)) and result.elts:
        return False
    return all(isinstance(v, M.Iterator) for v in stack[len(stack) - arg + 1:])


def _display_repeats_keys(d: ast.Dict) -> bool:
    """Whether writing ``d``'s entries as call keywords could refuse a repeated key that the
    dict display lets a later entry win (``f(**{**a, **b})``, ``f(**{k1: x, k2: y})``, a
    constant key twice): the call then keeps the whole display, ``f(**{...})``."""
    if len(d.keys) < 2:
        return False
    consts = []
    for k in d.keys:
        if k is None:
            if getattr(d, "_display", False):
                return True
        elif isinstance(k, ast.Constant) and isinstance(k.value, str):
            consts.append(k.value)
        else:
            return True
    return len(consts) != len(set(consts))


def _is_empty_set_call(v: Any) -> bool:
    return isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "set" and not v.args


def _folded_set_display(v: Any) -> Optional[ast.Set]:
    """The set display a frozenset constant was folded from, where the compiler folds one:
    ``x in {1, 2}``, ``for x in {1, 2}`` and ``{*{1, 2}}`` keep a frozenset constant, which
    the constant table writes as ``frozenset({1, 2})``."""
    if isinstance(v, ast.Call) and getattr(v, "_from_constant", False) and v.args \
            and isinstance(v.args[0], ast.Set):
        return v.args[0]
    return None


# Stack values a POP_TOP may drop without a statement: loop iterators after ``break``, NULL
# slots, the parts of a caught exception, a ``with``'s exit result, 3.12's saved loop variable.
_SILENT_POPS = (M.Iterator, M.Null, M.Exc, M.ExcPart, M.SavedExc, ExitResult, M.SavedLocal, M.WithExit,
                M.WithEnter, M.NextValue)


def _still_used(v: ast.AST, stack: List[Any]) -> bool:
    """Whether the very object ``v`` is on the stack or inside an expression on it."""
    # (``in`` is identity for stack values: no node class defines ``__eq__``; one C-level pass
    # answers for the dozens of names and constants Dynamo's code keeps on the stack)
    if v in stack:
        return True
    for x in stack:
        if type(x) in _SKIPPED:
            continue  # (no sub-expressions, or no expression: Dynamo's code keeps dozens of
            # names, constants and NULL slots on the stack)
        # (``in`` is identity here: no node class defines ``__eq__``; it saves a generator)
        if isinstance(x, ast.expr) and v in all_nodes(x):
            return True
    return False


# (exact classes: the leaves, ``ast.Name`` and ``ast.Constant``, and the NULL marker, which is
# no ``ast.expr``)
_SKIPPED = frozenset([ast.Name, ast.Constant, M.Null])
_expr = ast.expr



# The neutral ops (pellucid.bytecode.neutral_ops) that have no ``op_`` method in the structured
# decompiler: where it reads each one instead, or why it refuses it (``step`` raises
# StructureError, and the fallback takes the code object).  Every other op of the table has one
# (tests/test_neutral_ops.py).
_BLOCK_END = "structure: the last instruction of a block (run_block, build_if, loops)"
_CASE = "match: decoded with the case's pattern (MatchBuilder._decode)"
_UNFIXED = "refused: no fixed stack effect (a layout normalize did not recognise)"
NOT_STEPPED: Dict[str, str] = {
    "JUMP": _BLOCK_END, "POP_JUMP_IF_FALSE": _BLOCK_END, "POP_JUMP_IF_TRUE": _BLOCK_END,
    "POP_JUMP_IF_NONE": _BLOCK_END, "POP_JUMP_IF_NOT_NONE": _BLOCK_END,
    "JUMP_IF_FALSE_OR_POP": _BLOCK_END, "JUMP_IF_TRUE_OR_POP": _BLOCK_END,
    "FOR_ITER": "loops: a for loop's header",
    "MATCH_CLASS": _CASE, "MATCH_KEYS": _CASE, "MATCH_MAPPING": _CASE, "MATCH_SEQUENCE": _CASE,
    "GET_LEN": _CASE, "COPY_DICT_WITHOUT_KEYS": _CASE,
    "WITH_EXCEPT_START": "protected: the exit of a with statement",
    "STOPITERATION_ERROR": "protected: a generator's StopIteration handler",
    "CLEANUP_THROW": "protected: a yield from's throw() handler",
    "CHECK_EG_MATCH": "except_star: a clause of try/except*",
    "PREP_RERAISE_STAR": "except_star: the end of try/except*",
    "END_SEND": "refused: normalize folds it into YIELD_FROM",
    "NOP": "refused: normalize drops it",
    "SEND": _UNFIXED, "END_FOR": _UNFIXED, "RETURN_GENERATOR": _UNFIXED,
    "BEGIN_FINALLY": _UNFIXED, "CALL_FINALLY": _UNFIXED, "POP_FINALLY": _UNFIXED,
    "END_FINALLY": _UNFIXED, "WITH_CLEANUP_START": _UNFIXED, "WITH_CLEANUP_FINISH": _UNFIXED,
}


# What a target of an assignment loads before its store (``self.x``, ``d[k]``, ``a.b.c``), and
# the values each store takes from the stack besides the one stored.
_TARGET_LOADS = frozenset({"LOAD_FAST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_CONST"})
_TARGET_STORES = {"STORE_FAST": 0, "STORE_DEREF": 0, "STORE_GLOBAL": 0, "STORE_NAME": 0,
                  "STORE_ATTR": 1, "STORE_SUBSCR": 2}


class StackMachine:
    """Mixin: executes one neutral instruction against a symbolic stack.

    The host class provides ``self.code``, ``self.consts`` (ConstantPool), ``self.globals_``,
    ``self.nonlocals`` (sets of names needing declarations), ``self.make_function`` and
    ``self.emit``.
    """

    code: types.CodeType
    _op_handlers: Dict[str, Callable[..., None]]  # (set by step)
    seq_counter = 0

    # -- helpers --------------------------------------------------------------------------------
    def value(self, node: Any) -> ast.expr:
        """Turn a stack entry into a real expression (or fail if it has none)."""
        if isinstance(node, Inplace):
            func = ast.Attribute(ast.Call(name_load("__import__"), [ast.Constant("operator")], []),
                                 INPLACE_FUNCS[node.op], ast.Load())
            return ast.Call(func, [self.value(node.left), self.value(node.right)], [])
        if isinstance(node, ast.FormattedValue):
            return ast.JoinedStr([node])
        if isinstance(node, M.Marker) and isinstance(node.value, tuple) and \
                node.value[0] in ("closure", "closure_tuple"):
            # Dynamo hands cells to functions it builds at run time; a lambda that closes over
            # the variable has that very cell in its ``__closure__``.
            names = node.value[1] if node.value[0] == "closure_tuple" else [node.value[1]]
            cells = [ast.Subscript(ast.Attribute(ast.Lambda(_no_args(), name_load(n)), "__closure__",
                                                 ast.Load()), ast.Constant(0), ast.Load())
                     for n in names]
            return ast.Tuple(cells, ast.Load()) if node.value[0] == "closure_tuple" else cells[0]
        if isinstance(node, M.Marker):
            raise StructureError("stack value %r used as an expression" % (node,))
        if isinstance(node, ast.Constant) and isinstance(node.value, types.CodeType):
            # A code object handed to a call (Dynamo's ``_create_nested_fn``) has no literal.
            return self.consts.expr(node.value)
        return node

    def emit(self, out: List[ast.stmt], stmt: ast.stmt, stack: List[Any]) -> None:
        raise NotImplementedError

    # -- the instruction set ----------------------------------------------------------------------
    def step(self, ins: Instr, stack: List[Any], out: List[ast.stmt]) -> None:  # noqa: C901
        attrs = self.__dict__
        try:
            handler = attrs["_op_handlers"][ins.op]
        except KeyError:
            handler = self._handler(ins.op)
        emitted = len(out)
        handler(self, ins.arg, stack, out, ins)
        # (source_position and position_at inlined: once per instruction)
        units = attrs.get("_position_units")
        if units is None:
            units = self._position_units = position_units(self.code)
        at = ins.offset >> 1
        position = units[at] if 0 <= at < len(units) else None
        if position is not None and not (type(position[0]) is int and position[0] > 0):
            position = None
        # Remember when each value was computed: spilling must keep that order.  And where each
        # value and statement came from in the original source: recompiled code keeps those
        # lines (see pellucid.decompiler.source_lines).  (One loop for both: once per instruction.
        # ``in __dict__`` is ``hasattr`` here, no node class has these attributes, without the
        # AttributeError a miss raises inside hasattr.)
        for v in stack[-2:]:
            if isinstance(v, _expr):
                d = v.__dict__
                if "_seq" not in d:
                    self.seq_counter += 1
                    d["_seq"] = self.seq_counter
                if position is not None and "_pos" not in d:
                    d["_pos"] = position
        if position is not None and len(out) > emitted:
            for stmt in out[emitted:]:
                if "_pos" not in stmt.__dict__:
                    stmt._pos = position  # type: ignore[attr-defined]

    def _handler(self, op: str) -> Callable[..., None]:
        """The method for ``op``, looked up once per decompiler: its class's ``op_<op>`` (no
        instance has attributes of that form), kept unbound so the table holds no reference to
        ``self``."""
        handlers = self.__dict__.get("_op_handlers")
        if handlers is None:
            handlers = self._op_handlers = {}
        handler = getattr(type(self), "op_" + op, None)
        if handler is None:
            raise StructureError("unsupported instruction %s" % op)
        handlers[op] = handler
        return handler  # type: ignore[no-any-return]

    def source_position(self, ins: Instr) -> Optional[Position]:
        """The original source position of ``ins`` (None when its code has no line for it)."""
        units = self.__dict__.get("_position_units")
        if units is None:
            units = self._position_units = position_units(self.code)
        return position_at(units, ins.offset)

    # loads ------------------------------------------------------------------------------------
    def op_LOAD_CONST(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if isinstance(arg, types.CodeType):
            stack.append(ast.Constant(arg))  # MAKE_FUNCTION takes it; as a value it is bound
        else:
            stack.append(self.consts.expr(arg))

    def op_LOAD_FAST(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.append(name_load(arg))

    op_LOAD_NAME = op_LOAD_DEREF = op_LOAD_CLASSDEREF = op_LOAD_FAST

    def op_LOAD_GLOBAL(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if arg == "AssertionError" and ASSERT_LOADS_GLOBAL_ASSERTION_ERROR and (
                arg in self.local_names or not self.code.co_flags & 0x01):
            # 3.8's ``assert`` loads the global AssertionError even where a local of that name
            # exists; only an ``assert`` statement says that (``global`` would clash with it).
            # Module code and class bodies load names with LOAD_NAME: a LOAD_GLOBAL there is an
            # ``assert`` too (a ``raise AssertionError`` would look in the locals first).
            self.op_LOAD_ASSERTION_ERROR(None, stack, out, ins)
            return
        if arg in self.local_names or self.code.co_name == "<module>":
            # (module code loads names with LOAD_NAME but for those declared global)
            self.globals_.add(arg)
        stack.append(name_load(arg))

    def op_LOAD_CLOSURE(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.append(M.Marker(("closure", arg)))

    def op_LOAD_FROM_DICT_OR_DEREF(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.pop()  # the class namespace LOAD_LOCALS pushed
        stack.append(name_load(arg))

    def op_LOAD_FROM_DICT_OR_GLOBALS(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.pop()
        stack.append(name_load(arg))

    def op_LOAD_LOCALS(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.append(M.Marker("locals"))

    def op_LOAD_ATTR(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        obj = self.value(stack.pop())
        stack.append(ast.Attribute(obj, arg, ast.Load()))

    def op_LOAD_SUPER_ATTR(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        name, two_arg = arg
        self_arg = stack.pop()
        cls = stack.pop()
        sup = stack.pop()
        call_args = [self.value(cls), self.value(self_arg)] if two_arg else []
        stack.append(ast.Attribute(ast.Call(self.value(sup), call_args, []), name, ast.Load()))

    def op_PUSH_NULL(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.append(M.Null())

    def op_LOAD_BUILD_CLASS(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.append(M.ClassBuilder())

    def op_LOAD_ASSERTION_ERROR(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        node = name_load("AssertionError")
        node._assertion = True  # type: ignore[attr-defined]  # becomes an ``assert`` statement
        self.consts.made_assertion = True  # type: ignore[attr-defined]  # (tidy has work)
        stack.append(node)

    def op_LOAD_BUILTIN(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.append(name_load(arg))  # (only in compiler-made code, where the name is not bound)

    # stack shuffles -----------------------------------------------------------------------------
    def op_POP_TOP(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        v = stack.pop()
        if OVERWRITTEN_STORES_POPPED and isinstance(v, M.UnpackItem):
            name = self._overwritten_store(ins)
            if name is not None:
                self.store(ast.Name(name, ast.Store()), v, stack, out)  # type: ignore[attr-defined]
                return
        if isinstance(v, ImportModule):
            if v.names:
                self.emit(out, v.statement(ast.ImportFrom(v.value if v.level == 0 or v.value else None,
                                                          v.names, v.level)), stack)
            return
        if isinstance(v, _SILENT_POPS):
            return  # interpreter bookkeeping with no source counterpart
        if isinstance(v, ImportAttr) and v.value.fromlist is None:
            return  # a package level of ``import a.b.c as d``
        if isinstance(v, ast.AST) and _still_used(v, stack):
            return  # a COPY of a value that is already part of an expression (chained compare)
        if isinstance(v, ast.Name) and v.id.startswith("__pellucid_t") or isinstance(v, ast.Constant):
            return  # a value already saved in a temporary, or a constant: reading it does nothing
        if isinstance(v, (ast.List, ast.Tuple, ast.Set, ast.Dict)) and \
                all(isinstance(n, (ast.Constant, ast.expr_context)) or n is v or
                    (isinstance(n, (ast.List, ast.Tuple, ast.Set, ast.Dict)))
                    for n in all_nodes(v)):
            return  # building a display of constants has no effect (Dynamo drops spare lists)
        self.emit(out, ast.Expr(self.value(v)), stack)

    def _overwritten_store(self, ins: Instr) -> Optional[str]:
        """3.13 compiles ``STORE_FAST x; STORE_FAST x`` as ``POP_TOP; STORE_FAST x``: the name
        an unpacked item popped at ``ins`` was stored to (``for a, _, _ in t``), if so."""
        instrs = self.instrs  # type: ignore[attr-defined]
        j = ins.index + 1
        while j < len(instrs) and instrs[j].op == "POP_TOP":
            j += 1  # (``a, _, _, _``: every store but the last is popped)
        if j < len(instrs) and instrs[j].op == "STORE_FAST":
            return instrs[j].arg  # type: ignore[no-any-return]
        return None

    def op_COPY(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        v = stack[-arg]
        if isinstance(v, ast.expr) and not isinstance(v, M.Marker):
            # Both copies are this one node; if both end up in the output, the value is given a
            # temporary when the first use is emitted (see BodyDecompiler.name_shared).
            mark_copied(v)
        stack.append(v)

    def op_SWAP(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if arg == 2 and self._parallel_targets(ins, stack):
            return
        stack[-1], stack[-arg] = stack[-arg], stack[-1]

    def _parallel_targets(self, ins: Instr, stack: List[Any]) -> bool:
        """``t1, t2 = a, b`` with targets other than two names (``self.x, self.y = p, q``):
        CPython evaluates both values, swaps them, then evaluates each target and stores, one
        after the other.  Written as two assignments, ``b`` would be read after the first store
        (an unbound local's error after it; idlelib.pyparse.Parser._study2).  The two values
        become the slots of one unpacking assignment that the stores fill in.

        True when the instructions after the ``SWAP 2`` at ``ins`` are two stores, each after
        only the loads of its own target, in one block."""
        instrs = getattr(self, "instrs", None)
        cfg = getattr(self, "cfg", None)
        if instrs is None or cfg is None or not 0 <= ins.index < len(instrs) or instrs[ins.index] is not ins \
                or len(stack) - 2 < self.floor:  # type: ignore[attr-defined]
            return False
        j = ins.index + 1
        bare = 0
        for _ in range(2):
            depth = 0
            while True:
                if j >= len(instrs) or j in cfg.block_at or instrs[j].handler is not ins.handler:
                    return False
                op = instrs[j].op
                j += 1
                if op in _TARGET_LOADS:
                    depth += 1
                elif op == "LOAD_ATTR" and depth >= 1:
                    continue
                elif op == "SUBSCR" and depth >= 2:
                    depth -= 1
                elif op in _TARGET_STORES and _TARGET_STORES[op] == depth:
                    bare += depth == 0 and op in ("STORE_FAST", "STORE_DEREF")
                    break
                else:
                    return False
        if bare == 2:
            return False  # (two names: parallel_store, also after 3.12 reorders the stores)
        values = stack[-2:]
        if not self._lone_values(values, stack):
            return False
        if getattr(values[0], "_seq", 0) > getattr(values[1], "_seq", 0):
            return False  # (not computed in stack order: the tuple would evaluate them so)
        del stack[-2:]
        group = UnpackGroup(ast.Tuple([self.value(v) for v in values], ast.Load()), 2, None)
        stack.append(M.UnpackItem((group, 1)))
        stack.append(M.UnpackItem((group, 0)))
        return True

    def op_ROT(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        top = stack.pop()
        stack.insert(len(stack) - arg + 1, top)

    # operators ------------------------------------------------------------------------------------
    def op_BINARY(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        right = self.value(stack.pop())
        left = self.value(stack.pop())
        if arg == "%" and PERCENT_FORMAT_AS_FSTRING and _folded_percent_format(left, right):
            # ``f'%s.%s' % (a, b)``: a one-part f-string is no constant to the compiler, which
            # would turn ``'%s.%s' % (a, b)`` into an f-string (formatting ``a`` before ``b`` is
            # evaluated) where the bytecode builds the tuple, then applies one ``%``.
            left = ast.JoinedStr([left])
        stack.append(ast.BinOp(left, BINOPS[arg](), right))

    def op_INPLACE(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        right = self.value(stack.pop())
        left = self.value(stack.pop())
        stack.append(Inplace(left, arg, right))

    def op_UNARY(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        operand = self.value(stack.pop())
        stack.append(ast.UnaryOp(UNOPS[arg](), operand))

    def op_TO_BOOL(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        v = self.value(stack.pop())
        stack.append(ast.UnaryOp(ast.Not(), ast.UnaryOp(ast.Not(), v)))

    def op_COMPARE(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        right = stack.pop()
        left = self.value(stack.pop())
        if arg in ("in", "not in"):
            right = _folded_set_display(right) or right
        stack.append(ast.Compare(left, [CMPOPS[arg]()], [self.value(right)]))

    def op_SUBSCR(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        key = self.value(stack.pop())
        container = self.value(stack.pop())
        stack.append(ast.Subscript(container, key, ast.Load()))

    def op_BUILD_SLICE(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        parts = [self.value(stack.pop()) for _ in range(arg)][::-1]

        def opt(e: ast.expr) -> Optional[ast.expr]:
            return None if isinstance(e, ast.Constant) and e.value is None else e
        step = opt(parts[2]) if arg == 3 else None
        stack.append(ast.Slice(opt(parts[0]), opt(parts[1]), step))

    # containers ---------------------------------------------------------------------------------
    def _pop_n(self, stack: List[Any], n: int) -> List[ast.expr]:
        items = stack[len(stack) - n:] if n else []
        del stack[len(stack) - n:]
        return [self.value(x) for x in items]

    def op_BUILD_TUPLE(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        items = stack[len(stack) - arg:] if arg else []
        if items and all(isinstance(x, M.Marker) and isinstance(x.value, tuple) and x.value[0] == "closure"
                         for x in items):
            del stack[len(stack) - arg:]
            stack.append(M.Marker(("closure_tuple", [x.value[1] for x in items])))
            return
        if arg == 3 and isinstance(items[2], M.FunctionStub) and isinstance(items[0], ast.Constant) \
                and items[2].value.co_name == items[0].value and _is_none(items[1]):
            # (name, type params, value function): the operand of 3.12's INTRINSIC_TYPEALIAS;
            # a function other than a lambda is never a value in source otherwise
            del stack[len(stack) - arg:]
            stack.append(M.Marker(("type_alias_operand", items[0].value, items[2])))
            return
        stack.append(ast.Tuple(self._pop_n(stack, arg), ast.Load()))

    def op_TYPE_ALIAS(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        operand = stack.pop()
        if not (isinstance(operand, M.Marker) and isinstance(operand.value, tuple)
                and operand.value[0] == "type_alias_operand"):
            raise StructureError("INTRINSIC_TYPEALIAS of an unexpected operand")
        _, name, stub = operand.value
        body = lazy_value_body(stub.value, self.nested_body(stub.value))  # type: ignore[attr-defined]
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            raise StructureError("type alias value is not a single expression")
        stack.append(M.Marker(("type_alias", name, body[0].value)))

    def op_BUILD_LIST(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.append(ast.List(self._pop_n(stack, arg), ast.Load()))

    def op_BUILD_SET(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        items = self._pop_n(stack, arg)
        stack.append(ast.Set(items) if items else ast.Call(name_load("set"), [], []))

    def op_BUILD_MAP(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        flat = self._pop_n(stack, 2 * arg)
        stack.append(ast.Dict(list(flat[0::2]), list(flat[1::2])))

    def op_BUILD_CONST_KEY_MAP(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        keys = stack.pop()
        values = self._pop_n(stack, arg)
        if isinstance(keys, ast.Tuple):
            key_exprs = list(keys.elts)
        else:
            raise StructureError("BUILD_CONST_KEY_MAP without constant keys")
        stack.append(ast.Dict(key_exprs, values))

    def op_BUILD_STRING(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        parts = stack[len(stack) - arg:]
        del stack[len(stack) - arg:]
        values: List[ast.expr] = []
        for p in parts:
            if isinstance(p, ast.JoinedStr):
                values.extend(p.values)
            elif isinstance(p, ast.FormattedValue) or (isinstance(p, ast.Constant) and isinstance(p.value, str)):
                values.append(p)
            else:
                values.append(ast.FormattedValue(self.value(p), -1, None))
        stack.append(ast.JoinedStr(values))

    def op_CONVERT(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.append(Converted(self.value(stack.pop()), arg))

    def op_FORMAT(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        conv, has_spec = arg
        spec = None
        if has_spec:
            s = stack.pop()
            if isinstance(s, ast.JoinedStr):
                spec = s
            elif isinstance(s, ast.Constant):
                spec = ast.JoinedStr([s])
            elif isinstance(s, ast.FormattedValue):
                spec = ast.JoinedStr([s])
            else:
                spec = ast.JoinedStr([ast.FormattedValue(self.value(s), -1, None)])
        v = stack.pop()
        if isinstance(v, Converted):
            conv, v = v.conversion, v.value
        stack.append(ast.FormattedValue(self.value(v), conv, spec))

    def _format_spec(self, s: Any) -> ast.JoinedStr:
        if isinstance(s, ast.JoinedStr):
            return s
        if isinstance(s, (ast.Constant, ast.FormattedValue)):
            return ast.JoinedStr([s])
        return ast.JoinedStr([ast.FormattedValue(self.value(s), -1, None)])

    def op_BUILD_INTERPOLATION(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        """3.14 t-string field: the value, its source text, and its format spec if any."""
        conv, has_spec = arg
        spec = self._format_spec(stack.pop()) if has_spec else None
        text = stack.pop()
        value = self.value(stack.pop())
        if not (isinstance(text, ast.Constant) and isinstance(text.value, str)):
            raise StructureError("t-string field text is not a constant")
        # (unparsed as its text, which is the original expression's source)
        stack.append(ast.Interpolation(value, text.value, conv, spec))  # type: ignore[attr-defined]

    def op_BUILD_TEMPLATE(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        fields = stack.pop()
        strings = stack.pop()
        if isinstance(fields, ast.Constant) and fields.value == () or \
                isinstance(fields, ast.Tuple) and not fields.elts:
            parts: List[Any] = []
        elif isinstance(fields, ast.Tuple) and all(type(f).__name__ == "Interpolation" for f in fields.elts):
            parts = list(fields.elts)
        else:
            raise StructureError("t-string fields are not a tuple of fields")
        texts = [e.value if isinstance(e, ast.Constant) else None for e in strings.elts] \
            if isinstance(strings, ast.Tuple) else None
        if texts is None or len(texts) != len(parts) + 1 or not all(type(s) is str for s in texts):
            raise StructureError("t-string strings are not a constant tuple")
        values: List[ast.expr] = []
        for k, s in enumerate(texts):
            if s:
                values.append(ast.Constant(s))
            if k < len(parts):
                values.append(parts[k])
        stack.append(ast.TemplateStr(values))  # type: ignore[attr-defined]

    # Container mutations.  A display nobody else holds grows by a fresh node (branches of the
    # walk share stack nodes, so nodes are never changed in place); any other container -- a
    # display that is also used elsewhere, a value computed some other way -- is saved in a
    # temporary and changed by a statement, as the bytecode changes that one object.
    def _grow_display(self, stack: List[Any], k: int, kind: type) -> Optional[ast.expr]:
        """A copy of the display ``stack[k]`` to grow, if growing it is invisible elsewhere."""
        target = stack[k]
        if type(target) is not kind or getattr(target, "_copied", False):
            return None
        if any(_still_used(target, [x]) for j, x in enumerate(stack) if j != k % len(stack)):
            return None
        new = copy.copy(target)
        for field in ("elts", "keys", "values"):
            if hasattr(new, field):
                setattr(new, field, list(getattr(new, field)))
        stack[k] = new
        return new

    def _mutate(self, stack: List[Any], out: List[ast.stmt], k: int, method: str,
                args: List[ast.expr]) -> None:
        tmp = self.spill_slot(out, stack, k)
        if method == "__setitem__":
            self.emit(out, ast.Assign([ast.Subscript(tmp, args[0], ast.Store())], args[1]), stack)
        else:
            call = ast.Call(ast.Attribute(tmp, method, ast.Load()), args, [])
            self.emit(out, ast.Expr(call), stack)

    def spill_slot(self, out: List[ast.stmt], stack: List[Any], k: int) -> ast.Name:
        raise NotImplementedError

    def op_LIST_APPEND(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        v = self.value(stack.pop())
        if arg > 1 and _empty_accumulator(stack[-arg]):
            self.emit(out, CompAppend("list", v), stack)
            return
        grown = self._grow_display(stack, -arg, ast.List)
        if grown is not None:
            grown.elts.append(v)
        else:
            self._mutate(stack, out, -arg, "append", [v])

    def op_SET_ADD(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if arg == 1 and isinstance(stack[-2], ast.Name) and stack[-2].id == CONDITIONAL_SET \
                and isinstance(stack[-1], ast.Constant) and type(stack[-1].value) is int:
            # 3.14+: an annotated statement in a compound one has run (deferred_annotations)
            index = stack.pop().value
            stack[-1] = M.SavedLocal(None)
            self.emit(out, AnnotationMark(index), stack)
            return
        v = self.value(stack.pop())
        if arg > 1 and _empty_accumulator(stack[-arg]):
            self.emit(out, CompAppend("set", v), stack)
            return
        if _is_empty_set_call(stack[-arg]) and not getattr(stack[-arg], "_copied", False):
            stack[-arg] = ast.Set([])
        grown = self._grow_display(stack, -arg, ast.Set)
        if grown is not None:
            grown.elts.append(v)
        else:
            self._mutate(stack, out, -arg, "add", [v])

    def op_MAP_ADD(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        v = self.value(stack.pop())
        k = self.value(stack.pop())
        if arg > 1 and _empty_accumulator(stack[-arg]):
            self.emit(out, CompAppend("dict", v, k), stack)
            return
        grown = self._grow_display(stack, -arg, ast.Dict)
        if grown is not None:
            grown.keys.append(k)
            grown.values.append(v)
        else:
            self._mutate(stack, out, -arg, "__setitem__", [k, v])

    def op_LIST_EXTEND(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        seq = self.value(stack.pop())
        if _comprehension_result(stack, arg):  # 3.15 ``[*xs for xs in xss]`` (PEP 798)
            self.emit(out, CompAppend("list", ast.Starred(seq, ast.Load())), stack)
            return
        grown = self._grow_display(stack, -arg, ast.List)
        if grown is None:
            # LIST_EXTEND's target is always an exact list, so ``.extend`` is the same call.
            self._mutate(stack, out, -arg, "extend", [seq])
        elif isinstance(seq, ast.Tuple) and all(isinstance(e, ast.Constant) for e in seq.elts) \
                and not grown.elts:
            grown.elts.extend(seq.elts)
        elif isinstance(seq, ast.List) and not getattr(seq, "_copied", False):
            grown.elts.extend(seq.elts)  # ``[*[a, *b]]`` is ``[a, *b]``: the list is only unpacked
        else:
            grown.elts.append(ast.Starred(seq, ast.Load()))

    def op_SET_UPDATE(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        seq = self.value(stack.pop())
        if _comprehension_result(stack, arg):  # 3.15 ``{*xs for xs in xss}``
            self.emit(out, CompAppend("set", ast.Starred(seq, ast.Load())), stack)
            return
        if _is_empty_set_call(stack[-arg]) and not getattr(stack[-arg], "_copied", False):
            stack[-arg] = ast.Set([])  # ``set()`` from BUILD_SET 0
        grown = self._grow_display(stack, -arg, ast.Set)
        if grown is None:
            self._mutate(stack, out, -arg, "update", [seq])
        elif _folded_set_display(seq) is not None and not grown.elts:
            grown.elts.extend(_folded_set_display(seq).elts)  # type: ignore[union-attr]
        else:
            grown.elts.append(ast.Starred(seq, ast.Load()))

    def op_DICT_UPDATE(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        mapping = self.value(stack.pop())
        if ins.op == "DICT_UPDATE" and _comprehension_result(stack, arg):
            # 3.15 ``{**d for d in ds}``: the DictComp's key is the mapping, its value None
            self.emit(out, CompAppend("dict", None, mapping), stack)  # type: ignore[arg-type]
            return
        grown = self._grow_display(stack, -arg, ast.Dict)
        if grown is None:
            if ins.op == "DICT_MERGE":
                raise StructureError("DICT_MERGE on a non-display")  # ``.update`` would not check keys
            self._mutate(stack, out, -arg, "update", [mapping])
            return
        if ins.op == "DICT_UPDATE":
            # A dict display (``f(**{**a, **b})``): later keys win; call arguments (DICT_MERGE)
            # refuse a repeated keyword, so it is not written as ``f(**a, **b)``.
            grown._display = True  # type: ignore[attr-defined]
        if isinstance(mapping, ast.Dict) and not grown.keys and not (
                ins.op == "DICT_MERGE" and getattr(mapping, "_display", False)):
            grown.keys.extend(mapping.keys)
            grown.values.extend(mapping.values)
        else:
            grown.keys.append(None)  # type: ignore[arg-type]
            grown.values.append(mapping)

    op_DICT_MERGE = op_DICT_UPDATE

    def op_LIST_TO_TUPLE(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        lst = stack.pop()
        if isinstance(lst, ast.List):
            stack.append(ast.Tuple(lst.elts, ast.Load()))
        else:
            # ``(*lst,)``: the operand is an exact list, and unlike ``tuple(lst)`` it cannot
            # be shadowed.
            stack.append(ast.Tuple([ast.Starred(self.value(lst), ast.Load())], ast.Load()))

    def _build_unpack(self, arg: int, stack: List[Any], kind: str) -> None:
        parts = self._pop_n(stack, arg)
        elts: List[ast.expr] = []
        for p in parts:
            if isinstance(p, (ast.Tuple, ast.List, ast.Set)) and kind != "map":
                elts.extend(p.elts)
            else:
                elts.append(ast.Starred(p, ast.Load()))
        if kind == "tuple":
            stack.append(ast.Tuple(elts, ast.Load()))
        elif kind == "list":
            stack.append(ast.List(elts, ast.Load()))
        else:
            stack.append(ast.Set(elts))

    def op_BUILD_TUPLE_UNPACK(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        self._build_unpack(arg, stack, "tuple")
        # A tuple display, not call arguments: ``f(*(a, *b))`` (3.8 builds call arguments with
        # BUILD_TUPLE_UNPACK_WITH_CALL, whose error for a non-iterable names the function).
        stack[-1]._display = True

    def op_BUILD_TUPLE_UNPACK_WITH_CALL(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        self._build_unpack(arg, stack, "tuple")

    def op_BUILD_LIST_UNPACK(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        self._build_unpack(arg, stack, "list")

    def op_BUILD_SET_UNPACK(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        self._build_unpack(arg, stack, "set")

    def op_BUILD_MAP_UNPACK(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        parts = self._pop_n(stack, arg)
        keys: List[Optional[ast.expr]] = []
        values: List[ast.expr] = []
        call = ins.op == "BUILD_MAP_UNPACK_WITH_CALL"
        for p in parts:
            if isinstance(p, ast.Dict) and not (call and getattr(p, "_display", False)):
                keys.extend(p.keys)
                values.extend(p.values)
            else:
                keys.append(None)
                values.append(p)
        built = ast.Dict(keys, values)
        if not call:
            built._display = True  # type: ignore[attr-defined]  # (see op_DICT_UPDATE)
        stack.append(built)

    op_BUILD_MAP_UNPACK_WITH_CALL = op_BUILD_MAP_UNPACK

    # calls ----------------------------------------------------------------------------------------
    def _callable(self, stack: List[Any], null_slot: bool) -> tuple:
        if not null_slot:
            return stack.pop(), []
        b = stack.pop()
        a = stack.pop()
        if isinstance(b, M.Null):
            return a, []
        if isinstance(a, M.Null):
            return b, []
        return a, [b]

    def op_CALL(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        argc, kwnames, null_slot = arg
        if kwnames is None:
            names_node = stack.pop()
            if not isinstance(names_node, ast.Tuple):
                raise StructureError("keyword names are not a constant tuple")
            kwnames = tuple(e.value for e in names_node.elts)
        raw_args = stack[len(stack) - argc:] if argc else []
        del stack[len(stack) - argc:]
        func, self_arg = self._callable(stack, null_slot)
        raw_args = self_arg + raw_args
        self.build_call(func, raw_args, kwnames, stack, out)

    def build_call(self, func: Any, raw_args: List[Any], kwnames: tuple, stack: List[Any],
                   out: List[ast.stmt]) -> None:
        if isinstance(func, M.WithExit):
            stack.append(ExitResult())
            return
        special = self.special_call(func, raw_args, kwnames, stack, out)
        if special:
            return
        nkw = len(kwnames)
        pos = [self.value(a) for a in raw_args[:len(raw_args) - nkw]]
        kws = [ast.keyword(k, self.value(v)) for k, v in zip(kwnames, raw_args[len(raw_args) - nkw:])]
        stack.append(ast.Call(self.value(func), pos, kws))

    def special_call(self, func: Any, args: List[Any], kwnames: tuple, stack: List[Any],
                     out: List[ast.stmt]) -> bool:
        """Hook for calls that are really syntax (comprehensions, class statements)."""
        return False

    def op_CALL_EX(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        has_kw, null_slot = arg
        kw_item = stack.pop() if has_kw else None
        # (3.14+ always has the kwargs slot; NULL there is no kwargs, and Dynamo's code moves that
        # NULL into place with SWAPs, so it is not folded away with a PUSH_NULL just before)
        kwargs = None if kw_item is None or isinstance(kw_item, M.Null) else self.value(kw_item)
        args = self.value(stack.pop())
        func, self_arg = self._callable(stack, null_slot)
        pos: List[ast.expr] = [self.value(a) for a in self_arg]
        if isinstance(args, ast.Tuple) and getattr(args, "_display", False) \
                and any(isinstance(e, ast.Starred) for e in args.elts):
            pos.append(ast.Starred(args, ast.Load()))
        elif isinstance(args, ast.Tuple) or (isinstance(args, ast.List) and not getattr(args, "_copied", False)):
            pos.extend(args.elts)  # ``f(*[a, b])`` is ``f(a, b)``: the list is only unpacked
        else:
            pos.append(ast.Starred(args, ast.Load()))
        kws: List[ast.keyword] = []
        if kwargs is not None:
            if isinstance(kwargs, ast.Dict) and not _display_repeats_keys(kwargs):
                for k, v in zip(kwargs.keys, kwargs.values):
                    if k is None:
                        kws.append(ast.keyword(None, v))
                    elif isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.isidentifier():
                        kws.append(ast.keyword(k.value, v))
                    else:
                        kws.append(ast.keyword(None, ast.Dict([k], [v])))
            else:
                kws.append(ast.keyword(None, kwargs))
        if isinstance(func, M.ClassBuilder):
            raise StructureError("class statement with star arguments")
        stack.append(ast.Call(self.value(func), pos, kws))

    # iteration / generators -----------------------------------------------------------------------
    def op_GET_ITER(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        iterable = stack.pop()
        stack.append(M.Iterator(self.value(_folded_set_display(iterable) or iterable)))

    def op_GET_AITER(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.append(M.Iterator(self.value(stack.pop()), is_async=True))

    def op_GET_YIELD_FROM_ITER(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        v = stack.pop()
        if isinstance(v, M.Iterator):  # genexpr's implicit iterator, already an iterator
            v = v.value
        stack.append(M.Awaitable(("yield from", self.value(v))))

    def op_GET_AWAITABLE(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.append(M.Awaitable(("await", self.value(stack.pop()))))

    def op_YIELD_FROM(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.pop()  # the None sent first
        aw = stack.pop()
        if not isinstance(aw, M.Awaitable):
            raise StructureError("yield from without its iterator")
        kind, v = aw.value
        if kind == "await":
            stack.append(ast.Await(v))
        elif kind == "anext":
            stack.append(M.NextValue(v))
        else:
            stack.append(ast.YieldFrom(v))

    def op_YIELD_VALUE(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        v = stack.pop()
        if isinstance(v, M.NextValue):
            # a loop yielding each item it gets, unnamed: 3.15's ``(*xs for xs in xss)``
            # (PEP 798) iterates ``xs`` so; the loop gets a target of its own (read back as
            # the starred element by comprehensions.clauses_from_loop)
            self.store(ast.Name(ITEM, ast.Store()), v, stack, out)  # type: ignore[attr-defined]
            v = name_load(ITEM)
        if isinstance(v, ast.Constant) and v.value is None:
            stack.append(ast.Yield(None))
        else:
            stack.append(ast.Yield(self.value(v)))

    # statements -----------------------------------------------------------------------------------
    def op_RETURN_VALUE(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        v = stack.pop()
        if isinstance(v, M.Marker) and isinstance(v.value, tuple) and v.value[0] == "closure":
            v = ast.Constant(None)  # a class body hands back its __class__ cell; not source
        self.emit(out, ast.Return(None if isinstance(v, ast.Constant) and v.value is None
                                  else self.value(v)), stack)

    def op_RAISE_VARARGS(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        cause = self.value(stack.pop()) if arg == 2 else None
        exc = self.value(stack.pop()) if arg >= 1 else None
        self.emit(out, ast.Raise(exc, cause), stack)

    def op_RERAISE(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        self.emit(out, Reraise(), stack)

    def op_STORE_FAST(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if self.parallel_store(ins, stack, out):
            return
        self.store(ast.Name(arg, ast.Store()), stack.pop(), stack, out)

    def op_STORE_NAME(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        self.store(ast.Name(arg, ast.Store()), stack.pop(), stack, out)

    def op_STORE_DEREF(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if self.parallel_store(ins, stack, out):
            return
        if arg in self.code.co_freevars:
            self.nonlocals.add(arg)
        self.store(ast.Name(arg, ast.Store()), stack.pop(), stack, out)

    def _lone_values(self, values: List[Any], stack: List[Any]) -> bool:
        """Whether ``values`` are plain expressions that can move into one tuple display: each
        on the stack once, not copied, no store of theirs pending."""
        pending = getattr(self, "pending", {})
        return not any(not isinstance(v, ast.expr) or isinstance(v, M.Marker)
                       or getattr(v, "_copied", False) or id(v) in pending
                       or sum(1 for x in stack if x is v) != 1 for v in values)

    def parallel_store(self, ins: Instr, stack: List[Any], out: List[ast.stmt]) -> bool:
        """``a, b = x, y`` (two or three names): CPython evaluates the values, reorders them
        (``SWAP``/``ROT``; 3.12+ reorders the stores instead) and stores one after the other.
        Written as one tuple assignment, which is what compiles back to that (separate
        assignments would interleave loads and stores, and the first store would need the other
        values saved in temporaries first).  Stores in a row of values in a row come from
        nothing else in compiler output, and the tuple form is exact for any such code.

        True when the stores starting at ``ins`` were written that way: the values are popped
        and the following stores of the run each find a marker that stores nothing.
        """
        instrs = getattr(self, "instrs", None)
        cfg = getattr(self, "cfg", None)
        if instrs is None or cfg is None or not 0 <= ins.index < len(instrs) or instrs[ins.index] is not ins:
            return False
        run: List[Instr] = []
        j = ins.index
        while j < len(instrs) and instrs[j].op in ("STORE_FAST", "STORE_DEREF") \
                and (j == ins.index or j not in cfg.block_at) and instrs[j].handler == ins.handler:
            run.append(instrs[j])
            j += 1
        k = len(run)
        if not 2 <= k <= 3 or len(stack) - k < self.floor:  # type: ignore[attr-defined]
            return False
        values = stack[-k:]
        names = [r.arg for r in reversed(run)]  # the target of each value, bottom to top
        if len(set(names)) != k:
            return False
        if not self._lone_values(values, stack):
            return False
        pairs = sorted(zip(values, names), key=lambda p: getattr(p[0], "_seq", 0))
        del stack[-k:]
        for r in run:
            if r.op == "STORE_DEREF" and r.arg in self.code.co_freevars:
                self.nonlocals.add(r.arg)  # type: ignore[attr-defined]
        targets = ast.Tuple([ast.Name(n, ast.Store()) for _, n in pairs], ast.Store())
        value = ast.Tuple([self.value(v) for v, _ in pairs], ast.Load())
        self.emit(out, ast.Assign([targets], value), stack)
        stack.extend(M.SavedLocal(None) for _ in range(k - 1))
        return True

    def op_STORE_GLOBAL(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        self.globals_.add(arg)
        self.store(ast.Name(arg, ast.Store()), stack.pop(), stack, out)

    def op_STORE_ATTR(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        obj = self.value(stack.pop())
        self.store(ast.Attribute(obj, arg, ast.Store()), stack.pop(), stack, out)

    def op_STORE_SUBSCR(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        key = self.value(stack.pop())
        container = self.value(stack.pop())
        annotation = self._annotation_statement(container, key, stack)
        if annotation is not None:
            stack.pop()
            self.emit(out, annotation, stack)
            return
        self.store(ast.Subscript(container, key, ast.Store()), stack.pop(), stack, out)

    def _annotation_statement(self, container: ast.expr, key: ast.expr, stack: List[Any]) -> Optional[ast.stmt]:
        """``x: T`` for a module or class body's ``__annotations__['x'] = T``.

        Written as a subscript store it would miss SETUP_ANNOTATIONS (which creates
        ``__annotations__``); the annotation statement makes the compiler emit both again."""
        if self.code.co_flags & 0x01 or not (isinstance(container, ast.Name) and container.id == "__annotations__"):
            return None
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier()):
            return None
        value = stack[-1]
        if isinstance(value, M.Marker) and not (isinstance(value, M.FunctionStub)
                                                and value.value.co_name == "<lambda>"):
            return None  # (a lambda annotates too: it is an expression)
        ann = self.value(value)
        if self.code.co_flags & 0x1000000:  # ``from __future__ import annotations``: stored as text
            if not (isinstance(ann, ast.Constant) and isinstance(ann.value, str)):
                return None
            if self.consts.future_annotations:
                from pellucid.decompiler.annotations_setup import spelled_annotation
                parsed = spelled_annotation(ann.value)
                if parsed is None:
                    return None  # the compiler would not write this text back the same way
                ann = parsed
        return ast.AnnAssign(ast.Name(key.value, ast.Store()), ann, None, 1)

    def op_DELETE_FAST(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        self.emit(out, ast.Delete([ast.Name(arg, ast.Del())]), stack)

    op_DELETE_NAME = op_DELETE_FAST

    def op_DELETE_GLOBAL(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        self.globals_.add(arg)
        self.op_DELETE_FAST(arg, stack, out, ins)

    def op_DELETE_DEREF(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if arg in self.code.co_freevars:
            self.nonlocals.add(arg)
        self.op_DELETE_FAST(arg, stack, out, ins)

    def op_DELETE_ATTR(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        obj = self.value(stack.pop())
        self.emit(out, ast.Delete([ast.Attribute(obj, arg, ast.Del())]), stack)

    def op_DELETE_SUBSCR(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        key = self.value(stack.pop())
        container = self.value(stack.pop())
        self.emit(out, ast.Delete([ast.Subscript(container, key, ast.Del())]), stack)

    def op_UNPACK_SEQUENCE(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if arg == 0:
            # ``[] = x`` stores nothing but still checks that x is empty
            self.store(ast.List([], ast.Store()), stack.pop(), stack, out)  # type: ignore[attr-defined]
            return
        self._unpack(stack, arg, None)

    def op_UNPACK_EX(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        before, after = arg
        self._unpack(stack, before + 1 + after, before)

    def _unpack(self, stack: List[Any], count: int, star: Optional[int]) -> None:
        v = stack.pop()
        group = UnpackGroup(v, count, star)
        if isinstance(v, M.UnpackItem):
            group.parent = v
        for k in reversed(range(count)):
            stack.append(M.UnpackItem((group, k)))

    def op_IMPORT_NAME(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        fromlist = stack.pop()
        level = stack.pop()
        lv = level.value if isinstance(level, ast.Constant) else 0
        fl = fromlist.elts if isinstance(fromlist, ast.Tuple) else None
        stack.append(ImportModule(arg, lv, fl))

    def op_LAZY_IMPORT_NAME(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        """3.15 ``lazy import m`` / ``lazy from m import n`` (PEP 810)."""
        self.op_IMPORT_NAME(arg, stack, out, ins)
        stack[-1].lazy = True

    def op_IMPORT_FROM(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        mod = stack[-1]
        if isinstance(mod, ImportAttr) and mod.value.fromlist is None:
            mod = mod.value  # ``import a.b.c as d`` walks down one IMPORT_FROM per level
        if not isinstance(mod, ImportModule):
            raise StructureError("IMPORT_FROM without a module")
        stack.append(ImportAttr(mod, arg))

    def op_IMPORT_STAR(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        mod = stack.pop()
        self.emit(out, ast.ImportFrom(mod.value or None, [ast.alias("*", None)], mod.level), stack)

    def op_PRINT_EXPR(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        self.emit(out, ast.Expr(self.value(stack.pop())), stack)

    def op_SETUP_ANNOTATIONS(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        pass  # recompiling annotated assignments sets __annotations__ up again

    def op_UNSUPPORTED(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        raise StructureError("unsupported opcode %s" % (arg,))

    # the store dispatcher ------------------------------------------------------------------------
    def store(self, target: ast.expr, v: Any, stack: List[Any], out: List[ast.stmt]) -> None:
        raise NotImplementedError
