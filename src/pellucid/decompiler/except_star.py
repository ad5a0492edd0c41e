"""``try``/``except*`` (3.11+) -> ``ast.TryStar``.

The handler of an ``except*`` statement has a fixed layout, read here block by block rather than
through the stack machine::

    PUSH_EXC_INFO; COPY 1; BUILD_LIST 0; SWAP 2          # [saved, eg, raised-list, rest]
    per clause:
        <type>; CHECK_EG_MATCH; COPY 1; POP_JUMP_IF_NONE no_match
        STORE name | POP_TOP                              # the matched sub-group
        <body>                     (handler: cleanup -> [name = None; del name]; LIST_APPEND 3 ...)
        [LOAD_CONST None; STORE name; DELETE name]; JUMP next
      no_match: POP_TOP
      next: ...
    LIST_APPEND 1; PREP_RERAISE_STAR; COPY 1; POP_JUMP_IF_NOT_NONE reraise
    POP_TOP; POP_EXCEPT; JUMP after
    reraise: SWAP 2; POP_EXCEPT; RERAISE 0

Anything else raises :class:`StructureError`.
"""
import ast
from typing import Any, FrozenSet, List, Optional, Tuple

from pellucid.bytecode.cfg import Block
from pellucid.bytecode.features import EXCEPT_STAR
from pellucid.bytecode.neutral_ops import NO_FALLTHROUGH, TERMINAL
from pellucid.decompiler import markers as M
from pellucid.decompiler.errors import StructureError
from pellucid.decompiler.protected import partial_block
from pellucid.decompiler.structure import Ctx

_STORES = ("STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL")


