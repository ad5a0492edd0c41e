"""Basic blocks of a neutral instruction list, with dominators, post-dominators and loops.

Normal-flow edges (fall-through and jumps) and exception edges (block -> its handler) are kept
apart: structuring follows normal flow, and exception regions are read off each block's handler.
"""
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from pellucid.bytecode.instruction import Handler, Instr
from pellucid.bytecode.neutral_ops import NO_FALLTHROUGH, TERMINAL

_NO_FALLTHROUGH = NO_FALLTHROUGH


class Block:
    """A maximal run of instructions entered only at its first one and sharing one handler."""

    __slots__ = ("id", "start", "end", "instrs", "succs", "preds", "handler", "jump", "fallthrough",
                 "origin")

    def __init__(self, bid: int, start: int, end: int, instrs: List[Instr]) -> None:
        self.id = bid
        self.start = start  # index of the first instruction
        self.end = end  # one past the last instruction
        self.instrs = instrs
        self.succs: List["Block"] = []
        self.preds: List["Block"] = []
        self.handler: Optional[Handler] = instrs[0].handler if instrs else None
        self.jump: Optional["Block"] = None  # target of the final jump, if any
        self.fallthrough: Optional["Block"] = None
        # The CFG block this one is the tail of, when the structurer resumes mid-block (3.11+
        # merges a ``with``'s cleanup into the code after it); region and loop-body sets hold
        # only CFG blocks, so membership is asked of the origin.
        self.origin: Optional["Block"] = None

    @property
    def last(self) -> Instr:
        return self.instrs[-1]

    def __repr__(self) -> str:
        return "B%d[%d:%d]" % (self.id, self.start, self.end)


