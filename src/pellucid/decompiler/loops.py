"""``for`` and ``while`` loops (with ``else``), recognised as natural loops of the CFG.

Three loop shapes occur: ``for`` (a ``FOR_ITER`` header), ``while`` tested at the header (≤3.9),
and ``while`` tested at the latch with a guard before the loop (3.10+ duplicates the condition).
A jump to the loop's continue point becomes ``continue``, a jump to its follow ``break``.
"""
import ast
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

from pellucid.bytecode.cfg import Block, tail_code
from pellucid.bytecode.neutral_ops import TERMINAL
from pellucid.bytecode.stack_depth import entry_depths
from pellucid.bytecode.instruction import POP_JUMPS
from pellucid.decompiler import markers as M
from pellucid.decompiler.errors import StructureError
from pellucid.decompiler.protected import partial_block
from pellucid.decompiler.structure import Ctx, Loop, negate, past_lone_jumps, same_code



_ENDS = TERMINAL
# (jumps inside an expression: ``and``/``or`` keeping the tested value)
_VALUE_JUMPS = ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP")


def _straight_to(block: Block, target: Block) -> bool:
    """``block`` runs straight (no test) into ``target``: ``x(); break``."""
    for _ in range(16):
        if block is target:
            return True
        if len(block.succs) != 1 or block.last.op in POP_JUMPS:
            return False
        block = block.succs[0]
    return False



def _past_cleanup_entry(block: Block) -> List[Block]:
    """The predecessors of ``block``, where it is entered by a lone jump over a chained
    comparison's cleanup and by that cleanup (3.10+ ``a < b < c or d``): the jump's
    predecessors instead, so a walk back from ``d``'s test reaches the comparison."""
    preds = list(block.preds)
    jumps = [p for p in preds if len(p.instrs) == 1 and p.last.op == "JUMP" and len(p.preds) == 1]
    if len(preds) > 1 and len(jumps) == 1 and all(
            p is jumps[0] or (p.instrs[0].op == "POP_TOP" and len(p.instrs) <= 3
                              and all(i.op in ("POP_TOP", "SWAP", "JUMP") for i in p.instrs))
            for p in preds):
        return list(jumps[0].preds)
    return preds

class _GuardNotLoop(StructureError):
    """(a test read as a ``while`` loop's guard has no such loop after it)"""


def _terminal_path(block: Block, body: FrozenSet[Block] = frozenset()) -> bool:
    """A chain of single-predecessor blocks ending in return/raise.

    The first block may have several predecessors when all of them are in ``body`` and in its
    exception region: the return that ``if a or b: return x`` inside a loop shares between its
    two tests.  (Entered from another region, it is a ``break`` that runs a ``finally`` copy
    first, whose target code happens to return.)"""
    node = block
    for _ in range(32):
        if len(node.preds) != 1 and not (node is block and body and all(
                p in body and p.handler == node.handler for p in node.preds)):
            return False
        op = node.last.op
        if op in TERMINAL:
            return True
        nxt = node.jump if op == "JUMP" else (node.fallthrough if node.last.target is None else None)
        if nxt is None:
            return False
        node = nxt
    return False


def _break_jump(block: Block, body: FrozenSet[Block]) -> bool:
    """``block`` is only a jump out of the loop: a ``break`` to the code after it, even when
    that code only returns (a ``return`` written in the body is compiled where it is, not
    jumped to).  Read as the body's own code, the code after the loop moves into it -- and
    out of an enclosing ``try`` whose ``finally`` then runs at every ``break``."""
    return len(block.instrs) == 1 and block.last.op == "JUMP" and block.jump is not None \
        and block.jump not in body and block.jump is not block


def _raw_chain(handler: Any) -> List[int]:
    """Handler targets from ``handler`` outwards (transparent ones included)."""
    out: List[int] = []
    while handler is not None and handler.target not in out:
        out.append(handler.target)
        handler = handler.outer
    return out


def _jumped_to(block: Block, body: FrozenSet[Block]) -> bool:
    """An ``except`` clause in the body jumps to ``block`` (outside it) as it ends (``POP_EXCEPT;
    JUMP``): a ``break``, which a ``return`` written in the clause never is.  (3.11 ends a ``try``
    body with a jump over its clauses to the code after the statement, which may return.)"""
    return any(p in body and p.last.op == "JUMP" and p.jump is block
               and any(i.op == "POP_EXCEPT" for i in p.instrs) for p in block.preds)


def _leaving_blocks(block: Block, body: FrozenSet[Block], limit: int = 64,
                    handler: Any = None, same_handler: bool = False,
                    handler_blocks: Optional[Dict[int, Block]] = None) -> Optional[Set[Block]]:
    """The blocks reached from ``block`` when every path from it returns or raises without
    coming back to ``body`` (``None`` otherwise, or when there are more than ``limit + 1``).

    With ``same_handler``, every block must be in the exception context ``handler`` (the
    body's), or in a ``try`` nested in it whose handler code (found in ``handler_blocks``)
    leaves too."""
    outer = _raw_chain(handler) if same_handler else []
    seen: Set[Block] = set()
    work = [block]
    while work:
        b = work.pop()
        if b in seen:
            continue
        if b in body or len(seen) > limit:
            return None
        if same_handler and b.handler != handler:
            chain = _raw_chain(b.handler)
            if handler_blocks is None or chain[len(chain) - len(outer):] != outer:
                return None
            for target in chain[:len(chain) - len(outer)]:
                h = handler_blocks.get(target)
                if h is None:
                    return None
                work.append(h)
        seen.add(b)
        if not b.succs and b.last.op not in _ENDS:
            return None
        work.extend(b.succs)
    return seen


def _lone_jump(block: Block) -> bool:
    """``block`` is one ``JUMP`` and nothing else."""
    return len(block.instrs) == 1 and block.last.op == "JUMP" and block.jump is not None \
        and block.jump is not block



def _pops_exception(block: Block, body: FrozenSet[Block]) -> bool:
    """Code from ``block`` that only leaves unwinds an ``except`` clause on the way."""
    region = _leaving_blocks(block, body)
    return bool(region) and any(i.op == "POP_EXCEPT" for b in region for i in b.instrs)

def _only_leaves(block: Block, body: FrozenSet[Block]) -> bool:
    """Every path from ``block`` returns or raises without coming back to ``body``."""
    return _leaving_blocks(block, body) is not None


def _leaving_region(block: Block, body: FrozenSet[Block], header: Block,
                    handler_blocks: Optional[Dict[int, Block]] = None) -> bool:
    """Body code that branches but never comes back: every path from ``block`` returns or
    raises, and each of its blocks is entered only from ``body`` or from the region itself.

    ``if x: (if y: return 1 else: return 2)`` in a loop: the natural loop leaves the inner
    test out (no path from it reaches the back edge), yet it is the body's code, run with
    the loop's iterators still on the stack, and written inline like a lone ``return``.
    The region stays in the exception context of the body where it starts, or in ``try``
    statements inside it whose handlers leave too (a handler could lead back into the loop,
    an edge ``succs`` does not list), and holds no block the loop ``header`` leaves to: that
    is the code after the loop (which ``while c: ... if x: ...; break`` may reach only from
    the body and the header).
    """
    if not block.preds:
        return False
    region = _leaving_blocks(block, body, 63, block.preds[0].handler, same_handler=True,
                             handler_blocks=handler_blocks)
    if region is None:
        return False
    return all((p in body and p is not header) or p in region for b in region for p in b.preds)


def _reaches(start: Block, target: Block, body: FrozenSet[Block]) -> bool:
    """Whether a path from ``start`` that stays out of ``body`` reaches ``target`` (looking at
    64 blocks at most)."""
    seen: Set[Block] = set()
    work = [start]
    while work and len(seen) < 64:
        b = work.pop()
        if b is target:
            return True
        if b in seen or b in body:
            continue
        seen.add(b)
        work.extend(b.succs)
    return False


