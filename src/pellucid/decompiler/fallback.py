"""The documented fallback: a state machine over basic blocks, for flow no statement can express.

When the structured decompiler raises :class:`~pellucid.decompiler.errors.StructureError` (or
breaks internally) for a code object, :func:`fallback_statements` translates that code object's
neutral instructions into plain Python of this shape::

    __pellucid_fallback__ = '<reason>'          # the marker: survives ast/unparse, says why
    __pellucid_state = 0
    while True:
        if __pellucid_state == 0:
            __pellucid_s0 = x                   # one statement per instruction
            ...
            __pellucid_state = 3
            continue
        if __pellucid_state == 3:
            ...

Stack slots that hold values live in ``__pellucid_s<depth>``; what each slot holds at a block's
entry (a value, a call's NULL, a code object about to become a function, the saved exception
state...) is computed by a dataflow over the CFG, so only real values are ever stored.

Semantics kept exactly: evaluation order (one statement per instruction), return values, raised
exceptions and their ``__cause__``/``__context__`` (handlers re-enter the handled exception with
``try: raise e / except BaseException:`` so ``sys.exc_info()``, bare ``raise`` and implicit
chaining see it; the exception's ``__context__`` and ``__traceback__`` are restored after that
re-entry), generators (``yield``/``yield from``/``await`` stay in the function, so its kind and
flags are unchanged), ``with`` (``type(m).__enter__(m)``, the bound ``__exit__`` kept in a slot),
closures (nested functions are ``def`` statements inside the fallback body).

Known differences (documented, not silent): the traceback of an exception that passes through a
fallback handler has more entries for the frame; the frame's ``f_lasti``/line numbers differ;
``sys.exc_info()`` inside a handler shows only the innermost handled exception (an outer one
becomes visible again once the inner handler ends, as in CPython); a class body that itself needs
the fallback keeps the helper names (``__pellucid_state``...) as class attributes; the marker
``__pellucid_fallback__`` is an extra local (a global in module code, an attribute in a class).
"""
import ast
import contextlib
import dis
import os
import threading
import types
from typing import Any, Dict, Iterator, List, Optional, Tuple

from pellucid.bytecode.cfg import CFG, Block
from pellucid.bytecode.features import (EXCEPTION_IS_ONE_VALUE, EXCEPTION_TABLE, GEN_START,
                                        MAKE_FUNCTION_POPS_QUALNAME, MATCH_CLASS_ERROR_NAMES_PATTERN,
                                        MATCH_CLASS_ERROR_SAYS_CLASS,
                                        MATCH_PUSHES_SUCCESS, POSONLY_ANNOTATIONS_FIRST,
                                        WITH_CHECKS_PROTOCOL,
                                        WITH_ERROR_NAMES_QUALIFIED_TYPE,
                                        WITH_LOADS_SPECIAL_METHODS)
from pellucid.bytecode.instruction import Instr
from pellucid.bytecode.normalize import normalize
from pellucid.bytecode.positions import instruction_positions
from pellucid.decompiler.constants import ConstantPool
from pellucid.decompiler.errors import StructureError
from pellucid.decompiler.unparse import unparse
from pellucid.decompiler.tree_nodes import copy_tree

MARKER = "__pellucid_fallback__"
STATE = "__pellucid_state"
ENV_FORCE = "PELLUCID_FORCE_FALLBACK"
_COMPREHENSION_NAMES = ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>")
CO_OPTIMIZED = 0x1

# Instructions that never raise: they give a block's handler no way in.
_CANNOT_RAISE = frozenset({"POP_EXCEPT", "NOP", "JUMP", "COPY", "SWAP", "PUSH_NULL", "LOAD_CONST",
                           "PUSH_EXC_INFO"})

# The neutral ops (pellucid.bytecode.neutral_ops) the fallback has no ``op_`` method for, so it
# refuses them (FallbackError): every other op of the table has one (tests/test_neutral_ops.py).
REFUSED = frozenset({
    "CHECK_EG_MATCH", "PREP_RERAISE_STAR", "CLEANUP_THROW", "END_SEND",
    "TYPEVAR", "PARAMSPEC", "TYPEVARTUPLE", "TYPEVAR_WITH_BOUND", "TYPEVAR_WITH_CONSTRAINTS",
    "SET_TYPEPARAM_DEFAULT", "SET_FUNCTION_TYPE_PARAMS", "SUBSCRIPT_GENERIC", "TYPE_ALIAS",
    # (no fixed stack effect)
    "SEND", "END_FOR", "RETURN_GENERATOR", "BEGIN_FINALLY", "CALL_FINALLY", "POP_FINALLY",
    "END_FINALLY", "WITH_CLEANUP_START", "WITH_CLEANUP_FINISH",
})

# Slot kinds that hold a value in ``__pellucid_s<depth>``; everything else is static.
V = "v"
VAR_KINDS = (V, "saved_local", "await", "yf", "anext")  # kinds whose value lives in the slot variable


class FallbackError(Exception):
    """The fallback itself met bytecode it cannot translate (reported as a DecompileError)."""


def forced(code: Optional[types.CodeType] = None) -> bool:
    """``PELLUCID_FORCE_FALLBACK=1`` (for testing) or :func:`force_fallback`: ``code`` (every
    code object, unless :func:`force_fallback` named some) goes through the fallback."""
    if getattr(_FORCE, "reason", None) is not None:
        codes = getattr(_FORCE, "codes", None)
        if codes is None or (code is not None and any(c is code for c in codes)):
            return True
    return os.environ.get(ENV_FORCE, "") not in ("", "0")


def _forced_reason() -> str:
    return getattr(_FORCE, "reason", None) or "forced by %s" % ENV_FORCE


# Per thread, so a retry in one thread does not change how another thread decompiles.
_FORCE = threading.local()


@contextlib.contextmanager
def force_fallback(reason: str, codes: Optional[List[types.CodeType]] = None) -> Iterator[None]:
    """Decompile everything inside the block (only the code objects ``codes``, when given) with
    the fallback, whose marker says ``reason``.

    Used when the structured output is nested too deeply for the recursive passes after it
    (``ast`` visitors, unparse, CPython's compiler): the fallback's one statement per
    instruction keeps every expression flat; and by :func:`pellucid.recompile` when the
    verifier did not accept the structured form of some code objects.
    """
    previous = getattr(_FORCE, "reason", None), getattr(_FORCE, "codes", None)
    _FORCE.reason = reason
    _FORCE.codes = list(codes) if codes is not None else None
    try:
        yield
    finally:
        _FORCE.reason, _FORCE.codes = previous


def _slot(depth: int) -> str:
    return "__pellucid_s%d" % depth


def _cells(kind: str, payload: Any) -> str:
    """A ``closure`` slot (the cell of the variable ``payload``) or a ``closures`` slot (a tuple
    of such cells) as an expression: a lambda closing over a variable has that very cell in its
    closure.  (Dynamo, 3.13+, hands closure tuples to functions it builds at run time.)"""
    if kind == "closure":
        return "(lambda: %s).__closure__[0]" % payload
    return "(%s)" % "".join(_cells("closure", n) + ", " for n in payload)


def _local(name: str) -> str:
    """Local names that are not identifiers (``.0`` of comprehensions) get a valid spelling."""
    if name.isidentifier():
        return name
    return "__pellucid_" + "".join(c if c.isalnum() else "_" for c in name)


def _bin(sym: str) -> str:
    return sym


class _State:
    """Abstract stack (tuple of slots) and number of handled exceptions at a point."""

    __slots__ = ("stack", "nexc")

    def __init__(self, stack: Tuple[Tuple[str, Any], ...], nexc: int) -> None:
        self.stack = stack
        self.nexc = nexc


def _merge_slot(a: Tuple[str, Any], b: Tuple[str, Any]) -> Tuple[str, Any]:
    if a == b or (a[0] == b[0] and a[1] is b[1]):
        return a
    if a[0] == V and b[0] == V:
        return (V, None)
    raise FallbackError("stack slots disagree at a join: %r / %r" % (a[0], b[0]))


