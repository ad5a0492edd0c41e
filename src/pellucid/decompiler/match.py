"""``match`` statements (3.10+): decode a case's pattern code back into a pattern tree.

A case starts where the subject is on the stack and either ``COPY 1`` (a copy for the pattern;
the body starts by popping the subject) or, for the last case, the pattern consumes the subject
itself.  :meth:`MatchBuilder.try_match` runs a small symbolic machine over the pattern's
instructions, following the success direction of every test (pattern tests always jump on
failure) and checking that every failure lands, after popping what the pattern pushed, on the
same place: the next case.  Bodies and the rest of the match are then walked like the branches of
an ``if``; the next case decoded on the failure side is merged into the same ``match``.

Anything not recognised raises :class:`StructureError` (or, before any pattern opcode has been
seen, declines so the instructions are decompiled as ordinary code).  A ``COPY 1`` from which the
decoder could only decline (:meth:`MatchBuilder._may_start_case`) is not decoded at all.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Tuple

from pellucid.bytecode.cfg import Block
from pellucid.bytecode.features import MATCH_PUSHES_SUCCESS, MATCH_STATEMENT
from pellucid.bytecode.instruction import POP_JUMPS
from pellucid.bytecode.neutral_ops import TERMINAL
from pellucid.decompiler.errors import StructureError
from pellucid.decompiler.structure import negate

_MATCH_OPS = ("MATCH_SEQUENCE", "MATCH_MAPPING", "MATCH_CLASS", "MATCH_KEYS")
#: every op :meth:`MatchBuilder._decode` has a case for (any other fails the pattern at once;
#: a test checks this list against ``_decode``'s source)
_DECODED_OPS = frozenset([
    "COPY", "ROT", "SWAP", "POP_TOP", "STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL",
    "LOAD_CONST", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF", "LOAD_ATTR", "BUILD_TUPLE",
    "MATCH_SEQUENCE", "MATCH_MAPPING", "GET_LEN", "BINARY", "COMPARE", "SUBSCR", "UNPACK_SEQUENCE",
    "UNPACK_EX", "MATCH_KEYS", "MATCH_CLASS", "COPY_DICT_WITHOUT_KEYS", "BUILD_MAP", "DICT_UPDATE",
    "DELETE_SUBSCR", "POP_JUMP_IF_NOT_NONE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE"])
#: ops whose decoding, before a ``MATCH_*`` op or a conditional jump, can only push, pop, name or
#: index pattern values and fail with ``_NotMatch`` (no ``StructureError``: that needs a
#: ``MATCH_*`` op or an or-pattern, and an or-pattern needs a conditional jump to fail at; no
#: other exception, no change to the decompiler's state -- except ``LOAD_GLOBAL`` of a local's
#: name, which ``_may_start_case`` leaves to the decoder)
_INERT_OPS = frozenset([
    "COPY", "ROT", "SWAP", "POP_TOP", "STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL",
    "LOAD_CONST", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF", "LOAD_ATTR", "SUBSCR",
    "GET_LEN", "BINARY"])


class _NotMatch(Exception):
    """The instructions are not a pattern: decompile them normally."""


class _Slot:
    """One pattern position (the subject or a part of it)."""

    def __init__(self) -> None:
        self.names: List[str] = []
        self.kind: Optional[str] = None  # seq / map / class
        self.value: Optional[ast.expr] = None
        self.singleton = False
        self.seq_len: Optional[Tuple[str, int]] = None
        self.children: Optional[List["_Slot"]] = None
        self.index_children: Dict[int, "_Slot"] = {}
        self.star: Optional[int] = None
        self.keys: List[ast.expr] = []
        self.rest: Optional[str] = None
        self.cls: Optional[ast.expr] = None
        self.npos = 0
        self.kwnames: Tuple[str, ...] = ()
        self.is_star = False
        self.alts: List["_Slot"] = []
        self.leftover: List["_Slot"] = []


class _Sym:
    def __init__(self, kind: str, slot: Optional[_Slot] = None, data: Any = None) -> None:
        self.kind, self.slot, self.data = kind, slot, data


_SUBJ = _Sym("subject")


class MatchBuilder:
    """Mixin for BodyDecompiler."""

    def _tail(self, block: Block, idx: int) -> Block:
        while idx >= len(block.instrs):
            if block.fallthrough is None:
                raise StructureError("match case runs off its block")
            idx -= len(block.instrs)
            block = block.fallthrough
        if idx == 0:
            return block
        cache = self.__dict__.setdefault("_match_tails", {})
        key = (block, idx)
        if key in cache:
            return cache[key]
        t = Block(block.id, block.start + idx, block.end, block.instrs[idx:])
        t.jump, t.fallthrough, t.handler, t.succs, t.preds = \
            block.jump, block.fallthrough, block.handler, block.succs, []
        t.origin = block.origin or block
        self.cfg.ipdom[t] = self.cfg.ipdom.get(block)
        self.cfg.idom[t] = block
        cache[key] = t
        return t

    def _land(self, block: Block, pops: int, idx: int = 0) -> Tuple[Block, int]:
        steps = 0
        while True:
            steps += 1
            if steps > 1000:
                raise StructureError("match failure path loops")
            if idx >= len(block.instrs):
                if block.fallthrough is None:
                    raise StructureError("match failure path ends")
                block, idx = block.fallthrough, 0
                continue
            ins = block.instrs[idx]
            if ins.op == "JUMP":
                block, idx = block.jump, 0
                continue
            if pops == 0:
                return block, idx
            if ins.op != "POP_TOP":
                raise StructureError("match failure path does not pop the pattern's values")
            pops -= 1
            idx += 1

    # -- entry -----------------------------------------------------------------------------------
    def try_match(self, block: Block, k: int, stack: List[Any], ctx: Any, stop: Any,
                  out: List[ast.stmt]) -> Optional[Tuple[Optional[List[Any]], Optional[Block]]]:
        """``False`` if ``block.instrs[k:]`` does not start a case; else what run_block returns."""
        if not MATCH_STATEMENT or not stack:
            return False
        ins = block.instrs[k]
        copy_mode = ins.op == "COPY" and ins.arg == 1
        if copy_mode and not self._may_start_case(block, k):
            return False  # (what both decodings below would conclude; Dynamo copies values a lot)
        # Where an earlier case fails with the subject still on the stack, the next case
        # starts: the last one before ``case _`` (or the end) has no ``COPY`` and may be a
        # value pattern, whose loads look like ordinary code (``case A.V:``).
        last_value = k == 0 and not copy_mode and id(stack[-1]) in self.__dict__.get("_next_case_subjects", ())
        if last_value:
            try:
                decoded = self._decode(block, k, False, last_value=True)
            except _NotMatch:
                return False
            return self._build_match(block, decoded, False, stack, ctx, stop, out)
        if not copy_mode and ins.op not in ("MATCH_SEQUENCE", "MATCH_MAPPING"):
            j = k
            while j < len(block.instrs) and block.instrs[j].op in (
                    "LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF", "LOAD_ATTR", "LOAD_CONST"):
                j += 1
            if j == k or j >= len(block.instrs) or block.instrs[j].op != "MATCH_CLASS":
                return False
        try:
            decoded = self._decode(block, k + 1 if copy_mode else k, copy_mode)
        except (_NotMatch, StructureError) as e:
            if not copy_mode:
                if isinstance(e, _NotMatch) or ins.op.startswith("LOAD_"):
                    return False  # (a load may be the subject's own; the class load comes next)
                raise
            try:  # the last case's pattern consumes the subject; an or-pattern copies it
                copy_mode = False
                decoded = self._decode(block, k, False)
            except _NotMatch:
                if isinstance(e, StructureError):
                    raise e
                return False
        return self._build_match(block, decoded, copy_mode, stack, ctx, stop, out)

    def _build_match(self, block: Block, decoded: Any, copy_mode: bool, stack: List[Any], ctx: Any,
                     stop: Any, out: List[ast.stmt]) -> Optional[Tuple[Optional[List[Any]], Optional[Block]]]:
        """The ``match`` statement from a decoded first case (what ``run_block`` returns)."""
        root, done_block, done_idx, fail = decoded
        subj = stack[-1]
        base = stack[:-1]
        pattern = self._render(root)
        guard = None
        dins = done_block.instrs[done_idx] if done_idx < len(done_block.instrs) else None
        if copy_mode and dins is not None and dins.op == "POP_TOP":
            body = self._tail(done_block, done_idx + 1)
        elif not copy_mode and dins is not None and dins.op not in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE") \
                and not self._guard_at(done_block, done_idx, base, fail):
            body = self._tail(done_block, done_idx)
        elif dins is None and done_block.last.op not in POP_JUMPS and done_block.fallthrough is not None \
                and done_block.fallthrough.preds == [done_block]:
            # the pattern ends its block and no guard tests it: the body starts a block of its
            # own (a ``try`` as its first statement begins a protected range)
            if copy_mode:
                raise StructureError("match case body without the subject's pop")
            body = done_block.fallthrough
        else:
            gstack = list(base) + ([subj] if copy_mode else [])
            sink: List[ast.stmt] = []
            for g in done_block.instrs[done_idx:-1]:
                self.step(g, gstack, sink)
            if sink or done_block.last.op not in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE",
                                                 "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
                raise StructureError("match guard with statements")
            guard, t, f, gstack = self.compound_condition(done_block, gstack)
            if self._land(f, 0) != fail and self._land(t, 0) == fail:
                guard, t, f = negate(guard), f, t
            if self._land(f, 0) != fail:
                raise StructureError("match guard fails elsewhere %r %r %r" % (f, self._land(f, 0), fail))
            if copy_mode:
                tb, ti = self._land(t, 0)
                if tb.instrs[ti].op == "POP_TOP":
                    body = self._tail(tb, ti + 1)
                elif any([i.op for i in p.instrs] in (["POP_TOP", "JUMP"], ["POP_TOP"])
                         and self._skip_trampoline(p) is t for p in t.preds):
                    body = t  # ``POP_TOP; JUMP`` skipped by compound_condition: an empty body
                else:
                    raise StructureError("match guard success does not pop the subject")
            else:
                body = t
        fail_block = self._tail(*fail)
        merge = self.cfg.common_pdom(self._real(body), self._real(fail_block))
        if merge is not None and self.loop_jump(merge, ctx) is not None:
            merge = None  # (the cases meet at the loop's next iteration or exit: each says so)
        inner_stop = stop | {merge} if merge is not None else stop
        then_s, then_stack, then_end = self.walk(body, list(base), ctx, inner_stop)
        else_stack0 = list(base) + ([subj] if copy_mode else [])
        subjects = self.__dict__.setdefault("_next_case_subjects", set())
        fresh = copy_mode and id(subj) not in subjects
        if fresh:
            subjects.add(id(subj))
        try:
            else_s, else_stack, else_end = self.walk(fail_block, else_stack0, ctx, inner_stop)
        finally:
            if fresh:
                subjects.discard(id(subj))
        cases = [ast.match_case(pattern, guard, then_s or [ast.Pass()])]
        else_s = [s for s in else_s if not (isinstance(s, ast.Expr) and s.value is subj)]
        tmp = None
        if len(else_s) == 1 and isinstance(else_s[0], ast.Match) \
                and getattr(else_s[0], "_pellucid_subj", None) is subj:
            cases.extend(else_s[0].cases)
            tmp = getattr(else_s[0], "_pellucid_tmp", None)
        elif else_s:
            cases.append(ast.match_case(ast.MatchAs(None, None), None, else_s))
        subject = self.value(subj)
        if tmp is None and _refers(cases, subj) and not _stable(subject, cases):
            tmp = self.new_temp()
        if tmp is not None:
            _replace(cases, subj, tmp)
            subject = ast.NamedExpr(ast.Name(tmp, ast.Store()), subject)
        node = ast.Match(subject, cases)
        node._pellucid_subj = subj  # type: ignore[attr-defined]
        node._pellucid_tmp = tmp  # type: ignore[attr-defined]
        if then_stack is None and else_stack is None:
            self.emit(out, node, list(base))
            return None
        if then_stack is None:
            self.emit(out, node, list(base))
            return else_stack, else_end
        if else_stack is None:
            self.emit(out, node, list(base))
            return then_stack, then_end
        if then_end is not else_end or len(then_stack) != len(else_stack):
            raise StructureError("match cases meet nowhere")
        self.emit(out, node, list(base))
        return then_stack, then_end

    def _guard_at(self, block: Block, k: int, base: List[Any], fail: Tuple[Block, int]) -> bool:
        """(A case whose pattern consumed the subject) ``block.instrs[k:]`` only compute a test
        that goes where the pattern fails: a guard (3.11: ``case int(n) if n % 2:``)."""
        if block.last.op not in POP_JUMPS or k >= len(block.instrs) - 1:
            return False
        if all(self._land(t, 0) != fail for t in (block.jump, block.fallthrough) if t is not None):
            return False
        saved = self.save_state()
        trial, sink = list(base), []  # type: ignore[var-annotated]
        try:
            for g in block.instrs[k:-1]:
                self.step(g, trial, sink)
        except (StructureError, IndexError):
            return False
        finally:
            self.restore_state(saved)
        return not sink and len(trial) == len(base) + 1

    def _real(self, b: Block) -> Block:
        return self.cfg.idom.get(b, b) if b not in self.cfg.blocks else b

    def _may_start_case(self, block: Block, k: int) -> bool:
        """Whether a pattern can be decoded from ``block.instrs[k]`` on: False when the straight
        path from there (the one :meth:`_decode` follows) reaches an instruction :meth:`_decode`
        has no case for, or the end of the code, before any ``MATCH_*`` op, conditional jump or
        other instruction outside :data:`_INERT_OPS`.  Until one of those, every decoding from
        an instruction on that path (and every or-pattern alternative tried from a ``COPY 1``
        on it) ends in ``_NotMatch`` with nothing changed, so ``try_match`` returns False.

        The answers for every index of a block are found in one backward pass, the first time a
        block is asked (a ``COPY 1`` of Dynamo's code would otherwise be decoded twice or three
        times, each decoding running to the next subscript)."""
        memo = self.__dict__.setdefault("_case_starts", {})
        flags = memo.get(block)
        if flags is None:
            local = self.local_names  # type: ignore[attr-defined]
            # walk to the end of the straight path, then fill the flags backwards
            chain: List[Block] = []
            b: Optional[Block] = block
            while b is not None and b not in memo and len(chain) < 10000:
                chain.append(b)
                b = b.fallthrough
            if b is None:
                after = False  # ``no("runs off the code")``
            elif b in memo:
                after = memo[b][0]
            else:
                after = True  # (a path too long to follow: decode as before)
            for b in reversed(chain):
                f = [False] * (len(b.instrs) + 1)
                f[-1] = after
                for i in range(len(b.instrs) - 1, -1, -1):
                    ins = b.instrs[i]
                    op = ins.op
                    if op not in _DECODED_OPS:
                        f[i] = False
                    elif op in _INERT_OPS and not (op == "LOAD_GLOBAL" and ins.arg in local):
                        f[i] = f[i + 1]
                    else:
                        f[i] = True
                memo[b] = f
                after = f[0]
            flags = memo[block]
        return flags[k]

    # -- the pattern machine ---------------------------------------------------------------------
    def _decode(self, block: Block, idx: int, copy_mode: bool, alt: bool = False,  # noqa: C901
                last_value: bool = False):
        root = _Slot()
        st: List[_Sym] = [_SUBJ, _Sym("slot", root)] if copy_mode else [_Sym("slot", root)]
        seen_match = alt
        fail: Optional[Tuple[Block, int]] = None
        steps = 0

        def no(msg: str) -> None:
            if not seen_match:
                raise _NotMatch()
            raise StructureError("match pattern: " + msg)

        def add_fail(target: Block, start: int = 0) -> None:
            nonlocal fail
            pops = len(st) - (1 if copy_mode else 0)
            landing = self._land(target, pops, start)
            if fail is None:
                fail = landing
            elif fail != landing and not self._same_tail(fail, landing):
                # (one place, or copies of one tail: the compiler copies a short exit -- the
                # ``return`` after the match -- into each jump to it, and an or-pattern's last
                # alternative fails to a copy of its own)
                no("failures land in different places")

        def pop_slot() -> _Slot:
            v = st.pop()
            if v.kind != "slot":
                no("expected a pattern value")
            return v.slot  # type: ignore[return-value]

        try:
            while True:
                steps += 1
                if steps > 10000:
                    no("runaway")
                done = (st == [_SUBJ]) if copy_mode else (not st)
                if alt and st and all(x.kind == "slot" for x in st):
                    nb, ni = block, idx
                    while ni >= len(nb.instrs) and nb.fallthrough is not None:
                        nb, ni = nb.fallthrough, 0
                    if ni < len(nb.instrs) and nb.instrs[ni].op == "JUMP":
                        done = True  # 3.11: captures of an or-pattern stay on the stack
                if done and alt:
                    if fail is None:
                        raise _NotMatch()
                    root.leftover = [x.slot for x in st]
                    return root, block, idx, fail
                if done and seen_match:
                    if fail is None:
                        raise StructureError("pattern that cannot fail")
                    return root, block, idx, fail
                if done and copy_mode and root.value is not None and fail is not None \
                        and idx < len(block.instrs) and block.instrs[idx].op == "POP_TOP":
                    return root, block, idx, fail  # a literal/value case: ``COPY 1; ==; POP_TOP``
                if done and last_value and root.value is not None and fail is not None:
                    return root, block, idx, fail  # the last case's value test took the subject
                if done:
                    raise _NotMatch()
                if idx >= len(block.instrs):
                    if block.fallthrough is None:
                        no("runs off the code")
                    block, idx = block.fallthrough, 0
                    continue
                ins = block.instrs[idx]
                op, arg = ins.op, ins.arg
                idx += 1
                if op in _MATCH_OPS:
                    seen_match = True
                if op == "COPY" and arg == 1 and st and st[-1].kind == "slot":
                    orp = self._try_or(block, idx)
                    if orp is None:
                        st.append(st[-1])
                    else:
                        alts, ofail, (block, idx) = orp
                        v = st[-1]
                        if v.slot.kind is not None or v.slot.value is not None or v.slot.alts:
                            no("or-pattern on a constrained value")
                        v.slot.alts = alts
                        seen_match = True
                        add_fail(ofail[0], ofail[1])
                        for j in range(len(alts[0].leftover)):
                            st.append(_Sym("orcap", None, [a.leftover[j] for a in alts]))
                elif op == "COPY":
                    if arg > len(st):
                        no("stack underflow")
                    st.append(st[-arg])
                elif op == "ROT":
                    top = st.pop()
                    st.insert(len(st) - arg + 1, top)
                elif op == "SWAP":
                    st[-1], st[-arg] = st[-arg], st[-1]
                elif op == "POP_TOP":
                    v = st.pop()
                    if v is _SUBJ:
                        no("subject popped")
                elif op in ("STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL"):
                    if op != "STORE_FAST" and op != "STORE_NAME":
                        no("capture into a cell or global")
                    v = st.pop()
                    if v.kind == "slot":
                        v.slot.names.append(arg)
                    elif v.kind == "orcap":
                        for sl in v.data:
                            sl.names.append(arg)
                    elif v.kind == "restdict":
                        if v.slot.rest is not None:
                            no("two rests")
                        v.slot.rest = arg
                    else:
                        no("store of %s" % v.kind)
                elif op == "LOAD_CONST":
                    st.append(_Sym("const", None, arg))
                elif op in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF"):
                    if op == "LOAD_GLOBAL" and arg in self.local_names:
                        self.globals_.add(arg)
                    st.append(_Sym("expr", None, ast.Name(arg, ast.Load())))
                elif op == "LOAD_ATTR":
                    v = st.pop()
                    if v.kind != "expr":
                        no("attribute of a non-name")
                    st.append(_Sym("expr", None, ast.Attribute(v.data, arg, ast.Load())))
                elif op == "BUILD_TUPLE":
                    items = st[len(st) - arg:] if arg else []
                    del st[len(st) - arg:]
                    exprs = [self._sym_expr(x, no) for x in items]
                    st.append(_Sym("tuple", None, exprs))
                elif op == "MATCH_SEQUENCE" or op == "MATCH_MAPPING":
                    s = st[-1]
                    if s.kind != "slot" or s.slot.kind is not None:
                        no("bad MATCH_SEQUENCE")
                    s.slot.kind = "seq" if op == "MATCH_SEQUENCE" else "map"
                    st.append(_Sym("test"))
                elif op == "GET_LEN":
                    s = st[-1]
                    if s.kind != "slot":
                        no("GET_LEN")
                    st.append(_Sym("len", s.slot))
                elif op == "BINARY":
                    r, lft = st.pop(), st.pop()
                    if arg == "-" and lft.kind == "len" and r.kind == "const" and isinstance(r.data, int):
                        st.append(_Sym("lenminus", lft.slot, r.data))
                    else:
                        no("binary op")
                elif op == "COMPARE":
                    r, lft = st.pop(), st.pop()
                    if lft.kind == "len" and r.kind == "const" and arg in ("==", ">="):
                        if lft.slot.kind == "seq":
                            if lft.slot.seq_len is not None:
                                no("two length checks")
                            lft.slot.seq_len = (arg, r.data)
                        elif lft.slot.kind != "map" or arg != ">=":
                            no("length check")
                        st.append(_Sym("test"))
                    elif lft.kind == "slot" and arg in ("==", "is"):
                        sl = lft.slot
                        if sl.value is not None or sl.kind is not None:
                            no("two value checks")
                        sl.value = self._sym_expr(r, no)
                        sl.singleton = arg == "is"
                        st.append(_Sym("test"))
                    else:
                        no("comparison")
                elif op == "SUBSCR" and st[-2].kind in ("keysres", "classres"):
                    key, cont = st.pop(), st.pop()  # 3.10: items of MATCH_KEYS/MATCH_CLASS results
                    kids = cont.slot.children
                    if key.kind != "const" or not isinstance(key.data, int) or kids is None \
                            or not 0 <= key.data < len(kids) or key.data in cont.slot.index_children:
                        no("subscript of a match result")
                    cont.slot.index_children[key.data] = kids[key.data]
                    st.append(_Sym("slot", kids[key.data]))
                elif op == "SUBSCR":
                    key, cont = st.pop(), st.pop()
                    if cont.kind != "slot" or cont.slot.kind != "seq":
                        no("subscript")
                    child = _Slot()
                    if key.kind == "const" and isinstance(key.data, int) and key.data >= 0:
                        pos = key.data
                    elif key.kind == "lenminus" and key.slot is cont.slot:
                        pos = -key.data
                    else:
                        no("subscript key")
                    if pos in cont.slot.index_children:
                        no("same item twice")
                    cont.slot.index_children[pos] = child
                    st.append(_Sym("slot", child))
                elif op in ("UNPACK_SEQUENCE", "UNPACK_EX"):
                    v = st.pop()
                    count = arg if op == "UNPACK_SEQUENCE" else arg[0] + 1 + arg[1]
                    if v.kind == "slot" and v.slot.kind == "seq":
                        kids = [_Slot() for _ in range(count)]
                        if v.slot.children is not None:
                            no("two unpackings")
                        v.slot.children = kids
                        if op == "UNPACK_EX":
                            v.slot.star = arg[0]
                            kids[arg[0]].is_star = True
                        st.extend(_Sym("slot", c) for c in reversed(kids))
                    elif v.kind in ("keysres", "classres") and op == "UNPACK_SEQUENCE":
                        sl = v.slot
                        if sl.children is not None:
                            no("two unpackings")
                        kids = [_Slot() for _ in range(count)]
                        sl.children = kids
                        st.extend(_Sym("slot", c) for c in reversed(kids))
                    elif v.kind == "tuple" and op == "UNPACK_SEQUENCE" and len(v.data) == count:
                        st.extend(_Sym("expr", None, e) for e in reversed(v.data))
                    elif v.kind == "const" and isinstance(v.data, tuple) and op == "UNPACK_SEQUENCE":
                        st.extend(_Sym("const", None, e) for e in reversed(v.data))
                    else:
                        no("unpacking")
                elif op == "MATCH_KEYS":
                    keys = st[-1]
                    s = st[-2]
                    if s.kind != "slot" or s.slot.kind != "map" or s.slot.keys:
                        no("MATCH_KEYS")
                    if keys.kind == "const" and isinstance(keys.data, tuple):
                        s.slot.keys = [_literal(x) for x in keys.data]
                    elif keys.kind == "tuple":
                        s.slot.keys = list(keys.data)
                    else:
                        no("MATCH_KEYS keys")
                    st.append(_Sym("keysres", s.slot))
                    if MATCH_PUSHES_SUCCESS:
                        s.slot.children = [_Slot() for _ in s.slot.keys]
                        st.append(_Sym("test"))
                elif op == "MATCH_CLASS":
                    names, cls, s = st.pop(), st.pop(), st.pop()
                    if s.kind != "slot" or s.slot.kind is not None or names.kind != "const" \
                            or not isinstance(names.data, tuple):
                        no("MATCH_CLASS")
                    s.slot.kind = "class"
                    s.slot.cls = self._sym_expr(cls, no)
                    s.slot.npos = arg
                    s.slot.kwnames = names.data
                    st.append(_Sym("classres", s.slot))
                    if MATCH_PUSHES_SUCCESS:
                        s.slot.children = [_Slot() for _ in range(arg + len(names.data))]
                        st.append(_Sym("test"))
                elif op == "COPY_DICT_WITHOUT_KEYS":
                    keys = st.pop()
                    s = st[-1]
                    if s.kind != "slot" or s.slot.kind != "map":
                        no("COPY_DICT_WITHOUT_KEYS")
                    st.append(_Sym("restdict", s.slot))
                elif op == "BUILD_MAP" and arg == 0:
                    st.append(_Sym("emptydict"))
                elif op == "DICT_UPDATE":
                    src = st.pop()
                    tgt = st[-arg]
                    if tgt.kind != "emptydict" or src.kind != "slot" or src.slot.kind != "map":
                        no("DICT_UPDATE")
                    st[-arg] = _Sym("restdict", src.slot)
                elif op == "DELETE_SUBSCR":
                    key, d = st.pop(), st.pop()
                    if d.kind != "restdict":
                        no("DELETE_SUBSCR")
                elif op == "POP_JUMP_IF_NOT_NONE" and st[-1].kind == "slot":
                    sl = st.pop().slot  # ``case None`` (3.11+): fails when not None
                    if sl.value is not None or sl.kind is not None or sl.alts:
                        no("two value checks")
                    sl.value, sl.singleton = ast.Constant(None), True
                    add_fail(block.jump)
                    block, idx = block.fallthrough, 0
                    if block is None:
                        no("no fallthrough")
                elif op in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE"):
                    v = st.pop()
                    if op == "POP_JUMP_IF_FALSE" and v.kind != "test":
                        no("jump on a non-test")
                    if op == "POP_JUMP_IF_NONE" and v.kind not in ("keysres", "classres"):
                        no("jump on a non-result")
                    if not seen_match and v.kind == "test" and not (
                            copy_mode and len(st) == 1 and root.value is not None) and not (
                            last_value and not st and root.value is not None):
                        raise _NotMatch()
                    add_fail(block.jump)
                    block, idx = block.fallthrough, 0
                    if block is None:
                        no("no fallthrough")
                else:
                    no("instruction %s" % op)
        except IndexError:
            no("stack underflow")
            raise

    def _try_or(self, block: Block, idx: int):
        """At ``COPY 1`` (already consumed, ``idx`` after it): an or-pattern's alternatives?"""
        alts: List[_Slot] = []
        success = None
        b, i = block, idx
        while True:
            try:
                aslot, eb, ei, afail = self._decode(b, i, False, alt=True)
            except (_NotMatch, StructureError):
                return None
            while ei >= len(eb.instrs) and eb.fallthrough is not None:
                eb, ei = eb.fallthrough, 0
            if ei >= len(eb.instrs):
                return None
            if eb.instrs[ei].op == "JUMP":
                here = (eb.jump, 0)
            else:  # 3.12+: the code after the or-pattern is copied into every alternative
                here = (eb, ei)
            if success is None:
                success = here
            elif success != here and not self._same_tail(success, here):
                return None
            if alts and len(aslot.leftover) != len(alts[0].leftover):
                return None
            if aslot.leftover and eb.instrs[ei].op != "JUMP":
                return None
            alts.append(aslot)
            fb, fi = afail
            nxt = fb.instrs[fi]
            if nxt.op == "COPY" and nxt.arg == 1:
                b, i = fb, fi + 1
                continue
            if nxt.op == "POP_TOP" and len(alts) >= 2:
                return alts, (fb, fi), success
            return None

    def _same_tail(self, a: Tuple[Block, int], b: Tuple[Block, int]) -> bool:
        """Whether two instruction streams are copies of each other up to where they rejoin."""
        (ba, ia), (bb, ib) = a, b
        for _ in range(500):
            if ba is bb and ia == ib:
                return True
            while ia >= len(ba.instrs):
                if ba.fallthrough is None:
                    return False
                ba, ia = ba.fallthrough, 0
            while ib >= len(bb.instrs):
                if bb.fallthrough is None:
                    return False
                bb, ib = bb.fallthrough, 0
            if ba is bb and ia == ib:
                return True
            x, y = ba.instrs[ia], bb.instrs[ib]
            if x.op != y.op or x.arg != y.arg or type(x.arg) is not type(y.arg) \
                    or x.handler != y.handler:
                return False
            if x.op in TERMINAL:
                return True
            if x.target is not None or x.op == "FOR_ITER":
                if ia != len(ba.instrs) - 1 or ib != len(bb.instrs) - 1 or ba.jump is not bb.jump:
                    return False
                if x.op == "JUMP":
                    return True
            ia += 1
            ib += 1
        return False

    def _sym_expr(self, v: _Sym, no: Any) -> ast.expr:
        if v.kind == "const":
            return _literal(v.data)
        if v.kind == "expr":
            return v.data
        no("value of kind %s" % v.kind)
        raise AssertionError

    # -- rendering -------------------------------------------------------------------------------
    def _render(self, s: _Slot) -> "ast.pattern":  # noqa: C901
        inner: Optional[ast.pattern] = None
        if s.is_star:
            if s.kind is not None or s.value is not None or len(s.names) > 1:
                raise StructureError("pattern under a star")
            return ast.MatchStar(s.names[0] if s.names else None)
        if s.alts:
            inner = ast.MatchOr([self._render(a) for a in s.alts])
        elif s.value is not None:
            v = s.value
            if s.singleton:
                if not isinstance(v, ast.Constant) or not any(v.value is c for c in (None, True, False)):
                    raise StructureError("bad singleton")
                inner = ast.MatchSingleton(v.value)
            else:
                if not _value_ok(v):
                    raise StructureError("value pattern that is not a literal or dotted name")
                inner = ast.MatchValue(v)
        elif s.kind == "seq":
            if s.children is not None:
                if s.index_children:
                    raise StructureError("mixed sequence access")
                pats = [self._render(c) for c in s.children]
                n = len(pats) - (1 if s.star is not None else 0)
                want = ("==", n) if s.star is None else (">=", n)
                if s.star is not None and n == 0 and s.seq_len is None:
                    pass
                elif s.seq_len != want:
                    raise StructureError("sequence length check mismatch")
            else:
                if s.seq_len is None:
                    n, op = 0, ">="
                else:
                    op, n = s.seq_len
                front = max([p for p in s.index_children if p >= 0], default=-1) + 1
                if op == "==":
                    pats = []
                    for p in range(n):
                        c = s.index_children.get(p) or s.index_children.get(p - n)
                        pats.append(self._render(c) if c is not None else ast.MatchAs(None, None))
                    if any(p >= n or p < -n for p in s.index_children):
                        raise StructureError("index out of the sequence pattern")
                else:
                    back = n - front
                    if any(p < -back for p in s.index_children if p < 0) or front > n:
                        raise StructureError("star pattern layout")
                    pats = []
                    for p in range(front):
                        c = s.index_children.get(p)
                        pats.append(self._render(c) if c is not None else ast.MatchAs(None, None))
                    pats.append(ast.MatchStar(None))
                    for p in range(-back, 0):
                        c = s.index_children.get(p)
                        pats.append(self._render(c) if c is not None else ast.MatchAs(None, None))
            inner = ast.MatchSequence(pats)
        elif s.kind == "map":
            kids = s.children or []
            if len(kids) != len(s.keys):
                raise StructureError("mapping values")
            if not all(_value_ok(k) for k in s.keys):
                raise StructureError("mapping key that is not a literal or dotted name")
            inner = ast.MatchMapping(list(s.keys), [self._render(c) for c in kids], s.rest)
        elif s.kind == "class":
            kids = s.children
            if kids is None or len(kids) != s.npos + len(s.kwnames):
                raise StructureError("class pattern attributes")
            pos = [self._render(c) for c in kids[:s.npos]]
            kws = [self._render(c) for c in kids[s.npos:]]
            inner = ast.MatchClass(s.cls, pos, list(s.kwnames), kws)
        if inner is None:
            if not s.names:
                return ast.MatchAs(None, None)
            inner = ast.MatchAs(None, s.names[0])
            names = s.names[1:]
        else:
            names = s.names
        for n in names:
            inner = ast.MatchAs(inner, n)
        return inner


