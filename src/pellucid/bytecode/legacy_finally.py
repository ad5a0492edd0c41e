"""Python 3.8 only: rewrite ``finally``/``with`` subroutines into 3.9's duplicated layout.

3.8 shares one copy of a ``finally`` body between the normal path (``BEGIN_FINALLY`` pushes NULL
and falls in), ``return``/``break``/``continue`` (``CALL_FINALLY`` pushes a return address and jumps
in) and the exception path; ``END_FINALLY`` then dispatches on what is on top of the stack.  3.9+
instead copies the body to every exit and ends the exception copy with ``RERAISE``; the decompiler
core only understands that layout.  :func:`rewrite` turns the first into the second.

Why the RAW ``dis`` stream and not the neutral list: on ≤3.10 exception handlers are computed by
:mod:`pellucid.bytecode.exception_regions` simulating the block stack over raw instructions
(``SETUP_FINALLY``/``POP_BLOCK``, ``dis.stack_effect``).  Rewriting before that simulation lets it
compute handler coverage for the inlined copies exactly as it does for real 3.9 code, and keeps
``translate`` unchanged.  Records are renumbered with fresh, increasing offsets at the end, so jump
targets (``argval``) and handler offsets stay consistent.

Synthesised 3.9-only opcodes (``RERAISE``, ``WITH_EXCEPT_START``) keep their 3.9 *name* but carry a
3.8 ``opcode`` with the same stack effect (``END_FINALLY`` never falls through when named
``RERAISE``; ``DUP_TOP`` pushes one value like ``WITH_EXCEPT_START``), so the block-stack simulator
stays right.  If a layout is not recognised the original stream is returned unchanged.
"""
import dis
from typing import Dict, List, Optional

OP = dis.opmap
_JUMPS = frozenset(dis.hasjabs) | frozenset(dis.hasjrel)
_SETUPS = ("SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH")
_CLOSERS = ("END_FINALLY", "RERAISE")


class Rec:
    """A mutable raw instruction whose jump target is another :class:`Rec` (not an offset)."""

    __slots__ = ("opname", "opcode", "arg", "argval", "line", "target", "rewritten")

    def __init__(self, opname: str, opcode: int, arg=None, argval=None, line=None, target=None):
        self.opname, self.opcode, self.arg, self.argval = opname, opcode, arg, argval
        self.line, self.target = line, target
        # On a ``SETUP_FINALLY``: its finally block is already in 3.9's layout.  Copies keep the
        # mark, so a processed try/finally copied into an enclosing ``finally`` body's inlined
        # copies is not taken for a new, unprocessed one.
        self.rewritten = False

    def clone(self) -> "Rec":
        copy = Rec(self.opname, self.opcode, self.arg, self.argval, self.line, self.target)
        copy.rewritten = self.rewritten
        return copy

    def become(self, other: "Rec") -> None:
        """Turn into ``other`` in place, so jumps aimed at this record stay valid."""
        self.opname, self.opcode, self.arg, self.argval = other.opname, other.opcode, other.arg, other.argval
        self.target, self.rewritten = other.target, other.rewritten


def _mk(name: str, argval=None, target: Optional[Rec] = None, opcode: Optional[int] = None) -> Rec:
    code = OP[name] if opcode is None else opcode
    arg = 0 if code >= dis.HAVE_ARGUMENT else None
    return Rec(name, code, arg, argval, None, target)


def _nop() -> Rec:
    return _mk("NOP")


def _reraise() -> Rec:
    return _mk("RERAISE", opcode=OP["END_FINALLY"])


# -- conversion between dis.Instruction and Rec ---------------------------------------------------
def _to_recs(raw: List[dis.Instruction]) -> List[Rec]:
    recs = [Rec(r.opname, r.opcode, r.arg, r.argval, r.starts_line) for r in raw]
    at = {r.offset: rec for r, rec in zip(raw, recs)}
    for r, rec in zip(raw, recs):
        if r.opcode in _JUMPS:
            rec.target = at.get(r.argval)
    return recs


def _to_raw(recs: List[Rec]) -> List[dis.Instruction]:
    offset = {id(r): 2 * k for k, r in enumerate(recs)}
    end = 2 * len(recs)
    out = []
    for r in recs:
        argval = r.argval
        if r.target is not None:
            argval = offset.get(id(r.target), end)
        arg = argval if r.target is not None else r.arg
        out.append(dis.Instruction(r.opname, r.opcode, arg, argval, repr(argval), offset[id(r)],
                                   r.line, False))
    return out


# -- with statements ------------------------------------------------------------------------------
def _exit_call(mid: List[Rec]) -> List[Rec]:
    """3.9's ``__exit__(None, None, None)`` call (``mid``: the awaiting trio of ``async with``)."""
    call = _mk("CALL_FUNCTION", 3)
    call.arg = 3
    return ([_mk("LOAD_CONST", None), _mk("DUP_TOP"), _mk("DUP_TOP"), call]
            + [m.clone() for m in mid] + [_mk("POP_TOP")])


