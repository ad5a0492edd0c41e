"""What the running interpreter's bytecode, compiler and ``ast`` are like, as named facts.

Every layer above ``bytecode/`` asks these names instead of comparing ``sys.version_info``:
a fact says what differs ("a handler receives one exception value"), not which release
brought it, so a new Python only needs its facts checked here.  Each fact is read off the
interpreter itself where something there tells (``opcode.opmap``, ``dis.stack_effect``, what
``dis`` shows of a tiny function, the fields of ``ast`` nodes); only facts no opcode or API
reveals (a compiler's layout choices, a runtime error message) fall back to the version, and
say so.  The values are plain module constants, computed once at import.

>>> from pellucid.bytecode import features
>>> features.EXCEPTION_TABLE == hasattr((lambda: 0).__code__, "co_exceptiontable")
True
"""
import ast
import dis
import opcode
import sys
import types

_OPS = opcode.opmap
_VERSION = sys.version_info[:2]  # (only for the facts marked "by version" below)


def _stack_effect(name: str, arg: int = 0) -> object:
    """``dis.stack_effect`` of opcode ``name`` (None where the interpreter has no such opcode)."""
    op = _OPS.get(name)
    if op is None:
        return None
    return dis.stack_effect(op, arg if op >= dis.HAVE_ARGUMENT else None)


def _global_call_text() -> str:
    """How ``dis`` shows the ``LOAD_GLOBAL`` that loads a called global (``g`` / ``NULL + g`` /
    ``g + NULL``)."""
    def probe() -> None:
        g()  # type: ignore[name-defined]  # noqa: F821  (never run; only disassembled)
    return next(i.argrepr for i in dis.get_instructions(probe) if i.opname == "LOAD_GLOBAL")


def _compiles(source: str) -> bool:
    try:
        compile(source, "<probe>", "exec")
    except SyntaxError:
        return False
    return True


def _fix_locations_fills_none_end() -> bool:
    node = ast.Expr(ast.Constant(1))
    node.lineno, node.col_offset, node.end_lineno, node.end_col_offset = 1, 0, None, None
    ast.fix_missing_locations(ast.Module([node], []))
    return node.end_lineno is not None


#: ``"3.X"``, for messages that name the running Python.
RUNNING_VERSION = "%d.%d" % _VERSION

# ---- instructions and the stack ----------------------------------------------------------------

#: Exception handlers are found in the code object's exception table; up to 3.10 a block stack
#: built at run time by ``SETUP_*``/``POP_BLOCK`` says where they are.
EXCEPTION_TABLE = hasattr(types.CodeType, "co_exceptiontable")

#: A raised exception reaches its handler as one stack value, and ``PUSH_EXC_INFO`` saves the
#: one being handled before.  Before: three values (traceback, value, type) plus the three of the
#: exception handled before, and ``RERAISE``/``POP_EXCEPT``/``WITH_EXCEPT_START``/
#: ``END_ASYNC_FOR`` work on those six.
EXCEPTION_IS_ONE_VALUE = "PUSH_EXC_INFO" in _OPS

#: ``MAKE_FUNCTION`` pops the new function's qualified name (above its code object).
MAKE_FUNCTION_POPS_QUALNAME = _stack_effect("MAKE_FUNCTION") == -1

#: Defaults, annotations and closure are set one by one by ``SET_FUNCTION_ATTRIBUTE``, and
#: ``MAKE_FUNCTION`` has no flags argument.
FUNCTION_ATTRIBUTES_SET_SEPARATELY = "SET_FUNCTION_ATTRIBUTE" in _OPS

#: A callable takes two stack slots, the callable and a NULL (or ``self``) slot; calls are
#: ``CALL``/``CALL_KW``/``CALL_FUNCTION_EX`` over both.
CALL_HAS_NULL_SLOT = "PUSH_NULL" in _OPS