class Fallback:
    """Translate one code object; ``lines()`` is the body text (without the ``def`` line)."""

    def __init__(self, code: types.CodeType, pool: ConstantPool, reason: str,
                 function: Optional[bool] = None) -> None:
        self.code = code
        self.pool = pool
        self.reason = reason
        self.instrs: List[Instr] = normalize(code)
        if not self.instrs:
            raise FallbackError("no instructions")
        self.cfg = CFG(self.instrs)
        self.function = bool(code.co_flags & CO_OPTIMIZED) if function is None else function
        self.globals_: set = set()
        self.nonlocals: set = set()
        self.nfn = 0
        self.fn_names: Dict[int, str] = {}  # see _realize
        self.entry: Dict[Block, _State] = {}
        self.exit_nexc: Dict[Block, int] = {}
        self._tolerant = False
        self.legacy_nexc: Dict[int, int] = {}  # (≤3.10) handler -> handled exceptions at its setup
        self.uses_match_class = False
        self.uses_match_keys = False

    # -- dataflow -------------------------------------------------------------------------------
    def analyse(self) -> None:
        if not EXCEPTION_TABLE and any(b.handler is not None for b in self.cfg.blocks):
            # ≤3.10 unwinds the block stack on the way to a handler: the EXCEPT_HANDLER blocks
            # of clauses entered after the handler's SETUP_* are popped (each restoring the
            # exception it saved), so a handler runs with one more handled exception than its
            # protected code had where it was set up -- not than where the exception came from
            # (an ``__exit__`` raising in a ``with`` handler, a ``finally`` around an ``except``
            # clause).  A first pass finds that level: the lowest of the code it protects.
            self._tolerant = True
            self._analyse()
            self.entry = {}
            self._tolerant = False
        self._analyse()

    def _analyse(self) -> None:
        first = self.cfg.blocks[0]
        start = ((V, None),) if GEN_START and _gen_start(self.code) else ()
        self.entry[first] = _State(start, 0)
        work = [first]
        guard = 0
        while work:
            guard += 1
            if guard > 100000:
                raise FallbackError("stack dataflow does not settle")
            b = work.pop()
            st = self.entry[b]
            if self._tolerant:
                # (every handler in force here was set up at this level or below)
                h = b.handler
                while h is not None:
                    known = self.legacy_nexc.get(h.target)
                    if known is None or st.nexc < known:
                        self.legacy_nexc[h.target] = st.nexc
                    h = h.outer
            out: List[str] = []
            end, nexc_exit, edges = self.run_block(b, st, out, emit=False)
            for succ, state in edges:
                if self._join(succ, state):
                    work.append(succ)
            h = b.handler
            if h is not None and h.target in self.cfg.block_at and nexc_exit is not None:
                hb = self.cfg.block_at[h.target]
                if self._join(hb, self.handler_state(st, nexc_exit, h)):
                    work.append(hb)

    def handler_state(self, st: _State, rs: _State, h: Any) -> _State:
        nexc = rs.nexc
        base = list(rs.stack[:h.depth])
        if len(base) < h.depth:
            raise FallbackError("handler deeper than the stack")
        if EXCEPTION_IS_ONE_VALUE:
            if h.lasti:
                base.append((V, None))
            base.append((V, None))
            return _State(tuple(base), nexc)
        nexc = self.legacy_nexc.get(h.target, nexc)
        base.extend([("saved", None)] * 3 + [(V, None)] * 3)
        return _State(tuple(base), nexc + 1)

    def _join(self, b: Block, st: _State) -> bool:
        old = self.entry.get(b)
        if old is None:
            self.entry[b] = st
            return True
        if self._tolerant and len(old.stack) == len(st.stack) and old.nexc != st.nexc:
            if st.nexc < old.nexc:
                self.entry[b] = st
                return True
            return False
        if len(old.stack) != len(st.stack) or old.nexc != st.nexc:
            raise FallbackError("stack depth differs at block %d" % b.id)
        new = tuple(_merge_slot(x, y) for x, y in zip(old.stack, st.stack))
        if new != old.stack:
            self.entry[b] = _State(new, old.nexc)
            return True
        return False

    # -- output ---------------------------------------------------------------------------------
    def lines(self) -> List[str]:
        self.analyse()
        body: List[str] = []
        blocks = [b for b in self.cfg.blocks if b in self.entry]
        for b in blocks:
            st = self.entry[b]
            out: List[str] = []
            _end, nexc_exit, _edges = self.run_block(b, st, out, emit=True)
            inner = self._assemble(out, st.nexc)
            h = b.handler
            if h is not None and h.target in self.cfg.block_at and nexc_exit is not None:
                hb = self.cfg.block_at[h.target]
                hst = self.handler_state(st, nexc_exit, h)
                catch = ["except __pellucid_builtins.BaseException as __pellucid_exc:"]
                d = h.depth
                if EXCEPTION_IS_ONE_VALUE:
                    if h.lasti:
                        catch.append("    %s = -1" % _slot(d))
                        d += 1
                    catch.append("    %s = __pellucid_exc" % _slot(d))
                else:
                    d += 3
                    catch.append("    %s = __pellucid_exc.__traceback__" % _slot(d))
                    catch.append("    %s = __pellucid_exc" % _slot(d + 1))
                    catch.append("    %s = __pellucid_builtins.type(__pellucid_exc)" % _slot(d + 2))
                    catch.append("    __pellucid_e%d = __pellucid_exc" % (hst.nexc - 1))
                catch.append("    %s = %d" % (STATE, hb.id))
                catch.append("    continue")
                inner = ["try:"] + _indent(inner) + catch
            body.append("if %s == %d:" % (STATE, b.id))
            body.extend(_indent(inner or ["pass"]))
        # Builtins the translation itself calls come from the builtins module: the code's own
        # globals may shadow them (the ast module defines a class named ``slice``).
        head = ["%s = %r" % (MARKER, self.reason), "import builtins as __pellucid_builtins",
                "%s = %d" % (STATE, self.cfg.blocks[0].id)]
        if self.uses_match_class:
            head[2:2] = _MATCH_CLASS_HELPER
        if self.uses_match_keys:
            head[2:2] = _MATCH_KEYS_HELPER
        nargs = self.code.co_argcount + self.code.co_kwonlyargcount + bool(self.code.co_flags & 4) \
            + bool(self.code.co_flags & 8)
        args = set(self.code.co_varnames[:nargs])
        cells = [c for c in self.code.co_cellvars if c not in args and c != "__class__"]
        if cells and self.function:  # nested code binds them (walrus in a comprehension...)
            head.append("if False:")
            head.extend("    %s = None" % c for c in cells)
        decl = []
        if self.globals_:
            decl.append("global " + ", ".join(sorted(self.globals_)))
        if self.nonlocals:
            decl.append("nonlocal " + ", ".join(sorted(self.nonlocals)))
        return decl + head + ["while True:"] + _indent(body)

    def _assemble(self, tokens: List[Any], nexc: int) -> List[str]:
        """Lines of a block; ``("enter", k)``/``("exit", n)`` tokens open and close the regions
        where handled exception ``k`` is re-established."""
        root: List[str] = []
        lists: List[List[str]] = [root]
        ks: List[int] = []

        def open_(k: int) -> None:
            ks.append(k)
            lists.append([])

        def close() -> None:
            k = ks.pop()
            body = lists.pop()
            lists[-1].extend(self._reenter(k, body or ["pass"]))

        if nexc > 0:
            open_(nexc - 1)
        for t in tokens:
            if isinstance(t, tuple):
                if t[0] == "enter":
                    open_(t[1])
                else:
                    if ks:
                        close()
                    if not ks and t[1] > 0:
                        open_(t[1] - 1)
            else:
                lists[-1].append(t)
        while ks:
            close()
        return root

    def _reenter(self, k: int, inner: List[str]) -> List[str]:
        """Run ``inner`` while exception ``__pellucid_e<k>`` is the one being handled."""
        e = "__pellucid_e%d" % k
        return ["__pellucid_ctx = %s.__context__" % e, "__pellucid_tb = %s.__traceback__" % e,
                "try:", "    raise %s" % e, "except __pellucid_builtins.BaseException:",
                "    %s.__context__ = __pellucid_ctx" % e,
                "    %s.__traceback__ = __pellucid_tb" % e] + _indent(inner)

    # -- one block ------------------------------------------------------------------------------
    def run_block(self, b: Block, st: _State, out: List[str], emit: bool):
        stack = list(st.stack)
        self.emitting = emit
        self.nexc = st.nexc
        self.out = out
        self.stack = stack
        self.edges: List[Tuple[Block, _State]] = []
        self.ended = False
        # The state an exception leaves the block with: before its last instruction that can
        # raise (``None``: none can).  3.12+ covers a lone ``POP_EXCEPT`` that ends a nested
        # clause with the outer cleanup handler; taking the state before it would enter that
        # handler with one handled exception too many.
        self.raise_state: Optional[_State] = None
        self.block_instrs = b.instrs
        for pos, ins in enumerate(b.instrs):
            if self.ended:
                break
            self.pos = pos
            fn = getattr(self, "op_" + ins.op, None)
            if ins.op not in _CANNOT_RAISE:
                self.raise_state = _State(tuple(self.stack), self.nexc)
            if fn is None:
                raise FallbackError("no fallback for %s" % ins.op)
            first = len(out)
            fn(ins, ins.arg)
            if emit:
                _mark_origin(out, first, ins)
        if not self.ended:
            nxt = b.fallthrough
            if nxt is None:
                raise FallbackError("block %d falls off the end" % b.id)
            self.goto(nxt)
        return None, self.raise_state, self.edges

    # helpers
    def w(self, line: str) -> None:
        self.out.append(line)

    def push(self, expr: str, kind: str = V, payload: Any = None) -> None:
        d = len(self.stack)
        self.stack.append((kind, payload))
        if kind == V:
            self.w("%s = %s" % (_slot(d), expr))

    def push_static(self, kind: str, payload: Any = None) -> None:
        self.stack.append((kind, payload))

    def pop(self) -> str:
        d = len(self.stack) - 1
        if d < 0:
            raise FallbackError("stack underflow")
        self._realize(d)
        kind, payload = self.stack.pop()
        if kind in ("closure", "closures"):
            return _cells(kind, payload)
        if kind != V:
            raise FallbackError("a %s slot used as a value" % kind)
        return _slot(d)

    def pop_any(self, closures: bool = False) -> Tuple[str, Any, str]:
        """The top slot's kind, payload and name; a cell or closure tuple (unless ``closures``:
        for the function it is the closure of) is a value."""
        d = len(self.stack) - 1
        if d < 0:
            raise FallbackError("stack underflow")
        self._realize(d)
        kind, payload = self.stack.pop()
        if kind in ("closure", "closures") and not closures:
            self.w("%s = %s" % (_slot(d), _cells(kind, payload)))
            return V, None, _slot(d)
        return kind, payload, _slot(d)

    def top_name(self) -> str:
        return _slot(len(self.stack) - 1)

    def const(self, value: Any) -> str:
        expr = self.pool.expr(value)
        if any(isinstance(node, ast.Call) and getattr(node, "_from_constant", False)
               for node in ast.walk(expr)):
            # A frozenset constant (``x in {'a', 'b'}``) has no literal outside that test: written
            # ``frozenset({...})`` it would call whatever the global ``frozenset`` is; bound
            # under a reserved name it is the very constant.
            return unparse(self.pool.bind(value))
        return unparse(expr)

    def state_of(self) -> _State:
        return _State(tuple(self.stack), self.nexc)

    def goto(self, target: Block, indent: str = "") -> None:
        if any(k == "function" for k, _ in self.stack):
            raise FallbackError("a function being built crosses a block boundary")
        self.edges.append((target, self.state_of()))
        self.w(indent + "%s = %d" % (STATE, target.id))
        self.w(indent + "continue")

    def target_block(self, ins: Instr) -> Block:
        blk = self.cfg.block_at.get(ins.target)
        if blk is None:
            raise FallbackError("jump to no block")
        return blk

    def end(self) -> None:
        self.ended = True

    # -- loads / stores ---------------------------------------------------------------------
    def op_LOAD_CONST(self, ins: Instr, arg: Any) -> None:
        if isinstance(arg, types.CodeType):
            self.push_static("code", arg)
            return
        d = len(self.stack)
        self.stack.append((V, ("const", arg)))
        self.w("%s = %s" % (_slot(d), self.const(arg)))

    def op_LOAD_FAST(self, ins: Instr, arg: str) -> None:
        self.push(_local(arg))

    def op_LOAD_FAST_AND_CLEAR(self, ins: Instr, arg: str) -> None:
        # 3.12 inlined comprehensions: save the outer value (or "unbound") and clear the name.
        n = _local(arg)
        d = len(self.stack)
        self.stack.append((V, None))
        self.w("try:")
        self.w("    %s = (%s,)" % (_slot(d), n))
        self.w("    del %s" % n)
        self.w("except __pellucid_builtins.NameError:")
        self.w("    %s = ()" % _slot(d))
        self.stack[-1] = ("saved_local", arg)

    def op_STORE_FAST(self, ins: Instr, arg: str) -> None:
        kind, payload, name = self.pop_any()
        if kind == "saved_local":  # restore after an inlined comprehension
            n = _local(arg)
            self.w("if %s:" % name)
            self.w("    (%s,) = %s" % (n, name))
            self.w("else:")
            self.w("    try:")
            self.w("        del %s" % n)
            self.w("    except __pellucid_builtins.NameError:")
            self.w("        pass")
            return
        if kind != V:
            raise FallbackError("storing a %s slot" % kind)
        self.w("%s = %s" % (_local(arg), name))

    def op_DELETE_FAST(self, ins: Instr, arg: str) -> None:
        self.w("del %s" % _local(arg))

    def op_LOAD_GLOBAL(self, ins: Instr, arg: str) -> None:
        code = self.code
        if self.function and arg in code.co_varnames + code.co_cellvars + code.co_freevars:
            # The global of a name the function also uses as a local (3.8's ``assert`` loads
            # ``AssertionError`` so, whatever the function calls it): the module's, then the
            # builtins', as LOAD_GLOBAL looks them up.
            d = len(self.stack)
            self.stack.append((V, None))
            self.w("if %r in __pellucid_builtins.globals():" % arg)
            self.w("    %s = __pellucid_builtins.globals()[%r]" % (_slot(d), arg))
            self.w("elif __pellucid_builtins.hasattr(__pellucid_builtins, %r):" % arg)
            self.w("    %s = __pellucid_builtins.%s" % (_slot(d), arg))
            self.w("else:")
            self.w("    raise __pellucid_builtins.NameError(%r)" % ("name %r is not defined" % arg))
            return
        if not self.function and code.co_name != "<module>" and any(
                i.op == "STORE_NAME" and i.arg == arg for i in self.instrs):
            # (3.12+ class bodies' inlined comprehensions read globals: a bare name there
            # would find the class's own first)
            self.push("(lambda: %s)()" % arg)
            return
        self.push(arg)

    def op_LOAD_NAME(self, ins: Instr, arg: str) -> None:
        self.push(arg)

    def op_STORE_NAME(self, ins: Instr, arg: str) -> None:
        kind, payload, name = self.pop_any()
        if arg == "__classcell__":
            return  # the class statement creates and checks the __class__ cell itself
        if kind != V:
            if kind == "type_params" and arg == "__type_params__":
                return  # (a generic class statement stores it itself)
            raise FallbackError("storing a %s slot" % kind)
        self.w("%s = %s" % (arg, name))

    def op_DELETE_NAME(self, ins: Instr, arg: str) -> None:
        self.w("del %s" % arg)

    def op_STORE_GLOBAL(self, ins: Instr, arg: str) -> None:
        if self.function:
            self.globals_.add(arg)
        self.w("%s = %s" % (arg, self.pop()))

    def op_DELETE_GLOBAL(self, ins: Instr, arg: str) -> None:
        if self.function:
            self.globals_.add(arg)
        self.w("del %s" % arg)

    def op_LOAD_DEREF(self, ins: Instr, arg: str) -> None:
        self.push(arg)

    op_LOAD_CLASSDEREF = op_LOAD_DEREF

    def op_STORE_DEREF(self, ins: Instr, arg: str) -> None:
        if arg in self.code.co_freevars and arg not in self.code.co_cellvars:
            self.nonlocals.add(arg)
        self.w("%s = %s" % (arg, self.pop()))

    def op_DELETE_DEREF(self, ins: Instr, arg: str) -> None:
        if arg in self.code.co_freevars and arg not in self.code.co_cellvars:
            self.nonlocals.add(arg)
        self.w("del %s" % arg)

    def op_LOAD_CLOSURE(self, ins: Instr, arg: str) -> None:
        self.push_static("closure", arg)

    def op_LOAD_LOCALS(self, ins: Instr, arg: Any) -> None:
        self.push("__pellucid_builtins.locals()")

    def op_LOAD_FROM_DICT_OR_DEREF(self, ins: Instr, arg: str) -> None:
        self.pop()
        if arg == ".type_params":
            # a generic class body storing its type parameters as ``__type_params__``: the
            # ``class C[T]`` statement does that (see op_STORE_NAME)
            self.push_static("type_params")
            return
        self.push(arg)

    def op_LOAD_FROM_DICT_OR_GLOBALS(self, ins: Instr, arg: str) -> None:
        self.pop()
        self.push(arg)

    def op_LOAD_ATTR(self, ins: Instr, arg: str) -> None:
        o = self.pop()
        self.push("%s.%s" % (o, arg))

    def op_STORE_ATTR(self, ins: Instr, arg: str) -> None:
        o = self.pop()
        v = self.pop()
        self.w("%s.%s = %s" % (o, arg, v))

    def op_DELETE_ATTR(self, ins: Instr, arg: str) -> None:
        self.w("del %s.%s" % (self.pop(), arg))

    def op_LOAD_SUPER_ATTR(self, ins: Instr, arg: Any) -> None:
        name, two = arg
        s = self.pop()
        c = self.pop()
        sup = self.pop()
        if two:
            self.push("%s(%s, %s).%s" % (sup, c, s, name))
        else:
            # zero-argument super() needs the __class__ cell and first argument: spell them out
            self.push("%s(%s, %s).%s" % (sup, c, s, name))

    def op_PUSH_NULL(self, ins: Instr, arg: Any) -> None:
        self.push_static("null")

    def op_LOAD_BUILD_CLASS(self, ins: Instr, arg: Any) -> None:
        self.push_static("buildclass")

    def op_LOAD_ASSERTION_ERROR(self, ins: Instr, arg: Any) -> None:
        # the builtin, whatever the code's own scopes call AssertionError
        self.push("__pellucid_builtins.AssertionError")

    def op_LOAD_BUILTIN(self, ins: Instr, arg: str) -> None:
        self.push("__pellucid_builtins.%s" % arg)

    def op_SUBSCR(self, ins: Instr, arg: Any) -> None:
        k = self.pop()
        o = self.pop()
        self.push("%s[%s]" % (o, k))

    def op_STORE_SUBSCR(self, ins: Instr, arg: Any) -> None:
        k = self.pop()
        o = self.pop()
        v = self.pop()
        self.w("%s[%s] = %s" % (o, k, v))

    def op_DELETE_SUBSCR(self, ins: Instr, arg: Any) -> None:
        k = self.pop()
        o = self.pop()
        self.w("del %s[%s]" % (o, k))

    # -- stack shuffles -------------------------------------------------------------------------
    def op_POP_TOP(self, ins: Instr, arg: Any) -> None:
        self.pop_any()

    def op_COPY(self, ins: Instr, arg: int) -> None:
        src = len(self.stack) - arg
        kind, payload = self.stack[src]
        self.stack.append((kind, payload))
        if kind in VAR_KINDS:
            self.w("%s = %s" % (_slot(len(self.stack) - 1), _slot(src)))

    def op_SWAP(self, ins: Instr, arg: int) -> None:
        a, b = len(self.stack) - 1, len(self.stack) - arg
        self._permute({a: b, b: a})

    def op_ROT(self, ins: Instr, arg: int) -> None:
        # top moves down to position -arg; the others move up by one
        n = len(self.stack)
        mapping = {n - arg: n - 1}
        for k in range(n - arg + 1, n):
            mapping[k] = k - 1
        self._permute(mapping)

    def _permute(self, mapping: Dict[int, int]) -> None:
        """New slot ``k`` takes the old slot ``mapping[k]``."""
        old = list(self.stack)
        dst = [k for k in sorted(mapping) if old[mapping[k]][0] in VAR_KINDS]
        if dst:
            self.w("%s = %s" % (", ".join(_slot(k) for k in dst),
                                ", ".join(_slot(mapping[k]) for k in dst)))
        for k, src in mapping.items():
            self.stack[k] = old[src]

    # -- operators ------------------------------------------------------------------------------
    def op_BINARY(self, ins: Instr, arg: str) -> None:
        r = self.pop()
        l_ = self.pop()
        self.push("%s %s %s" % (l_, arg, r))

    def op_INPLACE(self, ins: Instr, arg: str) -> None:
        r = self.pop()
        l_ = self.pop()
        d = len(self.stack)
        self.w("%s %s= %s" % (l_, arg, r))
        self.stack.append((V, None))
        assert _slot(d) == l_

    def op_UNARY(self, ins: Instr, arg: str) -> None:
        v = self.pop()
        self.push("%s %s" % (arg, v) if arg == "not" else "%s%s" % (arg, v))

    def op_TO_BOOL(self, ins: Instr, arg: Any) -> None:
        self.push("__pellucid_builtins.bool(%s)" % self.pop())

    def op_COMPARE(self, ins: Instr, arg: str) -> None:
        r = self.pop()
        l_ = self.pop()
        self.push("%s %s %s" % (l_, arg, r))

    def op_BUILD_SLICE(self, ins: Instr, arg: int) -> None:
        parts = [self.pop() for _ in range(arg)][::-1]
        self.push("__pellucid_builtins.slice(%s)" % ", ".join(parts))

    def _pop_n(self, n: int) -> List[str]:
        return [self.pop() for _ in range(n)][::-1]

    def op_BUILD_TUPLE(self, ins: Instr, arg: int) -> None:
        if arg and all(k == "closure" for k, _ in self.stack[len(self.stack) - arg:]):
            names = tuple(n for _, n in self.stack[len(self.stack) - arg:])
            del self.stack[len(self.stack) - arg:]
            self.push_static("closures", names)
            return
        items = self._pop_n(arg)
        self.push("(%s)" % "".join(x + ", " for x in items))

    def op_BUILD_LIST(self, ins: Instr, arg: int) -> None:
        self.push("[%s]" % ", ".join(self._pop_n(arg)))

    def op_BUILD_SET(self, ins: Instr, arg: int) -> None:
        items = self._pop_n(arg)
        self.push("{%s}" % ", ".join(items) if items else "__pellucid_builtins.set()")

    def op_BUILD_MAP(self, ins: Instr, arg: int) -> None:
        items = self._pop_n(2 * arg)
        self.push("{%s}" % ", ".join("%s: %s" % (items[2 * k], items[2 * k + 1]) for k in range(arg)))

    def op_BUILD_CONST_KEY_MAP(self, ins: Instr, arg: int) -> None:
        keys = self.pop()
        vals = self._pop_n(arg)
        self.push("__pellucid_builtins.dict(__pellucid_builtins.zip(%s, (%s)))" % (keys, "".join(v + ", " for v in vals)))

    def op_BUILD_STRING(self, ins: Instr, arg: int) -> None:
        items = self._pop_n(arg)
        self.push("''.join((%s))" % "".join(v + ", " for v in items))

    def op_CONVERT(self, ins: Instr, arg: int) -> None:
        fn = {ord("s"): "str", ord("r"): "repr", ord("a"): "ascii"}[arg]
        self.push("__pellucid_builtins.%s(%s)" % (fn, self.pop()))

    def op_FORMAT(self, ins: Instr, arg: Any) -> None:
        conv, has_spec = arg
        spec = self.pop() if has_spec else "''"
        v = self.pop()
        if conv != -1:
            fn = {ord("s"): "str", ord("r"): "repr", ord("a"): "ascii"}[conv]
            v = "__pellucid_builtins.%s(%s)" % (fn, v)
        self.push("__pellucid_builtins.format(%s, %s)" % (v, spec))

    def op_BUILD_INTERPOLATION(self, ins: Instr, arg: Any) -> None:
        conv, has_spec = arg
        spec = self.pop() if has_spec else "''"
        text = self.pop()
        v = self.pop()
        c = "None" if conv == -1 else repr(chr(conv))
        self.push("__pellucid_builtins.__import__('string.templatelib', fromlist=('_',))"
                  ".Interpolation(%s, %s, %s, %s)" % (v, text, c, spec))

    def op_BUILD_TEMPLATE(self, ins: Instr, arg: Any) -> None:
        fields = self.pop()
        strings = self.pop()
        # (Template(*args) joins what it is given: the strings and fields in turn, the last
        # string after the last field)
        self.push("__pellucid_builtins.__import__('string.templatelib', fromlist=('_',)).Template("
                  "*[__pellucid_p for __pellucid_q in __pellucid_builtins.zip(%s, %s + (None,)) "
                  "for __pellucid_p in __pellucid_q if __pellucid_p is not None])" % (strings, fields))

    def op_LIST_APPEND(self, ins: Instr, arg: int) -> None:
        v = self.pop()
        self.w("%s.append(%s)" % (_slot(len(self.stack) - arg), v))

    def op_SET_ADD(self, ins: Instr, arg: int) -> None:
        v = self.pop()
        self.w("%s.add(%s)" % (_slot(len(self.stack) - arg), v))

    def op_MAP_ADD(self, ins: Instr, arg: int) -> None:
        v = self.pop()
        k = self.pop()
        self.w("%s[%s] = %s" % (_slot(len(self.stack) - arg), k, v))

    # displays are rebuilt with unpacking so errors read like the interpreter's
    def op_LIST_EXTEND(self, ins: Instr, arg: int) -> None:
        v = self.pop()
        c = _slot(len(self.stack) - arg)
        self.w("%s = [*%s, *%s]" % (c, c, v))

    def op_SET_UPDATE(self, ins: Instr, arg: int) -> None:
        # (set.update is SET_UPDATE's own code, errors included; rebuilding the display would
        # hash every element again, which user code can see)
        v = self.pop()
        self.w("%s.update(%s)" % (_slot(len(self.stack) - arg), v))

    def op_DICT_UPDATE(self, ins: Instr, arg: int) -> None:
        v = self.pop()
        c = _slot(len(self.stack) - arg)
        self.w("%s = {**%s, **%s}" % (c, c, v))

    def op_DICT_MERGE(self, ins: Instr, arg: int) -> None:
        v = self.pop()
        # duplicate keywords raise TypeError like the interpreter does
        self.w("for __pellucid_k in %s.keys():" % v)
        self.w("    if __pellucid_k in %s:" % _slot(len(self.stack) - arg))
        self.w("        raise __pellucid_builtins.TypeError('got multiple values for keyword argument %r' % (__pellucid_k,))")
        self.w("%s.update(%s)" % (_slot(len(self.stack) - arg), v))

    def op_LIST_TO_TUPLE(self, ins: Instr, arg: Any) -> None:
        self.push("__pellucid_builtins.tuple(%s)" % self.pop())

    def _build_unpack(self, arg: int, fmt: str) -> None:
        items = self._pop_n(arg)
        self.push(fmt % ", ".join("*" + x for x in items))

    def op_BUILD_TUPLE_UNPACK(self, ins: Instr, arg: int) -> None:
        self._build_unpack(arg, "(%s,)") if arg else self.push("()")

    def op_BUILD_TUPLE_UNPACK_WITH_CALL(self, ins: Instr, arg: int) -> None:
        # (3.8) Right before the call that takes it, the star arguments stay in the call: its
        # TypeError for a non-iterable names the function (``f() argument after * must be an
        # iterable``), a tuple display's does not.  With keyword arguments evaluated in between,
        # the display keeps the order (the star arguments are iterated first).
        nxt = self.block_instrs[self.pos + 1] if self.pos + 1 < len(self.block_instrs) else None
        if arg and nxt is not None and nxt.op == "CALL_EX" and not nxt.arg[0] \
                and len(self.stack) > arg:
            self.push_static("starargs", self._pop_n(arg))
            return
        self.op_BUILD_TUPLE_UNPACK(ins, arg)

    def op_BUILD_LIST_UNPACK(self, ins: Instr, arg: int) -> None:
        self._build_unpack(arg, "[%s]")

    def op_BUILD_SET_UNPACK(self, ins: Instr, arg: int) -> None:
        self._build_unpack(arg, "{%s}") if arg else self.push("__pellucid_builtins.set()")

    def op_BUILD_MAP_UNPACK(self, ins: Instr, arg: int) -> None:
        items = self._pop_n(arg)
        self.push("{%s}" % ", ".join("**" + x for x in items))

    op_BUILD_MAP_UNPACK_WITH_CALL = op_BUILD_MAP_UNPACK

    def op_UNPACK_SEQUENCE(self, ins: Instr, arg: int) -> None:
        v = self.pop()
        d = len(self.stack)
        names = [_slot(d + k) for k in range(arg)]
        # the first item ends on top: slot d holds the last one
        self.w("%s%s = %s" % (", ".join(reversed(names)), "," if arg == 1 else "", v) if arg
               else "() = %s" % v)
        for _ in range(arg):
            self.stack.append((V, None))

    def op_UNPACK_EX(self, ins: Instr, arg: Any) -> None:
        before, after = arg
        v = self.pop()
        d = len(self.stack)
        n = before + 1 + after
        names = [_slot(d + k) for k in range(n)][::-1]
        names[before] = "*" + names[before]
        self.w("%s, = %s" % (", ".join(names), v))
        for _ in range(n):
            self.stack.append((V, None))

    # -- calls and functions ----------------------------------------------------------------------
    def _callable(self, null_slot: bool) -> Tuple[Any, List[str]]:
        if not null_slot:
            kind, payload, name = self.pop_any()
            return (kind, payload, name), []
        b = self.pop_any()
        a = self.pop_any()
        if b[0] == "null":
            return a, []
        if a[0] == "null":
            return b, []
        if b[0] != V:
            raise FallbackError("self slot is a %s" % b[0])
        return a, [b[2]]

    def op_CALL(self, ins: Instr, arg: Any) -> None:
        argc, kwnames, null_slot = arg
        if kwnames is None:
            kind, payload = self.stack[-1]
            if kind != V or not payload or payload[0] != "const":
                raise FallbackError("keyword names are not a constant")
            self.pop()
            kwnames = payload[1]
        top = len(self.stack)
        fpos = top - argc - (2 if null_slot else 1)
        if not any(k == "buildclass" for k, _ in self.stack[fpos:top - argc]):
            for k in range(fpos, top):
                self._realize(k)
        arg_slots = self.stack[top - argc:]
        argnames = [_slot(k) for k in range(top - argc, top)]
        del self.stack[top - argc:]
        func, self_arg = self._callable(null_slot)
        if any(k != V for k, _ in arg_slots):
            if func[0] == "buildclass":
                self._build_class(arg_slots, argnames, self_arg, kwnames)
                return
            raise FallbackError("call with a non-value argument")
        allargs = self_arg + argnames
        nkw = len(kwnames)
        pos = allargs[:len(allargs) - nkw]
        kws = ["%s=%s" % (k, v) for k, v in zip(kwnames, allargs[len(allargs) - nkw:])]
        if func[0] != V:
            if func[0] == "generic" and not kws:
                self._generic_definition(func[1], pos)
                return
            raise FallbackError("calling a %s slot" % func[0])
        self.push("%s(%s)" % (func[2], ", ".join(pos + kws)))

    def _generic_definition(self, payload: Any, args: List[str]) -> None:
        """A PEP 695 generic definition: its hidden function called at once (with the
        defaults of a generic function) is written as a maker function holding the definition
        (pellucid.decompiler.type_params.fallback_maker_lines), called with those arguments."""
        from pellucid.decompiler.type_params import fallback_maker_lines

        code, _attrs, _qualname, n = payload
        maker = "__pellucid_generic%d" % n
        if self.emitting:
            try:
                lines = fallback_maker_lines(code, self.pool, maker)
            except _INTERNAL as exc:
                raise FallbackError("generic definition %s: %s" % (code.co_name, reason_of(exc)))
            for line in lines:
                self.w(line)
        self.push("%s(%s)" % (maker, ", ".join(args)))

    def op_CALL_EX(self, ins: Instr, arg: Any) -> None:
        has_kw, null_slot = arg
        kw = None
        if has_kw:
            if self.stack and self.stack[-1][0] == "null":
                self.stack.pop()  # (3.14+: NULL in the kwargs slot is no kwargs)
            else:
                kw = self.pop()
        if not has_kw and self.stack and self.stack[-1][0] == "starargs":
            stars = ["*" + x for x in self.stack.pop()[1]]
        else:
            stars = ["*" + self.pop()]
        func, self_arg = self._callable(null_slot)
        if func[0] != V:
            raise FallbackError("calling a %s slot" % func[0])
        parts = [x for x in self_arg] + stars
        if kw is not None:
            parts.append("**" + kw)
        self.push("%s(%s)" % (func[2], ", ".join(parts)))

    def op_MAKE_FUNCTION(self, ins: Instr, arg: int) -> None:
        qualname = None
        if MAKE_FUNCTION_POPS_QUALNAME:
            kind, payload, _ = self.pop_any()
            if payload and payload[0] == "const":
                qualname = payload[1]
        kind, code, _ = self.pop_any()
        if kind != "code":
            raise FallbackError("MAKE_FUNCTION without a constant code object")
        attrs: Dict[int, Any] = {}
        for flag in (8, 4, 2, 1):
            if arg & flag:
                k, payload = self.stack.pop()
                name = _slot(len(self.stack))
                attrs[flag] = name if k == V else ""
                if flag == 4 and k == V:
                    attrs[flag] = _constant_annotations(payload) or attrs[flag]
        self.nfn += 1
        # (the hidden function of a PEP 695 generic definition: see _generic_definition)
        kind = "generic" if code.co_name.startswith("<generic parameters of ") else "function"
        self.push_static(kind, (code, attrs, qualname, self.nfn))

    def op_SET_FUNCTION_ATTRIBUTE(self, ins: Instr, arg: int) -> None:
        kind, payload = self.stack.pop()
        if kind != "function" and kind != "generic":
            raise FallbackError("SET_FUNCTION_ATTRIBUTE on a non-function")
        code, attrs, q, n = payload
        attrs = dict(attrs)
        top = self.stack[-1] if self.stack else None
        if arg == 16 and top is not None and top[0] == "function" and _compiler_annotate(top[1]):
            # 3.14+: the ``__annotate__`` function, written as the annotations of the ``def``
            # (which makes the same function), not as a function of its own
            self.stack.pop()
            attrs[arg] = _Annotations(top[1][0])
        else:
            k, p, name = self.pop_any(closures=True)
            attrs[arg] = name if k == V else ""
            if arg == 4 and k == V:
                attrs[arg] = _constant_annotations(p) or attrs[arg]
        # the value slot stays reserved: the function is materialised at its own depth
        self.stack.append((kind, (code, attrs, q, n)))
        self._materialize_fn_if_needed(None)

    def _materialize_fn_if_needed(self, _unused: Any) -> None:
        pass

    def _function_def(self, code: types.CodeType, attrs: Dict[int, Any], qualname: Any, fname: str) -> List[str]:
        if not self.emitting:
            return []
        return nested_definition_lines(code, attrs, qualname, fname, self.pool)

    # a function slot becomes a value as soon as anything but a call/store uses it
    def _realize(self, depth: int) -> None:
        kind, payload = self.stack[depth]
        if kind != "function":
            return
        code, attrs, qualname, n = payload
        fname = self.fn_names.get(n)
        if fname is None:
            # (unique within the decompile: recompile renames the code object compiled from
            # this ``def`` back to the original's name, see ``ConstantPool.fallback_defs``)
            fname = self.fn_names[n] = "__pellucid_fn%d" % (len(self.pool.fallback_defs) + 1)
            q = getattr(code, "co_qualname", None) or qualname
            nargs = (code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04)
                     + bool(code.co_flags & 0x08))
            self.pool.fallback_defs[fname] = (code.co_name, q if isinstance(q, str) else None,
                                              code.co_varnames[:nargs])
        for line in self._function_def(code, attrs, qualname, fname):
            self.w(line)
        self.w("%s = %s" % (_slot(depth), fname))
        self.stack[depth] = (V, None)

    def _build_class(self, arg_slots: List[Tuple[str, Any]], argnames: List[str], self_arg: List[str],
                     kwnames: tuple) -> None:
        if self_arg or arg_slots[0][0] != "function":
            raise FallbackError("__build_class__ with an unexpected body")
        code, attrs, qualname, n = arg_slots[0][1]
        rest = argnames[1:]
        if any(k != V for k, _ in arg_slots[1:]):
            raise FallbackError("class arguments are not values")
        nkw = len(kwnames)
        pos = rest[:len(rest) - nkw]
        name_slot = arg_slots[1][1]
        if not name_slot or name_slot[0] != "const" or not isinstance(name_slot[1], str):
            raise FallbackError("class name is not a constant")
        cname = name_slot[1]
        bases = pos[1:]
        kws = ["%s=%s" % (k, v) for k, v in zip(kwnames, rest[len(rest) - nkw:])]
        maker = "__pellucid_class%d" % n
        ident = cname if cname.isidentifier() and not _refers_to(code, cname) else "__pellucid_cls"
        self.w("def %s(*__pellucid_bases, **__pellucid_kw):" % maker)
        self.w("    class %s(*__pellucid_bases, **__pellucid_kw):" % ident)
        qualname_of_body = _class_qualname(code)
        if qualname_of_body is not None:
            # A structured class body leaves its ``__qualname__`` store out (the class
            # statement makes it), but this class statement is nested in the maker function:
            # its own qualname would be ``__pellucid_classN.<locals>.X``.
            self.w("        __qualname__ = %r" % qualname_of_body)
        for line in (class_body_lines(code, self.pool, ident if ident == cname else None)
                     if self.emitting else []):
            self.w("        " + line)
        if ident != cname:
            self.w("    %s.__name__ = %r" % (ident, cname))
        self.w("    return %s" % ident)
        self.push("%s(%s)" % (maker, ", ".join(bases + kws)))

    # -- iteration, generators ------------------------------------------------------------------
    def op_GET_ITER(self, ins: Instr, arg: Any) -> None:
        self.push("__pellucid_builtins.iter(%s)" % self.pop())

    def op_GET_YIELD_FROM_ITER(self, ins: Instr, arg: Any) -> None:
        v = self.pop()
        self.push(v, "yf", None)
        self.stack[-1] = ("yf", v)
        self.w("%s = %s" % (_slot(len(self.stack) - 1), v))

    def op_GET_AWAITABLE(self, ins: Instr, arg: Any) -> None:
        kind, _, v = self.pop_any()
        self.stack.append(("await", None))
        self.w("%s = %s" % (_slot(len(self.stack) - 1), v))

    def op_GET_AITER(self, ins: Instr, arg: Any) -> None:
        v = self.pop()
        self.push("__pellucid_builtins.type(%s).__aiter__(%s)" % (v, v))

    def op_GET_ANEXT(self, ins: Instr, arg: Any) -> None:
        it = self.top_name()
        self.stack.append(("anext", None))
        self.w("%s = %s" % (_slot(len(self.stack) - 1), it))

    def op_YIELD_FROM(self, ins: Instr, arg: Any) -> None:
        self.pop()  # the None first sent
        kind, _, name = self.pop_any()
        if kind == "await":
            self.push("await %s" % name)
        elif kind == "anext":
            self.push("await __pellucid_builtins.type(%s).__anext__(%s)" % (name, name))
        elif kind == "yf":
            self.push("(yield from %s)" % name)
        else:
            self.push("(yield from %s)" % name)

    def op_YIELD_VALUE(self, ins: Instr, arg: Any) -> None:
        self.push("(yield %s)" % self.pop())

    def op_ASYNC_GEN_WRAP(self, ins: Instr, arg: Any) -> None:
        pass

    def op_FOR_ITER(self, ins: Instr, arg: Any) -> None:
        it = self.top_name()
        exit_block = self.target_block(ins)
        d = len(self.stack)
        self.w("try:")
        self.w("    %s = __pellucid_builtins.next(%s)" % (_slot(d), it))
        self.w("except __pellucid_builtins.StopIteration:")
        saved = list(self.stack)
        self.stack.pop()
        self.goto(exit_block, "    ")
        self.stack[:] = saved
        self.stack.append((V, None))

    def op_END_ASYNC_FOR(self, ins: Instr, arg: Any) -> None:
        if EXCEPTION_IS_ONE_VALUE:
            exc = self.pop()
            self.pop_any()
            self.w("if not __pellucid_builtins.isinstance(%s, __pellucid_builtins.StopAsyncIteration):" % exc)
            self.w("    raise %s" % exc)
            return
        # ≤3.10: the handler's six values are on the stack (type on top), in an EXCEPT_HANDLER
        # block: StopAsyncIteration ends the loop (the block and the iterator popped), anything
        # else is raised again as it is.
        self.pop()
        exc = self.pop()
        self.pop()
        self.w("if not __pellucid_builtins.isinstance(%s, __pellucid_builtins.StopAsyncIteration):" % exc)
        self._reraise_lines(exc, "    ")
        for _ in range(3):
            if self.pop_any()[0] != "saved":
                raise FallbackError("END_ASYNC_FOR without a saved exception")
        self.pop_any()  # the iterator
        self.nexc -= 1
        if self.nexc < 0:
            raise FallbackError("END_ASYNC_FOR with no handled exception")
        self.out.append(("exit", self.nexc))

    # -- jumps ----------------------------------------------------------------------------------
    def op_JUMP(self, ins: Instr, arg: Any) -> None:
        self.goto(self.target_block(ins))
        self.end()

    def _cond(self, ins: Instr, test: str) -> None:
        self.w("if %s:" % test)
        self.goto(self.target_block(ins), "    ")

    def op_POP_JUMP_IF_FALSE(self, ins: Instr, arg: Any) -> None:
        self._cond(ins, "not %s" % self.pop())

    def op_POP_JUMP_IF_TRUE(self, ins: Instr, arg: Any) -> None:
        self._cond(ins, self.pop())

    def op_POP_JUMP_IF_NONE(self, ins: Instr, arg: Any) -> None:
        self._cond(ins, "%s is None" % self.pop())

    def op_POP_JUMP_IF_NOT_NONE(self, ins: Instr, arg: Any) -> None:
        self._cond(ins, "%s is not None" % self.pop())

    def op_JUMP_IF_FALSE_OR_POP(self, ins: Instr, arg: Any) -> None:
        self._cond(ins, "not %s" % self.top_name())
        self.pop()

    def op_JUMP_IF_TRUE_OR_POP(self, ins: Instr, arg: Any) -> None:
        self._cond(ins, self.top_name())
        self.pop()

    # -- returns and raises -----------------------------------------------------------------------
    def op_RETURN_VALUE(self, ins: Instr, arg: Any) -> None:
        kind, payload, name = self.pop_any()
        if self.function:
            self.w("return %s" % name if kind == V and not self.code.co_flags & 0x200 else "return")
        else:
            self.w("break")
        self.end()

    def op_RAISE_VARARGS(self, ins: Instr, arg: int) -> None:
        if arg == 0:
            self.w("raise")
        elif arg == 1:
            self.w("raise %s" % self.pop())
        else:
            c = self.pop()
            e = self.pop()
            self.w("raise %s from %s" % (e, c))
        self.end()

    def op_RERAISE(self, ins: Instr, arg: Any) -> None:
        if EXCEPTION_IS_ONE_VALUE:
            e = self.pop()
        else:
            self.pop()
            e = self.pop()
            self.pop()
        self._reraise_lines(e)
        self.end()

    def _reraise_lines(self, e: str, indent: str = "") -> None:
        # re-raise unchanged: ``raise`` would set __context__ to the exception being handled
        for line in ("__pellucid_r = %s" % e, "__pellucid_ctx = __pellucid_r.__context__", "try:",
                     "    raise __pellucid_r", "finally:", "    __pellucid_r.__context__ = __pellucid_ctx",
                     "    __pellucid_r = None"):
            self.w(indent + line)

    # -- exceptions ------------------------------------------------------------------------------
    def op_PUSH_EXC_INFO(self, ins: Instr, arg: Any) -> None:
        e = self.pop()
        self.w("__pellucid_e%d = %s" % (self.nexc, e))
        self.nexc += 1
        self.push_static("saved")
        self.push("__pellucid_e%d" % (self.nexc - 1))
        self.out.append(("enter", self.nexc - 1))

    def op_POP_EXCEPT(self, ins: Instr, arg: Any) -> None:
        kind, _, _ = self.pop_any()
        if not EXCEPTION_IS_ONE_VALUE:
            self.pop_any()
            self.pop_any()
        if kind != "saved":
            raise FallbackError("POP_EXCEPT without a saved exception")
        self.nexc -= 1
        if self.nexc < 0:
            raise FallbackError("POP_EXCEPT with no handled exception")
        self.out.append(("exit", self.nexc))

    def op_CHECK_EXC_MATCH(self, ins: Instr, arg: Any) -> None:
        t = self.pop()
        e = self.top_name()
        self.push("__pellucid_builtins.isinstance(%s, %s)" % (e, t))

    def op_EXC_MATCH2(self, ins: Instr, arg: Any) -> None:
        t = self.pop()
        e = self.pop()
        self.push("__pellucid_builtins.issubclass(%s, %s)" % (e, t))

    def _protocol_check(self, enter: str, exit_: str, what: str) -> None:
        """3.11+ raise TypeError (not AttributeError) for a context manager without ``enter``
        or ``exit_``, naming the type as its ``tp_name`` does."""
        t = "__pellucid_builtins.type(__pellucid_m)"
        if not WITH_CHECKS_PROTOCOL:
            # ≤3.10 look ``enter`` up, then ``exit_``, on the type, and raise AttributeError
            # naming the missing method
            for name in (enter, exit_):
                self.w("if not __pellucid_builtins.hasattr(%s, %r):" % (t, name))
                self.w("    raise __pellucid_builtins.AttributeError(%r)" % name)
            return
        # a class statement's type (heap, mutable) has its bare name as tp_name; static and
        # extension types (immutable) their dotted name, builtins excepted
        tp_name = ("(%s.__name__ if %s.__flags__ & 768 == 512 or %s.__module__ == 'builtins' "
                   "else %s.__module__ + '.' + %s.__name__)" % (t, t, t, t, t))
        if WITH_ERROR_NAMES_QUALIFIED_TYPE:
            # a heap type by module and qualified name (%T), a static one by its tp_name
            tp_name = ("((%s.__qualname__ if __pellucid_builtins.type(%s.__module__) is not "
                       "__pellucid_builtins.str or %s.__module__ in ('builtins', '__main__') "
                       "else %s.__module__ + '.' + %s.__qualname__) if %s.__flags__ & 512 else "
                       "%s.__name__ if %s.__module__ == 'builtins' else "
                       "%s.__module__ + '.' + %s.__name__)" % ((t,) * 10))
        checks = ((enter, ""), (exit_, " (missed %s method)" % exit_))
        if WITH_LOADS_SPECIAL_METHODS:  # (LOAD_SPECIAL looks __exit__ up first, names either one)
            checks = ((exit_, " (missed %s method)" % exit_), (enter, " (missed %s method)" % enter))
        for name, suffix in checks:
            self.w("if not __pellucid_builtins.hasattr(%s, %r):" % (t, name))
            self.w("    raise __pellucid_builtins.TypeError(\"'%%s' object does not support the "
                   "%s protocol%s\" %% %s)" % (what, suffix, tp_name))

    def op_BEFORE_WITH(self, ins: Instr, arg: Any) -> None:
        m = self.pop()
        d = len(self.stack)
        self.w("__pellucid_m = %s" % m)
        self._protocol_check("__enter__", "__exit__", "context manager")
        self.w("__pellucid_enter = __pellucid_builtins.type(__pellucid_m).__enter__")
        self.w("%s = __pellucid_builtins.type(__pellucid_m).__exit__.__get__(__pellucid_m)" % _slot(d))
        self.w("%s = __pellucid_enter(__pellucid_m)" % _slot(d + 1))
        self.stack.append((V, None))
        self.stack.append((V, None))

    def op_BEFORE_ASYNC_WITH(self, ins: Instr, arg: Any) -> None:
        m = self.pop()
        d = len(self.stack)
        self.w("__pellucid_m = %s" % m)
        self._protocol_check("__aenter__", "__aexit__", "asynchronous context manager")
        self.w("__pellucid_enter = __pellucid_builtins.type(__pellucid_m).__aenter__")
        self.w("%s = __pellucid_builtins.type(__pellucid_m).__aexit__.__get__(__pellucid_m)" % _slot(d))
        self.w("%s = __pellucid_enter(__pellucid_m)" % _slot(d + 1))
        self.stack.append((V, None))
        self.stack.append(("await", None))

    def op_WITH_EXCEPT_START(self, ins: Instr, arg: Any) -> None:
        n = len(self.stack)
        if EXCEPTION_IS_ONE_VALUE:
            exit_d, exc_d = n - 4, n - 1
        else:
            exit_d, exc_d = n - 7, n - 2
        e = _slot(exc_d)
        self.push("%s(__pellucid_builtins.type(%s), %s, %s.__traceback__)" % (_slot(exit_d), e, e, e))

    def op_LAZY_IMPORT_NAME(self, ins: Instr, arg: str) -> None:
        raise FallbackError("a lazy import has no form inside the state machine")

    def op_IMPORT_NAME(self, ins: Instr, arg: str) -> None:
        consts = [p for _, p in self.stack[-2:]] if len(self.stack) >= 2 else []
        fromlist = self.pop()
        level = self.pop()
        if consts == [("const", 0), ("const", None)] and type(consts[0][1]) is int and all(p.isidentifier() for p in arg.split(".")):
            # ``import a.b`` in a helper, which returns the package it binds there: the same
            # IMPORT_NAME (the frame's own ``__import__``, the module's globals) without
            # binding a name of the program.
            self.nfn += 1
            helper = "__pellucid_import%d" % self.nfn
            self.w("def %s():" % helper)
            self.w("    import %s" % arg)
            self.w("    return %s" % arg.split(".")[0])
            self.push("%s()" % helper)
            return
        self.push("__pellucid_builtins.__import__(%r, __pellucid_builtins.globals(), __pellucid_builtins.locals(), %s, %s)" % (arg, fromlist, level))

    def op_IMPORT_FROM(self, ins: Instr, arg: str) -> None:
        m = self.top_name()
        # ``from m import x`` falls back to the submodule in sys.modules, like the interpreter
        d = len(self.stack)
        self.w("__pellucid_ok = True")
        self.w("try:")
        self.w("    %s = %s.%s" % (_slot(d), m, arg))
        self.w("except __pellucid_builtins.AttributeError:")
        self.w("    __pellucid_ok = False")
        self.w("if not __pellucid_ok:")
        self.w("    %s = __pellucid_builtins.__import__('sys').modules.get('%%s.%%s' %% (%s.__name__, %r))" % (_slot(d), m, arg))
        self.w("    if %s is None:" % _slot(d))
        self.w("        raise __pellucid_builtins.ImportError('cannot import name %%r from %%r (%%s)' %% (%r, %s.__name__, "
               "__pellucid_builtins.getattr(%s, '__file__', None) or 'unknown location'), name=%s.__name__)" % (arg, m, m, m))
        self.stack.append((V, None))

    def op_IMPORT_STAR(self, ins: Instr, arg: Any) -> None:
        m = self.pop()
        if self.function:
            raise FallbackError("import * in a function")
        self.w("for __pellucid_k in __pellucid_builtins.getattr(%s, '__all__', [k for k in __pellucid_builtins.dir(%s) if not k.startswith('_')]):" % (m, m))
        self.w("    __pellucid_builtins.globals()[__pellucid_k] = __pellucid_builtins.getattr(%s, __pellucid_k)" % m)

    def op_PRINT_EXPR(self, ins: Instr, arg: Any) -> None:
        self.w("__pellucid_builtins.__import__('sys').displayhook(%s)" % self.pop())

    def op_SETUP_ANNOTATIONS(self, ins: Instr, arg: Any) -> None:
        self.w("if '__annotations__' not in __pellucid_builtins.locals():")
        self.w("    __annotations__ = {}")

    def op_STOPITERATION_ERROR(self, ins: Instr, arg: Any) -> None:
        # the generator's own frame turns an escaping StopIteration into RuntimeError, as the
        # output is a generator too: nothing to do here
        pass

    def op_GET_LEN(self, ins: Instr, arg: Any) -> None:
        self.push("__pellucid_builtins.len(%s)" % self.top_name())

    def op_MATCH_SEQUENCE(self, ins: Instr, arg: Any) -> None:
        t = self.top_name()
        self.push("__pellucid_builtins.isinstance(%s, %s) and not __pellucid_builtins.isinstance(%s, "
                  "(__pellucid_builtins.str, __pellucid_builtins.bytes, __pellucid_builtins.bytearray))"
                  % (t, _abc("Sequence"), t))

    def op_MATCH_MAPPING(self, ins: Instr, arg: Any) -> None:
        self.push("__pellucid_builtins.isinstance(%s, %s)" % (self.top_name(), _abc("Mapping")))

    def op_MATCH_KEYS(self, ins: Instr, arg: Any) -> None:
        keys = self.top_name()
        subj = _slot(len(self.stack) - 2)
        self.uses_match_keys = True
        self.push("__pellucid_match_keys(%s, %s)" % (subj, keys))
        if MATCH_PUSHES_SUCCESS:  # 3.10 pushes whether they matched too
            self.push("%s is not None" % self.top_name())

    def op_MATCH_CLASS(self, ins: Instr, arg: int) -> None:
        names = self.pop()
        cls = self.pop()
        subj = self.pop()
        self.uses_match_class = True
        d = len(self.stack)
        self.push("__pellucid_match_class(%s, %s, %d, %s)" % (subj, cls, arg, names))
        if MATCH_PUSHES_SUCCESS:
            # 3.10 leaves the attributes (or, when there is no match, the subject) and whether
            # the class matched
            self.w("if %s is None:" % _slot(d))
            self.w("    %s = %s" % (_slot(d), subj))
            self.w("    %s = False" % _slot(d + 1))
            self.w("else:")
            self.w("    %s = True" % _slot(d + 1))
            self.stack.append((V, None))

    def op_COPY_DICT_WITHOUT_KEYS(self, ins: Instr, arg: Any) -> None:
        # (statements, not a comprehension: one would make the slots it reads cells)
        keys = self.pop()
        subj = self.top_name()
        self.w("__pellucid_keys = %s" % keys)  # (the result takes the keys' slot)
        d = len(self.stack)
        self.push("{**%s}" % subj)
        self.w("for __pellucid_k in __pellucid_keys:")
        self.w("    del %s[__pellucid_k]" % _slot(d))

    def op_NOP(self, ins: Instr, arg: Any) -> None:
        pass

    def op_UNSUPPORTED(self, ins: Instr, arg: Any) -> None:
        raise FallbackError("unsupported opcode %s" % (arg,))