class CFG:
    """The control-flow graph of one code object's neutral instructions.

    >>> from pellucid.bytecode.normalize import normalize
    >>> def f(x):
    ...     if x: return 1
    ...     return 2
    >>> len(CFG(normalize(f.__code__)).blocks)
    3
    """

    def __init__(self, instrs: List[Instr], extra_leaders: Optional[Set[int]] = None) -> None:
        """``extra_leaders``: instruction indices that start a block though nothing jumps there
        (see ``rotated_tests``)."""
        self.instrs = instrs
        self.extra_leaders = set(extra_leaders or ())
        self.blocks: List[Block] = []
        self.block_at: Dict[int, Block] = {}
        # Unreachable jumps right after a return/raise/jump (index -> target): 3.8/3.9 keep the
        # one that closed an ``if`` body followed by an ``else``/``elif`` clause.
        self.dead_jumps: Dict[int, int] = {}
        self._build()
        self._prune_unreachable()
        self.handler_blocks: Set[Block] = {self.block_at[b.handler.target] for b in self.blocks
                                           if b.handler is not None and b.handler.target in self.block_at}
        # Exception edges (protected block -> its innermost handler), kept apart from ``preds``.
        self.exc_preds: Dict[Block, List[Block]] = {}
        for b in self.blocks:
            if b.handler is not None and b.handler.target in self.block_at:
                self.exc_preds.setdefault(self.block_at[b.handler.target], []).append(b)
        self.ipdom: Dict[Block, Optional[Block]] = {}
        self.idom: Dict[Block, Optional[Block]] = {}
        self._dom_depth: Dict[Block, int] = {}
        self._pdom_depth: Dict[Block, int] = {}
        self._post_dominators()
        self._dominators()

    # -- construction -------------------------------------------------------------------------
    def _build(self) -> None:
        ins = self.instrs
        n = len(ins)
        leaders = {0} | self.extra_leaders
        for k, x in enumerate(ins):
            if x.target is not None:
                leaders.add(x.target)
                leaders.add(k + 1)
            if x.op in _NO_FALLTHROUGH:
                leaders.add(k + 1)
            if x.handler is not None:
                leaders.add(x.handler.target)
            if k > 0 and ins[k - 1].handler != x.handler:
                leaders.add(k)
            if x.op == "FOR_ITER":
                leaders.add(k)  # a loop header even when the body never loops back (no back edge)
        starts = sorted(s for s in leaders if 0 <= s < n)
        for bid, s in enumerate(starts):
            e = starts[bid + 1] if bid + 1 < len(starts) else n
            b = Block(bid, s, e, ins[s:e])
            self.blocks.append(b)
            self.block_at[s] = b
        for b in self.blocks:
            last = b.last
            if last.target is not None and last.target in self.block_at:
                b.jump = self.block_at[last.target]
            if last.op not in _NO_FALLTHROUGH and b.end in self.block_at:
                b.fallthrough = self.block_at[b.end]
            for s in (b.fallthrough, b.jump):
                if s is not None and s not in b.succs:
                    b.succs.append(s)
                    s.preds.append(b)

    def _prune_unreachable(self) -> None:
        """Drop blocks no normal or exception edge reaches (e.g. the throw path of a folded
        ``SEND`` loop), so they add no false predecessors."""
        live: Set[Block] = set()
        work = [self.blocks[0]] if self.blocks else []
        while work:
            b = work.pop()
            if b in live:
                continue
            live.add(b)
            work.extend(b.succs)
            for ins in b.instrs:
                if ins.handler is not None and ins.handler.target in self.block_at:
                    work.append(self.block_at[ins.handler.target])
        if len(live) == len(self.blocks):
            return
        dead = [b for b in self.blocks if b not in live]
        for b in dead:
            if len(b.instrs) == 1 and b.last.op == "JUMP" and b.last.target is not None \
                    and b.start > 0 and self.instrs[b.start - 1].op in _NO_FALLTHROUGH:
                self.dead_jumps[b.start] = b.last.target
            for s in b.succs:
                if b in s.preds:
                    s.preds.remove(b)
            del self.block_at[b.start]
        self.blocks = [b for b in self.blocks if b in live]

    # -- dominance ---------------------------------------------------------------------------------
    def _post_dominators(self) -> None:
        """Immediate post-dominators over normal edges; ``None`` means the function exit."""
        exits = [b for b in self.blocks if not b.succs]
        order = _reverse_postorder(exits, lambda b: b.preds)
        ip = _immediate_dominators(order, exits, lambda b: b.succs)
        self.ipdom = _Forest((b, ip.get(b)) for b in self.blocks)

    def _dominators(self) -> None:
        """Dominators over normal and exception edges: a handler is reached from the blocks it
        protects, so a ``continue`` in an ``except`` clause is a back edge of the loop."""
        succs: Dict[Block, List[Block]] = {b: list(b.succs) for b in self.blocks}
        for h, ps in self.exc_preds.items():
            for p in ps:
                succs[p].append(h)
        roots = [self.blocks[0]] + [b for b in self.handler_blocks
                                    if b is not self.blocks[0] and not self.exc_preds.get(b)]
        order = _reverse_postorder(roots, lambda b: succs[b])
        self.idom = _immediate_dominators(order, roots, self.all_preds)
        self.rank = {b: k for k, b in enumerate(order)}

    def all_preds(self, b: Block) -> List[Block]:
        """Predecessors over normal and exception edges."""
        extra = self.exc_preds.get(b)
        return b.preds + extra if extra else b.preds

    def dominates(self, a: Block, b: Block) -> bool:
        """Whether every path from the entry to ``b`` passes ``a``."""
        # Climb only as far as ``a``'s depth: a long chain of ifs makes the tree deep, and
        # walking to the root on every query made large functions quadratic.
        # (the memo's entries read here first: asked tens of times per block)
        idom, memo = self.idom, self._dom_depth
        da = memo.get(a)
        if da is None:
            da = _depth(idom, a, memo)
        db = memo.get(b)
        if db is None:
            db = _depth(idom, b, memo)
        node: Optional[Block] = b
        for _ in range(db - da):
            node = idom.get(node)  # type: ignore[arg-type]
        return node is a

    # -- loops ----------------------------------------------------------------------------------
    def loop_body(self, header: Block) -> Set[Block]:
        """Blocks of the natural loop(s) headed by ``header`` (empty if it heads none)."""
        latches = [p for p in header.preds if self.dominates(header, p)]
        return self.natural_loop(header, latches) if latches else set()

    def natural_loop(self, header: Block, latches: List[Block]) -> Set[Block]:
        """``header`` and the blocks that reach one of ``latches`` without passing it."""
        body: Set[Block] = {header}
        work = list(latches)
        while work:
            b = work.pop()
            if b in body:
                continue
            body.add(b)
            work.extend(self.all_preds(b))
        return body

    def is_loop_header(self, b: Block) -> bool:
        return any(self.dominates(b, p) for p in b.preds)

    def common_pdom(self, a: Optional[Block], b: Optional[Block]) -> Optional[Block]:
        """Nearest block post-dominating both (``None``: only the function exit does)."""
        if a is None or b is None:
            return None
        da, db = _depth(self.ipdom, a, self._pdom_depth), _depth(self.ipdom, b, self._pdom_depth)
        if not self.ipdom.changed:
            return _lowest_common(self.ipdom, a, b, da, db)
        x: Optional[Block] = a
        y: Optional[Block] = b
        while da > db:
            x, da = self.ipdom.get(x), da - 1  # type: ignore[arg-type]
        while db > da:
            y, db = self.ipdom.get(y), db - 1  # type: ignore[arg-type]
        while x is not y:
            if x is None or y is None:
                return None
            x, y = self.ipdom.get(x), self.ipdom.get(y)
        return x