#: ``LOAD_GLOBAL``'s low argument bit pushes a NULL slot with the global (a call's callable).
LOAD_GLOBAL_PUSHES_NULL = _stack_effect("LOAD_GLOBAL", 1) == 2

#: The NULL slot goes above the callable (``g + NULL``), not below it (``NULL + g``).
NULL_ABOVE_CALLABLE = _global_call_text().endswith("+ NULL")

#: ``LOAD_ATTR``'s low argument bit loads a method (and its NULL/``self`` slot), which
#: ``LOAD_METHOD`` did before.
LOAD_ATTR_METHOD_BIT = _stack_effect("LOAD_ATTR", 1) == 1

#: ``return <constant>`` is one instruction, ``RETURN_CONST`` (normalised into ``LOAD_CONST``;
#: ``RETURN_VALUE`` at one offset).
RETURN_CONST = "RETURN_CONST" in _OPS

#: Conditional jumps only go forward: a loop's test jumps forward out of it and a plain
#: backward jump closes the loop.
FORWARD_ONLY_CONDITIONAL_JUMPS = "POP_JUMP_IF_FALSE" in _OPS \
    and _OPS["POP_JUMP_IF_FALSE"] not in dis.hasjabs and "POP_JUMP_BACKWARD_IF_FALSE" not in _OPS

#: ``and``/``or`` keep their value with ``COPY 1; POP_JUMP_IF_X; POP_TOP``; there is no
#: ``JUMP_IF_X_OR_POP``.
BOOL_OPS_COPY_AND_TEST = "JUMP_IF_FALSE_OR_POP" not in _OPS

#: Conditional jumps test an exact bool, made by ``TO_BOOL`` first.
TO_BOOL_BEFORE_TESTS = "TO_BOOL" in _OPS

#: A ``for`` loop's ``FOR_ITER`` exits through ``END_FOR``.
FOR_EXITS_THROUGH_END_FOR = "END_FOR" in _OPS

#: ``END_FOR`` pops only the exhausted iterator's placeholder value; a ``POP_TOP`` after it pops
#: the iterator.
END_FOR_THEN_POP_TOP = _stack_effect("END_FOR") == -1

#: A generator's code starts with ``RETURN_GENERATOR; POP_TOP``, which only make the generator.
GENERATOR_PROLOGUE = "RETURN_GENERATOR" in _OPS

#: ``yield from``/``await`` are a ``SEND`` loop, not one ``YIELD_FROM``.
DELEGATION_IS_SEND_LOOP = "SEND" in _OPS and "YIELD_FROM" not in _OPS

#: ``from m import *``, the interactive echo and PEP 695's helpers are ``CALL_INTRINSIC_1/2``.
INTRINSIC_CALLS = "CALL_INTRINSIC_1" in _OPS

#: ``LOAD_CLOSURE`` is a pseudo instruction, assembled as ``LOAD_FAST`` of the cell's slot.
CLOSURE_LOADS_ARE_FAST_LOADS = _OPS.get("LOAD_CLOSURE", 0) >= getattr(opcode, "MIN_PSEUDO_OPCODE", 256)

#: A generator's first instruction, ``GEN_START``, pops the value it is started with.
GEN_START = "GEN_START" in _OPS

#: ``finally`` bodies are subroutines (``BEGIN_FINALLY``/``CALL_FINALLY``/``POP_FINALLY``/
#: ``END_FINALLY``), not copied onto each way out.
FINALLY_SUBROUTINES = "BEGIN_FINALLY" in _OPS

#: ``assert`` loads ``AssertionError`` with ``LOAD_GLOBAL``, so a local of that name would be
#: taken instead; later ones have an instruction of their own for it.
ASSERT_LOADS_GLOBAL_ASSERTION_ERROR = "LOAD_ASSERTION_ERROR" not in _OPS \
    and "LOAD_COMMON_CONSTANT" not in _OPS

#: ``match`` statements exist (``MATCH_CLASS`` and friends).
MATCH_STATEMENT = "MATCH_CLASS" in _OPS

