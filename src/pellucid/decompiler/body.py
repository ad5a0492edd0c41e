"""Decompile one code object's instructions into a list of statements.

:class:`BodyDecompiler` combines the stack machine, the structurer, loops and exception regions,
and owns what is per code object: the CFG, declared ``global``/``nonlocal`` names, temporaries
and the constant pool shared with nested code.
"""
import ast
import bisect
import types
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

from pellucid.bytecode.cfg import CFG, Block
from pellucid.bytecode.features import (EXCEPTION_TABLE, FORWARD_ONLY_CONDITIONAL_JUMPS,
                                        RETURN_CONST, ROTATED_LOOP_TESTS)
from pellucid.bytecode.instruction import Instr
from pellucid.bytecode.normalize import normalize
from pellucid.bytecode.rotated_tests import rotated_test_starts
from pellucid.bytecode.stack_depth import entry_depths
from pellucid.decompiler import markers as M
from pellucid.decompiler import sharing
from pellucid.decompiler.async_loops import AsyncLoopBuilder
from pellucid.decompiler.except_star import ExceptStarBuilder
from pellucid.decompiler.comprehensions import ComprehensionBuilder
from pellucid.decompiler.deferred_annotations import AnnotationsDef, annotate_entries, is_annotate
from pellucid.decompiler.constants import ConstantPool
from pellucid.decompiler.errors import StructureError
from pellucid.decompiler.functions import Decorated, FunctionBuilder, PendingClass
from pellucid.decompiler.loops import LoopBuilder
from pellucid.decompiler.match import MatchBuilder
from pellucid.decompiler.protected import ProtectedBuilder
from pellucid.decompiler.stack_machine import (
    BINOPS, ExitResult, ImportAttr, ImportModule, Inplace, PopExcept, StackMachine, name_load,
    same_expr,
)
from pellucid.decompiler.structure import Ctx, Structurer
from pellucid.decompiler.tree_nodes import CONTEXTS, all_nodes

_Constant, _Name, _Null = ast.Constant, ast.Name, M.Null