class _Forest(dict):  # type: ignore[type-arg]
    """A (post-)dominator forest, child -> parent, that notes being changed once built (the
    jump tables of :func:`_lowest_common` are kept on it and hold only while it is not)."""

    changed = False
    jumps: Optional[List[Dict[Block, Optional[Block]]]] = None

    def __setitem__(self, key: Block, value: Optional[Block]) -> None:
        self.changed = True
        dict.__setitem__(self, key, value)


def _lowest_common(parent: _Forest, a: Block, b: Block, da: int, db: int) -> Optional[Block]:
    """The nearest common ancestor-or-self of ``a`` and ``b`` (depths ``da``, ``db``) in
    ``parent``, None when they are in different trees: by jumps of 2**k ancestors (climbing one
    by one was quadratic in long chains of statements, whose forest is as deep as the code is
    long)."""
    jumps = parent.jumps
    if jumps is None:
        jumps = parent.jumps = [dict(parent)]
        while len(jumps) < 24:
            last = jumps[-1]
            nxt = {k: (last.get(v) if v is not None else None) for k, v in last.items()}
            if not any(v is not None for v in nxt.values()):
                break
            jumps.append(nxt)
    x: Optional[Block] = a
    y: Optional[Block] = b
    if da < db:
        x, y, da, db = b, a, db, da
    diff, k = da - db, 0
    while diff and x is not None:
        if diff & 1:
            x = jumps[k].get(x) if k < len(jumps) else None
        diff >>= 1
        k += 1
    if x is y:
        return x
    if x is None or y is None:
        return None
    for level in reversed(jumps):
        px, py = level.get(x), level.get(y)
        if px is not py:
            x, y = px, py  # type: ignore[assignment]
            if x is None or y is None:
                return None
    return parent.get(x)  # type: ignore[arg-type]


def _depth(parent: Dict[Block, Optional[Block]], b: Block, memo: Dict[Block, int]) -> int:
    """Number of ancestors of ``b`` in a (post-)dominator forest, memoised."""
    chain: List[Block] = []
    node: Optional[Block] = b
    while node is not None and node not in memo:
        chain.append(node)
        node = parent.get(node)
    d = memo[node] if node is not None else -1
    for n in reversed(chain):
        d += 1
        memo[n] = d
    return memo[b]


def _reverse_postorder(roots: List[Block], edges: Callable[[Block], List[Block]]) -> List[Block]:
    """Blocks reachable from ``roots`` along ``edges``, each before the blocks it leads to."""
    seen: Set[Block] = set()
    order: List[Block] = []
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(edges(root)))]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                order.append(node)
            elif nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, iter(edges(nxt))))
    order.reverse()
    return order


def _immediate_dominators(order: List[Block], roots: List[Block],
                          preds: Callable[[Block], List[Block]]) -> Dict[Block, Optional[Block]]:
    """Immediate dominators over ``order`` (a reverse postorder from ``roots``; several roots
    share one virtual root, which maps to ``None``): Lengauer-Tarjan for large graphs, whose
    time does not grow with the tree's depth (the iterative algorithm climbs the tree at every
    join: quadratic when many exits -- each handler's re-raise -- meet a long chain of
    statements under the virtual root); both give the one dominator tree."""
    if len(order) > _ITERATIVE_UP_TO:
        return _lengauer_tarjan(order, roots, preds)
    return _iterative_dominators(order, roots, preds)


_ITERATIVE_UP_TO = 256  # blocks