# MATCH_CLASS and MATCH_KEYS as functions (defined in a fallback body that needs them).  They
# name nothing the original code does not: attributes are read with getattr and constants,
# values collected in tuples.
_G = "__pellucid_builtins.getattr"
_TP_NAME = ("(%s(__pellucid_c, '__name__') if %s(__pellucid_c, '__flags__') & 768 == 512 or "
            "%s(__pellucid_c, '__module__') == 'builtins' else %s(__pellucid_c, '__module__') + '.' + "
            "%s(__pellucid_c, '__name__'))" % (_G, _G, _G, _G, _G))
_MATCH_SELF = ("__pellucid_builtins.bool, __pellucid_builtins.bytearray, __pellucid_builtins.bytes, "
               "__pellucid_builtins.dict, __pellucid_builtins.float, __pellucid_builtins.frozenset, "
               "__pellucid_builtins.int, __pellucid_builtins.list, __pellucid_builtins.set, "
               "__pellucid_builtins.str, __pellucid_builtins.tuple")
# what a class pattern ``cls(p1, ..., k1=..., ...)`` does to its subject: the attributes it
# matches, or None; with the interpreter's TypeErrors
_MATCH_CLASS_HELPER = [
    "def __pellucid_match_class(__pellucid_s, __pellucid_c, __pellucid_n, __pellucid_names):",
    "    import builtins as __pellucid_builtins",  # (its own: no cell for the enclosing one)
    "    if not __pellucid_builtins.isinstance(__pellucid_c, __pellucid_builtins.type):",
    "        raise __pellucid_builtins.TypeError(%r)" % (
        "class pattern must refer to a class" if MATCH_CLASS_ERROR_NAMES_PATTERN
        else "called match pattern must be a class" if MATCH_CLASS_ERROR_SAYS_CLASS
        else "called match pattern must be a type"),
    "    if not __pellucid_builtins.isinstance(__pellucid_s, __pellucid_c):",
    "        return None",
    "    __pellucid_pos = ()",
    "    __pellucid_self = False",
    "    if __pellucid_n:",
    "        try:",
    "            __pellucid_pos = %s(__pellucid_c, '__match_args__')" % _G,
    "        except __pellucid_builtins.AttributeError:",
    "            __pellucid_self = __pellucid_builtins.issubclass(__pellucid_c, (%s))" % _MATCH_SELF,
    "            __pellucid_pos = (None,) if __pellucid_self else ()",
    "        else:",
    "            if __pellucid_builtins.type(__pellucid_pos) is not __pellucid_builtins.tuple:",
    "                raise __pellucid_builtins.TypeError('%%s.__match_args__ must be a tuple (got %%s)' %% (%s, "
    "%s(__pellucid_builtins.type(__pellucid_pos), '__name__')))" % (_TP_NAME, _G),
    "        if __pellucid_builtins.len(__pellucid_pos) < __pellucid_n:",
    "            __pellucid_k = __pellucid_builtins.len(__pellucid_pos)",
    "            raise __pellucid_builtins.TypeError('%%s() accepts %%d positional sub-pattern%%s (%%d given)' %% (%s, "
    "__pellucid_k, '' if __pellucid_k == 1 else 's', __pellucid_n))" % _TP_NAME,
    "    __pellucid_got = ()",
    "    __pellucid_seen = ()",
    "    if __pellucid_self:",
    "        __pellucid_got = (__pellucid_s,)",
    "    else:",
    "        for __pellucid_a in __pellucid_pos[:__pellucid_n]:",
    "            if not __pellucid_builtins.isinstance(__pellucid_a, __pellucid_builtins.str):",
    "                raise __pellucid_builtins.TypeError('__match_args__ elements must be strings (got %%s)' %% "
    "%s(__pellucid_builtins.type(__pellucid_a), '__name__'))" % _G,
    "            if __pellucid_a in __pellucid_seen:",
    "                raise __pellucid_builtins.TypeError('%%s() got multiple sub-patterns for attribute %%r' %% (%s, "
    "__pellucid_a))" % _TP_NAME,
    "            __pellucid_seen += (__pellucid_a,)",
    "            try:",
    "                __pellucid_got += (%s(__pellucid_s, __pellucid_a),)" % _G,
    "            except __pellucid_builtins.AttributeError:",
    "                return None",
    "    for __pellucid_a in __pellucid_names:",
    "        if __pellucid_a in __pellucid_seen:",
    "            raise __pellucid_builtins.TypeError('%%s() got multiple sub-patterns for attribute %%r' %% (%s, "
    "__pellucid_a))" % _TP_NAME,
    "        __pellucid_seen += (__pellucid_a,)",
    "        try:",
    "            __pellucid_got += (%s(__pellucid_s, __pellucid_a),)" % _G,
    "        except __pellucid_builtins.AttributeError:",
    "            return None",
    "    return __pellucid_got",
]
# the values of a mapping pattern's keys, each looked up with the subject's ``get``, or None
# when one is missing; a key given twice is a ValueError
_MATCH_KEYS_HELPER = [
    "def __pellucid_match_keys(__pellucid_s, __pellucid_keys):",
    "    import builtins as __pellucid_builtins",
    "    if not __pellucid_keys:",
    "        return ()",
    "    __pellucid_get = %s(__pellucid_s, 'get')" % _G,
    "    __pellucid_seen = __pellucid_builtins.set()",
    "    __pellucid_missing = __pellucid_builtins.object()",
    "    __pellucid_got = ()",
    "    for __pellucid_k in __pellucid_keys:",
    "        if __pellucid_k in __pellucid_seen:",
    "            raise __pellucid_builtins.ValueError('mapping pattern checks duplicate key (%r)' % (__pellucid_k,))",
    "        __pellucid_seen = __pellucid_seen | {__pellucid_k}",
    "        __pellucid_v = __pellucid_get(__pellucid_k, __pellucid_missing)",
    "        if __pellucid_v is __pellucid_missing:",
    "            return None",
    "        __pellucid_got += (__pellucid_v,)",
    "    return __pellucid_got",
]