#: ``MATCH_CLASS``/``MATCH_KEYS`` push a success bool above their result.
MATCH_PUSHES_SUCCESS = _stack_effect("MATCH_KEYS") == 2

#: ``super().attr`` compiles to ``LOAD_SUPER_ATTR`` (which reads the ``__class__`` cell itself),
#: unless the module names ``super`` at its top level.
SUPER_ATTR_INSTRUCTION = "LOAD_SUPER_ATTR" in _OPS

#: ``try``/``except*`` exists (``CHECK_EG_MATCH``).
EXCEPT_STAR = "CHECK_EG_MATCH" in _OPS

#: ``dis.Instruction`` has ``line_number`` (``starts_line`` is a bool then).
INSTRUCTION_LINE_NUMBER = "line_number" in getattr(dis.Instruction, "_fields", ())

#: Code objects record columns and end lines (``co_positions``), not lines only.
COLUMN_POSITIONS = hasattr(types.CodeType, "co_positions")

#: A code object's docstring is ``co_consts[0]`` only when the ``CO_HAS_DOCSTRING`` flag says so
#: (0: no such flag; a string first constant is the docstring).
CO_HAS_DOCSTRING = next((flag for flag, name in dis.COMPILER_FLAG_NAMES.items()
                         if name == "HAS_DOCSTRING"), 0)

#: A ``with`` statement loads ``__exit__`` and ``__enter__`` with ``LOAD_SPECIAL`` (an unbound
#: method and its ``self``: two slots for ``__exit__``), not with ``BEFORE_WITH``.
WITH_LOADS_SPECIAL_METHODS = "LOAD_SPECIAL" in _OPS

#: ``GET_ITER`` pushes the iterator and an index or NULL beside it; ``FOR_ITER`` reads both and
#: ``POP_ITER``/``END_SEND`` pop both (a ``SEND`` loop's receiver has a NULL beside it too).
ITERATORS_TAKE_TWO_SLOTS = _stack_effect("GET_ITER") == 1

#: ``CALL_FUNCTION_EX`` always has a keyword-arguments slot (NULL: none), not a flag for it.
CALL_EX_ALWAYS_HAS_KWARGS_SLOT = WITH_LOADS_SPECIAL_METHODS and _stack_effect("CALL_FUNCTION_EX") == -3

#: ``all``/``any``/``tuple`` (and ``list``/``set``) of a generator expression are compiled
#: inline, behind a test that the name is the builtin (``LOAD_COMMON_CONSTANT``).
INLINED_BUILTIN_CALLS = "LOAD_COMMON_CONSTANT" in _OPS

#: ``IMPORT_NAME``'s argument has a "lazy" bit (``lazy import``, PEP 810).
LAZY_IMPORTS = _compiles("lazy import m")

#: Unpacking in comprehensions (``[*xs for xs in xss]``, PEP 798): the comprehension's result
#: is extended (``LIST_EXTEND``/``SET_UPDATE``/``DICT_UPDATE``) from inside its loops.
COMPREHENSION_UNPACKING = _compiles("[*x for x in y]")

# ---- compiler layouts no opcode tells ----------------------------------------------------------

#: A slice of constants is folded into one constant ``slice`` object (``x[1:2]``).
CONSTANT_SLICES = any(type(c) is slice for c in compile("x[1:2]", "<probe>", "eval").co_consts)

#: The compiler turns ``'%s' % (a, b)`` (a constant string, a tuple display) into an f-string:
#: each item converted with ``str()`` right after it is evaluated, before the next one.
PERCENT_FORMAT_AS_FSTRING = not any(
    i.opname.startswith("BINARY") for i in dis.get_instructions(
        compile("'%s' % (x,)", "<probe>", "eval")))

#: Annotations of a class or module body are evaluated lazily, by a compiler-made
#: ``__annotate__`` (PEP 649, 3.14+): only under ``from __future__ import annotations`` does such a
#: body still set up ``__annotations__`` and store the annotations (as text) itself.
DEFERRED_ANNOTATIONS = not any(i.opname == "SETUP_ANNOTATIONS" for i in dis.get_instructions(
    compile("x: int", "<probe>", "exec")))