def _cleanup_mid(recs: List[Rec], k: int) -> Optional[List[Rec]]:
    """Instructions between ``WITH_CLEANUP_START`` at ``k`` and ``WITH_CLEANUP_FINISH``."""
    for j in range(k + 1, min(k + 5, len(recs))):
        if recs[j].opname == "WITH_CLEANUP_FINISH":
            return recs[k + 1:j]
    return None


def _rewrite_withs(recs: List[Rec]) -> bool:
    """Rewrite every ``BEGIN_FINALLY; WITH_CLEANUP_START ...`` (unwind and normal exit)."""
    k = 0
    while k < len(recs):
        r = recs[k]
        if r.opname == "WITH_CLEANUP_START":
            mid = _cleanup_mid(recs, k)
            if mid is None:
                return False
            fin = k + len(mid) + 1  # WITH_CLEANUP_FINISH
            after = recs[fin + 1] if fin + 1 < len(recs) else None
            prev = recs[k - 1] if k else None
            if after is not None and after.opname == "POP_FINALLY" and prev is not None \
                    and prev.opname == "BEGIN_FINALLY":
                _replace(recs, k - 1, fin + 1, _exit_call(mid))  # return/break inside ``with``
            elif after is not None and after.opname == "END_FINALLY":
                k = _rewrite_with_exit(recs, k, mid, fin)
            else:
                return False
        k += 1
    return True


def _rewrite_with_exit(recs: List[Rec], k: int, mid: List[Rec], fin: int) -> int:
    """Handler at ``k`` (+ the ``BEGIN_FINALLY`` falling into it) -> 3.9's exit and handler."""
    end = fin + 1
    cont = recs[end + 1] if end + 1 < len(recs) else None
    tail = [_mk("POP_TOP"), _mk("POP_TOP"), _mk("POP_TOP"), _mk("POP_EXCEPT"), _mk("POP_TOP")]
    handler = ([_mk("WITH_EXCEPT_START", opcode=OP["DUP_TOP"])] + [m.clone() for m in mid]
               + [_mk("POP_JUMP_IF_TRUE", target=tail[0]), _reraise()] + tail)
    # (the normal exit's copy is made first: _replace turns ``mid`` itself into no-ops, and the
    # ``await`` of ``__aexit__``'s result was lost from an ``async with``'s normal exit)
    normal = _exit_call(mid) + [_mk("JUMP_ABSOLUTE", target=cont)]
    new_end = _replace(recs, k, end, handler)
    if k and recs[k - 1].opname == "BEGIN_FINALLY":
        new_end += len(normal) - 1
        _replace(recs, k - 1, k - 1, normal)
    return new_end


def _replace(recs: List[Rec], first: int, last: int, new: List[Rec]) -> int:
    """Replace ``recs[first..last]`` by ``new``; ``recs[first]`` keeps its identity. Returns the
    index of the last new record."""
    head = recs[first]
    head.become(new[0])
    for r in [head] + new[1:]:
        if r.target is new[0]:
            r.target = head  # new[0] itself never enters ``recs`` (a loop back to the copy's start)
    for old in recs[first + 1:last + 1]:
        old.become(_nop())  # jumps to them now land on a no-op; keep them for identity
    recs[first + 1:first + 1] = new[1:]
    return first + len(new) - 1


# -- try/finally ----------------------------------------------------------------------------------
def _region_end(recs: List[Rec], start: int) -> Optional[int]:
    """Index of the ``END_FINALLY`` closing the block that starts at ``start`` (nesting-aware)."""
    depth = 0
    for j in range(start, len(recs)):
        op = recs[j].opname
        if op in _SETUPS:
            depth += 1
        elif op in _CLOSERS:
            if depth == 0:
                return j if op == "END_FINALLY" else None
            depth -= 1
    return None


def _finally_regions(recs: List[Rec]) -> List[Rec]:
    """Handler records of unprocessed ``try/finally`` blocks (not except-chains)."""
    heads = []
    for r in recs:
        t = r.target
        if r.opname == "SETUP_FINALLY" and not r.rewritten and t is not None \
                and t.opname not in ("DUP_TOP", "POP_TOP", "END_ASYNC_FOR"):
            heads.append(t)
    return heads


def _at_depth0(recs: List[Rec], start: int, end: int):
    """Indices in ``[start, end)`` not inside a nested setup/closer pair."""
    depth = 0
    for j in range(start, end):
        op = recs[j].opname
        if op in _SETUPS:
            depth += 1
        elif op in _CLOSERS:
            depth -= 1
        elif depth == 0:
            yield j