def _refers_to(code: types.CodeType, name: str) -> bool:
    """Whether nested code reads ``name`` from an enclosing scope."""
    for c in code.co_consts:
        if isinstance(c, types.CodeType) and (name in c.co_freevars or _refers_to(c, name)):
            return True
    return False


def _gen_start(code: types.CodeType) -> bool:
    return False


_ORIGIN = "  # @pellucid-offset:"


def _mark_origin(out: List[Any], first: int, ins: Instr) -> None:
    """End the first line ``ins`` wrote with a comment naming its offset, so that
    :func:`fallback_statements` can tag the statement with the original line.  Only the first:
    later ones may sit inside a multi-line string (a nested function's docstring)."""
    for k in range(first, len(out)):
        if isinstance(out[k], str):
            out[k] = "%s%s%d" % (out[k], _ORIGIN, ins.offset)
            return


def _tag_origins(stmts: List[ast.stmt], text: List[str], code: types.CodeType) -> None:
    """Give each statement whose first line carries a :func:`_mark_origin` comment the line of
    that instruction (see :mod:`pellucid.decompiler.source_lines`)."""
    positions = instruction_positions(code)
    for stmt in stmts:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.stmt) or not 0 < node.lineno <= len(text):
                continue
            line = text[node.lineno - 1]
            at = line.rfind(_ORIGIN)
            if at < 0 or not line[at + len(_ORIGIN):].isdigit():
                continue
            position = positions.get(int(line[at + len(_ORIGIN):]))
            if position is not None:
                node._pos = (position[0], None, None, None)  # type: ignore[attr-defined]


