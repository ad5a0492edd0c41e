"""Exception regions: ``try``/``except``/``else``/``finally`` and ``with``/``async with``.

A protected region is the set of blocks whose chain of effective handlers contains one handler.
Handlers that only restore interpreter state (3.11's ``COPY 3; POP_EXCEPT; RERAISE``, the cleanup
that deletes an ``except ... as e`` name, 3.12's comprehension and generator wrappers) are
*transparent*: they belong to no statement and are skipped when looking for the effective handler.

The handler's code is decompiled like any other code (its exception-match tests become ``if``s
over :class:`~pellucid.decompiler.markers.ExcMatch`), then read back as ``except`` clauses.
"""
import ast
import copy
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple, Union

from pellucid.bytecode.cfg import Block, tail_code
from pellucid.bytecode.features import EXCEPTION_TABLE
from pellucid.bytecode.instruction import POP_JUMPS
from pellucid.bytecode.neutral_ops import TERMINAL
from pellucid.bytecode.positions import nop_line_before
from pellucid.decompiler import markers as M
from pellucid.decompiler.errors import StructureError
from pellucid.decompiler.stop_sets import group_stop
from pellucid.decompiler.stack_machine import ExitResult, PopExcept, Reraise, same_expr
from pellucid.decompiler.structure import Ctx, past_lone_jumps, same_code


_SAFE_EXIT_OPS = frozenset({"RETURN_VALUE", "JUMP", "POP_TOP", "SWAP", "COPY", "ROT", "LOAD_CONST",
                            "POP_EXCEPT"})


