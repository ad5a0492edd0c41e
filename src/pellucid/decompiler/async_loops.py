"""``async for`` loops (with ``else``, ``break``, ``continue``) on 3.8–3.13.

An ``async for`` has no ``FOR_ITER``: after ``GET_AITER`` the header runs
``GET_ANEXT; LOAD_CONST None; YIELD_FROM`` (3.11+'s ``SEND`` loop is folded into ``YIELD_FROM``)
inside a protected region whose handler starts with ``END_ASYNC_FOR``; ``StopAsyncIteration``
ends the loop there, so the code after ``END_ASYNC_FOR`` is the loop's normal exit (its
``else`` clause, if any, then the follow).  ``break`` pops the iterator (``POP_TOP``) in a small
trampoline block and jumps to the follow; ``continue`` jumps back to the header.
"""
import ast
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

from pellucid.bytecode.cfg import Block
from pellucid.decompiler import markers as M
from pellucid.decompiler.errors import StructureError
from pellucid.decompiler.loops import strip_trailing_continue
from pellucid.decompiler.structure import Ctx, Loop

_HEADER_OPS = ("GET_ANEXT", "LOAD_CONST", "YIELD_FROM", "NOP", "JUMP")


class AsyncLoopBuilder:
    """Mixin (before ProtectedBuilder/LoopBuilder/Structurer in the MRO): ``async for``."""

    # -- recognition ------------------------------------------------------------------------------
    def async_for_level(self, block: Block) -> Optional[int]:
        """The END_ASYNC_FOR handler when ``block`` is an ``async for`` header (starts GET_ANEXT)."""
        if not block.instrs or block.instrs[0].op != "GET_ANEXT":
            return None
        level = self.effective_handler(block)
        if level is None or self.handler_kind(level) != "async_for":
            return None
        return level

    def _async_breaks(self) -> Dict[Block, Set[Block]]:
        d = self.__dict__.get("_async_break_map")
        if d is None:
            d = {}
            self.__dict__["_async_break_map"] = d
        return d

    # -- hooks into the structurer ----------------------------------------------------------------
    def loop_jump(self, block: Block, ctx: Ctx) -> Optional[ast.stmt]:
        loop = ctx.loop
        if loop is not None and block in self._async_breaks().get(loop.header, ()):
            return ast.Break()
        return super().loop_jump(block, ctx)  # type: ignore[misc]

    def build_loop(self, header: Block, stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
                   out: List[ast.stmt]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        level = self.async_for_level(header)
        if level is not None and level != ctx.exc:
            return self.build_async_for(header, level, stack, ctx, stop, out)
        return super().build_loop(header, stack, ctx, stop, out)  # type: ignore[misc]

    def build_protected(self, block: Block, stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
                        out: List[ast.stmt]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        level = self.async_for_level(block)
        if level is not None and level != ctx.exc and level in self.handler_chain(block)[:1]:
            return self.build_async_for(block, level, stack, ctx, stop, out)
        return super().build_protected(block, stack, ctx, stop, out)  # type: ignore[misc]

    def op_END_ASYNC_FOR(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Any) -> None:
        while stack and isinstance(stack[-1], (M.Exc, M.ExcPart, M.SavedExc)) \
                or (stack and type(stack[-1]) is M.Marker and stack[-1].value == "lasti"):
            stack.pop()
        if not stack or not isinstance(stack[-1], M.Iterator):
            raise StructureError("END_ASYNC_FOR without its iterator")
        stack.pop()

    def op_GET_AWAITABLE(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Any) -> None:
        if stack and _is_async_comprehension(stack[-1]):
            # ``[... async for ...]`` (or with ``await`` inside) calls a coroutine the
            # enclosing code awaits implicitly.
            stack.append(M.Awaitable(("comprehension", stack.pop())))
            return
        super().op_GET_AWAITABLE(arg, stack, out, ins)  # type: ignore[misc]

    def op_YIELD_FROM(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Any) -> None:
        if len(stack) >= 2 and isinstance(stack[-2], M.Awaitable) \
                and isinstance(stack[-2].value, tuple) and stack[-2].value[0] == "comprehension":
            stack.pop()
            stack.append(stack.pop().value[1])
            return
        super().op_YIELD_FROM(arg, stack, out, ins)  # type: ignore[misc]

    # -- building ---------------------------------------------------------------------------------
    def _is_break_trampoline(self, b: Block) -> Optional[Block]:
        ops = [i.op for i in b.instrs]
        if ops == ["POP_TOP", "JUMP"]:
            return b.jump
        if ops == ["POP_TOP"] and b.fallthrough is not None:
            return b.fallthrough
        return None

    def _reaches_latch(self, start: Block, header: Block, hblock: Block) -> bool:
        """Whether ``start`` leads back to ``header`` (jumping back from inside the loop)."""
        latches = {p for p in header.preds if p.last.op == "JUMP" and p.jump is header}
        return bool(latches & self._reach([start], header, hblock))

    def _reach(self, starts: List[Block], header: Block, hblock: Block) -> Set[Block]:
        seen: Set[Block] = set()
        work = list(starts)
        while work:
            x = work.pop()
            if x in seen or x is header or x is hblock:
                continue
            seen.add(x)
            work.extend(x.succs)
            if x.handler is not None and x.handler.target in self.cfg.block_at \
                    and self.cfg.block_at[x.handler.target] is not hblock:
                work.append(self.cfg.block_at[x.handler.target])
        return seen

    def build_async_for(self, header: Block, level: int, stack: List[Any], ctx: Ctx,
                        stop: FrozenSet[Block], out: List[ast.stmt]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        it = stack[-1] if stack else None
        if not isinstance(it, M.Iterator):
            raise StructureError("async for over a value that is not an async iterator")
        hblock = self.cfg.block_at.get(level)
        if hblock is None:
            raise StructureError("async for without its END_ASYNC_FOR handler")
        # The header: blocks protected by the END_ASYNC_FOR handler that fetch the next item.
        head_blocks: List[Block] = []
        b: Optional[Block] = header
        trial = list(stack)
        sink: List[ast.stmt] = []
        while b is not None and self.effective_handler(b) == level:
            if any(i.op not in _HEADER_OPS for i in b.instrs):
                raise StructureError("unexpected instruction in an async for header")
            if b is not header and len(b.preds) != 1:
                raise StructureError("async for header entered in the middle")
            head_blocks.append(b)
            for ins in b.instrs:
                if ins.op != "JUMP":
                    self.step(ins, trial, sink)
            b = b.jump if b.last.op == "JUMP" else b.fallthrough
        first = b
        if first is None or sink or len(trial) != len(stack) + 1 or not isinstance(trial[-1], M.NextValue) \
                or trial[-1].value is not it:
            raise StructureError("async for header does not fetch the next item")
        # The body: everything reachable from ``first`` without going back to the header,
        # through a break trampoline (``POP_TOP; JUMP follow``) or into the handler.
        heads = set(head_blocks)
        # handlers already active at the header (ours and enclosing ones) are not part of the body
        outer: Set[int] = set()
        h = header.handler
        while h is not None and h.target not in outer:
            outer.add(h.target)
            h = h.outer
        body: Set[Block] = set(head_blocks)
        trampolines: Set[Block] = set()
        work = [first]
        while work:
            x = work.pop()
            if x in body or x in trampolines:
                continue
            if x is hblock or x in self.cfg.handler_blocks and self.effective_handler(x) == level:
                raise StructureError("async for body runs into its handler")
            if x in stop:
                raise StructureError("async for body reaches a stop block")
            if ctx.region is not None and x not in ctx.region:
                continue  # leaves the enclosing region: the walk below stops there (checked)
            tgt = self._is_break_trampoline(x)
            if tgt is not None and x not in heads and not self._reaches_latch(tgt, header, hblock):
                trampolines.add(x)  # (a nested loop's break leads on to our latch instead)
                continue
            body.add(x)
            work.extend(x.succs)
            # handlers of statements nested in the body (e.g. an inner ``async for``'s exit)
            if x.handler is not None and x.handler.target not in outer \
                    and x.handler.target in self.cfg.block_at:
                work.append(self.cfg.block_at[x.handler.target])
        targets = {self._is_break_trampoline(t) for t in trampolines}
        if len(targets) > 1:
            raise StructureError("async for with several break targets")
        follow = next(iter(targets)) if targets else None
        after_stack = stack[:-1]
        region = frozenset(body)
        loop = Loop(header, header, follow, region)
        breaks = self._async_breaks()
        breaks[header] = trampolines
        self.active_loops.add(header)
        try:
            body_s, body_stack, body_end = self.walk(first, trial, Ctx(loop, region, ctx.exc), frozenset())
        finally:
            self.active_loops.discard(header)
        if body_stack is not None:
            raise StructureError("async for body runs out of the loop at %r" % (body_end,))
        if not body_s or not isinstance(body_s[0], ast.Assign) \
                or not isinstance(body_s[0].value, M.NextValue) or len(body_s[0].targets) != 1:
            raise StructureError("async for loop without a target assignment")
        target = body_s[0].targets[0]
        body_s = strip_trailing_continue(body_s[1:]) or [ast.Pass()]
        # Normal exit: the handler, entered with the iterator and the exception on the stack.
        entry = self.handler_entry_stack(level, stack)
        if len(entry) < len(stack) or entry[len(stack) - 1] is not it:
            raise StructureError("async for handler at an unexpected stack depth")
        orelse: List[ast.stmt] = []
        if follow is not None:
            orelse, st, end = self.walk(hblock, entry, ctx, stop | {follow})
            if st is not None and end is not follow:
                raise StructureError("async for else-clause does not rejoin the loop's follow")
        node = ast.AsyncFor(target, it.value, body_s, orelse)
        comp = self.inline_comprehension(node, after_stack)
        if comp is not None:
            if follow is not None:
                raise StructureError("async comprehension with a break")
            after_stack[-1] = comp
        else:
            self.emit(out, node, after_stack)
        if follow is not None:
            return after_stack, follow
        # No break: the code after END_ASYNC_FOR simply continues the enclosing statements.
        return after_stack + [it] + entry[len(stack):], hblock


def _is_async_comprehension(v: Any) -> bool:
    if not isinstance(v, (ast.ListComp, ast.SetComp, ast.DictComp)):
        return False
    if any(g.is_async for g in v.generators):
        return True
    return any(isinstance(n, ast.Await) for n in ast.walk(v))