def _indent(lines: List[str]) -> List[str]:
    return ["    " + x for x in lines]


def fallback_body(code: types.CodeType, pool: ConstantPool, reason: str,
                  function: Optional[bool] = None) -> List[str]:
    """Body lines of ``code`` as a state machine (raises FallbackError when even that fails)."""
    fb = Fallback(code, pool, reason, function)
    if not code.co_flags & CO_OPTIMIZED and code.co_name != "<module>":
        if function is not False:
            # not known to be a class body (a hand-made function without CO_OPTIMIZED): its
            # returns would become the state machine's `break`
            raise FallbackError("code without CO_OPTIMIZED that is not a class body")
        if code.co_cellvars:
            # A class body's ``__class__`` cell is made by the compiler for the methods that use
            # it; the state machine would store a cell of its own into ``__classcell__``.
            raise FallbackError("class bodies with a __class__ cell are not supported by the fallback")
    return fb.lines()


def fallback_statements(code: types.CodeType, pool: ConstantPool, reason: str,
                        function: Optional[bool] = None) -> List[ast.stmt]:
    """The fallback body as AST statements (docstring first, for functions that have one)."""
    lines = fallback_body(code, pool, reason, function)
    src = "\n".join(lines)
    wrapped = "def __pellucid_wrap():\n" + "\n".join("    " + x for x in src.split("\n"))
    if not (code.co_flags & CO_OPTIMIZED) and function is not True:
        tree = ast.parse(src)
        _tag_origins(tree.body, src.split("\n"), code)
        return tree.body
    tree = ast.parse(wrapped)
    _tag_origins(tree.body[0].body, wrapped.split("\n"), code)
    return tree.body[0].body