class ProtectedBuilder:
    """Mixin over Structurer: handler classification and try/with statements."""

    # -- handler classification ------------------------------------------------------------------
    def handler_kind(self, target: int) -> str:
        """'transparent', 'with', 'async_with', 'async_for' or 'try' for the handler at ``target``."""
        cache: Dict[int, str] = self._handler_kinds
        if target in cache:
            return cache[target]
        ins = self.instrs[target:target + 6]
        ops = [i.op for i in ins]
        kind = "try"
        if ops[:3] == ["COPY", "POP_EXCEPT", "RERAISE"]:
            kind = "transparent"
        elif len(ins) >= 4 and ops[0] == "LOAD_CONST" and ins[0].arg is None \
                and ops[1] in ("STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL") \
                and ops[2].startswith("DELETE_") and ins[1].arg == ins[2].arg \
                and ops[3] in ("RERAISE", "END_FINALLY"):
            kind = "transparent"
        elif ops[:2] == ["STOPITERATION_ERROR", "RERAISE"]:
            kind = "transparent"
        elif ops[:1] == ["CLEANUP_THROW"]:
            kind = "transparent"
        elif ops[:5] == ["SWAP", "POP_TOP", "SWAP", "STORE_FAST", "RERAISE"]:
            kind = "transparent"  # 3.12 inlined comprehension restoring its variable
        elif ops[:3] == ["SWAP", "POP_TOP", "SWAP"] and ins[2].arg is not None and ins[2].arg > 2 \
                and [i.op for i in self.instrs[target + 3:target + 2 + ins[2].arg]] \
                == ["STORE_FAST"] * (ins[2].arg - 1) \
                and self.instrs[target + 2 + ins[2].arg].op == "RERAISE":
            kind = "transparent"  # ... restoring several variables
        elif "WITH_EXCEPT_START" in ops[:2] or "WITH_CLEANUP_START" in ops[:1]:
            kind = "with"
        elif ops[:1] == ["END_ASYNC_FOR"]:
            kind = "async_for"
        cache[target] = kind
        return kind

    def handler_chain(self, block: Block) -> Tuple[int, ...]:
        """Effective (non-transparent) handlers around ``block``, innermost first."""
        cached = self._chains.get(block)
        if cached is not None:
            return cached
        chain: List[int] = []
        seen = set()
        h = block.handler
        while h is not None and h.target not in seen:
            seen.add(h.target)
            if self.handler_kind(h.target) != "transparent":
                chain.append(h.target)
            h = h.outer
        result = tuple(chain)
        self._chains[block] = result
        return result

    def effective_handler(self, block: Block) -> Optional[int]:
        chain = self.handler_chain(block)
        return chain[0] if chain else None

    def protected_set(self, target: int) -> FrozenSet[Block]:
        sets = self._protected_sets
        if sets is None:
            # every handler's set in one pass over the blocks (one pass per handler was
            # quadratic in functions of many ``try`` statements); each set is built in block
            # order, as one pass for it alone would
            members: Dict[int, List[Block]] = {}
            for b in self.cfg.blocks:
                for t in self.handler_chain(b):
                    members.setdefault(t, []).append(b)
            sets = self._protected_sets = {t: frozenset(bs) for t, bs in members.items()}
        found = sets.get(target)
        return found if found is not None else frozenset()

    def private_exit(self, block: Block, ctx: Ctx, stack: List[Any]) -> Union[bool, List[ast.stmt]]:
        """Whether ``block`` starts a path that only leaves the function or loop (``return`` in a
        ``try``: ≤3.10 pops the block first, 3.9+ copies ``finally`` before it).

        For ``finally`` and ``with`` regions the answer is the path's statements (the ``finally``
        copy, then ``return``/``break``/``continue``), which belong at the end of the body;
        ``True`` means "walk on, the path is part of the body"; ``False`` that it is not one.

        Leaving an ``except`` statement's body, the path may also leave enclosing ``finally``/
        ``with`` statements (``continue`` in a ``try`` inside a ``try/finally``: the finally
        copy, then the jump): it is read by them in turn, and is then the body's end too."""
        found = self._private_exit(block, ctx, stack)
        if found is not False or ctx.exc is None or self._absorb.get(ctx.exc) != "except" \
                or not any(self._absorb.get(lv) in ("finally", "with")
                           for lv in self._enclosing_levels(ctx.exc)):
            return found
        before = self.seq_counter
        trial = self._exit_path(block, ctx, stack)
        if trial is None:
            return False
        # (3.10+ copy the return into each arm of an ``if`` that ends the finally copy)
        trial = _factor_terminal_tail(trial)
        body = list(trial)
        _strip_unwinding(body)  # (leaving an enclosing clause on the way: its POP_EXCEPT)
        body = _fold_spilled_return(self._drop_outer_copies(body, ctx.exc))
        if len(body) == 1 and isinstance(body[0], (ast.Break, ast.Continue)):
            return trial
        if len(body) == 1 and isinstance(body[0], ast.Return) and _computed_before(body[0].value, before):
            return trial
        return self._break_leaving_clause_and_with(block, ctx, stack) or False

    def _break_leaving_clause_and_with(self, block: Block, ctx: Ctx, stack: List[Any]) -> Optional[List[ast.stmt]]:
        """A ``break`` out of a ``try`` inside a ``with`` inside a loop: the with's
        ``__exit__`` call, then (3.10+) the copy of the code after the loop (see
        ``_exit_then_loop_follow``, ``_break_to_copied_end``), read at the with's level."""
        loop = ctx.loop
        if loop is None or ctx.exc is None:
            return None
        ctxs = self._level_ctxs()
        for lv in self._enclosing_levels(ctx.exc):
            mode = self._absorb.get(lv)
            if mode == "finally":
                return None
            if mode == "with":
                built = ctxs.get(lv)
                if built is None or built.loop is None or built.loop.header is not loop.header:
                    return None
                found = self._is_with_exit(block, Ctx(loop, self.protected_set(lv), lv), stack)
                return found if found and isinstance(found[-1], ast.Break) else None
        return None

    def _enclosing_levels(self, level: int) -> List[int]:
        """The handler levels of the statements enclosing ``level``'s, innermost first."""
        out: List[int] = []
        ctxs = self._level_ctxs()
        here = ctxs.get(level)
        while here is not None and here.exc is not None and here.exc not in out:
            out.append(here.exc)
            here = ctxs.get(here.exc)
        return out

    def _private_exit(self, block: Block, ctx: Ctx, stack: List[Any]) -> Union[bool, List[ast.stmt]]:
        """(``private_exit`` for the statement's own region)"""
        mode = self._absorb.get(ctx.exc) if ctx.exc is not None else None
        if mode is None:
            return False
        if _returns_past_handler(block, ctx):
            # ≤3.10 end a ``try``/``with`` body that falls off the function's end with a jump
            # over the handler code to the final ``return``: code after the statement.  (A
            # ``return`` written in the body is compiled there, inline.)
            return False
        if mode == "finally":
            return self._is_finally_exit(block, ctx, stack) or False
        if mode == "with":
            return self._is_with_exit(block, ctx, stack) or False
        node: Optional[Block] = block
        for _ in range(64):
            if node is None or node in self.cfg.handler_blocks:
                return False
            # (the first block may be shared by tests in the body: ``if a or b: return``)
            if len(node.preds) != 1 and not (node is block and ctx.region is not None
                                             and all(p in ctx.region for p in node.preds)):
                return False
            if mode == "except" and any(i.op not in _SAFE_EXIT_OPS for i in node.instrs):
                return False
            last = node.last
            if last.op in ("RETURN_VALUE", "RAISE_VARARGS"):
                return True
            nxt = node.jump if last.op == "JUMP" else node.fallthrough
            if ctx.loop is not None and nxt in (ctx.loop.cont, ctx.loop.brk):
                return True
            if last.op not in ("JUMP",) and last.target is not None:
                return False
            node = nxt
        return False

    def inert_exit(self, block: Block, ctx: Ctx) -> bool:
        """Whether ``block`` starts a path of instructions that cannot raise (POP_EXCEPT, stack
        shuffles, constants) ending in ``return`` or a jump to the loop's continue/break point.

        ≤3.10 pops the block stack before a ``return`` out of a clause nested in a ``try``, so
        that path lies outside the enclosing ``try``; nothing on it can raise, so it reads the
        same in whatever region it is written."""
        node: Optional[Block] = block
        for _ in range(16):
            if node is None or node in self.cfg.handler_blocks \
                    or any(i.op not in _SAFE_EXIT_OPS for i in node.instrs):
                return False
            last = node.last
            if last.op == "RETURN_VALUE":
                return True
            nxt = node.jump if last.op == "JUMP" else node.fallthrough
            if ctx.loop is not None and nxt in (ctx.loop.cont, ctx.loop.brk):
                return True
            if last.op != "JUMP" and last.target is not None:
                return False
            node = nxt
        return False

    def _level_ctxs(self) -> Dict[int, Ctx]:
        """The context each ``try``/``with`` statement was built in, by handler level."""
        found: Optional[Dict[int, Ctx]] = self.__dict__.get("_pellucid_level_ctxs")
        if found is None:
            found = {}
            self.__dict__["_pellucid_level_ctxs"] = found
        return found

    def _exit_path(self, block: Block, ctx: Ctx, stack: List[Any]) -> Optional[List[ast.stmt]]:
        """Decompile the private path starting at ``block`` on its own, outside the region;
        ``None`` unless it is entered only from the region and never falls through.

        It is walked in the context the statement itself was built in, so a path that also
        leaves enclosing ``try``/``with`` statements is read by them in turn."""
        if len(block.preds) != 1 and (self._absorb.get(ctx.exc) not in ("finally", "with")
                                      or ctx.region is None
                                      or any(p not in ctx.region for p in block.preds)
                                      or not (all(p.last.op in POP_JUMPS for p in block.preds)
                                              or (self._absorb.get(ctx.exc) == "finally"
                                                  and self._statement_level(block, ctx)))):
            # (several jumps from a try body: ``if a or b: break``; or, at the statement's
            # own stack depth, where an ``if`` in the body meets: ``if c: x`` then
            # ``continue``, not the arms of a value such as ``return a if c else b``)
            return None
        # (that meeting point only as a ``continue``/``break``: where the arms meet before
        # the function's end, the body's normal end is there too, and the return after it
        # is the code after the statement)
        meeting = len(block.preds) != 1 and not all(p.last.op in POP_JUMPS for p in block.preds)
        if meeting and ctx.loop is None:
            return None
        chain = self.handler_chain(block)
        # A path that starts with a ``try`` statement of its own (a ``finally`` copy holding
        # one) is walked from outside it, so that the statement is built.
        while chain and not any(chain[0] in self.handler_chain(p) for p in block.preds):
            chain = chain[1:]
        handler = chain[0] if chain else None
        enclosing = self._level_ctxs().get(ctx.exc) if ctx.exc is not None else None
        here = enclosing
        seen_levels: Set[int] = set()
        while here is not None and here.exc is not None and here.exc != handler \
                and here.exc not in seen_levels:
            # (a path that leaves several enclosing statements at once: ``return`` in a
            # ``try`` inside two ``with``s runs the inner ``__exit__`` under the outer's handler)
            seen_levels.add(here.exc)
            here = self._level_ctxs().get(here.exc)
        if enclosing is not None and enclosing.exc == handler:
            outer = Ctx(ctx.loop, enclosing.region, handler)
        elif here is not None and handler is not None and here.exc == handler:
            outer = Ctx(ctx.loop, here.region, handler)
        else:
            outer = Ctx(ctx.loop, None, handler)
        busy = self.__dict__.setdefault("_pellucid_exit_paths", set())
        if (block, ctx.exc) in busy:
            return None  # already being read further up (a path that loops back to itself)
        busy.add((block, ctx.exc))
        saved_absorb = self._absorb.pop(ctx.exc)
        try:
            trial, st, _ = self.walk(block, list(stack), outer, frozenset())
        except StructureError:
            return None
        finally:
            self._absorb[ctx.exc] = saved_absorb
            busy.discard((block, ctx.exc))
        if meeting and not (trial and isinstance(trial[-1], (ast.Continue, ast.Break))):
            return None
        return trial if st is None and trial else None

    def _statement_level(self, block: Block, ctx: Ctx) -> bool:
        """``block`` starts with the stack no deeper than any block of the region (no value
        of an expression, whose arms may meet there, is on it), and no clause's end meets
        the body there."""
        if not ctx.region or any(i.op == "POP_EXCEPT" for p in block.preds for i in p.instrs):
            return False  # (a with's suppression path meets its normal end there)
        depths = self._entry_depths()  # type: ignore[attr-defined]
        inside = [depths.get(b.instrs[0].offset) for b in ctx.region]
        here = depths.get(block.instrs[0].offset)
        return here is not None and None not in inside and here <= min(inside)  # type: ignore[type-var]

    def _outer_finals(self, level: Optional[int], loop_only: bool) -> List[List[ast.stmt]]:
        """``finally`` bodies of the statements enclosing ``level``'s, innermost first: a
        ``return`` (or, inside one loop, ``break``/``continue``) runs their copies too."""
        if level is None:
            return []
        out: List[List[ast.stmt]] = []
        ctxs = self._level_ctxs()
        here = ctxs.get(level)
        header = here.loop.header if here is not None and here.loop is not None else None
        while here is not None and here.exc is not None:
            outer = here.exc
            here = ctxs.get(outer)
            if loop_only and (here is None or here.loop is None or here.loop.header is not header):
                break  # that statement encloses the loop: break/continue stay inside it
            final = self._finally_bodies.get(outer) if self._absorb.get(outer) == "finally" else None
            if final is not None:
                out.append(final)
        return out

    def _drop_outer_copies(self, body: List[ast.stmt], level: Optional[int]) -> List[ast.stmt]:
        """``[<copies of enclosing finally bodies>, terminal]`` -> ``[terminal]``."""
        if not body or not isinstance(body[-1], (ast.Return, ast.Break, ast.Continue)):
            return body
        head = body[:-1]
        loop_only = isinstance(body[-1], (ast.Break, ast.Continue))
        for final in self._outer_finals(level, loop_only):
            if not head:
                break
            if _is_pass_body(final):
                continue
            n = len(final)
            if [ast.dump(x) for x in head[-n:]] == [ast.dump(x) for x in final] and n <= len(head):
                head = head[:-n]
        return head + body[-1:]

    def _is_with_exit(self, block: Block, ctx: Ctx, stack: List[Any]) -> Optional[List[ast.stmt]]:
        """A path that calls the with's ``__exit__`` and then returns/breaks/continues."""
        if self._exit_then_loop_follow(block, ctx, stack):
            return [ast.Break()]
        before = self.seq_counter
        trial = self._exit_path(block, ctx, stack)
        if trial is None:
            return self._break_to_copied_end(block, ctx, stack)
        body = _fold_spilled_return(self._drop_outer_copies(list(trial), ctx.exc))
        if len(body) != 1:
            return None
        last = body[0]
        if isinstance(last, ast.Return):
            # ``return v`` inside the with computes v before __exit__; a value computed on
            # this path (code after the loop, merged into a ``break``) runs after it.
            if _computed_before(last.value, before):
                return trial
            return self._break_to_copied_end(block, ctx, stack)
        return trial if isinstance(last, (ast.Break, ast.Continue)) else None

    def _break_to_copied_end(self, block: Block, ctx: Ctx, stack: List[Any]) -> Optional[List[ast.stmt]]:
        """``block`` calls the with's ``__exit__`` and then runs a copy of the code after an
        enclosing ``while True`` that no jump leaves (3.10+ copy that ending, a ``return`` or
        ``raise``, into each ``break``): a ``break``, the copy being the loop's follow (see
        ``_build_while``).  The with's suppression path and normal end go on inside the loop
        (to code after the with), which ``_exit_leaving_loop`` does not cover.  ``None`` if
        the path is no such break, or leaves another ``with``/``finally`` inside the loop on
        its way (their exit code would be read as the follow's)."""
        loop = ctx.loop
        if loop is None or loop.brk is not None or loop.header.last.op == "FOR_ITER" or not stack:
            return None
        ctxs = self._level_ctxs()
        for lv in self._enclosing_levels(ctx.exc) if ctx.exc is not None else []:
            here = ctxs.get(lv)
            if self._absorb.get(lv) in ("finally", "with") and here is not None \
                    and here.loop is not None and here.loop.header is loop.header:
                return None
        after = self._after_exit_call(block, stack, len(stack) - 1)
        if after is None:
            return None
        goes = past_lone_jumps(after[1])
        if goes is not after[1] and (goes.origin or goes) not in loop.body:
            # (3.11+ jump from there to the code after the loop when only that path reaches it)
            after = (after[0], goes)
        code = tail_code(after[1])
        if not code or code[-1][0] not in ("RETURN_VALUE", "RAISE_VARARGS") \
                or any(c[0] == "POP_EXCEPT" for c in code):
            return None
        pending: Dict[Block, Tuple[List[Any], Block]] = self.__dict__.setdefault(
            "_pellucid_pending_follows", {})
        known = pending.get(loop.header)
        if known is None:
            pending[loop.header] = after
        elif tail_code(known[1]) != code or len(known[0]) != len(after[0]):
            return None
        return [ast.Break()]

    def _exit_then_loop_follow(self, block: Block, ctx: Ctx, stack: List[Any]) -> bool:
        """``block`` calls the with's ``__exit__`` and then runs a copy of the code after the
        enclosing ``while`` loop, which ends the function: a ``break`` (3.10 copies that short
        ending to after the ``__exit__`` call of a ``break`` out of a ``with``)."""
        loop = ctx.loop
        if loop is None or loop.brk is None or not stack:
            return False
        after = self._after_exit_call(block, stack, len(stack) - 1)
        if after is None:
            return False
        code = tail_code(after[1])
        if code is not None and loop.header.last.op == "FOR_ITER":
            # A ``for`` loop's ``break`` also drops the iterator, right after the call
            # (3.10, 3.12 copy the code after the loop there too).
            if not after[0] or not isinstance(after[0][-1], M.Iterator) \
                    or not code or code[0][0] != "POP_TOP":
                return False
            code = code[1:]
        return bool(code) and code[-1][0] in ("RETURN_VALUE", "RAISE_VARARGS") \
            and code == tail_code(past_lone_jumps(loop.brk))

    def _is_finally_exit(self, block: Block, ctx: Ctx, stack: List[Any]) -> Optional[List[ast.stmt]]:
        """A path that is exactly the ``finally`` copy followed by return/break/continue."""
        final = self._finally_bodies.get(ctx.exc) if ctx.exc is not None else None
        before = self.seq_counter
        trial = self._exit_path(block, ctx, stack) if final is not None else None
        if trial is None or final is None:
            return None
        # (3.10+ copy the return into each arm of an ``if`` that ends the finally copy)
        trial = _factor_terminal_tail(trial)
        if len(trial) == 1 and isinstance(trial[0], ast.Try):
            # A ``finally`` copy that is a ``try`` statement ends each of its blocks with the
            # constant ``return`` after it (3.10+ copy it into the clauses): the copy, then
            # the return.
            trial = _drop_returns_before_same(_split_tail_return(trial, before), before)
        elif len(trial) == 2 and isinstance(trial[0], ast.Try) and isinstance(trial[1], ast.Return):
            # ... or the return of the value the body left on the stack (``return g(x)``),
            # after the copy and at the end of the blocks that go on to it (runpy.run_path)
            trial = _drop_returns_before_same(trial, before)
        body = self._drop_outer_copies(self.strip_finally_copies(list(trial), final, ctx.exc), ctx.exc)
        if len(body) == 2 and isinstance(body[0], ast.Assign) and isinstance(body[1], ast.Return):
            body = _fold_spilled_return(body)  # value computed in the body, saved across finally
            return trial if len(body) == 1 else None
        if len(body) != 1:
            return None
        last = body[0]
        if isinstance(last, ast.Return):
            # Only a value computed before the finally copy belongs to ``return`` in the body;
            # ``return f()`` after the copy is code after the try statement.
            if _computed_before(last.value, before):
                return trial
            return self._break_to_copied_follow(block, ctx, stack, final)
        return trial if isinstance(last, (ast.Break, ast.Continue)) else None

    def _break_to_copied_follow(self, block: Block, ctx: Ctx, stack: List[Any],
                                final: List[ast.stmt]) -> Optional[List[ast.stmt]]:
        """``break`` out of a ``try/finally`` in a ``while`` loop whose code after the loop
        (ending the function) 3.10+ copied into the ``break`` path after the ``finally`` copy:
        the copy and ``break``.  When the loop has no other way out, the rest of ``block``
        becomes the loop's follow (see ``_build_while``), as for a ``with``
        (``_exit_leaving_loop``); else it must be a copy of the follow's code.
        ``None`` if ``block`` is no such path."""
        loop = ctx.loop
        if loop is None or loop.header.last.op == "FOR_ITER" or block.succs or ctx.exc is None:
            return None
        ctxs = self._level_ctxs()
        outside = ctxs.get(ctx.exc)
        if outside is None or outside.loop is None or outside.loop.header is not loop.header:
            return None
        if outside.exc is not None:
            # (the ``break`` would leave an enclosing statement in the loop too: its own copy
            # would be read as code after the loop)
            enclosing = ctxs.get(outside.exc)
            if enclosing is None or (enclosing.loop is not None
                                     and enclosing.loop.header is loop.header):
                return None
        want = [ast.dump(x) for x in final if not isinstance(x, ast.Pass)]
        st = list(stack)
        scratch: List[ast.stmt] = []
        saved = self.save_state()  # type: ignore[attr-defined]
        cut: Optional[int] = None
        try:
            for k, ins in enumerate(block.instrs):
                if ins.target is not None or ins.op in TERMINAL:
                    break
                self.step(ins, st, scratch)  # type: ignore[attr-defined]
                if len(st) == len(stack) and [ast.dump(x) for x in scratch] == want:
                    cut = k + 1
                    break
        except (StructureError, IndexError):
            cut = None
        finally:
            self.restore_state(saved)  # type: ignore[attr-defined]
        if cut is None or cut >= len(block.instrs):
            return None
        part = partial_block(block, cut)
        if loop.brk is not None:
            # (a loop that also ends otherwise: the rest must be a copy of its follow's code)
            code = tail_code(part)
            if not code or code != tail_code(past_lone_jumps(loop.brk)):
                return None
            return copy.deepcopy(final) + [ast.Break()]
        pending: Dict[Block, Tuple[List[Any], Block]] = self.__dict__.setdefault(
            "_pellucid_pending_follows", {})
        known = pending.get(loop.header)
        if known is None:
            pending[loop.header] = (st, part)
        elif tail_code(known[1]) != tail_code(part):
            return None
        return copy.deepcopy(final) + [ast.Break()]

    # -- building ---------------------------------------------------------------------------------
    def build_protected(self, block: Block, stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
                        out: List[ast.stmt]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        chain = self.handler_chain(block)
        if ctx.exc is None:
            level = chain[-1] if chain else None
        else:
            if ctx.exc not in chain:
                raise StructureError("region entered from outside its try")
            pos = chain.index(ctx.exc)
            if pos == 0:
                raise StructureError("no new handler level")
            level = chain[pos - 1]
        if level is None:
            raise StructureError("no handler")
        kind = self.handler_kind(level)
        if kind == "with":
            return self.build_with(block, level, stack, ctx, stop, out)
        if kind == "async_for":
            raise StructureError("async for is not supported yet")
        return self.build_try(block, level, stack, ctx, stop, out)

    def build_with(self, block: Block, level: int, stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
                   out: List[ast.stmt]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        enter = stack[-1] if stack else None
        if not isinstance(enter, M.WithEnter):
            raise StructureError("with-region without a context manager on the stack")
        region = self.protected_set(level)
        inner = Ctx(ctx.loop, region, level)
        self._level_ctxs()[level] = ctx
        self._absorb[level] = "with"
        # The body's first instruction consumes the entered value (its ``as`` target, or a
        # POP_TOP): what the body then pushes is its own, to be saved before its statements run
        # (the floor ``compound`` set counts that value, so the slot it left was below it:
        # ``q, k = a(), b()`` in a ``with`` was written ``k = b()`` first on 3.11+).
        saved_floor = self.floor
        self.floor = min(self.floor, len(stack) - 1)
        try:
            body, end_stack, end = self.walk(block, list(stack), inner, stop, first=block)
        finally:
            self.floor = saved_floor
        if end_stack is not None:
            body, end_stack, end = self.finish_region_body(body, end_stack, stack[:-1], end, ctx, stop,
                                                           region)
        target = None
        if body and isinstance(body[0], ast.Assign) and isinstance(body[0].value, M.WithEnter):
            target = body[0].targets[0]
            body = body[1:]
        elif enter in (end_stack or []):
            raise StructureError("with target never stored")
        resume = None
        if end_stack is not None and end is not None:
            left = self._exit_leaving_loop(level, stack, end_stack, end, ctx)
            if left is not None:
                # The body's way out leaves the loop (3.10+ copy the code after the loop to
                # after the ``__exit__`` call), while a suppressed exception goes round it: the
                # way out is a ``break`` to that code, the with's end is the next iteration.
                body = body + [ast.Break()]
                end_stack = None
                resume = left
        elif end_stack is None:
            # The body never finishes normally, but __exit__ may swallow its exception: go on
            # where the handler's suppression path goes.
            resume = self._with_suppression_resume(level, stack)
            if resume is not None and body and isinstance(body[-1], ast.Return) \
                    and _same_constant_return(body[-1], resume[1]):
                # 3.10+ copy the function's closing ``return None`` into the body's way out and
                # into the suppression path: both go on to the same return, which is the code
                # after the statement (the body's copy is no ``return`` written in it).
                body = body[:-1]
        item = ast.withitem(enter.value, target)
        node: ast.stmt
        node = ast.AsyncWith([item], body or [ast.Pass()]) if enter.is_async \
            else ast.With([item], body or [ast.Pass()])
        below = stack[:-1]
        self.emit(out, node, below)
        if end_stack is None:
            if resume is None:
                return None, None
            return resume
        return end_stack, end

    def _exit_leaving_loop(self, level: int, entry: List[Any], end_stack: List[Any], end: Block,
                           ctx: Ctx) -> Optional[Tuple[List[Any], Block]]:
        """Where a ``with`` inside a ``while True`` goes on after a suppressed exception, when
        that is the loop's next iteration but its body's normal way out (``end``: the
        ``__exit__`` call and the code after the loop, copied there) leaves the loop.  The code
        after the ``__exit__`` call becomes the loop's follow (see ``_build_while``).  ``None``
        if the with is no such statement."""
        loop = ctx.loop
        if loop is None or loop.brk is not None:
            return None
        if loop.header.last.op == "FOR_ITER":
            return None  # (a ``for`` loop's ``break`` also drops the iterator)
        resume = self._with_suppression_resume(level, entry)
        if resume is None or past_lone_jumps(resume[1]) is not loop.cont:
            return None
        after = self._after_exit_call(end, end_stack, len(entry) - 2)
        if after is None:
            return None
        goes = past_lone_jumps(after[1])
        if (end.origin or end) in loop.body and (goes.origin or goes) in loop.body:
            # (the ``__exit__`` call is laid in the loop's region when the with is inside a
            # ``try``: the code after it is what must be outside the loop)
            return None
        pending: Dict[Block, Tuple[List[Any], Block]] = self.__dict__.setdefault(
            "_pellucid_pending_follows", {})
        if loop.header in pending:
            return None  # (one follow per loop: a second such break is left as it was)
        pending[loop.header] = (after[0], goes) if goes is not after[1] else after
        return resume

    def _after_exit_call(self, block: Block, stack: List[Any], base: int) -> Optional[Tuple[List[Any], Block]]:
        """The stack and the rest of ``block`` once its ``__exit__`` call is done (the stack back
        to ``base`` values), if that is inside ``block`` and leaves no statement behind."""
        st = list(stack)
        scratch: List[ast.stmt] = []
        saved = self.save_state()  # type: ignore[attr-defined]
        for k, ins in enumerate(block.instrs):
            if len(st) == base and k > 0:
                if scratch:
                    break
                return st, partial_block(block, k)
            if ins.target is not None or ins.op in TERMINAL:
                break
            try:
                self.step(ins, st, scratch)
            except (StructureError, IndexError):
                break
        else:
            # (the call ends the block, which falls into the code after it: 3.11+ lay the
            # code after a loop left only by that ``break`` out there, not copied)
            if len(st) == base and not scratch and block.fallthrough is not None:
                return st, block.fallthrough
        self.restore_state(saved)  # type: ignore[attr-defined]
        return None

    def _with_suppression_resume(self, level: int, entry: List[Any]) -> Optional[Tuple[List[Any], Block]]:
        """Follow a with-handler's "exception suppressed" path until the stack is back below
        the ``with``; resume there (possibly mid-block: 3.11 merges the cleanup into the next
        code).  ``None`` if nothing follows."""
        base = len(entry) - 2
        st = self.handler_entry_stack(level, entry)
        block: Optional[Block] = self.cfg.block_at.get(level)
        k = 0
        scratch: List[ast.stmt] = []
        for _ in range(200):
            if block is None:
                return None
            if k >= len(block.instrs):
                block, k = block.fallthrough, 0
                continue
            if len(st) == base and k < len(block.instrs):
                return st, (block if k == 0 else partial_block(block, k))
            ins = block.instrs[k]
            if ins.op == "WITH_EXCEPT_START":
                st.append(ExitResult())
            elif ins.op in ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE"):
                st.pop()
                block, k = (block.jump if ins.op == "POP_JUMP_IF_TRUE" else block.fallthrough), 0
                continue
            elif ins.op == "JUMP":
                block, k = block.jump, 0
                continue
            elif ins.op in TERMINAL:
                return None
            else:
                try:
                    self.step(ins, st, scratch)
                except (StructureError, IndexError):
                    return None
            k += 1
        return None

    def finish_region_body(self, body: List[ast.stmt], body_stack: List[Any], entry: List[Any],
                           exit_block: Optional[Block], ctx: Ctx, stop: FrozenSet[Block],
                           region: FrozenSet[Block] = frozenset()) -> Tuple[List[ast.stmt], Optional[List[Any]], Optional[Block]]:
        """Values a protected body computed but left on the stack (``return <expr>`` in a
        ``try``/``with``: the return itself sits outside the region; Dynamo's calls whose
        callable and arguments were pushed before the region) are evaluated inside it."""
        new = [k for k in range(len(body_stack)) if k >= len(entry) or body_stack[k] is not entry[k]]
        if not new:
            return body, body_stack, exit_block
        body = list(body)
        body_stack = list(body_stack)
        temps = []
        for k in new:
            v = body_stack[k]
            if isinstance(v, M.Marker) or isinstance(v, ast.Constant):
                continue
            tmp = self.new_temp()
            body.append(ast.Assign([ast.Name(tmp, ast.Store())], self.value(v)))
            body_stack[k] = ast.Name(tmp, ast.Load())
            temps.append(tmp)
        # ``__t = v`` + an exit that only returns ``__t``: the return belongs in the body.  (The
        # exit may be entered from several places in the region: a value that branches,
        # ``return a < b <= c``; read after the statement, ``__t`` is unbound where a suppressing
        # ``__exit__`` goes on.)
        if temps and exit_block is not None and (len(exit_block.preds) == 1 or region and all(
                p in region for p in exit_block.preds)):
            saved_floor = self.floor
            self.floor = len(body_stack)
            try:
                rest, rest_stack, _ = self.walk(exit_block, list(body_stack), Ctx(ctx.loop, None, ctx.exc), stop)
            except StructureError:
                rest, rest_stack = [], body_stack
            finally:
                self.floor = saved_floor
            # (a ``return`` in a try nested in an ``except`` clause also leaves that clause)
            rest = _unwind_enclosing_clauses(rest)
            if rest_stack is None and len(rest) == 1 and isinstance(rest[0], ast.Return) \
                    and isinstance(rest[0].value, ast.Name) and rest[0].value.id == temps[-1]:
                value = body.pop().value  # type: ignore[attr-defined]
                body.append(ast.Return(value))
                return body, None, None
        return body, body_stack, exit_block

    @property
    def _handler_groups(self) -> Dict[Any, FrozenSet[Block]]:
        found = self._by_handler_sets
        if found is None:
            found = self._by_handler_sets = {}
        return found

    def blocks_by_handler(self) -> Dict[Any, List[Block]]:
        """The blocks of each innermost handler (None: no handler), each list in block order:
        one pass over the blocks instead of one per ``try`` statement (quadratic in functions
        of many of them)."""
        found = self._by_handler
        if found is None:
            found = self._by_handler = {}
            for b in self.cfg.blocks:
                found.setdefault(b.handler, []).append(b)
        return found

    def handler_entry_stack(self, level: int, stack: List[Any]) -> List[Any]:
        firsts = self._first_handler
        if firsts is None:  # (the first block's handler of each target, in one pass)
            firsts = self._first_handler = {}
            for b in self.cfg.blocks:
                if b.handler is not None:
                    firsts.setdefault(b.handler.target, b.handler)
        h = firsts.get(level)
        depth = h.depth if h is not None else len(stack)
        base = list(stack[:depth])
        if self.legacy_exceptions:
            return base + [M.SavedExc(), M.SavedExc(), M.SavedExc(), M.ExcPart(), M.Exc(), M.ExcPart()]
        if h is not None and h.lasti:
            base.append(M.ExcPart())  # the raising instruction's offset (lasti)
        return base + [M.Exc()]

    def _at_try_line(self, node: ast.stmt, block: Block) -> None:
        """Tag ``node`` with the line of the ``NOP`` the original keeps for ``try:`` before
        the body (``block``), when that line comes before the body's.  Untagged, the try
        statement would take its body's line and lose the ``NOP``; 3.14 then draws the
        exception table differently (one range over the body's ``NOT_TAKEN`` instead of two
        around it)."""
        if not block.instrs or "_pos" in node.__dict__:
            return
        first = block.instrs[0]
        line = nop_line_before(self.code, first.offset)
        body = self.source_position(first)
        if line is not None and body is not None and line < body[0]:
            node._pos = (line, None, None, None)  # type: ignore[attr-defined]

    def build_try(self, block: Block, level: int, stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
                  out: List[ast.stmt]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        hblock = self.cfg.block_at[level]
        # Handler code is reached only through exception edges: no loop body or try region
        # computed over normal flow contains it.
        hctx = Ctx(ctx.loop, None, ctx.exc)
        self._level_ctxs()[level] = ctx
        # Decompile the handler first: whether it is ``finally`` decides how the body is read.
        # (A ``finally`` handler ends in RERAISE; an ``except`` handler's walk shows a match or
        # POP_EXCEPT before anything else, so walking past its end does no harm.)
        try:
            probe, pstack, pend = self.walk(hblock, self.handler_entry_stack(level, stack), hctx,
                                            stop | self._beyond_handler(block, level, hblock))
            if pstack is not None and pend is not None and EXCEPTION_TABLE:
                probe = self._swallowing_return_probe(probe, pstack, pend, hctx, stop)
        except StructureError:
            probe = []
        is_finally = self._is_finally(probe)
        if is_finally:
            probe = _drop_swallowing_pop_excepts(probe)
            # (3.10 copies the RERAISE into an ending if.  Not read as if/else in a loop: the
            # try's break path then runs a copy of that if/else, with the loop's exit copied
            # into each arm, which is not read as a break yet -- construct case
            # break_in_try_finally_with_branching_finally -- so the fallback stays the form.)
            probe = _factor_terminal_tail(probe, arms_as_else=ctx.loop is None)
            probe = _loop_exits_as_breaks(probe)
        self._absorb[level] = "finally" if is_finally else "except"
        if is_finally:
            self._finally_bodies[level] = _strip_reraise(probe) or [ast.Pass()]
        region = self.protected_set(level)
        body, body_stack, exit_block = self.walk(block, list(stack), Ctx(ctx.loop, region, level), stop, first=block)
        if body_stack is not None:
            body, body_stack, exit_block = self.finish_region_body(body, body_stack, stack,
                                                                   exit_block, ctx, stop, region)
        if is_finally:
            final = _strip_reraise(probe) or [ast.Pass()]
            body = self.strip_finally_copies(body, final, level)
            node = ast.Try(body or [ast.Pass()], [], [], final)
            if len(body) == 1 and isinstance(body[0], ast.Try) and body[0].handlers \
                    and not body[0].finalbody:
                # ``try: (try: ... except: ...) finally: ...`` is how the compiler lays out
                # ``try: ... except: ... finally: ...``
                node = ast.Try(body[0].body, body[0].handlers, body[0].orelse, final)
            self._at_try_line(node, block)
            self.emit(out, node, stack)
            if body_stack is None:
                return None, None
            # What follows the statement is not inside it: the enclosing floor applies.
            saved_floor = self.floor
            self.floor = self.outer_floor
            try:
                rest, rest_stack, rest_end = self.walk(exit_block, body_stack, ctx, stop)
            finally:
                self.floor = saved_floor
            if not _starts_with(rest, final):
                rest = _drop_returns_before_same(rest if rest_stack is not None else _split_tail_return(rest))
            if not _starts_with(rest, final):
                rest = _factor_terminal_tail(rest)
            if not _starts_with(rest, final):
                rest = _loop_exits_as_breaks(rest)
            if not _starts_with(rest, final):
                rest = _drop_jumps_before_same(rest)
            if not _starts_with(rest, final):
                # (where the walk stopped at the loop's continue or break point, that jump ends
                # ``rest`` too)
                jump = self.loop_jump(rest_end, ctx) if rest_stack is not None \
                    and rest_end is not None else None
                tail = [] if jump is None else [jump]
                for fix in (_drop_jumps_before_same, _unguard_jumps):
                    fixed = fix(rest + tail)
                    if _starts_with(fixed, final):
                        rest = fixed[:len(fixed) - len(tail)]
                        break
            if not _starts_with(rest, final):
                merged = _final_return_merged(rest, final)
                if merged is None:
                    raise StructureError("finally body not repeated on the normal path")
                rest = final + merged
            # (an empty ``finally`` reads as [Pass], which has no copy to drop)
            out.extend(rest[0 if len(final) == 1 and isinstance(final[0], ast.Pass) else len(final):])
            return rest_stack, rest_end
        after, copies = self._try_follow(exit_block, hblock)
        loop = ctx.loop
        # (the loop's own points: when the body's normal exit goes on around the loop too)
        targets = (loop.cont, loop.header, loop.brk) + tuple(loop.conts) \
            if loop is not None and exit_block is not None else ()
        around = frozenset(b for b in targets if b is not None)
        if after in targets:
            # A clause that goes on around the loop (``else: continue`` of a for-else in it)
            # met the others only there: without those exits, the body and the other clauses
            # may meet earlier (3.13 jumps back to the code after the statement).
            alt, alt_copies = self._try_follow(exit_block, hblock, around)
            if alt is not None and alt not in around:
                after, copies = alt, alt_copies
        if after is not None and after in targets and exit_block is not None and (
                exit_block in stop or exit_block is not after and all(
                    isinstance(self.loop_jump(x, ctx), ast.Break) for x in self._clause_exits(hblock))):
            # The clauses go on only around the loop, and the body where the walk must stop
            # (an enclosing ``if``'s arms meet there), or elsewhere than the clauses' jump to
            # the loop's exit (which only ``break`` makes, never the end of a clause): each
            # clause ends in its own ``continue``/``break``, the statement ends where the
            # body does.
            after, copies = exit_block, []
        if after is not None and after in targets and exit_block is not None \
                and exit_block is not after and exit_block not in stop \
                and all(self.loop_jump(x, ctx) is not None for x in self._clause_exits(hblock)):
            # The clauses end in ``continue``/``break``, and the body's way on reaches the
            # point where an enclosing statement goes on (the end of an ``if`` arm) before
            # the loop's: that is the statement's follow.
            end = self._walk_end(exit_block, list(body_stack or stack), ctx, stop)
            if end is not None and end in stop and end is not after:
                after, copies = end, []
        if after in targets:
            # The ``else`` clause ends in ``continue``/``break``: the clauses' exits and it meet
            # only around the loop; where the clauses go on is the statement's follow.
            only, only_copies = self._try_follow(None, hblock)
            if only is not None and only not in targets:
                after, copies = only, only_copies
                if ctx.region is not None and (only.origin or only) not in ctx.region:
                    # (unless the clauses leave the enclosing ``with``/``try`` by its exit
                    # and a ``continue``/``break``: then the statement goes on where the
                    # body's way on does, found below; multiprocessing.forkserver:main)
                    saved = self.save_state()
                    try:
                        leaving = isinstance(self.private_exit(only, ctx, list(stack)), list)
                    except StructureError:
                        leaving = False
                    finally:
                        self.restore_state(saved)
                    if leaving:
                        after, copies = None, []
        if ctx.region is not None and exit_block is not None and after is not exit_block \
                and (exit_block.origin or exit_block) not in ctx.region \
                and self.private_exit(exit_block, ctx, list(body_stack or stack)) is False:
            # The body runs off the end of the enclosing statement's region (3.11+: straight
            # into its ``finally`` copy): the statement ends that region's code, and clauses
            # that meet the body only past it (a ``break`` out of both) leave on their own.
            after, copies = exit_block, []
        if exit_block is None and after is not None and not copies \
                and self.loop_jump(after, ctx) is not None:
            # The body never goes on (it ends in ``continue``/``return``...) and the clauses go
            # on only by leaving the loop: each clause ends in its own ``break``/``continue``,
            # and nothing follows the statement (written after it, the ``break`` would read as
            # the body's way on).
            after = None
        hstop = (stop | {after} if after is not None else stop) | frozenset(copies)
        # (the ``else`` clause is walked in the statement's own region: its way out of an
        # enclosing ``with``/``try`` is read like the body's)
        estop = hstop
        if ctx.region is not None:
            # The clauses are walked in the region of the statement enclosing this one: one
            # that runs off that statement's end (≤3.10 pops its block first) ends there,
            # where the statement goes on, and one that leaves it by ``return``/``break``
            # (its ``finally`` copy or ``__exit__`` call, then the jump) ends with that jump,
            # as the body does (see ``private_exit``).
            hctx = Ctx(ctx.loop, ctx.region, ctx.exc)
        elif ctx.exc is not None:
            hstop = hstop | self._region_leaves(ctx)
        lone = frozenset(b for b in region if len(b.instrs) == 1 and b.last.op == "JUMP"
                         and b.jump is not None and not self.cfg.is_loop_header(b)
                         and not self.cfg.is_loop_header(b.jump))
        if lone:
            hstop = hstop | lone
        hs, hstack, hend = self.walk(hblock, self.handler_entry_stack(level, stack), hctx, hstop)
        if hend is not None and hstack is not None and hend in lone and hend is not after:
            # (a lone jump the body runs through on its way out, counted in its region
            # (3.12), that the clauses jump back to: where the body goes on from there)
            on = past_lone_jumps(hend)
            if on is after or (exit_block is not None and on is past_lone_jumps(exit_block)):
                hend = after if on is after else exit_block
        if copies and any(st is not None and not _same_stack(st, stack) for st in (body_stack, hstack)):
            # The copies run the same instructions on what each path left on the stack (each
            # path's own return value): the same code, but not the same statement.
            raise StructureError("paths end in copies of one exit holding different values")
        if hstack is not None and hend is not None and hend is not after and hend not in copies \
                and ctx.region is not None and (hend.origin or hend) not in ctx.region:
            # A clause that leaves the enclosing ``with``/``try`` by its own ``return`` (the
            # ``__exit__`` call or ``finally`` copy, then the return): the clause's end, as it
            # is for the body (see ``private_exit``).
            leave = self.private_exit(hend, ctx, hstack)
            if isinstance(leave, list):
                hs, hstack, hend = hs + leave, None, None
        if hstack is not None and hend is not None and after is not None and hend is not after \
                and hend not in copies and past_lone_jumps(hend) is after:
            # (3.13: the clauses' jump to the code after the statement lies outside their
            # region, in the enclosing ``finally``'s only: a block of its own that only jumps
            # there; logging.Handler.handleError)
            hend = after
        clause_end: Optional[Block] = None
        if after is None and hstack is not None and hend is not None and (
                exit_block is None or ctx.region is not None and (hend.origin or hend) not in ctx.region):
            # the clauses' way on found by walking them: off the end of an enclosing try (the
            # ``else`` clause, if any, must end there too or leave: checked below)
            after = hend
            if exit_block is not None:
                # (or it is a copy of the code the ``else`` clause runs into: checked below)
                clause_end = hend
        if hstack is not None and hend is not None and hend is not after and hend not in copies:
            jump = self.loop_jump(hend, ctx)
            if jump is not None:
                # stopped at the loop's exit or continue point (the walk's stop set holds
                # it): the clause ends in ``break``/``continue`` (3.8/3.9: ``except E: break``
                # in a ``for`` loop whose ``else`` clause goes on)
                self.emit(hs, jump, hstack)  # type: ignore[arg-type]
                hstack, hend = None, None
        copied_end: Optional[Block] = None
        stopped_end: Optional[Block] = None
        if hstack is not None and hend is not after and hend not in copies:
            if hend is not None and hend in stop and after is None and exit_block is not None \
                    and exit_block is not hend:
                # The clauses go on where an enclosing statement's arms meet, and the body
                # only into the ``else`` clause (``if c: try: ... except E: pass else: return
                # x`` in an ``except`` clause: linecache.updatecache): the statement goes on
                # there if the ``else`` clause returns or goes on there too (checked below).
                stopped_end = hend
            elif hend is None or ctx.region is None or (hend.origin or hend) in ctx.region \
                    or exit_block is None or exit_block is after:
                raise StructureError("an except clause goes on where the try statement does not")
            else:
                # The clauses run off the end of the enclosing ``try`` into a copy of the code
                # after it (3.12+ copy a short ``return x``): where the ``else`` clause runs off
                # it too, if that is the same code, is where the statement goes on (checked
                # below).
                copied_end = hend
        handlers = self.parse_handlers(hs)
        self._trailing_breaks(handlers, stack, ctx)
        trailing = self._split_trailing(handlers, level)
        if trailing is not None and self._copied_tail_only and after is not None:
            # Only ``return x`` copies say the clauses go on after the statement: so must the
            # body's exit, or they were the clauses' own.
            saved = self.save_state()
            try:
                cont, cont_stack, _ = self.walk(after, list(body_stack or stack), ctx, stop)
            except StructureError:
                cont, cont_stack = [], None
            self.restore_state(saved)
            if cont_stack is not None or [ast.dump(x) for x in cont] != [ast.dump(x) for x in trailing]:
                _inline_tails(self._deferred_tails)
                trailing = None
        orelse: List[ast.stmt] = []
        else_stack: Optional[List[Any]] = None
        if exit_block is not None and exit_block is not after:
            orelse, else_stack, else_end = self.walk(exit_block, list(body_stack), ctx,
                                                     estop if ctx.region is not None else hstop)
            jump = self.loop_jump(else_end, ctx) if else_stack is not None and else_end is not None \
                and else_end is not after else None
            if jump is not None:
                # stopped at the loop's continue point (an enclosing if merges there)
                self.emit(orelse, jump, else_stack)  # type: ignore[arg-type]
                else_stack = None
            if else_stack is not None and else_end is not None and after is None and hstack is None \
                    and trailing is None and all(_terminates(h.body) for h in handlers):
                # No clause goes on (each returns, through the enclosing ``finally``): the
                # statement goes on where its body's way on stops (that ``finally``'s copy).
                after = else_end
            if else_stack is not None and else_end is not None and after is None and hstack is None \
                    and trailing is not None and _terminates(trailing) and ctx.region is not None:
                # Each clause leaves by its own ``return`` through the enclosing ``finally``
                # (its copy, then the return, after the POP_EXCEPT): that ending is the
                # clause's (the enclosing statement strips the copy), not code after this one.
                _inline_tails([(h, getattr(h, "_trailing", None) or []) for h in handlers])
                trailing = None
                after = else_end
            if copied_end is not None:
                if else_stack is None or else_end is None \
                        or not (else_end is copied_end or same_code(else_end, copied_end)):
                    raise StructureError("an except clause goes on where the try statement does not")
                after, copies = else_end, [copied_end]
            elif clause_end is not None and after is clause_end and else_stack is not None \
                    and else_end is not None and else_end is not after and same_code(else_end, after):
                # The clauses run off the enclosing statement's region into a copy of the code
                # the ``else`` clause runs into (3.10, 3.12+ copy a short ``return x``): that
                # code is where the statement goes on.
                after, copies = else_end, [clause_end]
            if else_stack is not None and else_end is not after and after is None \
                    and hstack is None and else_end is not None and ctx.region is not None \
                    and (else_end.origin or else_end) not in ctx.region:
                # No clause goes on, and the body's way on runs off the end of the enclosing
                # statement's region (into its ``finally`` copy, ≤3.10 after popping its
                # block): the statement ends there.
                after = else_end
            if stopped_end is not None:
                if else_stack is not None and else_end is not stopped_end:
                    raise StructureError("an except clause goes on where the try statement does not")
                after = stopped_end
            if else_stack is not None and else_end is not after:
                raise StructureError("try-else does not rejoin")
        node = ast.Try(body or [ast.Pass()], handlers, orelse, [])
        self._at_try_line(node, block)
        if trailing is None and orelse and all(_terminates(h.body) for h in handlers):
            # No clause goes on: the ``else`` clause is the code after the statement (which
            # is how such code is written; both compile to the same instructions).
            node.orelse = []
            self.emit(out, node, stack)
            out.extend(orelse)
            if else_stack is None or after is None:
                return None, None
            return list(else_stack), after
        if trailing is not None:
            # Clauses ran into a copy of the code after the try (CPython duplicates small exit
            # blocks); it runs after the clause ends, so it goes after the statement.
            n = len(trailing)
            if orelse and len(orelse) >= n and [ast.dump(x) for x in orelse[len(orelse) - n:]] \
                    == [ast.dump(x) for x in trailing] \
                    and (else_stack is None or (hstack is not None and _same_stack(hstack, else_stack))):
                # The body's normal exit runs its own copy of that code (3.10+ copies a short
                # ending, such as an enclosing clause's ``POP_EXCEPT; return x`` or its
                # ``POP_EXCEPT; JUMP``, into every path): both paths go on with the same code
                # (and, when it falls through, both reach ``after``: checked above), after
                # the ``else`` clause's own statements if it has any (3.13+: ``try/except/else``
                # in an ``except`` clause, linecache.updatecache).
                node.orelse = orelse[:len(orelse) - n]
                self.emit(out, node, stack)
                out.extend(trailing)
                if else_stack is None:
                    return None, None
                return list(else_stack), after
            if after is not None:
                cont, cont_stack, cont_end = self.walk(after, list(body_stack or stack), ctx, stop)
                if cont_stack is None and not orelse and after is exit_block and _terminates(cont) \
                        and [ast.dump(x) for x in cont] != [ast.dump(x) for x in trailing]:
                    # The body's way on never goes on (``else: return g()``) and is not the
                    # clauses' code: it is the ``else`` clause, and only the clauses reach the
                    # code after the statement, each through its own copy (3.12+ copies a short
                    # ``return`` into the clause), which is what follows.
                    node.orelse = cont
                    self.emit(out, node, stack)
                    out.extend(trailing)
                    return None, None
                if cont_stack is not None and not cont and not orelse and ctx.region is not None \
                        and (after.origin or after) not in ctx.region and _terminates(trailing) \
                        and isinstance(trailing[-1], ast.Return):
                    # The body goes on out of the enclosing ``try`` (into its ``finally``
                    # copy) and each clause leaves by ``return`` through that ``finally``
                    # (its copy, then the return, after the POP_EXCEPT): that ending is the
                    # clause's own (the enclosing statement strips the copy).
                    _inline_tails([(h, getattr(h, "_trailing", None) or []) for h in handlers])
                    self.emit(out, node, stack)
                    return list(body_stack if body_stack is not None else stack), after
                if cont and after is exit_block and not orelse \
                        and [ast.dump(x) for x in cont] != [ast.dump(x) for x in trailing]:
                    # The body's way on is an ``else`` clause; the clauses go on with a copy
                    # of the code after the statement (3.10+ copy a short ending such as
                    # ``return x.y`` after the POP_EXCEPT).
                    if cont_stack is None:
                        # (the ``else`` clause returns or raises: the copy is the only code
                        # after the statement)
                        node.orelse = cont
                        self.emit(out, node, stack)
                        out.extend(trailing)
                        return None, None
                    if cont_end is not None and cont_end is not after \
                            and self._walks_to(cont_end, cont_stack, ctx, stop, trailing):
                        # (the ``else`` clause falls into the code the clauses have a copy of)
                        node.orelse = cont
                        self.emit(out, node, stack)
                        return list(cont_stack), cont_end
                if cont_stack is not None or [ast.dump(x) for x in cont] != [ast.dump(x) for x in trailing]:
                    raise StructureError("except clauses continue differently from the try")
            self.emit(out, node, stack)
            out.extend(trailing)
            return None, None
        self.emit(out, node, stack)
        if after is None:
            return None, None
        result_stack = body_stack if body_stack is not None and (stopped_end is None or else_stack is not None) \
            else (hstack if hstack is not None else list(stack))
        return list(result_stack), after

    def _walk_end(self, block: Block, stack: List[Any], ctx: Ctx,
                  stop: FrozenSet[Block]) -> Optional[Block]:
        """Where the walk from ``block`` stops (``None`` if it leaves or fails); nothing kept."""
        saved = self.save_state()
        try:
            _, st, end = self.walk(block, stack, ctx, stop)
        except StructureError:
            return None
        finally:
            self.restore_state(saved)
        return end if st is not None else None

    def _walks_to(self, block: Block, stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
                  expected: List[ast.stmt]) -> bool:
        """The code from ``block`` (even where the walk would stop) is ``expected``, and leaves."""
        saved = self.save_state()
        try:
            got, got_stack, _ = self.walk(block, list(stack), ctx, stop - {block})
        except StructureError:
            return False
        finally:
            self.restore_state(saved)
        return got_stack is None and [ast.dump(x) for x in got] == [ast.dump(x) for x in expected]

    def _region_leaves(self, ctx: Ctx) -> FrozenSet[Block]:
        """Blocks normal flow reaches on leaving the region of ``ctx.exc``, except paths that
        only return (those are written where they are, see ``inert_exit``)."""
        assert ctx.exc is not None
        region = self.protected_set(ctx.exc)
        return frozenset(s for b in region for s in b.succs
                         if s not in region and ctx.exc not in self.handler_chain(s)
                         and not self.inert_exit(s, ctx))

    def _try_follow(self, exit_block: Optional[Block], hblock: Block,
                    around: FrozenSet[Block] = frozenset()) -> Tuple[Optional[Block], List[Block]]:
        """Where a try/except statement continues: the meeting point of the body's normal exit
        and every clause's exit (what follows its POP_EXCEPT).  Re-raise paths don't count,
        which is why a post-dominator of the handler is no answer.  Also the blocks that are
        copies of that point (where clauses go on with the same code)."""
        exits = self._clause_exits(hblock)
        if around:
            exits = [x for x in exits if past_lone_jumps(x) not in around]
            if not exits:
                return None, []  # (every clause goes on around the loop: nothing to learn)
        if exit_block is not None and exits and all(x is exits[0] for x in exits) \
                and exits[0] is not exit_block and _only_raises(exit_block):
            # The ``else`` clause always raises: the statement goes on where the clauses do.
            return exits[0], []
        points = ([exit_block] if exit_block is not None else []) + exits
        if not points:
            return None, []
        after: Optional[Block] = points[0]
        for p in points[1:]:
            if after is None:
                break
            after = self.cfg.common_pdom(after, p)
        if after is None and exit_block is not None and not exits:
            after = exit_block
        if after is None and len(points) > 1:
            # The paths never meet because CPython gave each its own copy of the code after
            # the statement (3.10+: a short ``return`` after an inner try in a try body): the
            # first is where the statement continues, the others are the same code.
            code = _tail_past_jump(points[0])
            if code is not None and all(_tail_past_jump(p) == code for p in points[1:]):
                return points[0], [p for p in points[1:] if p is not points[0]]
        if after is None and len(exits) > 1:
            # Some clauses return (from a ``try`` nested in them, leaving the clause and any
            # ``with`` around it): where the others go on.
            going = [x for x in exits if not _inline_return(x, True)]
            if going and len(going) < len(exits):
                again = ([exit_block] if exit_block is not None else []) + going
                after = again[0]
                for p in again[1:]:
                    after = self.cfg.common_pdom(after, p) if after is not None else None
        if after is None and exit_block is not None and exits:
            # No block post-dominates them because the ``else`` clause (or a clause) may also
            # raise or return: where they meet is the first block (in code order) every one
            # of them reaches.
            after = self._first_meeting(points)
        if around and exit_block is not None and exits and (after is None or after in around):
            # Paths that go round the loop (or leave it) meet again only at its head: where
            # they meet before that is the code after the statement (``except: ... continue``
            # in one arm, ``break`` in the ``else`` clause, and the rest goes on).
            first = self._first_meeting(points, around)
            if first is not None:
                after = first
        return after, []

    def _first_meeting(self, points: List[Block], around: FrozenSet[Block] = frozenset()) -> Optional[Block]:
        common: Optional[set] = None
        for start in points:
            seen = set()
            work = [start]
            while work and len(seen) < 400:
                b = work.pop()
                if b in seen or b in self.cfg.handler_blocks or b in around:
                    continue
                seen.add(b)
                work.extend(b.succs)
            common = seen if common is None else common & seen
        if not common:
            return None
        return min(common, key=lambda b: b.start)

    def _clause_exits(self, hblock: Block) -> List[Block]:
        """Where the clauses of the handler at ``hblock`` go on: what follows each POP_EXCEPT."""
        exits: List[Block] = []
        seen = set()
        work = [hblock]
        while work:
            b = work.pop()
            if b in seen:
                continue
            seen.add(b)
            if any(i.op == "POP_EXCEPT" for i in b.instrs):
                # (not a path that only returns: that leaves the function, not the clause;
                # nested in a clause, its POP_EXCEPT is the enclosing clause's.  But a clause
                # that jumps there falls off its end: ≤3.10 write ``return`` inline.)
                exits.extend(s for s in b.succs if (not self.inert_exit(s, Ctx(None, None, None))
                                                    and not (b.last.op != "JUMP" and _inline_return(s)))
                              or (b.last.op == "JUMP" and s is b.jump and s.start > hblock.start))
                continue
            work.extend(b.succs)
        return exits

    def _trailing_breaks(self, handlers: List[ast.ExceptHandler], stack: List[Any], ctx: Ctx) -> None:
        """Clauses that end in a copy of the code after the enclosing loop end in ``break``.

        3.10 copies a small terminal block (``raise ValueError``) into the ``break`` paths
        that jump to it, after the POP_EXCEPT.  Run inside the clause, that code would see the
        caught exception as its context; ``break`` runs the original after the clause ends."""
        loop = ctx.loop
        if loop is None or loop.brk is None or not any(getattr(h, "_trailing", None) for h in handlers):
            return
        saved = self.save_state()
        saved_floor = self.floor
        self.floor = len(stack)  # the code after the loop never reaches below the try's entry
        try:
            # (stopping at any loop being built: code that goes round an enclosing loop is no
            # terminal block, and without that loop's context the walk would not end)
            after, after_stack, _ = self.walk(loop.brk, list(stack), Ctx(None, None, ctx.exc),
                                              frozenset(self.active_loops))
        except (StructureError, IndexError):
            after, after_stack = [], []
        finally:
            self.floor = saved_floor
            self.restore_state(saved)
        if after_stack is not None or not after:
            return  # only a terminal block is copied
        dumped = [ast.dump(x) for x in after]
        for h in handlers:
            tail = getattr(h, "_trailing", None)
            if tail and [ast.dump(x) for x in tail] == dumped:
                h.body = [x for x in h.body if not isinstance(x, ast.Pass)] + [ast.Break()]
                h._trailing = []  # type: ignore[attr-defined]

    def _split_trailing(self, handlers: List[ast.ExceptHandler],
                        level: Optional[int] = None) -> Optional[List[ast.stmt]]:
        """Code after POP_EXCEPT (past the name cleanup) in the clauses: must be one terminal copy.

        ``level``: the statement's handler level (a clause's ``return`` out of enclosing
        ``try/finally`` statements runs their ``finally`` copies after the POP_EXCEPT)."""
        found: Optional[List[ast.stmt]] = None
        deferred: List[Tuple[ast.ExceptHandler, List[ast.stmt]]] = []
        for h in handlers:
            tail = getattr(h, "_trailing", None)
            if not tail:
                continue
            if level is not None and len(tail) > 1 and self._leaves_through_finals(tail, level):
                # ``return <constant>``/``break``/``continue`` in the clause, leaving enclosing
                # ``finally`` statements: the compiler pops the exception, then runs their
                # copies, then the jump; a value is no concern, being a constant.
                h.body = [x for x in h.body if not isinstance(x, ast.Pass)] + tail
                h._trailing = []  # type: ignore[attr-defined]
                continue
            local_names = self._local_names()
            if _safe_after_clause(tail, h.name, local_names) \
                    and _returns_variable(tail, getattr(h, "_carried", [])):
                # ``return x`` after the POP_EXCEPT: written in the clause, ``x`` would be
                # loaded before the exception is popped, so this is a copy of the code after
                # the statement (``except E: pass`` / ``return x``), if the others agree.
                deferred.append((h, tail))
                continue
            if _safe_after_clause(tail, h.name, local_names):
                # ``return <constant>`` etc.: runs the same inside the clause, which is where
                # CPython put it (``except: return 1`` pops the exception before returning).
                h.body = [x for x in h.body if not isinstance(x, ast.Pass)] + tail
                h._trailing = []  # type: ignore[attr-defined]
                continue
            if found is None:
                found = tail
            elif [ast.dump(x) for x in found] != [ast.dump(x) for x in tail]:
                raise StructureError("except clauses continue with different code")
        self._copied_tail_only = False
        if deferred:
            dumped = [ast.dump(x) for x in (found if found is not None else deferred[0][1])]
            agree = all([ast.dump(x) for x in tail] == dumped for _, tail in deferred) \
                and all(getattr(h, "_trailing", None) or _terminates(h.body) for h in handlers)
            if agree:
                self._copied_tail_only = found is None
                found = deferred[0][1] if found is None else found
            else:
                _inline_tails(deferred)
        if found is not None:
            for h in handlers:
                if not getattr(h, "_trailing", None):
                    if not _terminates(h.body):
                        raise StructureError("some except clauses fall through, others continue")
        self._deferred_tails = deferred
        return found

    def _leaves_through_finals(self, tail: List[ast.stmt], level: int) -> bool:
        """``tail`` is copies of the ``finally`` bodies enclosing ``level``'s statement and
        then ``return <constant>``/``break``/``continue`` (nothing else)."""
        body = self._drop_outer_copies(list(tail), level)
        if len(body) != 1 or len(body) == len(tail):
            return False
        last = body[0]
        if isinstance(last, ast.Return):
            return _is_constant(last.value)
        return isinstance(last, (ast.Break, ast.Continue))

    def _local_names(self) -> FrozenSet[str]:
        code = self.code  # type: ignore[attr-defined]
        return frozenset(code.co_varnames + code.co_cellvars + code.co_freevars)

    def _beyond_handler(self, block: Block, level: int, hblock: Block) -> FrozenSet[Block]:
        """3.11+: the blocks the handler at ``level`` reaches only after it is over -- those
        whose exception handler is the one in force around the ``try`` statement.

        The probe of ``build_try`` stops there.  Every instruction of a handler, up to its
        POP_EXCEPT or RERAISE, is covered by the handler's own cleanup (3.11's exception table),
        so a walk reaching such a block has passed a POP_EXCEPT: the handler is no ``finally``
        whatever follows.  Without this stop an ``except`` clause's probe walked on through
        the rest of the code, building every later ``try`` statement (each with its own probe
        walking the rest): twice the time for each ``try`` more in a module body.

        Up to 3.10 the clauses' code has no such cover.  There the stop is where the code the
        handler reaches by plain jumps without a POP_EXCEPT (``inside``) leads on after one
        (handlers nested in it are entered by exceptions, so their POP_EXCEPTs are not met).
        A handler with a POP_EXCEPT in reach is no ``finally``, stopped or not; without one,
        nothing is stopped.
        """
        if not EXCEPTION_TABLE:
            return self._beyond_pop_except(hblock)
        h = block.handler
        while h is not None and h.target != level:
            h = h.outer
        # ``outer`` of a handler is the one in force while it runs: its cleanup (COPY 3;
        # POP_EXCEPT; RERAISE 1), whose own ``outer`` is the handler around the statement
        cleanup = h.outer if h is not None else None
        if cleanup is None or [i.op for i in self.instrs[cleanup.target:cleanup.target + 3]] \
                != ["COPY", "POP_EXCEPT", "RERAISE"]:
            return frozenset()
        around = cleanup.outer
        groups = self._handler_groups
        members = groups.get(around)
        if members is None:
            members = groups[around] = frozenset(self.blocks_by_handler().get(around, ()))
        return group_stop(members, hblock)  # type: ignore[return-value]

    def _beyond_pop_except(self, hblock: Block) -> FrozenSet[Block]:
        """(Up to 3.10) see :meth:`_beyond_handler`."""
        inside = {hblock}
        work = [hblock]
        exits: List[Block] = []
        while work:
            b = work.pop()
            if any(i.op == "POP_EXCEPT" for i in b.instrs):
                exits.append(b)
                continue
            for nxt in (b.jump, b.fallthrough):
                if nxt is not None and nxt not in inside:
                    inside.add(nxt)
                    work.append(nxt)
        beyond: set = set()
        work = [nxt for b in exits for nxt in (b.jump, b.fallthrough) if nxt is not None]
        while work:
            b = work.pop()
            if b in beyond or b in inside:
                continue
            beyond.add(b)
            work.extend(nxt for nxt in (b.jump, b.fallthrough) if nxt is not None)
        return frozenset(beyond)

    def _swallowing_return_probe(self, probe: List[ast.stmt], pstack: List[Any], pend: Block,
                                 hctx: Ctx, stop: FrozenSet[Block]) -> List[ast.stmt]:
        """3.11+: a ``return`` in an ``if`` of a ``finally`` clause.  Its exceptional copy
        drops the exception (POP_EXCEPT) in a block the handler's cleanup does not cover, so
        the probe stops there, and the ``if`` reads inverted, its other arm re-raising:
        ``if not c: <rest>; RERAISE`` then ``<arm>``.  Read as up to 3.10:
        ``if c: <arm>; POP_EXCEPT; return`` then ``<rest>; RERAISE``
        (subprocess.Popen.__exit__)."""
        tail_ops = tail_code(pend) if pend.instrs and pend.instrs[0].op == "POP_EXCEPT" else None
        if not tail_ops or tail_ops[-1][0] != "RETURN_VALUE":
            # (only that short ending: walked on, anything else could build this very
            # statement again)
            return probe
        k = len(probe) - 1
        while k >= 0 and not (isinstance(probe[k], ast.If) and _ends_in_reraise(probe[k].body)):
            k -= 1
        if k < 0:
            return probe
        test = probe[k]
        rest = probe[k + 1:]
        if test.orelse or not _ends_in_reraise(test.body) \
                or any(isinstance(n, (Reraise, PopExcept)) for s in rest for n in ast.walk(s)):
            return probe
        saved = self.save_state()
        try:
            tail, tail_stack, _ = self.walk(pend, list(pstack), hctx, stop)
        except StructureError:
            tail, tail_stack = [], []
        if tail_stack is not None or len(tail) != 2 or not isinstance(tail[0], PopExcept) \
                or not isinstance(tail[1], ast.Return):
            self.restore_state(saved)
            return probe
        cond = test.test
        cond = cond.operand if isinstance(cond, ast.UnaryOp) and isinstance(cond.op, ast.Not) \
            else ast.UnaryOp(ast.Not(), cond)
        arm = ast.If(cond, rest + tail, [])
        ast.copy_location(arm, test)
        return probe[:k] + [arm] + list(test.body)

    def _is_finally(self, hs: List[ast.stmt]) -> bool:
        """A ``finally`` handler: no exception matching or POP_EXCEPT, and every way through it
        ends by re-raising (or by a return/break/continue that swallows the exception)."""
        if not hs:
            return False
        swallowing = _swallowing_pop_excepts(hs)
        for s in hs:
            for node in ast.walk(s):
                if isinstance(node, M.ExcMatch) or (isinstance(node, PopExcept)
                                                    and id(node) not in swallowing):
                    return False
        return _ends_in_reraise(hs)

    def strip_finally_copies(self, body: List[ast.stmt], final: List[ast.stmt],
                             level: Optional[int] = None, in_loop: bool = False) -> List[ast.stmt]:
        """Remove the copy of ``finally`` the compiler put before each return/break/continue
        (and before the copies of enclosing ``finally`` bodies that the same jump runs).

        ``in_loop``: inside a loop nested in the ``try`` body, where only ``return`` leaves it."""
        n = len(final)
        dumped = [ast.dump(s) for s in final]
        out: List[ast.stmt] = []
        k = 0
        while k < len(body):
            s = body[k]
            window = body[k:k + n]
            if len(window) == n and [ast.dump(x) for x in window] == dumped \
                    and self._leaves_after(body[k + n:], level, in_loop):
                k += n
                continue
            if isinstance(s, ast.If):
                s.body = self.strip_finally_copies(s.body, final, level, in_loop) or [ast.Pass()]
                s.orelse = self.strip_finally_copies(s.orelse, final, level, in_loop)
                if self._leaves_after(body[k + 1:], level, in_loop):
                    # 3.10 copies the closing ``return`` into every arm after its copy of
                    # ``finally``; the arms' returns were merged into one after the ``if``
                    # (structure.py), which leaves the copy at the end of each arm.
                    stripped = _without_tail_copy(s, dumped)
                    if stripped is not None:
                        s = stripped
            elif isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
                s.body = self.strip_finally_copies(s.body, final, level, True) or [ast.Pass()]
                s.orelse = self.strip_finally_copies(s.orelse, final, level, in_loop)
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                s.body = self.strip_finally_copies(s.body, final, level, in_loop) or [ast.Pass()]
            elif isinstance(s, ast.Try):
                s.body = self.strip_finally_copies(s.body, final, level, in_loop) or [ast.Pass()]
                for h in s.handlers:
                    h.body = self.strip_finally_copies(h.body, final, level, in_loop) or [ast.Pass()]
                s.orelse = self.strip_finally_copies(s.orelse, final, level, in_loop)
                if s.finalbody:
                    s.finalbody = self.strip_finally_copies(s.finalbody, final, level, in_loop) or [ast.Pass()]
            out.append(s)
            k += 1
        return _fold_spilled_return(out)

    def _leaves_after(self, rest: List[ast.stmt], level: Optional[int], in_loop: bool) -> bool:
        """``rest`` starts with copies of enclosing ``finally`` bodies and then a statement that
        leaves the ``try`` (``return``; ``break``/``continue`` unless ``in_loop``)."""
        j = 0
        finals = self._outer_finals(level, False)
        loop_finals = len(self._outer_finals(level, True))
        used = 0
        for final in finals:
            if _is_pass_body(final):
                used += 1
                continue
            m = len(final)
            if [ast.dump(x) for x in rest[j:j + m]] == [ast.dump(x) for x in final]:
                j += m
                used += 1
            else:
                break
        if j >= len(rest):
            return False
        last = rest[j]
        if isinstance(last, ast.Return):
            return True
        if isinstance(last, ast.Assign) and j + 1 < len(rest) and isinstance(rest[j + 1], ast.Return) \
                and len(_fold_spilled_return(rest[j:j + 2])) == 1:
            return True
        if isinstance(last, (ast.Break, ast.Continue)):
            return not in_loop and used <= loop_finals
        return False

    def parse_handlers(self, hs: List[ast.stmt]) -> List[ast.ExceptHandler]:
        clauses: List[ast.ExceptHandler] = []
        rest = list(hs)
        while rest:
            first = rest[0]
            if isinstance(first, ast.If) and isinstance(first.test, M.ExcMatch):
                # (code after the test's ``if`` follows a clause that falls out of it too: the
                # walk reads copies of one ending, ``POP_EXCEPT; return None``, in each arm
                # as that ``if``'s follow: idlelib.run.Executive.runcode)
                clauses.append(self._clause(first.test.value, _then(first.body, rest[1:])))
                rest = list(first.orelse) + rest[1:]
                continue
            if isinstance(first, ast.If) and isinstance(first.test, ast.UnaryOp) \
                    and isinstance(first.test.operand, M.ExcMatch):
                # ``if not match: <other clauses>`` followed by this clause's body
                clauses.append(self._clause(first.test.operand.value, rest[1:]))
                rest = (_then(first.body, rest[1:]) if not first.orelse else list(first.body)) \
                    + list(first.orelse)
                continue
            break
        if len(rest) == 1 and isinstance(rest[0], Reraise):
            rest = []
        if rest:
            clauses.append(self._clause(None, rest))
        if not clauses:
            raise StructureError("try without handlers")
        for c in clauses:
            _strip_unwinding(c.body)
            for node in ast.walk(c):
                if isinstance(node, (Reraise, PopExcept, M.ExcMatch)):
                    raise StructureError("exception handler with an unrecognised shape")
        return clauses

    def _clause(self, exc_type: Optional[ast.expr], body: List[ast.stmt]) -> ast.ExceptHandler:
        name = None
        if body and isinstance(body[0], ast.Assign) and isinstance(body[0].value, M.Exc) \
                and isinstance(body[0].targets[0], ast.Name):
            name = body[0].targets[0].id
            body = body[1:]
        trailing: List[ast.stmt] = []
        carried: List[Any] = []
        for k, st in enumerate(body):
            if isinstance(st, PopExcept):
                rest = body[k + 1:]
                if name is not None and rest and _is_assign_none(rest[0], name):
                    rest = rest[1:]
                    if rest and isinstance(rest[0], ast.Delete):
                        rest = rest[1:]
                trailing = _unwind_enclosing_clauses(rest)
                carried = getattr(st, "_carried", [])
                body = body[:k + 1]
                break
        body = _strip_pop_except(body, name)
        handler = ast.ExceptHandler(exc_type, name, body or [ast.Pass()])
        handler._trailing = trailing  # type: ignore[attr-defined]
        handler._carried = carried  # type: ignore[attr-defined]
        return handler


def _returns_past_handler(block: Block, ctx: Ctx) -> bool:
    """The normal-flow path from ``block`` only returns, and it lies (or jumps forward) past
    the handler code at ``ctx.exc``: the code after the statement.

    Only for the body's own end (entered by falling or jumping out of it, not by a test): an
    arm of an ``if`` that leaves the body is read as a ``return`` there, so that it is not a
    second way out that meets the other arm nowhere."""
    if ctx.exc is None or any(p.last.op in POP_JUMPS for p in block.preds):
        return False
    node = block
    past = block.start > ctx.exc
    for _ in range(16):
        last = node.last
        if last.op == "RETURN_VALUE":
            return past
        if last.op == "JUMP":
            nxt = node.jump
            past = past or (nxt is not None and nxt.start > ctx.exc)
        elif last.target is None and last.op not in ("RAISE_VARARGS", "RERAISE"):
            nxt = node.fallthrough
        else:
            return False
        if nxt is None or (ctx.loop is not None and nxt in (ctx.loop.cont, ctx.loop.brk)):
            return False
        node = nxt
    return False


def _same_constant_return(ret: ast.Return, block: Block) -> bool:
    """``block`` (past lone jumps) only returns the constant ``ret`` returns."""
    value = ret.value
    if value is not None and not isinstance(value, ast.Constant):
        return False
    const = None if value is None else value.value
    block = past_lone_jumps(block)
    ins = block.instrs
    return len(ins) == 2 and ins[0].op == "LOAD_CONST" and ins[1].op == "RETURN_VALUE" \
        and type(ins[0].arg) is type(const) and repr(ins[0].arg) == repr(const)


def _inline_return(block: Block, plain: bool = False) -> bool:
    """From ``block`` the code only falls through, without a jump or a test, leaving an
    enclosing ``except`` clause (its POP_EXCEPT) on the way, to a ``return``: a ``return``
    written in a clause nested in another (and maybe in ``with`` statements), not the way the
    inner statement goes on (a jump), nor a copy of the code after it (3.10+ copies a short
    ``return`` after the statement into the clause, which leaves no other clause).  ``plain``:
    any such ``return``, in one clause or several."""
    node: Optional[Block] = block
    unwinds = False
    for _ in range(8):
        if node is None or node.last.target is not None or node.last.op in ("RAISE_VARARGS", "RERAISE"):
            return False
        unwinds = unwinds or any(i.op == "POP_EXCEPT" for i in node.instrs)
        if node.last.op == "RETURN_VALUE":
            return unwinds or plain
        node = node.fallthrough
    return False


def _tail_past_jump(block: Block) -> Optional[List[Tuple[Any, ...]]]:
    """``tail_code`` of ``block``, or of where it jumps when it is only a jump: ≤3.10 end a try
    body with ``POP_BLOCK; JUMP`` (the POP_BLOCK dropped, the jump left alone in the region)
    to a copy of the code a clause goes on with (3.10: a ``with``'s exit and return)."""
    code = tail_code(block)
    if code is not None and len(code) == 1 and code[0][0] == "JUMP" and block.jump is not None \
            and block.jump is not block:
        return tail_code(block.jump)
    return code


def _only_raises(block: Block) -> bool:
    """Normal flow from ``block`` (no tests) ends in ``raise``."""
    node: Optional[Block] = block
    for _ in range(16):
        if node is None:
            return False
        last = node.last
        if last.op == "RAISE_VARARGS":
            return True
        if last.op == "JUMP":
            node = node.jump
        elif last.target is None and last.op not in ("RETURN_VALUE", "RERAISE"):
            node = node.fallthrough
        else:
            return False
    return False


def partial_block(block: Block, k: int) -> Block:
    """The tail of ``block`` from instruction ``k``, with the same exits (never a loop header)."""
    part = Block(-1, block.start + k, block.end, block.instrs[k:])
    part.succs, part.preds = block.succs, []
    part.jump, part.fallthrough = block.jump, block.fallthrough
    part.origin = block.origin or block
    return part


def _returns_variable(stmts: List[ast.stmt], carried: List[Any]) -> bool:
    """A lone ``return`` of something loaded after the POP_EXCEPT, not a constant nor a
    value the clause left on the stack (``carried``)."""
    if len(stmts) != 1 or not isinstance(stmts[0], ast.Return) or stmts[0].value is None:
        return False
    nodes = list(ast.walk(stmts[0].value))
    return any(isinstance(n, ast.Name) for n in nodes) \
        and not any(n is c for n in nodes for c in carried) \
        and not any(isinstance(n, ast.Name) and n.id.startswith("__pellucid") for n in nodes)


def _inline_tails(deferred: List[Tuple[ast.ExceptHandler, List[ast.stmt]]]) -> None:
    """Each clause's code after its POP_EXCEPT back at the clause's end."""
    for h, tail in deferred:
        h.body = [x for x in h.body if not isinstance(x, ast.Pass)] + tail
        h._trailing = []  # type: ignore[attr-defined]


def _safe_after_clause(stmts: List[ast.stmt], name: Optional[str],
                       local_names: FrozenSet[str] = frozenset()) -> bool:
    """Code that behaves the same before or after the exception state is popped.

    A global name may be unbound: its NameError, raised inside the clause, would get the
    handled exception as its ``__context__`` (``except E: pass`` then ``return _dummy``, which
    3.12+ copies after the clause's POP_EXCEPT)."""
    for st in stmts:
        for node in ast.walk(st):
            if isinstance(node, (PopExcept, Reraise)):
                return False  # an enclosing clause's end (3.10+ copies it into every path)
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) \
                    and isinstance(node.operand, ast.Constant) \
                    and type(node.operand.value) in (int, float, complex):
                continue  # a negative constant (one LOAD_CONST)
            if isinstance(node, (ast.Call, ast.Yield, ast.YieldFrom, ast.Await, ast.Attribute,
                                 ast.Subscript, ast.BinOp, ast.UnaryOp, ast.Compare)):
                return False
            if isinstance(node, ast.Raise) and node.exc is None:
                return False
            if isinstance(node, ast.Name) and (node.id == name or node.id not in local_names
                                               and not node.id.startswith("__pellucid")):
                return False  # (the decompiler's temporaries and bound constants are set)
            if isinstance(node, ast.stmt) and not isinstance(node, (ast.Return, ast.Break, ast.Continue,
                                                                      ast.Pass)):
                return False
    return True


def _same_stack(a: List[Any], b: List[Any]) -> bool:
    """The same values, slot for slot."""
    return len(a) == len(b) and all(x is y or same_expr(x, y) for x, y in zip(a, b))


def _is_pass_body(stmts: List[ast.stmt]) -> bool:
    return len(stmts) == 1 and isinstance(stmts[0], ast.Pass)


def _is_constant(value: Optional[ast.expr]) -> bool:
    """``value`` is one LOAD_CONST: a constant, or a negative number (``-1`` is written as a
    unary minus on ``1``)."""
    if value is None or isinstance(value, ast.Constant):
        return True
    return isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)) \
        and isinstance(value.operand, ast.Constant) and type(value.operand.value) in (int, float, complex)