class BodyDecompiler(MatchBuilder, AsyncLoopBuilder, ExceptStarBuilder, FunctionBuilder,
                     ComprehensionBuilder, ProtectedBuilder, LoopBuilder, Structurer, StackMachine):
    """Statements for ``code``'s body.

    >>> def f(x):
    ...     return x + 1
    >>> [type(s).__name__ for s in BodyDecompiler(f.__code__).statements()]
    ['Return']
    """

    def __init__(self, code: types.CodeType, consts: Optional[ConstantPool] = None,
                 comprehension: bool = False) -> None:
        self.code = code
        # Plain locals of a function: only this frame's own stores change them.  (Dynamo's
        # resume functions can have a local slot named like a free variable: the source's name
        # is the free variable then.)
        self._fast_locals = frozenset(
            n for n in code.co_varnames if n not in code.co_cellvars and n not in code.co_freevars
        ) if code.co_flags & 0x01 else frozenset()
        self.consts = consts if consts is not None else ConstantPool()
        self.comprehension = comprehension
        #: for a class body: the name of the ``class`` statement it is written under (set by
        #: ``body_or_fallback``); ``def __f`` there binds the mangled ``_Name__f``
        self.class_name: Optional[str] = None
        self.instrs: List[Instr] = normalize(code)
        if not self.instrs:
            raise StructureError("no instructions")
        self.cfg = CFG(self.instrs)
        if ROTATED_LOOP_TESTS and any(self.cfg.is_loop_header(b) for b in self.cfg.blocks):
            splits = rotated_test_starts(self.cfg, self._entry_depths)
            if splits:
                self.cfg = CFG(self.instrs, splits)
        self.globals_: Set[str] = set()
        self.nonlocals: Set[str] = set()
        self.local_names = set(code.co_varnames) | set(code.co_cellvars)
        self.active_loops: Set[Block] = set()
        self.latch_tests: Set[Block] = set()  # first blocks of the re-tests of the loops being built
        # tests before 3.10+ ``while`` loops being read as their guard (see loops._rotated_guard)
        self.guard_tries: Set[Block] = set()
        self.guard_failed: Set[Block] = set()
        self.break_cuts: Dict[Block, Tuple[int, Block]] = {}
        self.brk_copies: Dict[Block, FrozenSet[Block]] = {}
        self._handler_kinds: Dict[int, str] = {}
        self._chains: Dict[Block, Any] = {}
        # (protected.py: blocks grouped by handler, built at first use, once per decompile)
        self._protected_sets: Optional[Dict[int, Any]] = None
        self._by_handler: Optional[Dict[Any, List[Block]]] = None
        self._first_handler: Optional[Dict[int, Any]] = None
        self._by_handler_sets: Optional[Dict[Any, Any]] = None
        self._absorb: Dict[int, str] = {}
        self._finally_bodies: Dict[int, List[ast.stmt]] = {}
        self.pending: Dict[int, List[ast.expr]] = {}
        #: statements emitted with no copied node in them: id -> (the statement, the copy marks
        #: then, its own fields then), so a compound statement's body is not walked again each
        #: time it is nested in another (an elif chain nests one level per arm)
        self._no_copies: Dict[int, Tuple[ast.stmt, int, tuple]] = {}
        #: :data:`sharing.COPY_MARKS` when this decompiler began: while it is unchanged no node was
        #: marked copied since, and every node a statement of this body holds was made since (by
        #: this decompiler, a nested one, or a copy of such a node), or is a constant pool's
        #: fresh name: none is copied, and ``emit`` need not walk the statement to ask
        self._marks_at_start = sharing.COPY_MARKS[0]
        #: the values ``pending`` is keyed by (their ids), kept alive for the whole decompile:
        #: an entry that is never used (a loop's re-test drops its ``f := ...``) must not be
        #: found again by a new node that Python gave the freed value's id (``f = x = 2``)
        self._pending_values: List[Any] = []
        self.temp_count = 0
        self.floor = 0  # stack entries below this belong to an enclosing compound statement
        self.legacy_exceptions = not EXCEPTION_TABLE
        self.forward_only_tests = FORWARD_ONLY_CONDITIONAL_JUMPS
        self.returns_const = RETURN_CONST

    def _entry_depths(self) -> Dict[int, int]:
        """``stack_depth.entry_depths`` of the code, worked out on first use (loops.py reads
        ``_depths`` too)."""
        depths = self.__dict__.get("_depths")
        if depths is None:
            depths = self._depths = entry_depths(self.code)
        return depths

    def block_depth(self, block: Block) -> Optional[int]:
        """The stack depth ``block`` is entered with (None when unknown).

        Taken before the raw instructions the neutral list dropped ahead of its first one: a
        3.11 ``CALL`` that an and/or argument's jump reaches is entered at its ``PRECALL``,
        which has already popped the arguments by ``entry_depths``' count."""
        depths = self._entry_depths()
        first = block.instrs[0]
        k = first.index
        if k <= 0 or k > len(self.instrs) or self.instrs[k] is not first:
            return depths.get(first.offset)
        before = self.instrs[k - 1].offset
        offsets = self.__dict__.get("_depth_offsets")
        if offsets is None:
            offsets = self._depth_offsets = sorted(depths)
        j = bisect.bisect_right(offsets, before)
        if j < len(offsets) and offsets[j] < first.offset and self._raw_op(offsets[j]) == "PRECALL":
            return depths[offsets[j]]
        # (other dropped instructions are no way in: 3.12's END_FOR, reached from the loop's
        # head only, ahead of a block a ``break`` jumps to)
        return depths.get(first.offset)

    def _raw_op(self, offset: int) -> Optional[str]:
        ops = self.__dict__.get("_raw_ops")
        if ops is None:
            import dis
            ops = self._raw_ops = {i.offset: i.opname for i in dis.get_instructions(self.code)}
        return ops.get(offset)

    def statements(self) -> List[ast.stmt]:
        entry = self.cfg.blocks[0]
        stmts, stack, end = self.walk(entry, [], Ctx(None, None, None), frozenset())
        if stack is not None and end is not None:
            raise StructureError("walk stopped early at %r" % (end,))
        if self._dead_final_return():
            stmts = _else_for_tail(stmts)
        return stmts

    def _dead_final_return(self) -> bool:
        """The code ends with a ``return None`` nothing reaches: ≤3.9 add one after a last
        statement that is compound (``if``/``else`` whose arms both return), never after a
        last ``return``."""
        n = len(self.instrs)
        if n < 3 or self.instrs[-1].op != "RETURN_VALUE" or self.instrs[-2].op != "LOAD_CONST" \
                or self.instrs[-2].arg is not None:
            return False
        return not any(b.start <= n - 2 < b.end for b in self.cfg.blocks)

    # -- statements --------------------------------------------------------------------------------
    def new_temp(self) -> str:
        self.temp_count += 1
        return "__pellucid_t%d" % self.temp_count

    def emit(self, out: List[ast.stmt], stmt: ast.stmt, stack: List[Any]) -> Dict[int, ast.expr]:
        """Append ``stmt``; first save stack values it could change (or that were computed
        before its own operands) in temporaries, in the order they were computed.

        Returns the stack values replaced by temporaries (id of the old value -> the name).
        """
        if self.floor >= len(stack):
            # Nothing on the stack to save: only a value the statement uses twice is named
            # (most statements; a compound one is walked whole each time it is nested again)
            if sharing.COPY_MARKS[0] != self._marks_at_start and _has_copied(stmt, self._no_copies):
                stmt, _ = self._name_shared(out, stmt, stack)
            out.append(stmt)
            return {}
        stored, runs_code, copied, name_ids = _statement_facts(stmt)
        if copied:
            # (else ``_name_shared`` would find nothing shared and return ``stmt`` as it is)
            stmt, nodes = self._name_shared(out, stmt, stack)
            stored, runs_code, _ = _writes_and_runs(stmt, nodes)
            name_ids = [n.id for n in nodes if isinstance(n, ast.Name)]
        # Variables the statement itself names: one whose store is still pending must be bound first.
        # (name_ids(stmt), from the walk above; runs_code saves them all)
        named = set(name_ids) if self.pending and not runs_code else set()
        spill: List[int] = []
        pending = self.pending
        fast_locals = self._fast_locals  # (_is_fast_local, inlined: Dynamo's stacks are long)
        # Entries below the floor belong to an enclosing statement, saved before it began.
        for k in range(self.floor, len(stack)):
            v = stack[k]
            if pending and id(v) in pending and (runs_code or any(
                    isinstance(t, ast.Name) and t.id in named for t in pending[id(v)])):
                # A value already stored to a variable (``COPY; STORE_FAST``) whose store waits
                # for its use: code the statement runs could see that variable still unbound,
                # and so would the statement if it reads the variable (``u = t``) or writes it.
                spill.append(k)
                continue
            cls = type(v)
            if cls is _Constant:
                continue  # (_never_changes, inlined for the commonest values)
            if cls is _Name:
                name = v.id
                # (the test below for this exact class, then _never_changes: set tests first)
                if name not in stored and (not runs_code or name in fast_locals) \
                        or name.startswith("__pellucid"):
                    continue
            elif cls is _Null or _never_changes(v):
                continue  # (a NULL slot is a marker: _never_changes, without the call)
            elif isinstance(v, ast.Name) and v.id not in stored and (not runs_code or self._is_fast_local(v.id)):
                # A global, builtin or cell read earlier can be rebound by code the statement
                # runs (Dynamo loads its graph function before calling its hooks): only a fast
                # local is safe to read later.
                continue
            spill.append(k)
        if spill and isinstance(stmt, ast.Delete) and all(isinstance(t, ast.Name) for t in stmt.targets):
            # ``del name`` only changes what reads the name: save the values that do, and those
            # computed before them (to keep their order); the rest wait for their use.
            # A pending call must still run first: it could see the name bound (frame locals).
            reading = [k for k in spill if any(isinstance(n, ast.Name) and n.id in stored
                                               for n in all_nodes(stack[k])) or _may_run_code(stack[k])]
            last = max((getattr(stack[k], "_seq", 0) for k in reading), default=-1)
            spill = [k for k in spill if getattr(stack[k], "_seq", 0) <= last or k in reading]
        if spill:
            # A saved value that runs code (``graph_out_0[0]``) now runs before the globals and
            # cells read before it are used: save those too, in order, or it could rebind them.
            runs = [getattr(stack[k], "_seq", 0) for k in spill if _may_run_code(stack[k])]
            if runs:
                last = max(runs)
                # (``j in spill`` as a set: what the loop appends is below the j it tests next)
                saved = set(spill)
                for j in range(self.floor, len(stack)):
                    v = stack[j]
                    if j in saved or getattr(v, "_seq", 0) >= last:
                        continue
                    if id(v) in self.pending or (isinstance(v, ast.Name) and not _never_changes(v)
                                                 and not self._is_fast_local(v.id)):
                        spill.append(j)
        if not spill:
            out.append(stmt)
            return {}
        own = _own_value(stmt)
        own_seq = _first_seq(own) if own is not None else None
        later = own_seq is not None and any(getattr(stack[k], "_seq", 0) > own_seq for k in spill)
        reuse = _temp_target(stmt)
        if later:
            if own is None:
                raise StructureError("statement would run after a value computed later")
            tmp = reuse if reuse is not None else ("" if isinstance(stmt, ast.Expr) else self.new_temp())
            pending_own = (own_seq, tmp, own)
        else:
            pending_own = None
        items = sorted(set(id(stack[k]) for k in spill))
        by_id = {id(stack[k]): stack[k] for k in spill}
        order = sorted(items, key=lambda i: getattr(by_id[i], "_seq", 0))
        replaced: Dict[int, ast.expr] = {}
        for i in order:
            v = by_id[i]
            if pending_own is not None and getattr(v, "_seq", 0) > pending_own[0]:
                if isinstance(stmt, ast.Expr):
                    out.append(ast.Expr(pending_own[2]))  # evaluated for its effect only
                else:
                    out.append(ast.Assign([ast.Name(pending_own[1], ast.Store())], pending_own[2]))
                    _set_own_value(stmt, name_load(pending_own[1]))
                pending_own = None
            if id(v) in self.pending and (isinstance(v, ast.Constant) or isinstance(v, ast.Name) and (
                    _never_changes(v) or self._is_fast_local(v.id)) and v.id not in stored):
                # The value itself stays valid: only its pending store is made now.
                out.append(ast.Assign(self.pending.pop(id(v)), v))
                replaced[i] = v
                continue
            tmp_v = self.new_temp()
            out.append(ast.Assign([ast.Name(tmp_v, ast.Store())], self.value(v)))
            replaced[i] = name_load(tmp_v)
        if not (later and (reuse is not None or isinstance(stmt, ast.Expr))):
            out.append(stmt)  # (else the statement is already out, just before the later values)
        for k in spill:
            stack[k] = replaced[id(stack[k])]
        return replaced

    def _is_fast_local(self, name: str) -> bool:
        """A plain local of a function: only this frame's own stores change it."""
        return name in self._fast_locals

    def name_shared(self, out: List[ast.stmt], stmt: ast.stmt, stack: List[Any]) -> ast.stmt:
        """Give a temporary to each COPY'd value ``stmt`` evaluates that is used again (later
        in ``stmt`` or by a value still on the stack), so it is evaluated once: a statement of
        its own when ``stmt`` evaluates it first, else a walrus where ``stmt`` evaluates it.
        Returns ``stmt`` with the other uses renamed; ``stack`` is updated in place."""
        return self._name_shared(out, stmt, stack)[0]

    def _name_shared(self, out: List[ast.stmt], stmt: ast.stmt,
                     stack: List[Any]) -> Tuple[ast.stmt, List[ast.AST]]:
        """:meth:`name_shared`, and :func:`all_nodes` of the statement it returns (``emit``
        walks it again otherwise)."""
        while True:
            nodes = all_nodes(stmt)
            found = sharing.first_shared(stmt, stack, nodes)
            if found is None:
                return stmt, nodes
            node, conditional, first = found
            if conditional:
                raise StructureError("a duplicated value is first used conditionally")
            tmp = self.new_temp()
            name = name_load(tmp)
            memo: Dict[int, Any] = {}
            if first:
                stmt = sharing.replace_nodes(stmt, {id(node): name}, memo)
                sharing.replace_in_stack(stack, {id(node): name}, memo)
                self.emit(out, ast.Assign([ast.Name(tmp, ast.Store())], node), stack)
            else:
                walrus = ast.NamedExpr(ast.Name(tmp, ast.Store()), node)
                stmt = sharing.replace_first(stmt, node, walrus)
                memo[id(walrus)] = walrus  # the walrus keeps the value; every other use is the name
                stmt = sharing.replace_nodes(stmt, {id(node): name}, memo)
                sharing.replace_in_stack(stack, {id(node): name}, memo)

    def has_live_values(self, stack: List[Any]) -> bool:
        """Whether the stack (above the floor) holds values whose evaluation has an order to keep."""
        return any(self._order_matters(v) for v in stack[self.floor:])

    def _order_matters(self, v: Any) -> bool:
        # (A global or cell read before a branch too: an arm that calls something could rebind
        # it, and would save it itself, so the arms would leave different values.)
        return not _never_changes(v) and not (isinstance(v, ast.Name) and self._is_fast_local(v.id))

    def spill_live(self, out: List[ast.stmt], stack: List[Any], cond: ast.expr) -> ast.expr:
        """Save the stack's values in temporaries (in the order they were computed) before a
        branch on ``cond``; ``cond`` too when it was computed before one of them."""
        live = [k for k in range(self.floor, len(stack)) if self._order_matters(stack[k])]
        if not live:
            return cond
        work = list(stack)
        latest = max(getattr(work[k], "_seq", 0) for k in live)
        cond_seq = _first_seq(cond)
        with_cond = cond_seq is not None and cond_seq < latest and not sharing.trivial(cond)
        if with_cond:
            work.append(cond)
            live.append(len(work) - 1)
        k0 = min(live, key=lambda k: getattr(work[k], "_seq", 0))
        # Saving the earliest value runs emit's own ordering: every value still on the stack that
        # was computed after it is saved too, in order.
        self.spill_slot(out, work, k0)
        if with_cond:
            cond = work.pop()
        stack[:] = work
        return cond

    def save_state(self) -> Any:
        return (self.temp_count, dict(self.pending), set(self.globals_), set(self.nonlocals))

    def restore_state(self, saved: Any) -> None:
        self.temp_count, self.pending, self.globals_, self.nonlocals = saved

    def spill_slot(self, out: List[ast.stmt], stack: List[Any], k: int) -> ast.Name:
        """Save ``stack[k]`` in a temporary (every use of that very value on the stack becomes
        the name): for statements that act on a stack value the bytecode keeps using."""
        v = stack[k]
        if isinstance(v, ast.Name) and v.id.startswith("__pellucid"):
            return v
        tmp = self.new_temp()
        name = name_load(tmp)
        name._seq = getattr(v, "_seq", 0)  # type: ignore[attr-defined]
        sharing.replace_in_stack(stack, {id(v): name})
        self.emit(out, ast.Assign([ast.Name(tmp, ast.Store())], self.value(v)), stack)
        return name

    def spill_before_compound(self, out: List[ast.stmt], stack: List[Any]) -> None:
        """Save stack values in temporaries before a loop/try/with whose body runs statements
        (they were computed before it, and the body may change what they read)."""
        # ids of ``stack[:k]`` as they are when ``k`` is reached (the loop changes only
        # entries from ``k`` on): "already below" as one set test, not a scan of the entries
        # below each one (Dynamo's stacks before its loop hold ~80 values)
        below = set([id(v) for v in stack[:self.floor]])
        for k in range(self.floor, len(stack)):
            v = stack[k]
            if _never_changes(v) or id(v) in below:
                below.add(id(v))
                continue
            tmp = self.new_temp()
            out.append(ast.Assign([ast.Name(tmp, ast.Store())], self.value(v)))
            new = name_load(tmp)
            for j in range(k, len(stack)):
                if stack[j] is v:
                    stack[j] = new
            below.add(id(new))

    def value(self, node: Any) -> ast.expr:
        targets = self.pending.pop(id(node), None) if self.pending else None
        if targets is not None:
            if len(targets) != 1 or not isinstance(targets[0], ast.Name):
                raise StructureError("value stored and used at once")
            return ast.NamedExpr(targets[0], super().value(node))
        if type(node) in _PLAIN_VALUES:
            return node  # (the common case: none of the tests below or in super().value applies)
        if isinstance(node, M.ExcMatch):
            return node  # consumed by the try builder
        if isinstance(node, M.FunctionStub):
            return self.function_expr(node)
        if isinstance(node, Decorated):
            return ast.Call(node.decorator, [self.value(node.value)], [])
        if isinstance(node, PendingClass):
            raise StructureError("class used as a value")
        return super().value(node)

    def store(self, target: ast.expr, v: Any, stack: List[Any], out: List[ast.stmt]) -> None:  # noqa: C901
        if isinstance(v, (M.NextValue, M.WithEnter, M.Exc)):
            self.emit(out, ast.Assign([target], v), stack)
            return
        if isinstance(v, M.SavedLocal) or isinstance(v, ExitResult):
            return
        if isinstance(v, M.Marker) and isinstance(v.value, tuple) and v.value[0] == "closure":
            return  # ``__classcell__`` bookkeeping of a class body
        if isinstance(v, M.Marker) and v.value == "locals" and isinstance(target, ast.Name) \
                and target.id == "__classdict__":
            return  # 3.12+ class body keeping its namespace for annotation scopes
        if isinstance(target, ast.Name) and target.id in ("__annotate__", "__annotate_func__") \
                and not self.code.co_flags & 0x01 and is_annotate(v):
            # 3.14+: a class or module body's deferred annotations, written back as annotated
            # statements when the body is complete (pellucid.decompiler.deferred_annotations)
            self.emit(out, AnnotationsDef(annotate_entries(self, v)), stack)
            return
        if isinstance(v, M.Marker) and isinstance(v.value, tuple) and v.value[0] == "type_alias":
            name, value = v.value[1], v.value[2]
            # (a generic alias, ``type A[T] = ...``, carries its parameters: type_params.py)
            params = v.value[3] if len(v.value) > 3 else []
            if not isinstance(target, ast.Name) or target.id != name:
                raise StructureError("type alias %s bound to another target" % name)
            self.emit(out, ast.TypeAlias(ast.Name(name, ast.Store()), params, value), stack)  # type: ignore[attr-defined]
            return
        if isinstance(v, M.UnpackItem):
            group, k = v.value
            group.targets[k] = ast.Starred(target, ast.Store()) if k == group.star else target
            if all(t is not None for t in group.targets):
                tup = ast.Tuple(list(group.targets), ast.Store())
                if group.parent is not None:
                    self.store(tup, group.parent, stack, out)
                else:
                    self.store(tup, group.value, stack, out)
            return
        if isinstance(v, ImportModule) and isinstance(target, ast.Name):
            name = v.value
            if v.fromlist is None and (name == target.id or name.startswith(target.id + ".")) \
                    and name.split(".")[0] == target.id:
                alias = ast.alias(name, None)
            else:
                alias = ast.alias(name, target.id)
            if v.level:
                raise StructureError("relative import of a module object")
            self.emit(out, v.statement(ast.Import([alias])), stack)
            return
        if isinstance(v, ImportAttr) and isinstance(target, ast.Name):
            mod = v.value
            if mod.fromlist is None:
                self.emit(out, mod.statement(ast.Import([ast.alias(mod.value, target.id)])), stack)
            else:
                mod.names.append(ast.alias(v.name, None if v.name == target.id else target.id))
            return
        if isinstance(v, Inplace):
            try:
                as_load = _as_load(target)
            except StructureError:
                as_load = None
            if as_load is not None and same_expr(v.left, as_load):
                self.emit(out, ast.AugAssign(target, _binop(v.op), self.value(v.right)), stack)
                return
        definition = self.definition_statement(target, v)
        if definition is not None:
            self.emit(out, definition, stack)
            return
        # ``a = b = v`` / walrus: the same value is still on the stack
        # (``in`` is identity for stack values, no node class defines ``__eq__``; one C-level
        # pass over the dozens of values Dynamo's code keeps on the stack)
        if not isinstance(v, M.Marker) and v in stack:
            self.pending.setdefault(id(v), []).append(target)
            self._pending_values.append(v)
            return
        targets = self.pending.pop(id(v), []) + [target]
        self.emit(out, ast.Assign(targets, self.value(v)), stack)

    # -- exceptions, with -----------------------------------------------------------------------------
    def op_PUSH_EXC_INFO(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        v = stack.pop()
        stack.append(M.SavedExc())
        stack.append(v)

    def op_POP_EXCEPT(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        # One handled exception's saved state: three values up to 3.10, one since 3.11 (an
        # ``except`` nested in an ``except`` has the outer clause's state right below it).
        n = 3 if self.legacy_exceptions else 1
        if len(stack) < n or not all(isinstance(v, M.SavedExc) for v in stack[-n:]):
            raise StructureError("POP_EXCEPT without saved exception state")
        del stack[-n:]
        popped = PopExcept()
        # (values the clause computed before leaving it, kept under the exception: a
        # ``return x`` written in the clause loads ``x`` before the POP_EXCEPT)
        popped._carried = [v for v in stack if not isinstance(v, M.Marker)]  # type: ignore[attr-defined]
        self.emit(out, popped, stack)

    def op_CHECK_EXC_MATCH(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        e = super().value(stack.pop())
        stack.append(M.ExcMatch(e))

    def op_EXC_MATCH2(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        e = super().value(stack.pop())
        stack.pop()
        stack.append(M.ExcMatch(e))

    def op_BEFORE_WITH(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        mgr = self.value(stack.pop())
        stack.append(M.WithExit(mgr))
        stack.append(M.WithEnter(mgr))

    def op_BEFORE_ASYNC_WITH(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        mgr = self.value(stack.pop())
        stack.append(M.WithExit(mgr, is_async=True))
        stack.append(M.WithEnter(mgr, is_async=True))

    def op_GET_AWAITABLE(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if isinstance(stack[-1], (M.WithEnter, ExitResult)):
            return  # ``async with`` awaits __aenter__/__aexit__ implicitly
        super().op_GET_AWAITABLE(arg, stack, out, ins)

    def op_YIELD_FROM(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if len(stack) >= 2 and isinstance(stack[-2], (M.WithEnter, ExitResult)):
            stack.pop()
            return
        super().op_YIELD_FROM(arg, stack, out, ins)

    def op_GET_ANEXT(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.append(M.Awaitable(("anext", stack[-1])))

    def op_LOAD_FAST_AND_CLEAR(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        stack.append(M.SavedLocal(arg))

    def op_LOAD_FAST(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if self.comprehension and arg == ".0":
            stack.append(M.Iterator(name_load(".0")))
            return
        if not arg.isidentifier():
            # (a hidden parameter, such as 3.14's ``.format``, of code decompiled on its own:
            # spelled as functions.build_arguments spells it in the signature)
            from pellucid.decompiler.fallback import _local
            arg = _local(arg)
        stack.append(name_load(arg))

    def op_ASYNC_GEN_WRAP(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        pass


def _binop(sym: str) -> ast.operator:
    return BINOPS[sym]()


def _as_load(target: ast.expr) -> ast.expr:
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Load())
    if isinstance(target, ast.Attribute):
        return ast.Attribute(target.value, target.attr, ast.Load())
    if isinstance(target, ast.Subscript):
        return ast.Subscript(target.value, target.slice, ast.Load())
    raise StructureError("not a simple target")


def _own_value(stmt: ast.stmt) -> Optional[ast.expr]:
    """The expression a simple statement evaluates first (what a temporary can stand for)."""
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return)) and stmt.value is not None:
        return stmt.value
    return None


def _temp_target(stmt: ast.stmt) -> Optional[str]:
    """``__pellucid_tN`` when ``stmt`` only assigns a temporary."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and stmt.targets[0].id.startswith("__pellucid_t"):
        return stmt.targets[0].id
    return None


# Stack values (exactly these classes) that are their own expression: no marker, no pending
# constant, no f-string part or in-place operation (see ``value``).
_PLAIN_VALUES = frozenset([ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.BinOp, ast.UnaryOp,
                           ast.Compare, ast.Tuple, ast.List, ast.Dict, ast.Set, ast.BoolOp,
                           ast.NamedExpr, ast.Starred, ast.Slice, ast.IfExp, ast.JoinedStr])


def _set_own_value(stmt: ast.stmt, value: ast.expr) -> None:
    stmt.value = value  # type: ignore[attr-defined]


def _first_seq(node: ast.AST) -> Optional[int]:
    seqs = [getattr(n, "_seq") for n in all_nodes(node) if hasattr(n, "_seq")]
    return min(seqs) if seqs else None


_QUIET_NODES = (ast.Name, ast.Constant, ast.expr_context, ast.Assign, ast.Expr, ast.Pass, ast.Delete,
                ast.Global, ast.Nonlocal, ast.Tuple, ast.List, ast.NamedExpr)


def _may_run_code(stmt: ast.AST) -> bool:
    """Whether ``stmt`` (or an expression) can run code that is not its own (a call, an
    operator, an attribute...)."""
    if type(stmt) is _Name and type(stmt.ctx) in CONTEXTS:  # type: ignore[attr-defined]
        return False  # (the commonest value: a name and its context, both quiet)
    if not isinstance(stmt, _QUIET_NODES):
        return True  # (all_nodes' first node: no walk for a call or a subscript)
    # (a loop, not ``any`` over a generator: asked of every value a statement saves)
    for node in all_nodes(stmt):
        if not isinstance(node, _QUIET_NODES):
            return True
    return False


def _never_changes(v: Any) -> bool:
    """Stack values no statement can change or reorder: markers, constants, a comprehension's
    empty accumulator, pellucid's own temporaries."""
    # (the two commonest stack values first, by exact type: asked for every value on the stack
    # at every statement, and Dynamo's code keeps dozens there)
    cls = type(v)
    if cls is ast.Name:
        return v.id.startswith("__pellucid")
    if cls is ast.Constant:
        return True
    return isinstance(v, (M.Marker, ast.Constant)) or _empty_display(v) or \
        (isinstance(v, ast.Name) and v.id.startswith("__pellucid"))


def _empty_display(v: Any) -> bool:
    """``[]``/``{}``/``set()`` being filled by a comprehension: no side effects to order."""
    if isinstance(v, (ast.List, ast.Set)):
        return not v.elts
    if isinstance(v, ast.Dict):
        return not v.keys
    return isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "set" and not v.args


def _writes_and_runs(stmt: ast.stmt, nodes: Optional[List[ast.AST]] = None) -> Tuple[Set[str], bool, bool]:
    """The names ``stmt`` binds or deletes, :func:`_may_run_code` of it, and whether a node in
    it is :func:`sharing.is_copied` (else :meth:`BodyDecompiler.name_shared` has nothing to
    do), in one walk (all are asked of every statement emitted); ``nodes``: :func:`all_nodes`
    of ``stmt`` if known."""
    names: Set[str] = set()
    runs = False
    copied = False
    for node in all_nodes(stmt) if nodes is None else nodes:
        cls = type(node)
        if cls in CONTEXTS:
            continue  # (a third of the nodes: quiet, no name, never copied)
        if cls is _Name:
            # (the commonest node: quiet, and never ``is_copied``, being trivial)
            if isinstance(node.ctx, (ast.Store, ast.Del)):  # type: ignore[attr-defined]
                names.add(node.id)  # type: ignore[attr-defined]
            continue
        if not copied and getattr(node, "_copied", False) and sharing.is_copied(node):
            copied = True
        if not isinstance(node, _QUIET_NODES):
            runs = True
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names.add((a.asname or a.name).split(".")[0])
    return names, runs, copied


def _has_copied(stmt: ast.stmt, memo: Optional[Dict[int, Tuple[ast.stmt, int, tuple]]] = None) -> bool:
    """Whether a node in ``stmt`` is :func:`sharing.is_copied`: the one fact of
    :func:`_statement_facts` ``emit`` needs when no stack value waits below the statement, in a
    walk that stops at the first and collects nothing (the nodes visited are :func:`all_nodes`'s).

    ``memo``: statements found without one before; a statement below ``stmt`` found there is
    not walked again while no node was marked copied since (:data:`sharing.COPY_MARKS`) and its
    own fields hold the same values (a body replaced or changed in place).  A statement that
    is found without one is added.
    """
    marks = sharing.COPY_MARKS[0]
    work: List[Any] = [stmt]
    pop, append, extend = work.pop, work.append, work.extend
    contexts, ast_type, name_type, is_copied = CONTEXTS, ast.AST, _Name, sharing.is_copied
    statement = ast.stmt
    while work:
        node = pop()
        cls = type(node)
        if cls in contexts:
            continue
        if memo is not None and node is not stmt and isinstance(node, statement):
            seen = memo.get(id(node))
            if seen is not None and seen[0] is node and seen[1] == marks and _same_fields(node, seen[2]):
                continue
        if cls is name_type and type(node.id) is str:
            # (trivial, so never copied; its only child is its context, as in all_nodes)
            ctx = getattr(node, "ctx", None)
            if isinstance(ctx, ast_type):
                append(ctx)
            elif type(ctx) is list:
                extend([v for v in ctx if isinstance(v, ast_type)])
            continue
        if getattr(node, "_copied", False) and is_copied(node):
            return True
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                extend([v for v in value if isinstance(v, ast_type)])
            elif isinstance(value, ast_type):
                append(value)
    if memo is not None:
        memo[id(stmt)] = (stmt, marks, _own_fields(stmt))
    return False


def _own_fields(node: ast.AST) -> tuple:
    """The values of ``node``'s fields, a list as a tuple of its items (compared by identity)."""
    return tuple([tuple(v) if type(v) is list else v for v in [getattr(node, f, None) for f in node._fields]])


def _same_fields(node: ast.AST, before: tuple) -> bool:
    now = _own_fields(node)
    if len(now) != len(before):
        return False
    for a, b in zip(now, before):
        if type(a) is tuple and type(b) is tuple:
            if len(a) != len(b) or any(x is not y for x, y in zip(a, b)):
                return False
        elif a is not b:
            return False
    return True



def _statement_facts(stmt: ast.stmt) -> Tuple[Set[str], bool, bool, List[Any]]:
    """:func:`_writes_and_runs` of ``stmt`` and the ``id``s of the :class:`ast.Name` nodes in it, in
    one walk that lists no nodes (``emit`` asks them of every statement, and walks a compound
    statement's body again each time it is nested in another: the list :func:`all_nodes`
    built for that was a tenth of the decompiler's time).  The nodes visited are
    :func:`all_nodes`'s, in another order, which none of these answers depends on."""
    names: Set[str] = set()
    ids: List[Any] = []
    runs = False
    copied = False
    work: List[Any] = [stmt]
    pop, append, extend = work.pop, work.append, work.extend
    contexts, ast_type, name_type, quiet = CONTEXTS, ast.AST, _Name, _QUIET_NODES
    while work:
        node = pop()
        cls = type(node)
        if cls in contexts:
            continue  # (no fields, no name, never copied)
        if cls is name_type:
            ids.append(node.id)
            ctx = getattr(node, "ctx", None)
            if isinstance(ctx, (ast.Store, ast.Del)):
                names.add(node.id)
            if type(node.id) is str:
                # (all_nodes: the only child of a name is its context)
                if isinstance(ctx, ast_type):
                    if type(ctx) not in contexts:
                        append(ctx)
                elif type(ctx) is list:
                    extend([v for v in ctx if isinstance(v, ast_type)])
                continue
        else:
            if not copied and getattr(node, "_copied", False) and sharing.is_copied(node):
                copied = True
            if not isinstance(node, quiet):
                runs = True
            if isinstance(node, ast.Name):
                ids.append(node.id)
                if isinstance(node.ctx, (ast.Store, ast.Del)):
                    names.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    names.add((a.asname or a.name).split(".")[0])
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                extend([v for v in value if isinstance(v, ast_type)])
            elif isinstance(value, ast_type):
                append(value)
    return names, runs, copied, ids


def _always_leaves(stmts: List[ast.stmt]) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    return isinstance(last, ast.If) and _always_leaves(last.body) and _always_leaves(last.orelse)


def _else_for_tail(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """``if c: <leaves>`` followed by simple statements ending in return/raise, as ``if c: ...
    else: <those statements>`` (the same code; the form whose compiled code keeps ≤3.9's
    unreachable final ``return None``)."""
    k = len(stmts)
    while k > 0 and not isinstance(stmts[k - 1], (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try,
                                                  ast.With, ast.AsyncWith, ast.FunctionDef,
                                                  ast.AsyncFunctionDef, ast.ClassDef)):
        k -= 1
    tail = stmts[k:]
    if k == 0 or not tail or not isinstance(tail[-1], (ast.Return, ast.Raise)):
        return stmts
    last = stmts[k - 1]
    if not isinstance(last, ast.If) or not _always_leaves(last.body):
        return stmts
    if last.orelse:
        if not (len(last.orelse) == 1 and isinstance(last.orelse[0], ast.If)):
            return stmts
        nested = _else_for_tail(last.orelse + tail)
        if len(nested) != 1:
            return stmts
        return stmts[:k - 1] + [ast.If(last.test, last.body, nested)]
    return stmts[:k - 1] + [ast.If(last.test, last.body, tail)]