def reason_of(exc: BaseException) -> str:
    text = "%s: %s" % (type(exc).__name__, exc)
    return text[:200]


# -- hooks used by the structured decompiler ----------------------------------------------------------
_INTERNAL = (StructureError, IndexError, RecursionError, KeyError, AttributeError, TypeError,
             ValueError, AssertionError, NotImplementedError)


class _NoDeclarations:
    def declarations(self) -> List[ast.stmt]:
        return []


def _abc(name: str) -> str:
    """``collections.abc.<name>`` reached through the fallback's own names and constants only
    (``abc``/``Mapping`` as attribute names would be names the original code never used)."""
    return ("__pellucid_builtins.getattr(__pellucid_builtins.__import__('collections.abc', None, None, "
            "(%r,)), %r)" % (name, name))


def body_or_fallback(code: types.CodeType, pool: ConstantPool, comprehension: bool = False,
                     function: Optional[bool] = None, class_name: Optional[str] = None
                     ) -> Tuple[List[ast.stmt], Any]:
    """Statements of ``code`` from the structured decompiler, or from the fallback when it fails.

    ``class_name``: for a class body, the name of the ``class`` statement it is written under
    (private names are mangled with it).

    Returns ``(statements, declarer)``; ``declarer.declarations()`` gives ``global``/``nonlocal``
    (the fallback puts its own declarations in its statements).
    """
    # A nested body is decompiled again each time the structurer retries a region holding its
    # definition (a module whose class statements sit in ``try``/``if`` blocks decompiled each
    # class body thousands of times: collections took 10 s).  The second time a body is asked
    # for in one decompile (one pool), a copy of it is kept and handed out from then on; copies,
    # since callers build on the statements they get.
    key = (id(code), comprehension, function, class_name)
    kept = pool.bodies.get(key)
    if kept is not None and kept[0] is code and kept[1] is not None:
        return copy_tree(kept[1]), kept[2]
    stmts, sub = _body_or_fallback(code, pool, comprehension, function, class_name)
    pool.bodies[key] = (code, copy_tree(stmts) if kept is not None else None, sub)
    return stmts, sub