def _lengauer_tarjan(order: List[Block], roots: List[Block],
                     preds: Callable[[Block], List[Block]]) -> Dict[Block, Optional[Block]]:
    """(see :func:`_immediate_dominators`) the simple version, path compression without
    balancing: O(n log n).  Index 0 is the virtual root."""
    members = set(order)
    succs: Dict[Block, List[Block]] = {b: [] for b in order}
    for b in order:
        for p in preds(b):
            if p in members:
                succs[p].append(b)
    num: Dict[Block, int] = {}
    vertex: List[Optional[Block]] = [None]
    parent: List[int] = [-1]
    stack = [(r, 0) for r in reversed(roots)]
    while stack:
        v, p = stack.pop()
        if v in num:
            continue
        num[v] = len(vertex)
        vertex.append(v)
        parent.append(p)
        n = num[v]
        for w in reversed(succs[v]):
            if w not in num:
                stack.append((w, n))
    size = len(vertex)
    root_nums = set(num[r] for r in roots if r in num)
    pred_nums: List[List[int]] = [[]] + [
        [num[p] for p in preds(vertex[w]) if p in num] + ([0] if w in root_nums else [])  # type: ignore[arg-type]
        for w in range(1, size)]
    semi = list(range(size))
    label = list(range(size))
    ancestor = [-1] * size
    idom = [0] * size
    bucket: List[List[int]] = [[] for _ in range(size)]

    def evaluate(v: int) -> int:
        if ancestor[v] == -1:
            return v
        path = []
        u = v
        while ancestor[ancestor[u]] != -1:
            path.append(u)
            u = ancestor[u]
        for u in reversed(path):
            a = ancestor[u]
            if semi[label[a]] < semi[label[u]]:
                label[u] = label[a]
            ancestor[u] = ancestor[a]
        return label[v]

    for w in range(size - 1, 0, -1):
        for v in pred_nums[w]:
            u = evaluate(v)
            if semi[u] < semi[w]:
                semi[w] = semi[u]
        bucket[semi[w]].append(w)
        pw = parent[w]
        ancestor[w] = pw
        for v in bucket[pw]:
            u = evaluate(v)
            idom[v] = u if semi[u] < semi[v] else pw
        bucket[pw] = []
    for w in range(1, size):
        if idom[w] != semi[w]:
            idom[w] = idom[idom[w]]
    return {b: vertex[idom[num[b]]] for b in order}


def _iterative_dominators(order: List[Block], roots: List[Block],
                          preds: Callable[[Block], List[Block]]) -> Dict[Block, Optional[Block]]:
    """Cooper-Harvey-Kennedy over ``order`` (a reverse postorder from ``roots``).

    Used forwards for dominators and on the reversed graph for post-dominators; several roots
    share one virtual root, which maps to ``None``.
    """
    rank = {b: k for k, b in enumerate(order)}
    root: object = object()
    idom: Dict[Block, object] = {r: root for r in roots}

    def intersect(a: object, c: object) -> object:
        while a is not c:
            while a is not root and c is not root and rank[a] > rank[c]:  # type: ignore[index]
                a = idom[a]  # type: ignore[index]
            while a is not root and c is not root and rank[c] > rank[a]:  # type: ignore[index]
                c = idom[c]  # type: ignore[index]
            if a is root or c is root:
                return root
        return a

    changed = True
    while changed:
        changed = False
        for b in order:
            if b in roots:
                continue
            new: object = None
            for p in preds(b):
                if p in idom:
                    new = p if new is None else intersect(new, p)
            if new is not None and idom.get(b) is not new:
                idom[b] = new
                changed = True
    return {b: (None if v is root else v) for b, v in idom.items()}  # type: ignore[misc]


def tail_code(block: Block, k: int = 0) -> Optional[List[Tuple[Any, ...]]]:
    """The code from ``block.instrs[k]`` on, across fall-throughs, up to a return/raise or an
    unconditional jump (whose target block ends it), as comparable tuples; ``None`` when a
    branch comes first or it runs long.

    CPython (3.10+) copies short endings (a ``return``, an ``except`` clause's ``POP_EXCEPT``
    and jump) into every path that reaches them: two paths with equal tails run the same code.
    """
    out: List[Tuple[Any, ...]] = []
    node: Optional[Block] = block
    for _ in range(8):
        if node is None:
            return None
        for ins in node.instrs[k:]:
            if ins.op == "JUMP":
                out.append(("JUMP", node.jump))
                return out
            if ins.target is not None or len(out) > 32:
                return None
            # (repr keeps 1, 1.0 and True apart; the same constant object reprs the same)
            out.append((ins.op, type(ins.arg).__name__, repr(ins.arg), ins.handler))
            if ins.op in TERMINAL:
                return out
        node, k = node.fallthrough, 0
    return None