def _posonly_annotations_first() -> bool:
    ns: dict = {}
    exec(compile("def f(a: 1, /, b: 2): pass", "<probe>", "exec"), ns)  # noqa: S102
    return list(ns["f"].__annotations__) == ["a", "b"]


#: A ``def``'s annotations are evaluated in parameter order (3.15); before, the parameters
#: after ``/`` came before those ahead of it (``def f(a: A, /, b: B)``: ``B``, then ``A``).
POSONLY_ANNOTATIONS_FIRST = _posonly_annotations_first()

# ---- compiler layouts no opcode tells (by version) --------------------------------------------

#: ``while c: body`` is compiled as ``if c:`` around a loop that tests ``c`` again at its end
#: (3.10 to 3.13; 3.14 tests once, at the top, and jumps back there).
ROTATED_LOOP_TESTS = (3, 10) <= _VERSION < (3, 14)

#: A store that a later store to the same name overwrites at once (``a, a = t``; ``for a, _, _
#: in``) is compiled as ``POP_TOP`` (3.13+).
OVERWRITTEN_STORES_POPPED = _VERSION >= (3, 13)

#: A module-level ``import``'s name is called on as a plain attribute with a NULL beside it, not
#: with the method-call form (3.11+).
IMPORTED_NAMES_CALLED_PLAINLY = _VERSION >= (3, 11)

#: ``with`` on an object without ``__enter__``/``__exit__`` raises ``TypeError`` naming the
#: type, not ``AttributeError`` (3.11+).
WITH_CHECKS_PROTOCOL = _VERSION >= (3, 11)

#: ... naming it as ``%T`` does (3.14+): a class statement's type (a heap type) by
#: ``__module__ + '.' + __qualname__``, or its bare ``__qualname__`` when the module is
#: ``builtins``, ``__main__`` or not a str; before, by ``tp_name`` (a heap type's bare name).
WITH_ERROR_NAMES_QUALIFIED_TYPE = _VERSION >= (3, 14)

#: A class pattern whose class is not a type raises ``TypeError("called match pattern must be a
#: class")``; before 3.12 the message says "a type".
MATCH_CLASS_ERROR_SAYS_CLASS = _VERSION >= (3, 12)

#: ... and from 3.15 it says ``"class pattern must refer to a class"``.
MATCH_CLASS_ERROR_NAMES_PATTERN = _VERSION >= (3, 15)

#: 3.12's symbol table (seen on 3.12.1) mangles the private names of a function that follow a
#: generic class statement anywhere inside it with that class's name.
GENERIC_CLASS_MANGLES_ENCLOSING = _VERSION == (3, 12)

# ---- ast ---------------------------------------------------------------------------------------

#: ``ast.unparse`` exists (3.8 needs the ``astunparse`` backport).
AST_UNPARSE = hasattr(ast, "unparse")

#: ``ast.fix_missing_locations`` fills an ``end_lineno`` that is None (3.8's keeps it).
AST_FIX_FILLS_NONE_END = _fix_locations_fills_none_end()

#: The parser wraps a subscript's index in ``ast.Index``.
AST_INDEX_WRAPPER = isinstance(ast.parse("a[b]", mode="eval").body.slice,  # type: ignore[attr-defined]
                               getattr(ast, "Index", ()))

#: ``ast.TryStar`` exists.
AST_TRY_STAR = hasattr(ast, "TryStar")

#: Function, class (and type alias) nodes have ``type_params`` (PEP 695).
AST_TYPE_PARAMS = "type_params" in ast.FunctionDef._fields

#: Type parameters have ``default_value`` (PEP 696).
AST_TYPE_PARAM_DEFAULTS = "default_value" in getattr(ast, "TypeVar", ast.AST)._fields