def _refers(cases: List[Any], subj: Any) -> bool:
    return any(n is subj for c in cases for st in c.body for n in ast.walk(st))


def _stable(subject: ast.expr, cases: List[Any]) -> bool:
    """Whether re-evaluating ``subject`` after failed cases gives the same object."""
    if isinstance(subject, ast.Constant):
        return True
    if not isinstance(subject, ast.Name):
        return False
    for c in cases:
        for n in ast.walk(c.pattern):
            if isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name == subject.id:
                return False
            if isinstance(n, ast.MatchMapping) and n.rest == subject.id:
                return False
        if c.guard is not None and any(isinstance(n, ast.NamedExpr) for n in ast.walk(c.guard)):
            return False
    return True


def _replace(cases: List[Any], subj: Any, tmp: str) -> None:
    for c in cases:
        for st in c.body:
            for node in ast.walk(st):
                for field, value in ast.iter_fields(node):
                    if value is subj:
                        setattr(node, field, ast.Name(tmp, ast.Load()))
                    elif isinstance(value, list):
                        for k, item in enumerate(value):
                            if item is subj:
                                value[k] = ast.Name(tmp, ast.Load())


def _number(x: Any) -> ast.expr:
    if isinstance(x, float) and x != x:
        raise StructureError("NaN in a pattern")
    if x < 0 or (isinstance(x, float) and str(x).startswith("-")):
        return ast.UnaryOp(ast.USub(), ast.Constant(-x))
    return ast.Constant(x)


def _literal(x: Any) -> ast.expr:
    """A literal pattern's expression for the constant ``x``."""
    if x is None or isinstance(x, (bool, str, bytes)):
        return ast.Constant(x)
    if isinstance(x, (int, float)):
        return _number(x)
    if isinstance(x, complex):
        imag = ast.Constant(abs(x.imag) * 1j)
        if x.real == 0 and not str(x.real).startswith("-"):
            return ast.UnaryOp(ast.USub(), imag) if str(x.imag).startswith("-") else imag
        op = ast.Sub() if str(x.imag).startswith("-") else ast.Add()
        return ast.BinOp(_number(x.real), op, imag)
    raise StructureError("constant %r in a pattern" % (x,))


def _value_ok(v: ast.expr) -> bool:
    if isinstance(v, ast.Constant):
        return True
    if isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.USub):
        return isinstance(v.operand, ast.Constant)
    if isinstance(v, ast.BinOp) and isinstance(v.op, (ast.Add, ast.Sub)):
        return _value_ok(v.left) and isinstance(v.right, ast.Constant) and not isinstance(v.left, ast.BinOp)
    if isinstance(v, ast.Attribute):
        node = v.value
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name)
    return False