def _copy_body(recs: List[Rec], start: int, end: int, exit_to: Rec) -> List[Rec]:
    """A copy of ``recs[start:end]`` for a non-exception path: jumps stay inside the copy, jumps to
    the closer go to ``exit_to``, and this level's ``POP_FINALLY`` (nothing to pop) vanishes."""
    body = recs[start:end]
    copies = [r.clone() for r in body]
    mapping: Dict[int, Rec] = {id(o): c for o, c in zip(body, copies)}
    mapping[id(recs[end])] = exit_to
    for c in copies:
        if c.target is not None:
            c.target = mapping.get(id(c.target), c.target)
    for j in _at_depth0(recs, start, end):
        if recs[j].opname == "POP_FINALLY":
            copies[j - start].become(_nop())
    return copies + [exit_to]


def _handler_pop_finally(r: Rec) -> List[Rec]:
    """``POP_FINALLY`` on the exception path: drop the exception and its handler block."""
    pops = [_mk("POP_TOP"), _mk("POP_TOP"), _mk("POP_TOP")]
    if r.argval:
        rot = _mk("ROT_FOUR")
        return [rot] + pops + [_mk("ROT_FOUR"), _mk("POP_EXCEPT")]
    return pops + [_mk("POP_EXCEPT")]


def _rewrite_finally(recs: List[Rec], head: Rec) -> bool:
    """Inline the ``finally`` body starting at ``head`` at each entry; end its handler with RERAISE."""
    start = next(k for k, r in enumerate(recs) if r is head)
    end = _region_end(recs, start)
    if end is None:
        return False
    after = recs[end + 1] if end + 1 < len(recs) else None
    entries = [r for r in recs if r.opname == "CALL_FINALLY" and r.target is head]
    begin = recs[start - 1] if start and recs[start - 1].opname == "BEGIN_FINALLY" else None
    for site in entries:
        site_at = next(k for k, r in enumerate(recs) if r is site)
        _replace(recs, site_at, site_at, _copy_body(recs, *_bounds(recs, head), _nop()))
    if begin is not None:
        begin_at = next(k for k, r in enumerate(recs) if r is begin)
        s, e = _bounds(recs, head)
        lead: List[Rec] = []
        cont = after
        if after is not None and after.opname == "POP_EXCEPT" and e + 2 < len(recs) \
                and _is_name_cleanup(recs[s:e]):
            lead, cont = [_mk("POP_EXCEPT")], recs[e + 2]  # ``except ... as name`` cleanup: 3.9 order
        body = _copy_body(recs, s, e, _mk("JUMP_ABSOLUTE", target=cont))
        _replace(recs, begin_at, begin_at, lead + body)
    s, e = _bounds(recs, head)
    for j in reversed(list(_at_depth0(recs, s, e))):
        if recs[j].opname == "POP_FINALLY":
            _replace(recs, j, j, _handler_pop_finally(recs[j]))
    s, e = _bounds(recs, head)
    recs[e].become(_reraise())
    for r in recs:
        if r.opname == "SETUP_FINALLY" and r.target is head:
            r.rewritten = True
    return True


def _is_name_cleanup(body: List[Rec]) -> bool:
    """``body`` is the ``finally`` the compiler wraps around an ``except ... as name`` clause:
    ``name = None; del name``.  (A ``try/finally`` written at the end of a clause is also
    followed by the clause's POP_EXCEPT, which 3.9 puts after its normal-path copy.)"""
    ops = [r.opname for r in body]
    return len(body) == 3 and ops[0] == "LOAD_CONST" and body[0].argval is None \
        and ops[1] in ("STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL") \
        and ops[2] == "DELETE_" + ops[1][len("STORE_"):] and body[1].argval == body[2].argval


def _bounds(recs: List[Rec], head: Rec):
    start = next(k for k, r in enumerate(recs) if r is head)
    return start, _region_end(recs, start)


# -- entry point ----------------------------------------------------------------------------------
def rewrite(raw: List[dis.Instruction]) -> List[dis.Instruction]:
    """3.8 raw instructions -> equivalent raw instructions in 3.9's duplicated-``finally`` layout.

    Returns ``raw`` unchanged when it has no 3.8 subroutine opcodes or a layout is not recognised.
    """
    legacy = {"BEGIN_FINALLY", "CALL_FINALLY", "POP_FINALLY", "END_FINALLY", "WITH_CLEANUP_START"}
    if not any(r.opname in legacy for r in raw):
        return raw
    recs = _to_recs(raw)
    if not _rewrite_withs(recs):
        return raw
    done = set()
    while True:
        todo = [h for h in _finally_regions(recs) if id(h) not in done]
        if not todo:
            break
        order = {id(r): k for k, r in enumerate(recs)}
        head = max(todo, key=lambda h: order[id(h)])  # innermost (latest) first
        done.add(id(head))
        if not _rewrite_finally(recs, head):
            return raw
    for r in recs:
        if r.opname == "END_FINALLY":
            r.become(_reraise())  # an except-chain where no clause matched
    if any(r.opname in legacy for r in recs):
        return raw
    return _to_raw(recs)