def _computed_before(value: Optional[ast.expr], seq: int) -> bool:
    """``value`` is a constant or was on the stack before instruction stamp ``seq``."""
    if _is_constant(value):
        return True
    return getattr(value, "_seq", seq + 1) <= seq


def _swallowing_pop_excepts(stmts: List[ast.stmt], nested: bool = False) -> Set[int]:
    """ids of the POP_EXCEPTs in ``stmts`` that a ``return``/``break``/``continue`` written
    in a ``finally`` clause runs in its exceptional copy (3.9+; 3.8's POP_FINALLY), dropping
    the exception it swallows: each directly before that statement, inside an ``if`` (one at
    the top level is an ``except`` clause's own)."""
    found: Set[int] = set()
    for k, st in enumerate(stmts):
        if nested and isinstance(st, PopExcept) and k + 1 < len(stmts) \
                and isinstance(stmts[k + 1], (ast.Return, ast.Break, ast.Continue)):
            found.add(id(st))
        if isinstance(st, ast.If):
            found |= _swallowing_pop_excepts(st.body, True)
            found |= _swallowing_pop_excepts(st.orelse, True)
    return found


def _drop_swallowing_pop_excepts(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """``stmts`` without the POP_EXCEPTs :func:`_swallowing_pop_excepts` finds (the normal
    path's copy of the ``finally`` body has none)."""
    gone = _swallowing_pop_excepts(stmts)
    if not gone:
        return stmts

    def strip(body: List[ast.stmt]) -> List[ast.stmt]:
        out = []
        for st in body:
            if id(st) in gone:
                continue
            if isinstance(st, ast.If):
                st = copy.copy(st)
                st.body, st.orelse = strip(st.body), strip(st.orelse)
            out.append(st)
        return out

    return strip(stmts)


def _ends_in_reraise(stmts: List[ast.stmt]) -> bool:
    """Every fall-through path of ``stmts`` ends in RERAISE (other paths may leave)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, Reraise):
        return True
    if isinstance(last, ast.If):
        arms = [last.body, last.orelse]
        return all(_ends_in_reraise(a) or _terminates(a) for a in arms) and \
            any(_ends_in_reraise(a) for a in arms)
    return False


def _strip_reraise(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """The ``finally`` body: the handler without the RERAISE that ends it."""
    if not stmts:
        return stmts
    stmts = _unguard_reraises(stmts)
    last = stmts[-1]
    if isinstance(last, Reraise):
        # (an ``if`` before it whose arms end in copies of it: they go on to the same end)
        return _strip_reraise(stmts[:-1]) if len(stmts) > 1 and isinstance(stmts[-2], ast.If) \
            else stmts[:-1]
    if isinstance(last, ast.If):
        body = _strip_reraise(last.body)
        orelse = _strip_reraise(last.orelse)
        if not body:
            if not orelse:
                return stmts[:-1] + [ast.If(last.test, [ast.Pass()], [])]  # the test still runs
            from pellucid.decompiler.structure import negate
            return stmts[:-1] + [ast.If(negate(last.test), orelse, [])]
        return stmts[:-1] + [ast.If(last.test, body, orelse)]
    return stmts


def _unguard_reraises(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """``if c: <re-raise>`` followed by statements that end by re-raising -> ``if not c:``
    around them: the test of an ``if`` in a ``finally`` body whose arm copies the RERAISE was
    read as a guard (3.11+)."""
    from pellucid.decompiler.structure import negate
    for i, st in enumerate(stmts):
        if isinstance(st, ast.If) and len(st.body) == 1 and isinstance(st.body[0], Reraise) \
                and not st.orelse and i + 1 < len(stmts) and _ends_in_reraise(stmts[i + 1:]):
            return stmts[:i] + [ast.If(negate(st.test), _unguard_reraises(stmts[i + 1:]), [])]
    return stmts


def _then(stmts: List[ast.stmt], after: List[ast.stmt]) -> List[ast.stmt]:
    """``stmts`` and then ``after`` (a copy), unless ``stmts`` never goes on (or ``after``
    is the re-raise of an exception no clause matched, which no clause runs into)."""
    if not after or _terminates(stmts) or (stmts and isinstance(stmts[-1], Reraise)) \
            or any(isinstance(x, Reraise) for x in after):
        return list(stmts)
    return list(stmts) + copy.deepcopy(after)


def _terminates(stmts: List[ast.stmt]) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
        return True
    if isinstance(last, ast.If):
        return _terminates(last.body) and _terminates(last.orelse)
    return False


def _factor_terminal_tail(stmts: List[ast.stmt], arms_as_else: bool = True) -> List[ast.stmt]:
    """``if c: A; T`` followed by ``T``, with ``T`` ending in return/raise -> ``if c: A`` then
    ``T`` (the same code: ``T`` runs after ``A`` either way); statements may come before the
    ``if`` (``X; if c: A; T`` + ``T``).

    3.10+ copies a short exit (``return``, ``RERAISE``) into each arm of an ``if`` that ends a
    ``finally`` copy, which hides the copy on the normal path."""
    if len(stmts) < 2 or not isinstance(stmts[-1], (ast.Return, ast.Raise, Reraise)):
        return stmts
    dumps: Optional[List[str]] = None
    for i in range(len(stmts) - 1):
        first = stmts[i]
        if not isinstance(first, ast.If) or first.orelse:
            continue
        tail = stmts[i + 1:]
        body = first.body
        n = len(tail)
        if len(body) <= n:
            continue
        if dumps is None:
            dumps = [ast.dump(x) for x in stmts]
        if [ast.dump(x) for x in body[-n:]] == dumps[i + 1:]:
            factored = stmts[:i] + [ast.If(first.test, body[:-n], [])] + tail
            if isinstance(stmts[-1], Reraise) and arms_as_else and i > 0:
                # (an ``if`` before it whose arm re-raises: ``if a: A elif b: B`` ending a
                # ``finally`` body reads ``if a: A; RERAISE`` then ``if b: B; RERAISE``, the
                # last ``if``'s RERAISE factored here)
                return _reraising_arms_as_else(factored)
            return factored
    if isinstance(stmts[-1], Reraise) and arms_as_else:
        # (no arm ends in a copy of what follows the ``if``: an ``else`` arm, then)
        return _reraising_arms_as_else(stmts)
    return stmts


def _reraising_arms_as_else(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """``if c: A; RERAISE`` then ``B; RERAISE`` -> ``if c: A else: B`` then ``RERAISE``: an
    ``if``/``else`` ending a ``finally`` body whose first arm got its own copy of the RERAISE
    (3.11+) reads as an ``if`` with no ``else`` (asyncio.tasks' ``_PyTask.__eager_start``)."""
    out = list(stmts)
    k = len(out) - 2
    while k >= 0:
        st = out[k]
        if isinstance(st, ast.If) and not st.orelse and len(st.body) > 1 \
                and isinstance(st.body[-1], Reraise) and k + 1 < len(out) - 1:
            node = ast.If(st.test, st.body[:-1], out[k + 1:-1])
            ast.copy_location(node, st)
            out = out[:k] + [node, out[-1]]
        k -= 1
    return out


def _loop_exits_as_breaks(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """``while ...: ... T ...`` followed by ``T`` (a re-raise or constant return that ends the
    code), the loop being the last thing before ``T`` -> the copies of ``T`` in the loop are
    ``break`` (leaving the loop reaches ``T`` with nothing in between).

    3.11+ gives each exit of a loop that ends a ``finally`` body its own copy of the RERAISE
    (the normal-path copy: of the return after the statement), so the loop has no exit to
    break to; the copies hide the ``finally`` body both ways.  Only ``if`` statements are
    looked through: in a ``try`` or ``with`` the two would not be the same."""
    if len(stmts) < 2:
        return stmts
    end = stmts[-1]
    if not (isinstance(end, Reraise) or isinstance(end, ast.Return) and (
            end.value is None or isinstance(end.value, ast.Constant))):
        return stmts
    key = ast.dump(end)
    changed = [False]

    def in_loop(body: List[ast.stmt]) -> List[ast.stmt]:
        out: List[ast.stmt] = []
        for st in body:
            if ast.dump(st) == key:
                out.append(ast.Break())
                changed[0] = True
            elif isinstance(st, ast.If):
                out.append(ast.If(st.test, in_loop(st.body), in_loop(st.orelse)))
            else:
                out.append(st)
        return out

    def tail(st: ast.stmt) -> ast.stmt:
        if isinstance(st, ast.If):
            return ast.If(st.test, [*st.body[:-1], tail(st.body[-1])] if st.body else st.body,
                          [*st.orelse[:-1], tail(st.orelse[-1])] if st.orelse else st.orelse)
        if isinstance(st, ast.While) and not st.orelse:
            return ast.While(st.test, in_loop(st.body), [])
        return st

    new = stmts[:-2] + [tail(stmts[-2]), end]
    return new if changed[0] else stmts


def _drop_jumps_before_same(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """``if c: A else: continue`` followed by ``continue`` -> ``if c: A`` then ``continue``
    (likewise ``break``, and ``return`` of a constant; either arm).  The arm's own copy of the
    jump runs the same jump as the statement after the ``if``: the normal-path copy of a
    ``finally`` body that ends a loop body jumps back from each of its arms."""
    out = list(stmts)
    for i in range(len(out) - 1):
        st, nxt = out[i], out[i + 1]
        if not isinstance(st, ast.If) or not isinstance(nxt, (ast.Continue, ast.Break, ast.Return)):
            continue
        if isinstance(nxt, ast.Return) and not (nxt.value is None or isinstance(nxt.value, ast.Constant)):
            continue
        key = ast.dump(nxt)
        body = st.body[:-1] if st.body and ast.dump(st.body[-1]) == key else st.body
        orelse = st.orelse[:-1] if st.orelse and ast.dump(st.orelse[-1]) == key else st.orelse
        if body is not st.body or orelse is not st.orelse:
            new = copy.copy(st)
            new.body, new.orelse = body or [ast.Pass()], orelse
            out[i] = new
    return out


def _unguard_jumps(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """``if c: continue`` followed by statements ending in ``continue`` -> ``if not c:`` around
    those statements, then ``continue`` (likewise ``break``, and ``return`` of a constant).

    3.12+ inverts a test whose arm jumps to a loop's closing jump, so the normal-path copy of
    a ``finally`` body ending a loop body (``if not c: A`` then the jump back) reads as a guard
    jumping back, then ``A`` and its own jump back (shutil's ``_rmtree_safe_fd`` on 3.12)."""
    from pellucid.decompiler.structure import negate
    for i, st in enumerate(stmts[:-2]):
        if not (isinstance(st, ast.If) and not st.orelse and len(st.body) == 1):
            continue
        jump = st.body[0]
        if not isinstance(jump, (ast.Continue, ast.Break, ast.Return)) or isinstance(jump, ast.Return) \
                and not (jump.value is None or isinstance(jump.value, ast.Constant)):
            continue
        if ast.dump(stmts[-1]) != ast.dump(jump):
            continue
        node = ast.If(negate(st.test), stmts[i + 1:-1], [])
        ast.copy_location(node, st)
        return stmts[:i] + [node, stmts[-1]]
    return stmts


def _final_return_merged(rest: List[ast.stmt], final: List[ast.stmt]) -> Optional[List[ast.stmt]]:
    """What follows the normal path's copy of ``final`` in ``rest`` when a ``return`` in an
    ``if`` of the ``finally`` body (``if c: ...; return``, then ``T``) is the same as the one
    after the statement: ≤3.10 share that return, so the copy reads ``if c: ... else: T`` and
    the return after it (subprocess.Popen.__exit__).  ``None`` if ``rest`` is not that."""
    for k, st in enumerate(final):
        if not (isinstance(st, ast.If) and not st.orelse and st.body
                and isinstance(st.body[-1], ast.Return)):
            continue
        arm = copy.copy(st)
        arm.body, arm.orelse = st.body[:-1] or [ast.Pass()], final[k + 1:]
        expect = final[:k] + [arm, st.body[-1]]
        if [ast.dump(x) for x in rest[:len(expect)]] == [ast.dump(x) for x in expect]:
            return rest[len(expect) - 1:]
    if not _terminates(rest):
        return None
    # 3.11+ also copy a short ending (``x = 0; return``) into the arms of an ``if`` before it
    # (and into an ``except`` clause's end), so the copy may read with that ending in every
    # arm and the returns merged after it: the same code once each ``if``'s tail is pushed
    # into its arms that go on (subprocess.Popen.__exit__ on 3.12+).
    budget = [_TAIL_PUSH_BUDGET]
    seen = _tails_pushed(rest, budget)
    if seen is None:
        return None
    for j in range(len(rest) - 1, -1, -1):
        pushed = _tails_pushed(final + rest[j:], budget)
        if pushed is None:
            return None
        if [ast.dump(x) for x in pushed] == [ast.dump(x) for x in seen]:
            return rest[j:]
    return None


_TAIL_PUSH_BUDGET = 400


def _tails_pushed(stmts: List[ast.stmt], budget: List[int]) -> Optional[List[ast.stmt]]:
    """``stmts`` with the statements after each ``if`` moved into those of its arms that go
    on (``pass`` dropped): two statement lists that differ only in where a short ending was
    copied read the same.  ``None`` once more than ``budget`` statements were copied."""
    out: List[ast.stmt] = []
    for k, st in enumerate(stmts):
        if isinstance(st, ast.Pass):
            continue
        if isinstance(st, ast.If):
            tail = stmts[k + 1:]
            budget[0] -= 2 * len(tail)
            if budget[0] < 0:
                return None
            arms = []
            for arm in (st.body, st.orelse):
                arm = _tails_pushed(list(arm) if _terminates(arm) else list(arm) + tail, budget)
                if arm is None:
                    return None
                arms.append(arm)
            node = copy.copy(st)
            node.body, node.orelse = arms
            out.append(node)
            return out
        out.append(st)
    return out


def _starts_with(stmts: List[ast.stmt], prefix: List[ast.stmt]) -> bool:
    if len(prefix) == 1 and isinstance(prefix[0], ast.Pass):
        return True
    return [ast.dump(s) for s in stmts[:len(prefix)]] == [ast.dump(s) for s in prefix]


def _drop_returns_before_same(stmts: List[ast.stmt], before: Optional[int] = None) -> List[ast.stmt]:
    """``with m: ...; return None`` followed by ``return None`` -> ``with m: ...`` then the
    return (likewise for the branches of an ``if`` and the body and clauses of a ``try``).  The normal-path copy of a ``finally`` body
    that ends the function absorbs the final return into its blocks; leaving the block runs the
    same ``__exit__`` before the same return, and a constant is the same before or after it.
    With ``before`` (an instruction stamp), so is a value the stack held before it."""
    out = list(stmts)
    for i in range(len(out) - 1):
        after = out[i + 1]
        if isinstance(after, ast.Return) and _movable_return(after, before):
            out[i] = _without_tail_return(out[i], ast.dump(after), before)
    return out


def _split_tail_return(stmts: List[ast.stmt], before: Optional[int] = None) -> List[ast.stmt]:
    """For statements that end the function: a last statement with a constant ``return`` at the
    end of its blocks is that statement followed by the return (then dropped from the blocks by
    :func:`_drop_returns_before_same`).  Blocks that do not end in it end some other way, since
    nothing follows."""
    if not stmts:
        return stmts
    ret = _tail_return(stmts[-1], before)
    if ret is None or isinstance(stmts[-1], ast.Return):
        return stmts
    return stmts + [ret]


def _tail_return(stmt: ast.stmt, before: Optional[int] = None) -> Optional[ast.Return]:
    if isinstance(stmt, ast.Return):
        return stmt if _movable_return(stmt, before) else None
    blocks: List[List[ast.stmt]] = []
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        blocks = [stmt.body]
    elif isinstance(stmt, ast.If):
        blocks = [stmt.body, stmt.orelse]
    elif isinstance(stmt, ast.Try) and not stmt.orelse:
        blocks = [stmt.body] + [h.body for h in stmt.handlers]
    for b in blocks:
        if b:
            found = _tail_return(b[-1], before)
            if found is not None:
                return found
    return None


def _movable_return(ret: ast.Return, before: Optional[int] = None) -> bool:
    """A ``return`` that gives the same value wherever it runs in the statement it ends: of
    a constant, or of one of pellucid's temporaries (a local assigned once, before the
    statement, that no ``__exit__`` or clause can rebind: ``return x`` in a ``try`` whose
    ``finally`` has clauses of its own, copied by the compiler into each)."""
    value = ret.value
    return value is None or isinstance(value, ast.Constant) or (
        isinstance(value, ast.Name) and value.id.startswith("__pellucid_t")) or (
        before is not None and _computed_before(value, before))


def _without_tail_return(stmt: ast.stmt, ret: str, before: Optional[int] = None) -> ast.stmt:
    def block(body: List[ast.stmt]) -> List[ast.stmt]:
        if body and ast.dump(body[-1]) == ret and (
                before is None or _movable_return(body[-1], before)):  # type: ignore[arg-type]
            # (and the copies in the statement before it, which go on to the same return)
            rest = body[:-1]
            return rest[:-1] + [_without_tail_return(rest[-1], ret, before)] if rest else [ast.Pass()]
        if body:
            return body[:-1] + [_without_tail_return(body[-1], ret, before)]
        return body

    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        new = copy.copy(stmt)
        new.body = block(stmt.body)
        return new
    if isinstance(stmt, ast.If):
        new_if = copy.copy(stmt)
        new_if.body = block(stmt.body)
        orelse = block(stmt.orelse)
        new_if.orelse = [] if len(orelse) == 1 and isinstance(orelse[0], ast.Pass) else orelse
        return new_if
    if isinstance(stmt, ast.Try) and not stmt.orelse:
        # a return in the body (or a clause) runs the `finally` block, then returns; falling
        # out of the statement runs it too and reaches the same return
        new_try = copy.copy(stmt)
        new_try.body = block(stmt.body)
        new_try.handlers = []
        for h in stmt.handlers:
            new_h = copy.copy(h)
            new_h.body = block(h.body)
            new_try.handlers.append(new_h)
        return new_try
    return stmt


def _without_tail_copy(stmt: ast.If, dumped: List[str]) -> Optional[ast.If]:
    """``stmt`` with the statements ``dumped`` removed from the end of every arm that falls
    through it (nested ``if`` arms included); ``None`` unless every such arm ends in them (an
    arm that falls through without them, an empty ``else`` too, would then skip them)."""
    n = len(dumped)

    def arm(stmts: List[ast.stmt]) -> Optional[List[ast.stmt]]:
        if _terminates(stmts):
            return stmts
        if len(stmts) >= n and [ast.dump(x) for x in stmts[-n:]] == dumped:
            return stmts[:-n]
        if stmts and isinstance(stmts[-1], ast.If):
            inner = _without_tail_copy(stmts[-1], dumped)
            return None if inner is None else stmts[:-1] + [inner]
        return None

    body, orelse = arm(stmt.body), arm(stmt.orelse)
    if body is None or orelse is None:
        return None
    new = copy.copy(stmt)  # (keeps the statement's positions)
    new.body, new.orelse = body or [ast.Pass()], orelse
    return new


def _fold_spilled_return(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """``__t = v; return __t`` (left by a finally copy between them) -> ``return v``."""
    out: List[ast.stmt] = []
    for s in stmts:
        if isinstance(s, ast.Return) and isinstance(s.value, ast.Name) and out \
                and isinstance(out[-1], ast.Assign) and len(out[-1].targets) == 1 \
                and isinstance(out[-1].targets[0], ast.Name) and out[-1].targets[0].id == s.value.id \
                and s.value.id.startswith("__pellucid_t"):
            out[-1] = ast.Return(out[-1].value)
            continue
        out.append(s)
    return out


def _strip_pop_except(body: List[ast.stmt], name: Optional[str]) -> List[ast.stmt]:
    out: List[ast.stmt] = []
    k = 0
    while k < len(body):
        s = body[k]
        if isinstance(s, PopExcept):
            k += 1
            if name is not None and k + 1 < len(body) + 1:
                if k < len(body) and _is_assign_none(body[k], name):
                    k += 1
                if k < len(body) and isinstance(body[k], ast.Delete) and len(body[k].targets) == 1 \
                        and isinstance(body[k].targets[0], ast.Name) and body[k].targets[0].id == name:
                    k += 1
            continue
        if isinstance(s, ast.If):
            s.body = _strip_pop_except(s.body, name) or [ast.Pass()]
            s.orelse = _strip_pop_except(s.orelse, name)
        out.append(s)
        k += 1
    return out


def _is_cleanup(st: ast.stmt) -> bool:
    """``name = None`` or ``del name``: an ``as`` name cleared as its clause ends."""
    if isinstance(st, ast.Assign):
        return len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
            and _is_assign_none(st, st.targets[0].id)
    return isinstance(st, ast.Delete) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)


def _strip_unwinding(stmts: List[ast.stmt]) -> None:
    """In place, in ``stmts`` and the statements nested in them: POP_EXCEPTs (with ``as``-name
    clean-ups) right before a ``return``/``break``/``continue`` are that jump leaving the
    ``except`` clauses it is in (a ``return`` in a try inside a clause), not statements."""
    k = 0
    while k < len(stmts):
        st = stmts[k]
        if isinstance(st, PopExcept):
            j = k
            while j < len(stmts) and (isinstance(stmts[j], PopExcept) or _is_cleanup(stmts[j])):
                j += 1
            if j < len(stmts) and isinstance(stmts[j], (ast.Return, ast.Break, ast.Continue)):
                del stmts[k:j]
                continue
        if isinstance(st, ast.If) and k + 1 < len(stmts) \
                and isinstance(stmts[k + 1], (ast.Return, ast.Break, ast.Continue)):
            # (each arm ended in the unwinding and the same jump, written once after the
            # ``if``: 3.13 copies an enclosing clause's ``POP_EXCEPT; JUMP`` into both arms of
            # an ``if`` ending a ``try`` body in that clause; os._fwalk)
            _strip_arms_unwinding(st)
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(st, field, None)
            if isinstance(inner, list) and not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                ast.ClassDef)):
                _strip_unwinding(inner)
        for h in getattr(st, "handlers", None) or []:
            _strip_unwinding(h.body)
        k += 1


def _arms_unwinding(stmts: List[ast.stmt]) -> Optional[int]:
    """Where the POP_EXCEPTs (and ``as``-name clean-ups) ending every path of ``stmts``
    start, looking into a final ``if``'s arms (-1); ``None`` if some path does not end so."""
    if not stmts:
        return None
    last = stmts[-1]
    if isinstance(last, ast.Raise):
        # (a path that raises never reaches the jump after the ``if``: nothing to drop;
        # inspect:Signature._bind 3.13, ``elif ...: break`` beside ``else: raise E``)
        return len(stmts)
    if isinstance(last, ast.If):
        return -1 if _arms_unwinding(last.body) is not None \
            and _arms_unwinding(last.orelse) is not None else None
    j = len(stmts)
    while j > 0 and (isinstance(stmts[j - 1], PopExcept) or _is_cleanup(stmts[j - 1])):
        j -= 1
    return j if any(isinstance(x, PopExcept) for x in stmts[j:]) else None


def _strip_arms_unwinding(node: ast.If) -> None:
    """In place: drop the unwinding :func:`_arms_unwinding` finds at the end of each arm."""
    if _arms_unwinding(node.body) is None or _arms_unwinding(node.orelse) is None:
        return
    for field in ("body", "orelse"):
        arm = getattr(node, field)
        j = _arms_unwinding(arm)
        if j == -1:
            _strip_arms_unwinding(arm[-1])
        else:
            setattr(node, field, arm[:j] or ([ast.Pass()] if field == "body" else []))


def _unwind_enclosing_clauses(rest: List[ast.stmt]) -> List[ast.stmt]:
    """What follows a clause's POP_EXCEPT, without the unwinding of enclosing clauses.

    ``return``/``break``/``continue`` in an ``except`` clause nested in another one leaves
    both: CPython pops each clause's exception state (and clears its ``as`` name) before the
    jump.  Those POP_EXCEPTs and clean-ups are part of the ``return``; only what comes after the
    last of them is code that runs outside the clauses."""
    k = 0
    last = -1
    while k < len(rest):
        st = rest[k]
        if isinstance(st, PopExcept):
            last = k
        elif not (isinstance(st, ast.Assign) and len(st.targets) == 1
                  and isinstance(st.targets[0], ast.Name)
                  and _is_assign_none(st, st.targets[0].id)) \
                and not (isinstance(st, ast.Delete) and len(st.targets) == 1
                         and isinstance(st.targets[0], ast.Name)):
            break
        k += 1
    if last < 0 or k >= len(rest) or not isinstance(rest[k], (ast.Return, ast.Break, ast.Continue)):
        return rest  # (3.12+ also copies an enclosing clause's plain end: POP_EXCEPT, jump on)
    rest = rest[last + 1:]
    # the outermost clause's ``as`` name clean-up, which follows its POP_EXCEPT
    if len(rest) >= 2 and isinstance(rest[0], ast.Assign) and isinstance(rest[0].targets[0], ast.Name) \
            and _is_assign_none(rest[0], rest[0].targets[0].id) and isinstance(rest[1], ast.Delete):
        rest = rest[2:]
    return rest


def _is_assign_none(s: ast.stmt, name: str) -> bool:
    return isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
        and s.targets[0].id == name and isinstance(s.value, ast.Constant) and s.value.value is None