def _body_or_fallback(code: types.CodeType, pool: ConstantPool, comprehension: bool,
                      function: Optional[bool], class_name: Optional[str]
                      ) -> Tuple[List[ast.stmt], Any]:
    from pellucid.decompiler.body import BodyDecompiler

    try:
        if forced(code):
            raise StructureError(_forced_reason())
        sub = BodyDecompiler(code, pool, comprehension=comprehension)
        sub.class_name = class_name
        stmts = sub.statements()
        if not code.co_flags & CO_OPTIMIZED:  # (a class or module body, or one decompiled alone)
            from pellucid.decompiler.deferred_annotations import merge_annotations
            stmts = merge_annotations(stmts, code)
        # module code or a class body (``function=False`` from class_def): no `return` there.
        # (A function's code with CO_OPTIMIZED cleared is still a function: keep its returns.)
        if not code.co_flags & CO_OPTIMIZED and (function is False or (
                function is None and code.co_name == "<module>")):
            from pellucid.decompiler.implicit_return import drop_implicit_returns
            stmts = drop_implicit_returns(stmts)
            from pellucid.decompiler import annotations_setup as ann
            if ann.sets_up_annotations(code, sub.instrs):
                stmts = ann.join_stores_and_annotations(stmts)
                stmts = ann.keep_annotations_setup(stmts, ann.future_annotations(code))
        if not code.co_flags & CO_OPTIMIZED:
            # (after the implicit returns are dropped: what it adds goes at the body's end)
            from pellucid.decompiler.deferred_annotations import keep_annotation_cells
            stmts = keep_annotation_cells(stmts, code)
        return stmts, sub
    except _INTERNAL as exc:
        if comprehension:
            raise
        try:
            stmts = fallback_statements(code, pool, reason_of(exc), function)
        except FallbackError as fexc:
            from pellucid.errors import DecompileError
            raise DecompileError("%s: no structured form (%s) and the fallback failed (%s)"
                                 % (code.co_name, reason_of(exc), fexc))
        return stmts, _NoDeclarations()