class ExceptStarBuilder:
    """Mixin (before ProtectedBuilder in the MRO): ``try``/``except*``."""

    def _is_except_star_handler(self, hblock: Block) -> bool:
        return EXCEPT_STAR and self._star_prologue(hblock) is not None

    def _star_prologue(self, hblock: Block) -> Optional[int]:
        """Length of the handler prologue (3.11: COPY 1; BUILD_LIST; SWAP 2, 3.12+: BUILD_LIST;
        COPY 2), which leaves [saved, eg, raised-list, rest] on the stack."""
        ins = [(i.op, i.arg) for i in hblock.instrs[:4]]
        if ins == [("PUSH_EXC_INFO", None), ("COPY", 1), ("BUILD_LIST", 0), ("SWAP", 2)]:
            return 4
        if ins[:3] == [("PUSH_EXC_INFO", None), ("BUILD_LIST", 0), ("COPY", 2)] \
                and any(i.op == "CHECK_EG_MATCH" for i in hblock.instrs):
            return 3
        return None

    def build_try(self, block: Block, level: int, stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
                  out: List[ast.stmt]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        hblock = self.cfg.block_at[level]
        if self._is_except_star_handler(hblock):
            return self.build_try_star(block, level, hblock, stack, ctx, stop, out)
        return super().build_try(block, level, stack, ctx, stop, out)  # type: ignore[misc]

    # -- helpers ----------------------------------------------------------------------------------
    def _jump_chain(self, b: Optional[Block], appended: bool = False) -> Tuple[Optional[Block], bool]:
        """Follow blocks that only jump; 3.13 moves the final ``LIST_APPEND 1`` into them
        (``appended`` says it was passed)."""
        for _ in range(32):
            if b is None:
                return None, appended
            ops = [(i.op, i.arg) for i in b.instrs]
            if [o for o, _ in ops] == ["JUMP"]:
                b = b.jump
                continue
            if not appended and [o for o, _ in ops] == ["LIST_APPEND", "JUMP"] and ops[0][1] == 1:
                appended = True
                b = b.jump
                continue
            return b, appended
        raise StructureError("jump chain too long")

    def _star_type(self, b: Block, start: int, ctx: Ctx) -> Tuple[ast.expr, Block, Block]:
        """Clause test in ``b`` from instruction ``start``: (type, match block, no-match block)."""
        ins = b.instrs[start:]
        ops = [i.op for i in ins]
        if len(ops) < 4 or ops[-3:] != ["CHECK_EG_MATCH", "COPY", "POP_JUMP_IF_NONE"] or ins[-2].arg != 1:
            raise StructureError("unrecognised except* clause test")
        trial: List[Any] = [M.Marker("eg")]
        sink: List[ast.stmt] = []
        for x in ins[:-3]:
            self.step(x, trial, sink)
        if sink or len(trial) != 2:
            raise StructureError("except* clause type with side statements")
        typ = self.value(trial[-1])
        if b.fallthrough is None or b.jump is None:
            raise StructureError("except* clause test without both branches")
        return typ, b.fallthrough, b.jump

    def build_try_star(self, block: Block, level: int, hblock: Block, stack: List[Any], ctx: Ctx,
                       stop: FrozenSet[Block], out: List[ast.stmt]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        start = self._star_prologue(hblock)
        if start is None:
            raise StructureError("unrecognised except* handler prologue")
        handlers: List[ast.ExceptHandler] = []
        cur, pos = hblock, start
        marker_stack = list(stack) + [M.SavedExc(), M.Exc(), M.Marker("eg_list"), M.Exc()]
        after: Optional[Block] = None
        appended = False
        tail: List[Any] = []
        for _ in range(256):
            ops = [i.op for i in cur.instrs[pos:]]
            if appended or ops[:1] == ["LIST_APPEND"]:
                after, tail = self._star_epilogue(cur, pos, appended)
                break
            typ, match, nomatch = self._star_type(cur, pos, ctx)
            # the matched sub-group: stored or dropped
            first = match.instrs[0]
            name: Optional[str] = None
            if first.op in _STORES:
                name = first.arg
            elif first.op != "POP_TOP":
                raise StructureError("except* clause does not store or pop the match")
            if len(match.instrs) > 1 and match.last.op == "JUMP" \
                    and self.effective_handler(match) == self.effective_handler(hblock):
                # empty body (``pass``) with no cleanup region between: 3.13 keeps the clause
                # exit (name clean-up, ``LIST_APPEND 1``, jump on) in the entry block
                body, bstack, bend = [], marker_stack, partial_block(match, 1)
            elif len(match.instrs) != 1 or match.fallthrough is None:
                raise StructureError("unexpected except* clause entry block")
            elif self.effective_handler(match.fallthrough) == level:
                # empty body (``pass``): straight to the clause exit
                body, bstack, bend = [], marker_stack, match.fallthrough
            else:
                body_start = match.fallthrough
                cleanup = self.effective_handler(body_start)
                if cleanup is None:
                    raise StructureError("except* clause body without its cleanup handler")
                region = self.protected_set(cleanup)
                body, bstack, bend = self.walk(body_start, list(marker_stack),
                                               Ctx(ctx.loop, region, cleanup), stop)
            if bstack is None or bend is None:
                raise StructureError("except* clause body does not fall through")
            # leaving the clause: ``name = None; del name`` then on to the next clause
            exit_ops = [(i.op, i.arg) for i in bend.instrs]
            if name is not None:
                if len(exit_ops) < 4 or exit_ops[0] != ("LOAD_CONST", None) or exit_ops[1][0] not in _STORES \
                        or exit_ops[1][1] != name or not exit_ops[2][0].startswith("DELETE_") \
                        or exit_ops[2][1] != name \
                        or exit_ops[3:] not in ([("JUMP", None)], [("LIST_APPEND", 1), ("JUMP", None)]):
                    raise StructureError("except* clause without its name cleanup")
                nxt = self._jump_chain(bend.jump, len(exit_ops) == 5)
            else:
                nxt = self._jump_chain(bend)
            # no match: ``POP_TOP`` the None (3.13: and maybe ``LIST_APPEND 1``), then the next clause
            nm_ops = [(i.op, i.arg) for i in nomatch.instrs]
            if nm_ops not in ([("POP_TOP", None)], [("POP_TOP", None), ("LIST_APPEND", 1)]) \
                    or nomatch.fallthrough is None:
                raise StructureError("unexpected except* no-match block")
            if self._jump_chain(nomatch.fallthrough, len(nm_ops) == 2) != nxt or nxt[0] is None:
                raise StructureError("except* clause paths do not rejoin")
            handlers.append(ast.ExceptHandler(typ, name, body or [ast.Pass()]))
            (cur, appended), pos = nxt, 0
        else:
            raise StructureError("too many except* clauses")
        if not handlers:
            raise StructureError("except* without clauses")
        region = self.protected_set(level)
        body, body_stack, exit_block = self.walk(block, list(stack), Ctx(ctx.loop, region, level), stop, first=block)
        orelse: List[ast.stmt] = []
        if exit_block is not None and exit_block is not after:
            orelse, else_stack, else_end = self.walk(exit_block, body_stack, ctx,
                                                     stop | ({after} if after is not None else set()))
            if else_stack is not None and else_end is not after:
                raise StructureError("try-else of except* does not rejoin")
        node = ast.TryStar(body or [ast.Pass()], handlers, orelse, [])  # type: ignore[attr-defined]
        self.emit(out, node, stack)
        result = list(stack)
        if tail:
            # 3.12+ copies a short follow (``return x``) right after POP_EXCEPT: run it here.
            tail_block = tail[-1]
            for ins in tail[:-1]:
                if ins.op in ("JUMP",) or ins.target is not None:
                    raise StructureError("except* follow with control flow")
                self.step(ins, result, out)
                if ins.op in TERMINAL:
                    return None, None
            if tail_block.last.op == "JUMP":
                return result, tail_block.jump
            return result, tail_block.fallthrough
        if after is None:
            return None, None
        return result, after

    def _star_epilogue(self, b: Block, pos: int, appended: bool) -> Tuple[Optional[Block], List[Any]]:
        """Check the ``PREP_RERAISE_STAR`` tail: (block after the statement, [instructions of a
        follow copied after POP_EXCEPT..., their block]) -- one of the two is empty."""
        ins = [(i.op, i.arg) for i in b.instrs[pos:]]
        if not appended:
            if ins[:1] != [("LIST_APPEND", 1)]:
                raise StructureError("unrecognised except* epilogue")
            ins = ins[1:]
        if ins not in ([("PREP_RERAISE_STAR", None), ("COPY", 1), ("POP_JUMP_IF_NOT_NONE", None)],
                       [("UNSUPPORTED", "CALL_INTRINSIC_2"), ("COPY", 1), ("POP_JUMP_IF_NOT_NONE", None)]):
            raise StructureError("unrecognised except* epilogue")
        reraise = b.jump
        if reraise is None or [(i.op, i.arg) for i in reraise.instrs] != [("SWAP", 2), ("POP_EXCEPT", None), ("RERAISE", 0)]:
            raise StructureError("unrecognised except* re-raise")
        nb = b.fallthrough
        if nb is None or [(i.op, i.arg) for i in nb.instrs] != [("POP_TOP", None)] or nb.fallthrough is None:
            raise StructureError("unrecognised except* exit")
        pe = nb.fallthrough
        if pe.instrs[0].op != "POP_EXCEPT" or len(pe.preds) != 1:
            raise StructureError("unrecognised except* exit")
        if [i.op for i in pe.instrs] == ["POP_EXCEPT", "JUMP"]:
            return pe.jump, []
        if pe.last.op in NO_FALLTHROUGH \
                or pe.last.target is None and pe.fallthrough is not None:
            return None, list(pe.instrs[1:]) + [pe]
        raise StructureError("unrecognised except* exit")