def _same_exit(a: Block, b: Block) -> bool:
    """Two copies of one ``return``/``raise`` tail: 3.11+ copies a short tail to each of the
    loop's exits (after the guard and after the latch), so either copy is the loop's follow.
    The compiler copies tails of up to 4 instructions; counted as it counts them (3.11+
    ``LOAD_GLOBAL`` pushing a NULL is one instruction, two here: ``return g(x)`` is copied)."""
    if len(a.instrs) != len(b.instrs) or len({i.offset for i in a.instrs}) > 4 or a.succs or b.succs:
        return False
    if a.last.op not in TERMINAL or a.handler != b.handler:
        return False
    return all(x.op == y.op and type(x.arg) is type(y.arg) and x.arg == y.arg
               for x, y in zip(a.instrs, b.instrs))


def _jumps_to_same(a: Block, b: Block) -> bool:
    """Blocks that lead to one place by jumps alone (3.12+: the guard's and the latch's exits to
    an enclosing loop's next iteration; 3.11: the latch's exit jumping to the guard's)."""
    return past_lone_jumps(a) is past_lone_jumps(b)


def strip_trailing_continue(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """A ``continue`` that ends a loop body (or both arms of its last ``if``) says nothing."""
    if not stmts:
        return stmts
    last = stmts[-1]
    if isinstance(last, ast.Continue):
        return strip_trailing_continue(stmts[:-1])
    if isinstance(last, ast.If):
        last.body = strip_trailing_continue(last.body) or [ast.Pass()]
        if last.orelse:
            last.orelse = strip_trailing_continue(last.orelse)
    elif isinstance(last, (ast.With, ast.AsyncWith)):
        last.body = strip_trailing_continue(last.body) or [ast.Pass()]
    elif isinstance(last, ast.Try):
        # (never from ``finally``: a ``continue`` there swallows the exception)
        if not last.orelse:
            last.body = strip_trailing_continue(last.body) or [ast.Pass()]
        else:
            last.orelse = strip_trailing_continue(last.orelse) or [ast.Pass()]
        for h in last.handlers:
            h.body = strip_trailing_continue(h.body) or [ast.Pass()]
    elif type(last).__name__ == "Match":
        for case in last.cases:  # type: ignore[attr-defined]
            case.body = strip_trailing_continue(case.body) or [ast.Pass()]
    return stmts


class LoopBuilder:
    """Mixin over Structurer: builds loop statements."""

    def _exits(self, body: FrozenSet[Block], header: Optional[Block] = None) -> Set[Block]:
        """Blocks the loop body jumps out to, except paths that only return or raise (those
        are written inline in the body, which is what ``return`` inside a loop means).

        Handler code is part of the loop when it goes back to it (``continue`` in an
        ``except`` clause); what such code reaches only to return or re-raise is no exit."""
        exits = {s for b in body for s in b.succs
                 if s not in body and (not _terminal_path(s, body) or _break_jump(s, body)
                                       or _jumped_to(s, body) or self._unwinding_jump(s, body))}
        if header is None or not exits:
            return exits
        normal: Set[Block] = set()
        work = [header]
        while work:
            b = work.pop()
            if b in normal or b not in body:
                continue
            normal.add(b)
            work.extend(b.succs)
            if b.handler is not None and b.handler.target in self.cfg.block_at:
                work.append(self.cfg.block_at[b.handler.target])  # (the clauses in the body)
        # (code the loop shares with what comes before it is no body code: ``break`` to it)
        kept = {s for s in exits if any(p in normal or p not in body for p in s.preds)
                or not _only_leaves(s, body)}
        if header.last.op == "FOR_ITER":
            kept = {s for s in kept if not self._returns_with_iterator(s, header, body)}
        # Body code that only returns or raises (see _leaving_region) is no exit -- unless it is
        # all a ``while`` leaves by: then it is the code after the loop, reached by ``break``.
        leaving = {s for s in kept if not _break_jump(s, body)
                   and _leaving_region(s, body, header, self.cfg.block_at)}
        if leaving and (header.last.op == "FOR_ITER" or kept - leaving
                        or any(self._deeper_than(s, header) for s in leaving)):
            # (a path that starts with more on the stack than the loop's head, a ``for``
            # iterator of the body's, is no ``break``: ``return`` from a nested ``for``)
            kept -= leaving
        elif leaving:
            # ... but not when it is entered only from inside a loop nested in the body: a
            # ``break`` there leaves that loop, not this one (``while True: for x in xs: if x:
            # <while loop>; return``: the return is the for body's).
            inner: Set[Block] = set()
            for h in body:
                if h is not header and self.cfg.is_loop_header(h):
                    inner |= self.cfg.loop_body(h)
            kept -= {s for s in leaving if all(p in inner for p in s.preds if p in body)}
        return kept

    def _returns_with_iterator(self, block: Block, header: Block, body: FrozenSet[Block]) -> bool:
        """Every path from ``block`` returns or raises with the ``for`` iterator still on the
        stack (no instruction on the way starts less deep than the loop's head): a ``return``
        in the body that two arms share (``if a: pass`` / ``elif b: continue`` then ``return
        k``; 3.8-3.11 and 3.15 jump to it).  A ``break`` pops the iterator before it goes on,
        so the code after the loop, even code that only returns, starts less deep."""
        depths = self._entry_depths()  # type: ignore[attr-defined]
        there = depths.get(header.instrs[0].offset)
        region = _leaving_blocks(block, body)
        if there is None or not region:
            return False
        for b in region:
            for ins in b.instrs:
                here = depths.get(ins.offset)
                if here is None or here < there:
                    return False  # (the iterator popped here: a ``break`` and code after it)
        return True

    def _deeper_than(self, block: Block, header: Block) -> bool:
        depths = self._entry_depths()  # type: ignore[attr-defined]
        here, there = depths.get(block.instrs[0].offset), depths.get(header.instrs[0].offset)
        return here is not None and there is not None and here > there

    def _unwinding_jump(self, block: Block, body: FrozenSet[Block]) -> bool:
        """``block`` leaves a ``with``/``finally`` of the body (its ``__exit__`` call or the
        ``finally`` copy, outside the region) and then jumps out of the loop: a ``break``, even
        when the code after the loop only returns (a ``return`` in the statement is compiled
        inline after the unwinding, not jumped to).  Read as the body's own ``return``, the code
        after the loop lands after the ``with``, which a suppressing ``__exit__`` reaches too."""
        if block.last.op != "JUMP" or block.jump is None or block.jump in body \
                or block.jump is block or not block.preds or any(p not in body for p in block.preds):
            return False
        if any(i.op == "POP_EXCEPT" for i in block.instrs):
            return False  # (an except clause's end: _jumped_to's business)
        chain = tuple(self.handler_chain(block))  # type: ignore[attr-defined]
        for p in block.preds:
            left = tuple(self.handler_chain(p))  # type: ignore[attr-defined]
            if len(left) <= len(chain) or left[len(left) - len(chain):] != chain:
                return False
        return True

    def _leave_target(self, exit_block: Block, body: FrozenSet[Block],
                      normal: Optional[Block] = None) -> Optional[Block]:
        """Where a ``break`` whose code is its own exit block really goes.

        ≤3.10 unwinds at the ``break`` itself: the ``finally`` copy, the ``__exit__`` call or the
        ``POP_EXCEPT`` (with the end of the clause), the iterator's ``POP_TOP``, then a jump to
        the code after the loop.  That unwinding path is the loop's exit block but not its
        follow: the follow is the jump's target.  The statements before a ``break`` share its
        block too (``if x: y = x; break``), so that block is an exit as well.  ``None`` when
        ``exit_block`` is no such path.
        """
        if any(p not in body for p in exit_block.preds):
            return None
        chain = self.handler_chain(exit_block)  # type: ignore[attr-defined]
        unwinds = any(self.handler_chain(p) != chain for p in exit_block.preds)  # type: ignore[attr-defined]
        node: Optional[Block] = exit_block
        for _ in range(64):
            if node is normal and node is not exit_block:
                # Code only this exit runs, which then joins the loop's normal exit: the
                # normal exit is the follow (it cannot be an ``else``, which a break skips).
                return normal
            if node is None or node in body or not self.cfg.dominates(exit_block, node):
                return None
            if any(i.op == "POP_EXCEPT" for i in node.instrs) or self.handler_chain(node) != chain:  # type: ignore[attr-defined]
                # (3.9+: the ``break`` runs its own statements in the ``try`` body, then the
                # ``finally`` copy outside it)
                unwinds = True
            if node.last.op == "JUMP" and node.jump is not None and node.jump not in body:
                target = node.jump
                if not unwinds or target is exit_block:
                    return None
                return target
            node = self.cfg.ipdom.get(node)
        return None

    def _depth_above_iterator(self, block: Block) -> int:
        """How many values ``block`` starts with above the iterator of the ``for`` loop being
        built (0 when unknown)."""
        header = getattr(self, "_for_header", None)
        if header is None:
            return 0
        here, there = self.block_depth(block), self.block_depth(header)  # type: ignore[attr-defined]
        if here is None or there is None or here <= there:
            return 0
        return here - there

    def _iterator_pop(self, block: Block, stack: List[Any]) -> Optional[int]:
        """Index just past the instruction of ``block`` that pops a ``for`` loop's iterator.

        Found by running the block on a copy of the loop's stack (``stack``, iterator on top):
        the first instruction that takes the stack below the loop's depth must leave exactly
        the values under the iterator.  ``None`` when the block jumps, ends or fails first.
        """
        saved = self.save_state()  # type: ignore[attr-defined]
        trial = list(stack)
        # Values the block starts with above the iterator (3.11 pops a ``match`` subject's copy
        # before the iterator on a ``break`` from a case): stand-ins, popped like any value.
        extra = self._depth_above_iterator(block)
        trial.extend(ast.Constant(None) for _ in range(extra))
        try:
            for k, ins in enumerate(block.instrs):
                if ins.target is not None or ins.op in _ENDS:
                    return None
                self.step(ins, trial, [])  # type: ignore[attr-defined]
                if len(trial) < len(stack):
                    same = len(trial) == len(stack) - 1 and all(a is b for a, b in zip(trial, stack))
                    return k + 1 if same else None
        except (StructureError, IndexError):
            return None
        finally:
            self.restore_state(saved)  # type: ignore[attr-defined]
        return None

    def _popping_break_target(self, exit_block: Block, body: FrozenSet[Block],
                              stack: List[Any]) -> Optional[Block]:
        """Where a ``for`` loop's ``break`` path goes when it holds statements of the body.

        The ``break`` at the end of ``if c: x = 1; break`` shares its block with ``x = 1``:
        ``x = 1; POP_TOP (the iterator); JUMP follow`` (≤3.9, 3.11).  That block is an exit of
        the natural loop, but the follow is its jump target, and ``x = 1`` belongs in the
        body.  ``None`` when the block is no such path.

        The body may reach that block through a jump of its own (``if (a() if c else b()):
        break``: the first arm's test falls into a ``JUMP`` to the break's block, which the
        natural loop leaves out): that jump is the same ``break``.
        """
        if _lone_jump(exit_block) and exit_block.jump not in body \
                and all(p in body for p in exit_block.preds):
            exit_block = exit_block.jump  # type: ignore[assignment]
        if any(p not in body and not (_lone_jump(p) and all(q in body for q in p.preds))
               for p in exit_block.preds) or exit_block.last.op != "JUMP":
            return None
        target = exit_block.jump
        if target is None or target in body or target is exit_block:
            return None
        if self._iterator_pop(exit_block, stack) != len(exit_block.instrs) - 1:
            return None
        return target

    def _popping_fall_target(self, exit_block: Block, body: FrozenSet[Block],
                             stack: List[Any]) -> Optional[Block]:
        """Where a ``for`` loop's ``break`` goes when its block is the iterator's ``POP_TOP``
        alone, falling into code only it reaches: that code (3.12+, the exception table cuts
        the block there).  The loop ends an ``except`` clause and has an ``else`` clause that
        leaves: the break's path is the only one to the clause's end (``POP_EXCEPT; JUMP``),
        which is the code after the loop, not an unwinding of a clause inside it (that runs
        before the pop): linecache.updatecache 3.13.  ``None`` when the block is no such
        path."""
        target = exit_block.fallthrough
        if exit_block.jump is not None or target is None or target in body \
                or any(p not in body for p in exit_block.preds) \
                or any(p is not exit_block for p in target.preds):
            return None
        if self._iterator_pop(exit_block, stack) != len(exit_block.instrs):
            return None
        return target

    def _break_copies(self, body: FrozenSet[Block], normal: Optional[Block],
                      stack: List[Any]) -> Dict[Block, int]:
        """``break`` paths of a ``for`` loop that pop the iterator and then run a copy of the
        code after the loop: {block: index just past the iterator's ``POP_TOP``}.

        3.12+ copies a short ending into every path that reaches it: in an ``except`` clause
        ``if c: x = m; break`` becomes ``x = m; POP_TOP; POP_EXCEPT; JUMP after`` next to the
        normal exit's ``POP_EXCEPT; JUMP after`` (3.13), or ``...; POP_TOP; LOAD_FAST x;
        RETURN_VALUE`` next to the exit's ``LOAD_FAST x; RETURN_VALUE``.  Such a copy is where
        ``break`` goes, so the loop's follow is the normal exit; the copy must match it
        instruction for instruction (arguments and exception handlers too).
        """
        cuts: Dict[Block, int] = {}
        if normal is None:
            return cuts
        wanted = tail_code(normal, 0)
        if wanted is None:
            return cuts
        chain = self.handler_chain  # type: ignore[attr-defined]
        for b in {s for x in body for s in x.succs if s not in body and s is not normal}:
            k = self._iterator_pop(b, stack)
            # (a path leaving a try/with inside the body unwinds it first: not a plain break;
            # but a ``finally`` copy before the pop is the try's own ``break`` path, and one
            # that pops the iterator first thing ran no unwinding code: it leaves the body of a
            # ``try/except``, whose clauses it skips -- 3.13, in a loop ending an ``except``
            # clause, case ``break_from_try_in_loop_ending_except_clause``)
            if k is None or any(p not in body or (chain(p) != chain(b) and k != 1
                                                  and not self._leaves_finallys(p, b))
                                for p in b.preds):
                continue
            if tail_code(b, k) == wanted:
                cuts[b] = k
        return cuts

    def _leaves_finallys(self, pred: Block, block: Block) -> bool:
        """``block`` is outside ``try`` statements that ``pred`` is in (not ``with``s), and in
        the same ones otherwise (a ``break`` out of them runs their ``finally`` copies)."""
        inner, outer = self.handler_chain(pred), self.handler_chain(block)  # type: ignore[attr-defined]
        n = len(inner) - len(outer)
        return n > 0 and tuple(inner[n:]) == tuple(outer) and all(
            self.handler_kind(h) == "try" for h in inner[:n])  # type: ignore[attr-defined]

    def _body_code_exits(self, exits: Set[Block], body: FrozenSet[Block], normal: Optional[Block],
                         stack: List[Any]) -> Tuple[Set[Block], Set[Block]]:
        """Exits of a ``for`` loop's natural body that are body code: (those exits, where their
        ``break`` paths jump).

        ``if m is not None: if a and b: raise E; break`` never goes back to the header, so the
        natural loop leaves those tests out; but every way through them raises, returns or
        pops the iterator and jumps out (a ``break``), and they are entered only from the body.
        """
        absorbed: Set[Block] = set()
        targets: Set[Block] = set()
        for e in exits:
            if e is normal:
                continue
            region: Set[Block] = set()
            jumps: Set[Block] = set()
            work = [e]
            ok = True
            while work and ok:
                b = work.pop()
                if b in region:
                    continue
                if b in body or b is normal or len(region) >= 64:
                    ok = False
                    break
                region.add(b)
                if not b.succs and b.last.op in _ENDS:
                    continue
                if b.last.op == "JUMP" and b.jump is not None and b.jump not in body \
                        and self._iterator_pop(b, stack) == len(b.instrs) - 1:
                    jumps.add(b.jump)
                    continue
                work.extend(b.succs)
            if ok and jumps and all(p in body or p in region for b in region for p in b.preds):
                absorbed.add(e)
                targets |= jumps
        return absorbed, targets

    def _follow(self, exits: Set[Block], normal: Optional[Block], ctx: Ctx,
                body: FrozenSet[Block] = frozenset(),
                for_stack: Optional[List[Any]] = None,
                statement_breaks: bool = False, inline_leaving: bool = False) -> Optional[Block]:
        breaks = exits - {normal} if normal is not None else set(exits)
        if body:
            resolved = set()
            for b in breaks:
                # (3.12+: a ``break`` that is only a jump to the loop's normal exit)
                target = self._popping_fall_target(b, body, for_stack) \
                    if for_stack is not None else None
                if target is None:
                    target = normal if normal is not None and past_lone_jumps(b) is normal \
                        else self._leave_target(b, body, normal)
                if target is None and for_stack is not None:
                    target = self._popping_break_target(b, body, for_stack)
                if target is None and statement_breaks:
                    target = self._statement_break_target(b, body, normal)
                resolved.add(b if target is None else target)
            breaks = resolved - {normal} if normal is not None else resolved
        if not breaks:
            return normal
        if len(breaks) == 1:
            only = next(iter(breaks))
            if inline_leaving and body and normal is not None and only.last.op in POP_JUMPS \
                    and _only_leaves(only, body) and not _reaches(normal, only, body):
                # No ``break``: a test in the body (``elif c: return x`` beside ``else: raise
                # E``) whose every way returns or raises -- out of a ``try/finally`` around the
                # loop, so the natural loop's exits list it; it is written inline.
                return normal
            return only
        # Jumps threaded past the loop: prefer the one every other exit leads to.
        for b in breaks:
            if all(self.cfg.common_pdom(o, b) is b for o in breaks):
                return b
        # Breaks whose own code branches (``elif c: x = 1; break``): each exit's code, the
        # blocks only it reaches, ends where they all go on.
        own = {b: self._own_code_end(b, body) for b in breaks}
        # (a break already resolved to the block where another's own code goes on is there)
        meets = {e for e in own.values() if e is not None}
        joins = {e if e is not None else (b if b in meets else None) for b, e in own.items()}
        if len(joins) == 1 and None not in joins and not joins & self.active_loops:
            return next(iter(joins))
        # ... or where the others' code goes on is itself a break target (``if a: if c:
        # return; break`` beside a plain ``break``).
        meet = {e for e in meets if e in breaks}
        if len(meet) == 1 and not meet & self.active_loops:
            join = next(iter(meet))
            if all(b is join or e is join for b, e in own.items()):
                return join
        # 3.10 copies a short ending (a with's exit and the ``return`` after it) into each
        # ``break``: the copies are one follow, each read as ``break`` (see ``loop_jump``).
        ends = {past_lone_jumps(b) for b in breaks}
        first = min(ends, key=lambda b: b.start)
        if all(not e.succs and same_code(e, first) for e in ends):
            self.brk_copies[first] = frozenset(ends)
            return first
        # A ``return`` in a ``try/finally`` (or ``with``) around the loop leaves through the
        # ``finally`` copy (≤3.8: CALL_FINALLY) outside the body's handler, so _exits keeps it
        # as an exit; such paths only leave the function and are written inline in the body.
        if body:
            staying = {b for b in breaks if not _only_leaves(b, body)}
            if len(staying) < len(breaks):
                if not staying:
                    return normal
                if len(staying) == 1 and normal is None:
                    return next(iter(staying))
        # 3.10+ copy a lone ``return None`` after the loop into each ``break`` that also
        # follows code of its own (``if c: pass`` then ``break``): each break's own code ends
        # only in copies of the loop's normal exit.
        copies: Set[Block] = set()
        for b in breaks:
            own_ends = self._own_terminal_ends(b, body)
            if not own_ends:
                break
            copies |= own_ends
        else:
            # (a copy may follow the break's last statement in its block: ``line = x`` then
            # the ``return line`` copy; it is cut there, see ``run_block``)
            whole = sorted((e for e in copies if normal is None or same_code(
                e, past_lone_jumps(normal))), key=lambda b: (len(b.instrs), b.start))
            want = tail_code(whole[0]) if whole and not whole[0].succs else None
            cut_at: Dict[Block, int] = {}
            for e in copies:
                if want is None or same_code(e, whole[0]):
                    continue
                k = next((k for k in range(1, len(e.instrs)) if tail_code(e, k) == want), None)
                if k is None:
                    want = None
                    break
                cut_at[e] = k
            if want is not None:
                first = whole[0]
                self.brk_copies[first] = frozenset(e for e in copies if e not in cut_at)
                for e, k in cut_at.items():
                    self.break_cuts[e] = (k, first)
                return first
        raise StructureError("loop with several break targets")

    def _statement_break_target(self, exit_block: Block, body: FrozenSet[Block],
                                normal: Optional[Block]) -> Optional[Block]:
        """Where a ``while`` loop's ``break`` goes when its block holds statements before it.

        ``if i == 3: log.append(i); break`` is one block, ``...; JUMP after``, entered only from
        the body: read as the loop's exit, the statements were written after the loop, and the
        code both exits share was written twice (once in an ``else`` clause).  The jump's target
        is the follow when the normal exit gets there too (or there is none: ``while True``).
        """
        if any(p not in body for p in exit_block.preds):
            return None
        if exit_block.last.op == "JUMP":
            target = exit_block.jump
        elif exit_block.last.op in _VALUE_JUMPS:
            # The statements' own expressions branch (``x = g(a or b); break``): their blocks,
            # the ones only this exit reaches, end in the jump.
            target = self._own_code_end(exit_block, body)
        else:
            return None
        if target is None or target in body or target is exit_block:
            return None
        chain = self.handler_chain(exit_block)  # type: ignore[attr-defined]
        if any(self.handler_chain(p) != chain for p in exit_block.preds):  # type: ignore[attr-defined]
            return None  # (leaving a try/with: _leave_target's business)
        if normal is not None and normal is not target and not _reaches(normal, target, body):
            return None
        return target

    def _own_code_end(self, exit_block: Block, body: FrozenSet[Block]) -> Optional[Block]:
        """The one block that the code only ``exit_block`` reaches (the blocks it dominates)
        goes on to, paths that return or raise aside; ``None`` if there is not exactly one."""
        ends: Set[Block] = set()
        seen: Set[Block] = set()
        work = [exit_block]
        while work:
            b = work.pop()
            if b in seen:
                continue
            if b in body:
                return None  # back into the loop: not a break
            if b is not exit_block and not self.cfg.dominates(exit_block, b):
                ends.add(b)
                continue
            seen.add(b)
            if len(seen) > 64:
                return None
            work.extend(b.succs)
        return next(iter(ends)) if len(ends) == 1 else None

    def _own_terminal_ends(self, exit_block: Block, body: FrozenSet[Block]) -> Set[Block]:
        """The blocks without successors that end every path of the code only ``exit_block``
        reaches; empty if some path goes on elsewhere (back into the loop, or to shared code)."""
        ends: Set[Block] = set()
        seen: Set[Block] = set()
        work = [exit_block]
        while work:
            b = work.pop()
            if b in seen:
                continue
            if b in body or (b is not exit_block and not self.cfg.dominates(exit_block, b)):
                return set()
            seen.add(b)
            if len(seen) > 64:
                return set()
            if not b.succs:
                if b.last.op not in ("RETURN_VALUE", "RETURN_CONST"):
                    return set()
                ends.add(b)
            work.extend(b.succs)
        return ends

    def latch_test(self, header: Block, body: FrozenSet[Block]) -> Optional[Tuple[Block, Block]]:
        """3.10+ rotated ``while``: (latch block, normal exit) when the latch tests the condition."""
        latches = [p for p in header.preds if p in body]
        # Each test that loops back is a latch (``while a or b``: two); the last one in the code
        # is where the re-test ends.  3.12+ has no backward conditional jump: such a test falls
        # into a ``JUMP`` of its own.
        tests: List[Tuple[Block, Block]] = []
        for j in latches:
            if len(j.instrs) == 1 and j.last.op == "JUMP" and len(j.preds) == 1 \
                    and j.preds[0] in body and j.preds[0].last.op in POP_JUMPS:
                tests.append((j.preds[0], j))
            elif j.last.op in POP_JUMPS:
                tests.append((j, header))
            else:
                return None
        if not tests or (len(tests) > 1 and len({t for t, _ in tests}) != len(tests)):
            return None
        latch, back = max(tests, key=lambda pair: pair[0].start)
        if latch.last.op not in POP_JUMPS or latch is header:
            return None
        other = latch.fallthrough if latch.jump is back else latch.jump if latch.fallthrough is back else None
        if other is None or other in body:
            return None
        return latch, other

    def once_for_body(self, header: Block) -> Optional[FrozenSet[Block]]:
        """The body of a ``for`` that never loops (every path through it breaks, returns or
        raises, so there is no back edge): the blocks the header dominates that still hold its
        iterator.  ``None`` if the stack depths are unknown there."""
        if header.last.op != "FOR_ITER" or len(header.instrs) != 1 or header.fallthrough is None:
            return None
        depths = getattr(self, "_depths", None)
        if depths is None:
            depths = self._depths = entry_depths(self.code)  # type: ignore[attr-defined]
        level = depths.get(header.instrs[0].offset)
        if level is None:
            return None
        body = {header}
        work = [header.fallthrough]
        while work:
            b = work.pop()
            if b in body or not self.cfg.dominates(header, b):
                continue
            depth = depths.get(b.instrs[0].offset)
            if depth is None:
                return None
            if depth < level:
                continue  # the iterator is gone: past a ``break``
            body.add(b)
            work.extend(b.succs)
            if b.handler is not None and b.handler.target in self.cfg.block_at:
                work.append(self.cfg.block_at[b.handler.target])
        return frozenset(body)

    def with_clauses(self, body: FrozenSet[Block]) -> FrozenSet[Block]:
        """``body`` with the code of the exception handlers of ``try``/``with`` statements in
        it, up to the end of each clause (its ``POP_EXCEPT``, or where it re-raises).

        The natural loop is found over normal flow and the edges into handlers; a clause that
        leaves the loop (``except E: break``) never comes back, so it is no part of it, and
        neither is its way out: the loop would have no ``break``, and the code after the loop
        would be read as the clause's own.  A handler is the loop's when some block of the
        body lies outside its region (the statement is inside the loop)."""
        chain = self.handler_chain  # type: ignore[attr-defined]
        levels: Set[int] = set()
        for b in body:
            levels.update(chain(b))
        inner = [lv for lv in levels if any(lv not in chain(b) for b in body)]
        if not inner:
            return body
        # Handlers in force around every block of the loop (cleanups included) enclose it:
        # their code is no part of it.
        enclosing: Optional[Set[int]] = None
        for b in body:
            raw = set()
            h = b.handler
            while h is not None and h.target not in raw:
                raw.add(h.target)
                h = h.outer
            enclosing = raw if enclosing is None else enclosing & raw
        outside = enclosing or set()
        extra: Set[Block] = set()
        seen: Set[Block] = set()
        work = [self.cfg.block_at[lv] for lv in inner if lv in self.cfg.block_at]
        while work:
            b = work.pop()
            if b in seen:
                continue
            if len(seen) > 400:
                return body
            seen.add(b)
            if b not in body:
                extra.add(b)
            h = b.handler
            if h is not None and h.target in self.cfg.block_at and h.target not in outside:
                work.append(self.cfg.block_at[h.target])  # (a try nested in the clause)
            if any(i.op == "POP_EXCEPT" for i in b.instrs):
                continue  # the clause ends here: what follows is after the statement
            work.extend(b.succs)
        return body | extra

    def build_loop(self, header: Block, stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
                   out: List[ast.stmt]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        body = frozenset(self.cfg.loop_body(header))
        if not body:
            body = self.once_for_body(header) or frozenset()
            if not body:
                raise StructureError("FOR_ITER outside a loop header")
        if self._rotated_guard(header, body, stack):
            # (the test of a 3.10+ ``while c:`` that ``continue`` jumps back to: the loop is the
            # one after it, see build_guarded_while; when that reading fails, the test is read
            # as a loop of its own)
            self.guard_tries.add(header)
            saved, written = self.save_state(), len(out)  # type: ignore[attr-defined]
            try:
                built = self.run_block(header, list(stack), ctx, stop, out)  # type: ignore[attr-defined]
                return (None, None) if built is None else built
            except _GuardNotLoop:
                self.restore_state(saved)  # type: ignore[attr-defined]
                del out[written:]
                self.guard_failed.add(header)
            finally:
                self.guard_tries.discard(header)
        return self._build_loop(header, body, stack, ctx, stop, out)

    def _build_loop(self, header: Block, body: FrozenSet[Block], stack: List[Any], ctx: Ctx,
                    stop: FrozenSet[Block], out: List[ast.stmt]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        body = self.with_clauses(body)
        exits = self._exits(body, header)
        if header.last.op == "FOR_ITER" and len(header.instrs) == 1:
            return self._build_for(header, body, exits, stack, ctx, stop, out)
        return self._build_while(header, body, exits, stack, ctx, stop, out, None)

    @staticmethod
    def _loop_body(walked: Tuple[List[ast.stmt], Optional[List[Any]], Optional[Block]]) -> List[ast.stmt]:
        """The statements of a loop body's walk, which must end every path by going round,
        leaving (``break``, ``return``, ``raise``) or stopping nowhere: a walk that stops at
        the enclosing region's end ran out of the ``try`` the loop is in by another way than a
        ``break``, and the loop statement would go round where the code goes on."""
        stmts, stack, end = walked
        if stack is not None:
            raise StructureError("loop body runs on out of its region")
        return stmts

    def _rotated_guard(self, header: Block, body: FrozenSet[Block], stack: List[Any]) -> bool:
        """``header`` is the test before a 3.10+ ``while c:`` loop (the loop re-tests ``c`` at its
        end) and heads a loop only because ``continue`` in it jumps back there: the test's
        way into the loop is a loop header whose latch tests, and every jump back to
        ``header`` comes from code only that loop reaches.  (In ``while True: while c: ...``
        the outer loop's jump back comes from after the inner loop.)  The test must be only
        a condition: a ``continue`` to it would skip statements before it."""
        if header.last.op not in POP_JUMPS or header in self.guard_tries or header in self.guard_failed:
            return False
        saved = self.save_state()  # type: ignore[attr-defined]
        trial, sink = list(stack), []  # type: ignore[var-annotated]
        try:
            for ins in header.instrs[:-1]:
                self.step(ins, trial, sink)  # type: ignore[attr-defined]
            _, t, f, _, chain = self._fold_condition(header, trial)  # type: ignore[attr-defined]
        except (StructureError, IndexError):
            return False
        finally:
            self.restore_state(saved)  # type: ignore[attr-defined]
        if sink:
            return False
        guard, succs = set(chain), [t, f]
        latches = [p for p in header.preds if p in body and self.cfg.dominates(header, p)]
        for succ in succs:
            inner = past_lone_jumps(succ)
            if inner is header or inner in self.active_loops or not self.cfg.is_loop_header(inner) \
                    or not self.cfg.dominates(header, inner):
                continue
            inner_body = frozenset(self.cfg.loop_body(inner))
            lt = self.latch_test(inner, inner_body)
            if lt is None:
                continue
            # What goes back to ``header`` from outside the inner loop (and the clauses of the
            # ``try`` statements in it) must be ``continue`` paths: code that only goes on to
            # ``header``, entered by a test (or from a clause), not by a jump out of the inner
            # loop -- that is a ``break``, and what follows it is an enclosing loop's code
            # (``while True: ...; while c: ...; <code> `` jumping back to the test).
            clauses = self.with_clauses(inner_body)
            extra = frozenset(self.cfg.loop_body(header)) - clauses - guard
            # (When the inner loop's normal exit does not go back to ``header``, no code after
            # the inner loop does: ``extra`` is then the code of ``continue`` paths, which may
            # hold tests of its own (``if a: if b: x() else: y(); continue``), and a jump into
            # it is an ``if`` arm's way to its ``continue``, not a ``break``.)
            after_inner = past_lone_jumps(lt[1]) in extra or past_lone_jumps(lt[1]) is header
            exit_ = past_lone_jumps(lt[1])
            near = frozenset(self.cfg.loop_body(header)) | clauses
            # (a ``break`` goes to the loop's exit, or past its ``else`` clause: where that
            # clause's own code goes on)
            leave_to = {exit_, self._own_code_end(exit_, near)} - {None}
            if latches and all(self.cfg.dominates(inner, p) for p in latches) and all(
                    (x.last.op not in POP_JUMPS or not after_inner)
                    and all(s is header or s in extra
                            or (not after_inner and (any(_straight_to(s, t) for t in leave_to)
                                or self._own_code_end(s, near) in leave_to))  # (a ``break``,
                                # maybe after an ``if`` of its own)
                            or _terminal_path(s)  # (``if c: return x`` before ``continue``)
                            or bool(self._own_terminal_ends(s, near))  # (``if c: ...; break``
                            for s in x.succs)                          # into a return copy)
                    and not (after_inner and any(p in clauses and p.last.op == "JUMP" and p.jump is x
                                                 for p in x.preds))
                    for x in extra):
                return True
        return False

    def _loop_ctx(self, ctx: Ctx, header: Block, cont: Block, brk: Optional[Block],
                  body: FrozenSet[Block], conts: FrozenSet[Block] = frozenset()) -> Ctx:
        # Paths that leave the natural loop without breaking (``return``/``raise``) stay in the
        # body, so only the enclosing region limits the walk.
        return Ctx(Loop(header, cont, brk, body, conts), ctx.region, ctx.exc)

    def _else_clause(self, normal: Optional[Block], follow: Optional[Block], stack: List[Any],
                     ctx: Ctx, stop: FrozenSet[Block]) -> List[ast.stmt]:
        if normal is None or normal is follow:
            return []
        inner_stop = stop | {follow} if follow is not None else stop
        s, st, end = self.walk(normal, list(stack), ctx, inner_stop)
        if st is not None and end is not follow and end is not None and follow is not None \
                and not end.succs and same_code(end, past_lone_jumps(follow)):
            # 3.10 gives the ``break`` paths their own copy of the code after the loop (a
            # ``with``'s exit and ``return``): the clause ends at the other copy.
            return s
        if st is not None and end is not follow:
            # An enclosing region's boundary that is the enclosing loop's next iteration or
            # exit (``for ...: else: continue`` in an ``except`` clause, ≤3.10): the clause
            # ends with that ``continue``/``break``.
            jump = self.loop_jump(end, ctx) if end is not None else None  # type: ignore[attr-defined]
            if jump is None:
                raise StructureError("loop else-clause does not rejoin the loop's follow")
            s.append(jump)
        return s

    def _build_for(self, header: Block, body: FrozenSet[Block], exits: Set[Block], stack: List[Any],
                   ctx: Ctx, stop: FrozenSet[Block], out: List[ast.stmt]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        it = stack[-1]
        if not isinstance(it, M.Iterator):
            raise StructureError("for loop over a value that is not an iterator")
        normal = header.jump
        saved_header = getattr(self, "_for_header", None)
        self._for_header = header
        try:
            return self._build_for_body(header, body, exits, stack, ctx, stop, out, it, normal)
        finally:
            self._for_header = saved_header

    def _build_for_body(self, header: Block, body: FrozenSet[Block], exits: Set[Block], stack: List[Any],
                        ctx: Ctx, stop: FrozenSet[Block], out: List[ast.stmt], it: Any,
                        normal: Optional[Block]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        inner, inner_targets = self._body_code_exits(exits, body, normal, stack)
        only_inner: Optional[Block] = None
        if inner:
            rest = exits - inner
            if len(inner_targets) == 1 and (not rest or (
                    rest == {normal} and next(iter(inner_targets)) is not normal)):
                # every break is in such code: where they jump is the follow (with an ``else``
                # clause, the normal exit is that clause's code; ``for ... else: continue``
                # then ``break`` in an inner loop is such code too)
                follow = only_inner = next(iter(inner_targets))
            else:
                follow = self._follow(rest, normal, ctx, body, stack)
            if inner_targets <= {follow}:  # (always so for only_inner)
                exits = exits - inner
        if only_inner is not None:
            cuts: Dict[Block, int] = {}
        else:
            cuts = self._break_copies(body, normal, stack)
            follow = self._follow(exits - set(cuts), normal, ctx, body, stack)
            if follow is not normal:
                cuts = {}  # (the copies would be read as the else clause's code, inside the body)
                follow = self._follow(exits, normal, ctx, body, stack)
        else_cut: Optional[Tuple[Block, int]] = None
        if follow is normal and normal is not None and only_inner is None and not cuts:
            past = self._follow_past_else(body, normal)
            if past is not None:
                # (the clause's code and the copied code share a block: cut it there)
                follow = partial_block(past[0], past[1]) if past[1] else past[0]
                else_cut = (past[0], past[1]) if past[1] else None
        if follow is not None and normal is not None and follow is not normal and not cuts \
                and else_cut is None and only_inner is None and follow.last.op in POP_JUMPS \
                and all(p in body for p in follow.preds) and _only_leaves(follow, body) \
                and not _reaches(normal, follow, body) and _pops_exception(follow, body):
            # No ``break``: a test in the body whose every way returns or raises (``if m: if
            # c: g(); return`` in a loop ending an ``except`` clause, 3.12+: the return pops
            # the iterator and the exception, outside the clause's region); read as the
            # loop's follow, the normal exit was an ``else`` clause that never rejoined it
            # (enum:Enum._add_value_alias_).  Written inline when the body can hold it.  (Only
            # where it leaves the clause: elsewhere the code after a ``for``-``else``'s
            # ``break`` may be such a test, and reads as the source was written.)
            saved, written = self.save_state(), len(out)  # type: ignore[attr-defined]
            try:
                return self._for_from(header, body, stack, ctx, stop, out, it, normal, normal, {}, None)
            except StructureError:
                self.restore_state(saved)  # type: ignore[attr-defined]
                del out[written:]
        return self._for_from(header, body, stack, ctx, stop, out, it, normal, follow, cuts, else_cut)

    def _for_from(self, header: Block, body: FrozenSet[Block], stack: List[Any], ctx: Ctx,
                  stop: FrozenSet[Block], out: List[ast.stmt], it: Any, normal: Optional[Block],
                  follow: Optional[Block], cuts: Dict[Block, int],
                  else_cut: Optional[Tuple[Block, int]]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        after_stack = stack[:-1]
        self.active_loops.add(header)
        for b, k in cuts.items():
            self.break_cuts[b] = (k, follow)
        try:
            body_s = self._loop_body(self.walk(header.fallthrough, stack + [M.NextValue(it)],
                                               self._loop_ctx(ctx, header, header, follow, body),
                                               frozenset()))
        finally:
            self.active_loops.discard(header)
            for b in cuts:
                del self.break_cuts[b]
        if not body_s or not isinstance(body_s[0], ast.Assign) \
                or not isinstance(body_s[0].value, M.NextValue) or len(body_s[0].targets) != 1:
            raise StructureError("for loop without a target assignment")
        target = body_s[0].targets[0]
        body_s = strip_trailing_continue(body_s[1:]) or [ast.Pass()]
        # The else clause runs with the iterator gone: its first value sits where the iterator
        # was, above what the loop statement must leave alone (or a store in the clause would
        # not save a value it changes: ``else: a, x = x[:i], x[i:]``).
        saved_floor = self.floor
        self.floor = min(saved_floor, len(after_stack))
        if else_cut is not None:
            self.break_cuts[else_cut[0]] = (else_cut[1], follow)
        try:
            orelse = self._else_clause(normal, follow, after_stack, ctx, stop)
        finally:
            self.floor = saved_floor
            if else_cut is not None:
                del self.break_cuts[else_cut[0]]
        node: ast.stmt
        if it.is_async:
            node = ast.AsyncFor(target, it.value, body_s, orelse)
        else:
            node = ast.For(target, it.value, body_s, orelse)
        comp = self.inline_comprehension(node, after_stack)
        if comp is not None:
            after_stack[-1] = comp
            return after_stack, follow
        self.emit(out, node, after_stack)
        if follow is not None and follow is not normal and (
                follow.instrs[0].op == "POP_TOP" or (follow.preds and all(p in body for p in follow.preds))):
            # 3.12+ may merge the code after the loop into the ``break`` path, which still
            # holds the iterator and pops it first, or after statements of its own (a path
            # entered only from the body has not popped it: only FOR_ITER's exit has).
            return after_stack + [it], follow
        return after_stack, follow

    def _follow_past_else(self, body: FrozenSet[Block], normal: Block) -> Optional[Tuple[Block, int]]:
        """The code after a ``for`` loop's ``else`` clause, when the loop's only ``break``
        paths pop the iterator and then run a copy of it (3.10, 3.12: a ``break`` out of a
        ``with``, after the ``__exit__`` call), so the loop seemed to have no ``break``:
        (block, index) on the straight way on from ``normal`` where that code starts.  ``None``
        when there is no such block.  (With no other ``break``, the ``else`` clause and the
        code after the loop run alike, so the choice is safe if the copy was a ``return``.)"""
        depths = self._entry_depths()  # type: ignore[attr-defined]
        level = depths.get(normal.instrs[0].offset)  # (the iterator popped: the loop's own)
        if level is None:
            return None

        def at_level(b: Block, k: int) -> bool:
            return depths.get(b.instrs[k].offset) == level

        ends: List[List[Any]] = []
        for c in {s for b in body for s in b.succs if s not in body}:
            if c is normal or c.succs or any(p not in body for p in c.preds):
                continue
            for k in range(1, len(c.instrs)):
                # (right after the iterator's pop: back at the loop statement's depth)
                if c.instrs[k - 1].op == "POP_TOP" and at_level(c, k) \
                        and depths.get(c.instrs[k - 1].offset) == level + 1:
                    code = tail_code(c, k)
                    if code and code[0][0] != "POP_TOP":  # (statements start after the pop)
                        ends.append(code)
        if not ends:
            return None
        node: Optional[Block] = normal
        seen: Set[Block] = set()
        while node is not None and node not in seen and node not in body and len(seen) < 8:
            seen.add(node)
            for k in range(0 if node is not normal else 1, len(node.instrs)):
                if at_level(node, k) and tail_code(node, k) in ends:
                    return node, k
            last = node.last
            if last.op == "JUMP":
                node = node.jump
            elif last.target is None and last.op not in _ENDS:
                node = node.fallthrough
            else:
                return None
        return None

    def _build_while(self, header: Block, body: FrozenSet[Block], exits: Set[Block], stack: List[Any],
                     ctx: Ctx, stop: FrozenSet[Block], out: List[ast.stmt],
                     guard: Optional[ast.expr]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        cond: ast.expr = ast.Constant(True)
        normal: Optional[Block] = None
        start = header
        cont = header
        # Header-tested ``while cond:`` (≤3.9 layout): the header only computes the condition.
        # (Not when the test is inside a ``try``/``with`` that the loop body is in: its exit
        # path then runs the ``finally``/``__exit__`` first, so it is a ``break`` in the body.)
        if header.last.op in POP_JUMPS and self.effective_handler(header) == ctx.exc:  # type: ignore[attr-defined]
            trial = list(stack)
            sink: List[ast.stmt] = []
            chain: FrozenSet[Block] = frozenset()
            try:
                for ins in header.instrs[:-1]:
                    self.step(ins, trial, sink)
                # ``while a and b:`` / ``while a or b:`` test in several blocks
                c, t, f, _, chain = self._fold_condition(header, trial)  # type: ignore[attr-defined]
            except (StructureError, IndexError):
                sink = [ast.Pass()]
            if not sink and (t in body) != (f in body):
                cond = c if t in body else negate(c)
                start = t if t in body else f
                normal = f if t in body else t
                # A chained comparison's early tests leave through a block that drops the
                # duplicated operand and jumps on to the same place: not a ``break``.
                exits = self._chain_cleanup_exits(exits, chain, normal)
        return self._try_inline_leaving(exits, normal, ctx, body, out, lambda follow: self._while_from(
            header, body, stack, ctx, stop, out, cond, start, cont, normal, follow))

    def _try_inline_leaving(self, exits: Set[Block], normal: Optional[Block], ctx: Ctx,
                            body: FrozenSet[Block], out: List[ast.stmt],
                            build: Any) -> Tuple[Optional[List[Any]], Optional[Block]]:
        """``build`` the ``while`` loop from its follow, writing a body test that only returns
        or raises inline when the body can hold it (a ``return``'s copy of a ``finally`` that
        branches may not be); else as before: the code after a ``break``, the normal exit an
        ``else`` clause."""
        follow = self._follow(exits, normal, ctx, body, statement_breaks=True, inline_leaving=True)
        if follow is normal and normal is not None:
            other = self._follow(exits, normal, ctx, body, statement_breaks=True)
            if other is not follow:
                saved, written = self.save_state(), len(out)  # type: ignore[attr-defined]
                try:
                    return build(follow)  # type: ignore[no-any-return]
                except StructureError:
                    self.restore_state(saved)  # type: ignore[attr-defined]
                    del out[written:]
                    follow = other
        return build(follow)  # type: ignore[no-any-return]

    def _while_from(self, header: Block, body: FrozenSet[Block], stack: List[Any], ctx: Ctx,
                    stop: FrozenSet[Block], out: List[ast.stmt], cond: ast.expr, start: Block,
                    cont: Block, normal: Optional[Block],
                    follow: Optional[Block]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        if follow is None and normal is None:
            follow = self._clause_copied_follow(header, body)
        self.__dict__.get("_pellucid_pending_follows", {}).pop(header, None)  # (an earlier try's)
        self.active_loops.add(header)
        try:
            loop_ctx = self._loop_ctx(ctx, header, cont, follow, body)
            if start is header:
                body_s = self._loop_body(self.walk(header, list(stack), loop_ctx, frozenset(),
                                                   first=header))
            else:
                body_s = self._loop_body(self.walk(start, list(stack), loop_ctx, frozenset()))
        finally:
            self.active_loops.discard(header)
        pending = self.__dict__.get("_pellucid_pending_follows", {}).pop(header, None)
        if pending is not None and follow is None and normal is None:
            # (a ``break`` out of a ``with`` whose code after the loop 3.10+ copied to after the
            # ``__exit__`` call: that code, read from there, is the loop's follow)
            self.emit(out, ast.While(cond, strip_trailing_continue(body_s) or [ast.Pass()], []), stack)
            return pending
        if pending is not None:
            raise StructureError("a break out of a with whose loop has another follow")
        body_s = strip_trailing_continue(body_s) or [ast.Pass()]
        orelse = self._else_clause(normal, follow, stack, ctx, stop)
        self.emit(out, ast.While(cond, body_s, orelse), stack)
        return (list(stack) if follow is not None else None), follow

    def _clause_copied_follow(self, header: Block, body: FrozenSet[Block]) -> Optional[Block]:
        """The code after a ``while True`` that no jump leaves, when 3.10/3.12 copied it into
        each ``break``, one of them in an ``except`` clause after its POP_EXCEPT
        (``except E: if c: break; return None``, then ``return f(x)`` after the loop:
        _pyio.FileIO.readall).  Read as the clause's ``return f(x)``, ``f`` would run with the
        exception still handled; the copies are one follow, each read as ``break`` (the
        clause's cut after its POP_EXCEPT, see ``run_block``).  ``None`` if there is no such
        copy in a clause."""
        leaving = [s for b in body for s in b.succs if s not in body]
        codes = {}
        for s in leaving:
            code = tail_code(s)
            if code is not None and code[-1][0] == "RETURN_VALUE":
                codes.setdefault(repr(code), []).append(s)
        if not codes:
            return None
        chain = self.handler_chain  # type: ignore[attr-defined]
        block_at = self.cfg.block_at
        handlers = {t for b in body for t in chain(b)[:1]}
        # (the body's blocks normal flow reaches from the head: no clause code)
        normal: Set[Block] = set()
        work = [header]
        while work:
            b = work.pop()
            if b not in normal and b in body:
                normal.add(b)
                work.extend(b.succs)
        cuts: Dict[Block, Tuple[int, str]] = {}
        for h in handlers:
            if not self.protected_set(h) <= body:  # type: ignore[attr-defined]
                continue  # (a try around the loop)
            seen: Set[Block] = set()
            work = [block_at[h]] if h in block_at else []
            while work and len(seen) < 64:
                b = work.pop()
                if b in seen or b in normal:
                    continue
                seen.add(b)
                work.extend(b.succs)
                k = next((k for k, i in enumerate(b.instrs) if i.op == "POP_EXCEPT"), None)
                if k is None or k + 1 >= len(b.instrs) or b.succs:
                    continue
                code = tail_code(b, k + 1)
                if code is not None and repr(code) in codes:
                    cuts[b] = (k + 1, repr(code))
        if not cuts or len({c for _, c in cuts.values()}) != 1:
            return None
        copies = codes[next(iter(cuts.values()))[1]]
        first = min(copies, key=lambda b: b.start)
        self.brk_copies[first] = frozenset(copies)
        for b, (k, _) in cuts.items():
            self.break_cuts[b] = (k, first)
        return first

    def _chain_cleanup_exits(self, exits: Set[Block], chain: FrozenSet[Block], normal: Optional[Block]) -> Set[Block]:
        """``exits`` less the blocks where a chained comparison's early tests leave the loop: they
        drop the duplicated operand and go on to ``normal`` (or to a copy of it), so they are
        the loop's normal exit, not a ``break``."""
        if normal is None:
            return exits
        out = set()
        for e in exits:
            if set(e.preds) <= chain and e is not normal and e.instrs[0].op == "POP_TOP":
                if self._meet(normal, e, self._skip_trampoline, [None], []) is normal:  # type: ignore[attr-defined]
                    continue
            out.add(e)
        return out

    def _latch_test_start(self, latch: Block, header: Block, body: FrozenSet[Block], cond: ast.expr,
                          stack: List[Any], normal: Block) -> Optional[Tuple[Block, FrozenSet[Block]]]:
        """The first block of the latch's re-test of ``cond`` and the blocks of that test (None
        if the latch does not re-test it).  ``while a and b:`` re-tests in two blocks, the last
        of which jumps back; walking back from it, each earlier block that only computes a
        condition may start the test."""
        start: Optional[Block] = latch
        for _ in range(16):
            if start is None or start not in body or start is header:
                return None
            trial = list(stack)
            sink: List[ast.stmt] = []
            try:
                for ins in start.instrs[:-1]:
                    self.step(ins, trial, sink)
                # (3.12+: each test that loops back has a ``JUMP`` of its own; they are one target)
                c, t, f, _, chain = self._fold_condition(start, trial, through_jumps=True)  # type: ignore[attr-defined]
                t, f = past_lone_jumps(t), past_lone_jumps(f)
            except (StructureError, IndexError):  # (IndexError: a test continuing an earlier one)
                c = t = f = None  # type: ignore[assignment]
            out = past_lone_jumps(normal)
            if not sink and c is not None and (t, f) in ((header, out), (out, header)):
                test = c if t is header else negate(c)
                if ast.dump(test) == ast.dump(cond):
                    return start, chain
            preds = _past_cleanup_entry(start)
            if len(preds) != 1 or preds[0].last.op not in POP_JUMPS:
                return None
            start = preds[0]
        return None

    def build_guarded_while(self, cond: ast.expr, header: Block, exit_block: Block,
                            stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
                            out: List[ast.stmt], guard: Optional[Block] = None
                            ) -> Optional[Tuple[Optional[List[Any]], Optional[Block]]]:
        """3.10+ ``while cond:``: ``if cond:`` guard + loop whose latch re-tests ``cond``.

        ``guard``: the block where the guard's test starts; when ``continue`` jumps back to it
        (see ``_rotated_guard``), it is a second continue point of the loop."""
        built = self._guarded_while(cond, header, exit_block, stack, ctx, stop, out, guard)
        if built is None and guard is not None and guard in self.guard_tries:
            # (``while not c:``: the guard jumps to the loop's exit when ``c`` is true)
            built = self._guarded_while(negate(cond), exit_block, header, stack, ctx, stop, out, guard)
        if built is None and guard is not None and guard in self.guard_tries:
            raise _GuardNotLoop()
        return built

    def _guarded_while(self, cond: ast.expr, header: Block, exit_block: Block,
                       stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
                       out: List[ast.stmt], guard: Optional[Block]
                       ) -> Optional[Tuple[Optional[List[Any]], Optional[Block]]]:
        if len(header.instrs) == 1 and header.last.op == "JUMP" and header.jump is not None \
                and self.cfg.is_loop_header(header.jump):
            header = header.jump  # (a guard in several blocks ends in a jump to the loop)
        if header in self.active_loops or not self.cfg.is_loop_header(header):
            return None
        body = frozenset(self.cfg.loop_body(header))
        lt = self.latch_test(header, body)
        if lt is None:
            return None
        conts: FrozenSet[Block] = frozenset()
        if guard is not None and guard in self.guard_tries:
            conts = frozenset([guard])
            body = body | frozenset(self.cfg.loop_body(guard))
        body = self.with_clauses(body)
        latch, normal = lt
        if normal is not exit_block and not _same_exit(normal, exit_block) \
                and not _jumps_to_same(normal, exit_block):
            return None
        test = self._latch_test_start(latch, header, body, cond, stack, normal)
        if test is None:
            return None
        latch, chain = test
        exits = self._chain_cleanup_exits(self._exits(body, header), chain, normal)
        return self._try_inline_leaving(exits, normal, ctx, body, out, lambda follow: self._guarded_from(
            header, body, stack, ctx, stop, out, cond, latch, normal, conts, follow))

    def _guarded_from(self, header: Block, body: FrozenSet[Block], stack: List[Any], ctx: Ctx,
                      stop: FrozenSet[Block], out: List[ast.stmt], cond: ast.expr, latch: Block,
                      normal: Optional[Block], conts: FrozenSet[Block],
                      follow: Optional[Block]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        self.__dict__.get("_pellucid_pending_follows", {}).pop(header, None)  # (an earlier try's)
        self.active_loops.add(header)
        self.active_loops.update(conts)
        self.latch_tests.add(latch)
        try:
            loop_ctx = self._loop_ctx(ctx, header, latch, follow, body, conts)
            inner = self._inner_loop_at_head(header, body, latch, conts)
            if inner:
                body_s = self._inner_loop_first(header, inner, stack, loop_ctx)
            else:
                body_s = self._loop_body(self.walk(header, list(stack), loop_ctx, frozenset(),
                                                   first=header))
        finally:
            self.active_loops.discard(header)
            self.active_loops.difference_update(conts)
            self.latch_tests.discard(latch)
        body_s = strip_trailing_continue(body_s) or [ast.Pass()]
        orelse = self._else_clause(normal, follow, stack, ctx, stop)
        self.emit(out, ast.While(cond, body_s, orelse), stack)
        return (list(stack) if follow is not None else None), follow

    def _inner_loop_at_head(self, header: Block, body: FrozenSet[Block], latch: Block,
                            conts: FrozenSet[Block]) -> FrozenSet[Block]:
        """The blocks of a loop that starts the body of the 3.10+ ``while c:`` headed by
        ``header`` at that same block, or nothing.

        ``while c: while True: ...`` -- 3.10-3.13 drop the inner loop's NOP, so the outer
        loop's jump back from its re-test (which starts at ``latch``) and the inner loop's
        ``continue`` and closing jump all go to ``header``.  A ``continue`` of the outer loop
        goes to its re-test or its guard (``conts``), never there: any other jump back to
        ``header`` belongs to an inner loop, whose blocks are the natural loop of those jumps
        alone."""
        outer: Set[Block] = set()
        work, seen = [latch, *conts], {header}
        while work:
            b = work.pop()
            if b in seen or b not in body:
                continue
            seen.add(b)
            if header in b.succs:
                outer.add(b)
            work.extend(x for x in b.succs if x is not None)
        others = [p for p in header.preds if p in body and p not in outer]
        if not outer or not others:
            return frozenset()
        inner = self.cfg.natural_loop(header, others)
        if not inner <= body or inner & seen - {header}:
            return frozenset()  # (the re-test reaches it: not a loop of its own)
        return frozenset(inner)

    def _inner_loop_first(self, header: Block, inner: FrozenSet[Block], stack: List[Any],
                          loop_ctx: Ctx) -> List[ast.stmt]:
        """The outer loop's body when it starts with the loop ``inner`` at its own head: that
        loop (built as any ``while``, in the outer loop's context), then the rest of the body
        from where it goes on."""
        stmts: List[ast.stmt] = []
        self.active_loops.discard(header)  # (heads the inner loop while it is built)
        try:
            # (a ``while True:``: its first test is a statement of its body, as 3.10+ lay out
            # every loop that tests at its head -- not a ≤3.9 ``while cond:``)
            body = self.with_clauses(inner)
            st, follow = self._try_inline_leaving(
                self._exits(body, header), None, loop_ctx, body, stmts,
                lambda follow: self._while_from(header, body, list(stack), loop_ctx, frozenset(), stmts,
                                                ast.Constant(True), header, header, None, follow))
        finally:
            self.active_loops.add(header)
        if st is None or follow is None:
            return stmts
        return stmts + self._loop_body(self.walk(follow, st, loop_ctx, frozenset()))