class _Annotations:
    """A nested function's annotations that the fallback writes in its ``def``: MAKE_FUNCTION's
    constant ``(name, value, ...)`` tuple (3.10-3.13: ``from __future__ import annotations``, or
    constant annotations), or its compiler-made ``__annotate__`` code (3.14+).  Assigned to
    ``__annotations__`` after the ``def`` they would be another function's attribute store."""

    def __init__(self, source: Any) -> None:
        self.source = source


def _constant_annotations(payload: Any) -> Optional[_Annotations]:
    if not (payload and payload[0] == "const" and type(payload[1]) is tuple):
        return None
    flat = payload[1]
    if len(flat) % 2 or not all(type(k) is str for k in flat[0::2]):
        return None
    return _Annotations(flat)


def _compiler_annotate(payload: Any) -> bool:
    """A static function slot's payload is a compiler-made ``__annotate__`` whose closure (if
    any) is cells of variables, which a ``def`` here closes over again."""
    code, attrs = payload[0], payload[1]
    return code.co_name == "__annotate__" and code.co_varnames[:1] == ("format",) \
        and code.co_argcount == 1 and set(attrs) <= {8} and not attrs.get(8)


def _annotation_texts(code: types.CodeType, ann: _Annotations, pool: ConstantPool) -> Dict[str, str]:
    """Each annotation of ``code`` (a parameter name or ``return``) as the source of its
    expression, in the order the compiler evaluates a ``def``'s annotations (the order their
    tuple or ``__annotate__`` lists them in: else FallbackError)."""
    if isinstance(ann.source, tuple):
        exprs = {k: pool.expr(v) for k, v in zip(ann.source[0::2], ann.source[1::2])}
        order = list(ann.source[0::2])
    else:
        from pellucid.decompiler.deferred_annotations import function_annotations
        from pellucid.decompiler.functions import FunctionStub

        class _Reader:  # (what function_annotations reads of a body decompiler)
            consts = pool
        try:
            exprs = function_annotations(_Reader(), FunctionStub(ann.source))
        except _INTERNAL as exc:
            raise FallbackError("__annotate__ of %s: %s" % (code.co_name, reason_of(exc)))
        order = list(exprs)
    from pellucid.decompiler.annotations_setup import spelled_annotations
    spelled = spelled_annotations(exprs, code, pool)
    if spelled is None or len(order) != len(set(order)) or order != [
            n for n in _annotation_order(code) if n in spelled]:
        raise FallbackError("annotations of %s that its signature cannot write" % code.co_name)
    return {k: unparse(ast.Expression(v)) for k, v in spelled.items()}


def _annotation_order(code: types.CodeType) -> List[str]:
    """The names a ``def`` of ``code`` can annotate, in the order the compiler evaluates them:
    the positional parameters (before 3.15 those after ``/`` ahead of those before it),
    ``*args``, the keyword-only ones, ``**kwargs``, ``return``."""
    names = list(code.co_varnames)
    nposonly = getattr(code, "co_posonlyargcount", 0)
    k = code.co_argcount + code.co_kwonlyargcount
    star = [names[k]] if code.co_flags & 0x04 else []
    k += len(star)
    starstar = [names[k]] if code.co_flags & 0x08 else []
    positional = names[:code.co_argcount] if POSONLY_ANNOTATIONS_FIRST \
        else names[nposonly:code.co_argcount] + names[:nposonly]
    return positional + star + names[code.co_argcount:code.co_argcount + code.co_kwonlyargcount] \
        + starstar + ["return"]


def _signature(code: types.CodeType, annotations: Optional[Dict[str, str]] = None) -> str:
    names = [_local(n) for n in code.co_varnames]
    ann = annotations or {}

    def param(k: int) -> str:
        text = ann.get(code.co_varnames[k])
        return names[k] if text is None else "%s: %s" % (names[k], text)
    k = 0
    parts: List[str] = []
    npos = code.co_argcount
    nposonly = getattr(code, "co_posonlyargcount", 0)
    for i in range(npos):
        parts.append(param(k))
        k += 1
        if nposonly and i == nposonly - 1:
            parts.append("/")
    kwonly = [param(j) for j in range(k, k + code.co_kwonlyargcount)]
    k += code.co_kwonlyargcount
    if code.co_flags & 0x04:
        parts.append("*" + param(k))
        k += 1
    elif kwonly:
        parts.append("*")
    parts.extend(kwonly)
    if code.co_flags & 0x08:
        parts.append("**" + param(k))
    return ", ".join(parts)


def nested_definition_lines(code: types.CodeType, attrs: Dict[int, Any], qualname: Any, fname: str,
                            pool: ConstantPool) -> List[str]:
    """``def fname(...)`` for a nested code object made by MAKE_FUNCTION inside a fallback body."""
    from pellucid.decompiler.functions import docstring_of, finish_function_body

    plain = all(n.isidentifier() for n in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount + 2]
                if True) and code.co_name not in _COMPREHENSION_NAMES
    stmts: List[ast.stmt]
    if plain:
        stmts, sub = body_or_fallback(code, pool, function=True)
        stmts = finish_function_body(code, stmts, sub)
    else:
        try:
            stmts = fallback_statements(code, pool, "comprehension code made in a fallback body", True)
        except FallbackError as fexc:
            from pellucid.errors import DecompileError
            raise DecompileError("%s: the fallback failed (%s)" % (code.co_name, fexc))
        doc = docstring_of(code)
        if doc is not None:
            stmts = [ast.Expr(ast.Constant(doc))] + stmts
    body = unparse(ast.Module(stmts or [ast.Pass()], [])).split("\n")
    kw = "async def" if code.co_flags & (0x80 | 0x200) else "def"
    annotations = attrs.get(4) or attrs.get(16)
    texts = _annotation_texts(code, annotations, pool) if isinstance(annotations, _Annotations) \
        else None
    if attrs.get(16) is not None and texts is None:
        raise FallbackError("an __annotate__ of %s that is not the compiler's" % code.co_name)
    returns = " -> %s" % texts["return"] if texts and "return" in texts else ""
    out = ["%s %s(%s)%s:" % (kw, fname, _signature(code, texts), returns)] + _indent(body)
    out.append("%s.__name__ = %r" % (fname, code.co_name))
    q = getattr(code, "co_qualname", None) or qualname
    if isinstance(q, str):
        out.append("%s.__qualname__ = %r" % (fname, q))
    if attrs.get(1):
        out.append("%s.__defaults__ = %s" % (fname, attrs[1]))
    if attrs.get(2):
        out.append("%s.__kwdefaults__ = %s" % (fname, attrs[2]))
    if attrs.get(4) and texts is None:
        a = attrs[4]
        out.append("%s.__annotations__ = %s if __pellucid_builtins.isinstance(%s, __pellucid_builtins.dict) else __pellucid_builtins.dict(__pellucid_builtins.zip(%s[::2], %s[1::2]))"
                   % (fname, a, a, a, a))
    return out


def _class_qualname(code: types.CodeType) -> Optional[str]:
    """The qualname a class body stores (``LOAD_CONST 'q'; STORE_NAME __qualname__``)."""
    previous = None
    for ins in dis.get_instructions(code):
        if ins.opname == "STORE_NAME" and ins.argval == "__qualname__":
            if previous is not None and previous.opname == "LOAD_CONST" and isinstance(previous.argval, str):
                return previous.argval
            return None
        previous = ins
    return None


def class_body_lines(code: types.CodeType, pool: ConstantPool,
                     statement_name: Optional[str] = None) -> List[str]:
    """A class body (structured when possible) for ``class X(...):`` inside a fallback body
    (``statement_name``: that statement's name, when it is the class's own)."""
    from pellucid.decompiler.body import BodyDecompiler
    from pellucid.decompiler.functions import FunctionStub

    try:
        if forced(code):
            raise StructureError(_forced_reason())
        node = BodyDecompiler(code, pool).class_def(FunctionStub(code), "X", [], [], statement_name)
        stmts = node.body
    except _INTERNAL as exc:
        try:
            stmts = fallback_statements(code, pool, reason_of(exc), False)
        except FallbackError as fexc:
            from pellucid.errors import DecompileError
            raise DecompileError("class body %s: the fallback failed (%s)" % (code.co_name, fexc))
        from pellucid.decompiler.class_scope import unbind_own_names
        stmts = unbind_own_names(stmts)
    return unparse(ast.Module(stmts or [ast.Pass()], [])).split("\n")
