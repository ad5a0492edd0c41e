"""Control-flow structuring: walk the CFG and rebuild ``if``/``while``/``for``/``and``/``or``.

``walk`` follows normal flow from a block, running the stack machine over each block and turning
branches into statements.  Where two paths meet is the nearest common post-dominator; loops are
natural loops (a header dominating its latches); a jump to a loop's header or its exit becomes
``continue``/``break``.  Anything this cannot express raises :class:`StructureError`, which the
caller turns into the documented fallback.
"""
import ast
import copy
from typing import Any, Callable, Dict, FrozenSet, List, NamedTuple, Optional, Set, Tuple

from pellucid.bytecode.cfg import Block
from pellucid.bytecode.instruction import POP_JUMPS, VALUE_JUMPS
from pellucid.bytecode.neutral_ops import TERMINAL
from pellucid.decompiler import markers as M
from pellucid.decompiler import sharing
from pellucid.decompiler.errors import StructureError
from pellucid.decompiler.stack_machine import same_expr
from pellucid.decompiler.copied_tails import operand_at_hole
from pellucid.decompiler.sharing import replace_nodes
from pellucid.decompiler.tree_nodes import all_nodes, copy_tree
from pellucid.decompiler.value_chains import shared_tail_chain

_TERMINAL = TERMINAL
_CASE_START = frozenset(["COPY", "MATCH_SEQUENCE", "MATCH_MAPPING", "LOAD_GLOBAL", "LOAD_NAME",
                         "LOAD_FAST", "LOAD_DEREF"])  # where a ``match`` case may start (see match.py)
# A case can start at a load only as a class pattern's class (``try_match`` looks for the
# ``MATCH_CLASS`` after the loads): in code without one only these can start a case.
_CASE_START_NO_CLASS = frozenset(["COPY", "MATCH_SEQUENCE", "MATCH_MAPPING"])


class _MeetAtLoopPoint(StructureError):
    """(if_statement: retry with arms that end in their own loop jumps)"""


class Loop(NamedTuple):
    header: Block
    cont: Block  # where ``continue`` goes
    brk: Optional[Block]  # where ``break`` goes
    body: FrozenSet[Block]
    # other places a ``continue`` goes (3.10+ ``while c:``: the test before the loop, besides
    # the re-test at its end)
    conts: FrozenSet[Block] = frozenset()


class Ctx(NamedTuple):
    loop: Optional[Loop]
    region: Optional[FrozenSet[Block]]  # blocks this walk may enter (None: any)
    exc: Optional[int]  # effective exception handler of the region


WalkResult = Tuple[List[ast.stmt], Optional[List[Any]], Optional[Block]]


def _single_return(stmts: List[ast.stmt]) -> bool:
    return len(stmts) == 1 and isinstance(stmts[0], ast.Return) and stmts[0].value is not None


def _inline_comprehension_shape(stack: List[Any]) -> bool:
    """``..., <empty list/set/dict>, <iterator>``: a 3.12+ comprehension about to loop."""
    if len(stack) < 2 or not isinstance(stack[-1], M.Iterator):
        return False
    acc = stack[-2]
    if isinstance(acc, (ast.List, ast.Set)):
        return not acc.elts
    if isinstance(acc, ast.Dict):
        return not acc.keys
    return isinstance(acc, ast.Call) and isinstance(acc.func, ast.Name) and acc.func.id == "set" and not acc.args


def _merge_returns(cond: ast.expr, a: ast.expr, b: ast.expr, live: List[Any]) -> Optional[ast.expr]:
    """``a`` with its one subtree that differs from ``b`` made ``x if cond else y``, when that
    keeps the evaluation order: the values computed before the branch (``live``, all of which
    the result must use) are all evaluated before that subtree, nothing else with an effect is."""
    live_ids = set(id(v) for v in live)

    def has_live(n: ast.AST) -> bool:
        return any(id(x) in live_ids for x in all_nodes(n))

    def same(x: Any, y: Any) -> bool:
        if x is y:
            return True
        if isinstance(x, list) and isinstance(y, list):
            return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y))
        if not isinstance(x, ast.AST) or not isinstance(y, ast.AST):
            return x == y
        return type(x) is type(y) and not has_live(x) and not has_live(y) and ast.dump(x) == ast.dump(y)

    def diff(x: ast.AST, y: ast.AST) -> Optional[Tuple[ast.AST, ast.AST, Dict[str, Any]]]:
        """The differing pair, rebuilt along the way: (x-part, y-part, path to it)."""
        if type(x) is not type(y) or isinstance(x, (ast.Name, ast.Constant)) or id(x) in live_ids:
            return None
        pairs = []
        for field in x._fields:
            fx, fy = getattr(x, field, None), getattr(y, field, None)
            if isinstance(x, ast.Slice) and (fx is None) != (fy is None):
                # (a slice bound that is None is the constant None: ``s[:a if c else None]``)
                fx = ast.Constant(None) if fx is None else fx
                fy = ast.Constant(None) if fy is None else fy
            if isinstance(fx, list) and isinstance(fy, list) and len(fx) == len(fy):
                pairs.extend((field, k, p, q) for k, (p, q) in enumerate(zip(fx, fy)))
            else:
                pairs.append((field, None, fx, fy))
        differing = [p for p in pairs if not same(p[2], p[3])]
        if len(differing) != 1 or not all(isinstance(v, ast.expr) for v in differing[0][2:4]):
            return None  # (an operand only one side has)
        return differing[0]  # type: ignore[return-value]

    if same(a, b):
        return None
    # Descend while exactly one child differs; the last such pair becomes the conditional.
    path = []
    pairs = [(a, b)]
    x, y = a, b
    while True:
        d = diff(x, y)
        if d is None:
            break
        field, k, px, py = d
        path.append((x, field, k))
        pairs.append((px, py))
        x, y = px, py
    while path and isinstance(x, ast.Slice):  # (a slice is no operand: the subscript is)
        path.pop()
        pairs.pop()
        x, y = pairs[-1]
    if not path:
        return None
    new: ast.expr = ast.IfExp(cond, x, y)
    for parent, field, k in reversed(path):
        clone = copy.copy(parent)
        if k is None:
            setattr(clone, field, new)
        else:
            lst = list(getattr(parent, field))
            lst[k] = new
            setattr(clone, field, lst)
        new = clone
    # Order: everything evaluated before the conditional is a live value (or inside one, or has
    # no effect); every live value is evaluated before it.
    ifexp = new
    for parent, field, k in path:
        ifexp = getattr(ifexp, field) if k is None else getattr(ifexp, field)[k]
    seen_live = set()
    for node, _, ancestors in sharing.eval_order(new):
        if node is ifexp or any(p is ifexp for p in ancestors):
            return new if seen_live == live_ids else None
        if id(node) in live_ids:
            seen_live.add(id(node))
        elif not (any(id(p) in live_ids for p in ancestors) or sharing.trivial(node)
                  or not isinstance(node, ast.expr)):
            return None
    return None


def _constant_return(st: ast.stmt) -> bool:
    return isinstance(st, ast.Return) and (st.value is None or isinstance(st.value, ast.Constant))


def _laid_out(cond: ast.expr, then: ast.expr, orelse: ast.expr, t: Block, f: Block
              ) -> Tuple[ast.expr, ast.expr, ast.expr]:
    """``(test, body, orelse)`` of the conditional expression choosing ``then`` (arm ``t``) or
    ``orelse`` (arm ``f``) on ``cond``.  The compiler lays out the body of ``a if c else b``
    first: where the false arm comes first, the source was ``b if not c else a``."""
    if f.start < t.start:
        return negate(cond), orelse, then
    return cond, then, orelse


def _copied_return(a: ast.stmt, b: ast.stmt) -> bool:
    """Two ``return`` statements made from copies of one ``RETURN_VALUE`` (the same source
    position, known)."""
    pa, pb = getattr(a, "_pos", None), getattr(b, "_pos", None)
    return pa is not None and pa == pb


def _copied_constant_return(block: Block) -> bool:
    """``block`` is ``LOAD_CONST c; RETURN_VALUE`` from two raw instructions, not one
    ``RETURN_CONST`` (meaningful where RETURN_CONST exists, 3.12+)."""
    instrs = block.instrs
    return len(instrs) == 2 and instrs[1].op == "RETURN_VALUE" and instrs[0].op == "LOAD_CONST" \
        and instrs[0].offset != instrs[1].offset


_SIMPLE_LEAVE = (ast.Return, ast.Raise)
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith,
             ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _ending_in_else(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """``[..., if c: return a, <simple statements>; return b]`` as ``if c: return a else:
    ...`` (3.8/3.9).  Both compile alike, except that only the ``else`` ends a basic block
    after the last ``return``: an unreachable jump after it (closing an enclosing ``if`` body
    over its ``else``) survives the peephole pass only then."""
    if len(stmts) < 2 or not isinstance(stmts[-1], _SIMPLE_LEAVE):
        return stmts
    k = len(stmts) - 2
    while k >= 0 and not isinstance(stmts[k], _COMPOUND):
        k -= 1
    head = stmts[k] if k >= 0 else None
    if not isinstance(head, ast.If) or head.orelse or not head.body \
            or not isinstance(head.body[-1], _SIMPLE_LEAVE):
        return stmts
    folded = ast.If(head.test, head.body, stmts[k + 1:])
    for attr in ("_pos", "_paren"):
        if hasattr(head, attr):
            setattr(folded, attr, getattr(head, attr))
    return stmts[:k] + [folded]


def _else_leaves_plainly(stmts: List[ast.stmt]) -> bool:
    """The arm ends in a ``return``, a ``raise`` of an exception, ``break`` or ``continue``."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Raise):
        return last.exc is not None and not isinstance(last.exc, M.Marker)
    return type(last) in (ast.Return, ast.Break, ast.Continue)


_PLAIN = (type(None), bool, int, float, complex, str, bytes, tuple, frozenset)


def _same_arg(a: Any, b: Any) -> bool:
    """Equal instruction arguments: the same object, or plain values with the same type and
    repr (``0.0`` is not ``-0.0``; Dynamo's constants may compare as tensors, so others are
    compared by identity only)."""
    if a is b:
        return True
    if type(a) is not type(b) or not isinstance(a, _PLAIN):
        return False
    if isinstance(a, (tuple, frozenset)):
        return len(a) == len(b) and all(_same_arg(p, q) for p, q in zip(a, b)) \
            if isinstance(a, tuple) else False
    return repr(a) == repr(b)


def same_code(a: Block, b: Block, depth: int = 0) -> bool:
    """Whether two blocks run the same instructions and go on to the same (or same-code)
    blocks: CPython copies a small exit (``__exit__`` call + ``return val``) into each path
    that reaches it, so two arms of an ``if`` can end in copies instead of meeting."""
    if a is b:
        return True
    if depth > 8 or len(a.instrs) != len(b.instrs) or a.handler != b.handler:
        return False
    for x, y in zip(a.instrs, b.instrs):
        if x.op != y.op or not _same_arg(x.arg, y.arg):
            return False
        if (x.target is None) != (y.target is None):
            return False
    if (a.jump is None) != (b.jump is None) or (a.fallthrough is None) != (b.fallthrough is None):
        return False
    return all(p is None or same_code(p, q, depth + 1)  # type: ignore[arg-type]
               for p, q in ((a.jump, b.jump), (a.fallthrough, b.fallthrough)))


def _reaches_within_iteration(start: Block, goal: Block, header: Block) -> bool:
    """Whether normal flow from ``start`` reaches ``goal`` without passing the loop's
    ``header`` (going round the loop)."""
    seen = {start}
    work = [start]
    while work:
        b = work.pop()
        if b is goal:
            return True
        if b is header:
            continue
        for s in b.succs:
            if s not in seen:
                seen.add(s)
                work.append(s)
    return False



def _shares_conditionally(cond: ast.expr, stack: List[Any]) -> bool:
    """``cond`` evaluates a copied value (a walrus in a chained comparison) whose other use it
    may skip: no statement can give that value a name first."""
    probe = ast.Expr(cond)
    found = sharing.first_shared(probe, stack, all_nodes(probe))
    return found is not None and found[1]

def past_lone_jumps(block: Block) -> Block:
    """Where ``block`` leads when it (and the blocks after it) only jump."""
    for _ in range(8):
        if len(block.instrs) != 1 or block.last.op != "JUMP" or block.jump is None or block.jump is block:
            break
        block = block.jump
    return block


def _drops_into_copy(dropping: Block, plain: Block) -> bool:
    """``dropping`` is ``POP_TOP`` followed by the instructions of ``plain`` (going on to the
    same or same-code blocks)."""
    ins = dropping.instrs
    if len(ins) != len(plain.instrs) + 1 or ins[0].op != "POP_TOP" or dropping.handler != plain.handler:
        return False
    for x, y in zip(ins[1:], plain.instrs):
        if x.op != y.op or not _same_arg(x.arg, y.arg) or (x.target is None) != (y.target is None):
            return False
    if (dropping.jump is None) != (plain.jump is None) \
            or (dropping.fallthrough is None) != (plain.fallthrough is None):
        return False
    return all(p is None or same_code(p, q)  # type: ignore[arg-type]
               for p, q in ((dropping.jump, plain.jump), (dropping.fallthrough, plain.fallthrough)))


def negate(e: ast.expr) -> ast.expr:
    """``not e``, simplified where that is exact.

    The result keeps ``e``'s source position: a test compiles to a jump at its operand's
    line, and 3.12+ thread a jump into a loop's closing jump only when their lines agree, so
    an untagged test can change the layout."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        return e.operand
    out: ast.expr = ast.UnaryOp(ast.Not(), e)
    if isinstance(e, ast.Compare) and len(e.ops) == 1:
        flip = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
        t = flip.get(type(e.ops[0]))
        if t is not None:
            out = ast.Compare(e.left, [t()], e.comparators)
    position = getattr(e, "_pos", None)
    if position is not None:
        out._pos = position  # type: ignore[attr-defined]
    return out


def _negations(e: ast.expr) -> int:
    """How many ``not``s (``not x``, ``not in``, ``is not``) ``e`` spells at its top level."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        return 1 + _negations(e.operand)
    if isinstance(e, ast.Compare):
        return sum(isinstance(op, (ast.NotIn, ast.IsNot)) for op in e.ops)
    if isinstance(e, ast.BoolOp):
        return sum(_negations(v) for v in e.values)
    return 0


def test_form(e: ast.expr) -> ast.expr:
    """A statement's test ``not (a and b)`` as ``not a or not b`` when that spells fewer
    negations (``not x or y in s`` rather than ``not (x and y not in s)``).

    Only for tests, where just the truth value counts: ``not a or b`` is ``b`` itself, not
    ``bool(b)``.  The compiler lays both spellings out the same, except that it compiles
    ``y in s`` and ``y not in s`` to different instructions, so the spelling matters."""
    if not (isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not)
            and isinstance(e.operand, ast.BoolOp)) or getattr(e.operand, "_paren", False):
        return e
    inner = e.operand
    flipped = [negate(v) for v in inner.values]
    if sum(_negations(v) for v in flipped) >= _negations(e):
        return e
    kind = ast.Or if isinstance(inner.op, ast.And) else ast.And
    out = ast.BoolOp(kind(), flipped)
    position = getattr(e, "_pos", None)
    if position is not None:
        out._pos = position  # type: ignore[attr-defined]
    return out


def boolop(kind: type, a: ast.expr, b: ast.expr) -> ast.expr:
    values: List[ast.expr] = []
    for x in (a, b):
        if isinstance(x, ast.BoolOp) and isinstance(x.op, kind) and not getattr(x, "_paren", False):
            values.extend(x.values)
        else:
            values.append(x)
    merged = _merge_chained(values) if kind is ast.And else _merge_negated_chained(values)
    if len(merged) == 1:
        return merged[0]
    return ast.BoolOp(kind(), merged)


def _grouped(e: ast.expr) -> ast.expr:
    """``e`` as one operand: a nested ``and``/``or`` of the same kind must not be flattened into
    the enclosing one (``a or (b or c)`` short-circuits as ``a or b or c``, but keep the shape)."""
    if isinstance(e, ast.BoolOp):
        e._paren = True  # type: ignore[attr-defined]
    return e


def _merge_negated_chained(values: List[ast.expr]) -> List[ast.expr]:
    """``not a < b or not b < c`` where both ``b`` are one evaluation -> ``not a < b < c`` (a
    chained comparison negated, read as an ``or`` of its failed links)."""
    out: List[ast.expr] = []
    for v in values:
        prev = out[-1] if out else None
        if prev is not None and isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not) \
                and isinstance(prev, ast.UnaryOp) and isinstance(prev.op, ast.Not) \
                and isinstance(v.operand, ast.Compare) and isinstance(prev.operand, ast.Compare) \
                and v.operand.left is prev.operand.comparators[-1]:
            a, b = prev.operand, v.operand
            joined = ast.UnaryOp(ast.Not(), ast.Compare(a.left, a.ops + b.ops, a.comparators + b.comparators))
            for node, origin in ((joined, prev), (joined.operand, a)):
                position = getattr(origin, "_pos", None)
                if position is not None:
                    node._pos = position  # type: ignore[attr-defined]
            out[-1] = joined
        else:
            out.append(v)
    return out


def _merge_chained(values: List[ast.expr]) -> List[ast.expr]:
    """``a < b and b < c`` where both ``b`` are one evaluation -> ``a < b < c``."""
    out: List[ast.expr] = []
    for v in values:
        if out and isinstance(v, ast.Compare) and isinstance(out[-1], ast.Compare) \
                and v.left is out[-1].comparators[-1]:
            prev = out[-1]
            out[-1] = ast.Compare(prev.left, prev.ops + v.ops, prev.comparators + v.comparators)
        else:
            out.append(v)
    return out


class Structurer:
    """Mixin over StackMachine: the region walker."""

    floor = 0
    outer_floor = 0
    latch_tests: Set[Block]  # set by the host's __init__: a loop's re-test is no operand of an ``if``
    guard_tries: Set[Block]  # set by the host's __init__ (see loops._rotated_guard)
    guard_failed: Set[Block]  # (likewise)
    forward_only_tests = False  # 3.12+: conditional jumps only go forward (set by the host)
    returns_const = False  # 3.12+: ``return <constant>`` is one RETURN_CONST (set by the host)
    break_cuts: Dict[Block, Tuple[int, Block]]  # set by the host's __init__; filled by loops
    brk_copies: Dict[Block, FrozenSet[Block]]  # (likewise: a loop's follow -> copies of it)

    def walk(self, block: Optional[Block], stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
             first: Optional[Block] = None) -> WalkResult:
        out: List[ast.stmt] = []
        stack = list(stack)  # never mutate a caller's stack: branches and retries reuse theirs
        steps = 0
        while True:
            steps += 1
            if steps > 100000:
                raise StructureError("runaway walk")
            if block is None:
                return out, None, None
            if block in stop:
                return out, stack, block
            if block is not first:
                jump = self.loop_jump(block, ctx)
                if jump is not None:
                    self.emit(out, jump, stack)
                    return out, None, None
            absorbed = False
            # (a block resumed mid-way is in the region its CFG block is in)
            if ctx.region is not None and (block.origin or block) not in ctx.region:
                leave = self.private_exit(block, ctx, stack)
                if leave is False:
                    return out, stack, block
                if isinstance(leave, list):
                    # the finally copy / __exit__ call and the return/break/continue after it
                    out.extend(leave)
                    return out, None, None
                absorbed = True  # a return/break path just outside the try: part of its body
            first = None
            if absorbed:
                pass
            elif block not in self.active_loops and (self.cfg.is_loop_header(block)
                                                     or block.last.op == "FOR_ITER") \
                    and not self._try_holds_loop(block, ctx):
                built = self.compound(self.build_loop, block, stack, ctx, stop, out)
                stack, block = self._moved_on(block, ctx, stop, built)
                if stack is None:
                    return out, None, None
                continue
            elif ctx.exc is not None and ctx.exc not in self.handler_chain(block) \
                    and self.inert_exit(block, ctx):
                pass  # a return leaving the enclosing try too (see ``inert_exit``)
            elif self.effective_handler(block) != ctx.exc:
                built = self.compound(self.build_protected, block, stack, ctx, stop, out)
                stack, block = self._moved_on(block, ctx, stop, built)
                if stack is None:
                    return out, None, None
                continue
            nxt = self.run_block(block, stack, ctx, stop, out)
            if nxt is None:
                return out, None, None
            stack, block = nxt

    def _arm_known(self, block: Block, stack: List[Any], ctx: Ctx, stop: FrozenSet[Block]
                   ) -> Tuple[Any, Optional[WalkResult]]:
        """The key of an arm's walk (what the walk reads) and a copy of its remembered result.

        An arm walked only computes values (no statements, no state changed) is remembered
        (``_arm_keep``): the arms of an ``if``/``and``/``or`` walked again from the same block,
        with the same stack, get a copy of the first reading.  Before 3.12 an ``and`` inside an
        ``or`` value (``(a and b) or rest``) reaches ``rest`` from both of ``a``'s arms: ``b``'s
        JUMP_IF_TRUE_OR_POP falls into it and ``a``'s test jumps to it.  Read twice at each
        operand, a chain of n operands took 2**n block walks; remembered, each is read once
        (value_chains joins the copies).  The callers call ``walk`` themselves between the two
        halves: an ``elif`` chain nests a walk per arm, and a wrapper's frame per level would
        reach the recursion limit sooner.  Only a block entered from more than one place can
        be walked again this way: others are neither looked up nor remembered (remembering
        copies the result, and each level of a nested chain holds the rest of it)."""
        if len(block.preds) < 2:
            return None, None
        cache = self.__dict__.get("_arm_cache")
        if cache is None:
            cache = self._arm_cache = {}
        temps, pending, globals_, nonlocals = self.save_state()
        key = (block, tuple(map(id, stack)), stop, id(ctx.loop), id(ctx.region), ctx.exc,
               self.floor, self.outer_floor, frozenset(self.active_loops),  # type: ignore[attr-defined]
               frozenset(self.latch_tests), temps,
               tuple((k, len(v)) for k, v in pending.items()), len(globals_), len(nonlocals))
        known = cache.get(key)
        if known is None:
            return key, None
        # The remembered nodes are kept apart from the ones handed out (a caller may mark them);
        # the stack's own values stay shared.
        return key, ([], copy_tree(known[1], stack), known[2])

    def _arm_keep(self, key: Any, stack: List[Any], ctx: Ctx, result: WalkResult) -> WalkResult:
        """Remember ``result`` under ``key`` when the walk made no statement and changed no
        state (the key holds the state it started from); hand ``result`` back."""
        if key is not None and not result[0] and result[1] is not None:
            temps, pending, globals_, nonlocals = self.save_state()
            if temps == key[10] and tuple((k, len(v)) for k, v in pending.items()) == key[11] \
                    and len(globals_) == key[12] and len(nonlocals) == key[13]:
                # (``stack`` and ``ctx`` are kept with the entry: the ids in the key stay theirs)
                self._arm_cache[key] = (list(stack), copy_tree(result[1], stack), result[2], ctx)
        return result

    def _try_holds_loop(self, header: Block, ctx: Ctx) -> bool:
        """``header`` heads a loop and starts a new ``try``/``with`` level whose region holds
        the loop's back edges: the statement encloses the loop (``try: while True: ...``).

        A loop whose first statement is a ``try`` starts in that region too (3.11+ has no
        instruction before it), but it goes back to the header from outside the region, after
        the statement; built first, the loop puts the ``try`` inside, where it belongs.  Built
        first here, it would put the ``try`` statement's ``finally`` inside the loop."""
        if self.effective_handler(header) == ctx.exc:  # type: ignore[attr-defined]
            return False
        chain = self.handler_chain(header)  # type: ignore[attr-defined]
        if ctx.exc is None:
            level = chain[-1] if chain else None
        else:
            pos = chain.index(ctx.exc) if ctx.exc in chain else 0
            level = chain[pos - 1] if pos > 0 else None
        if level is None:
            return False
        latches = [p for p in header.preds if self.cfg.dominates(header, p)]
        if not latches:
            return False
        # A latch that only jumps has the handler of the code before it (3.12+ leaves such jumps
        # out of the exception table; see bytecode.normalize): where it is also entered from
        # outside the region -- the statement's clause going back to the loop, ``while 1:
        # try: ... except E: pass`` -- the loop encloses the statement.
        back = [q for p in latches for q in (p.preds if len(p.instrs) == 1 and p.last.op == "JUMP"
                                            else [p])]
        return all(level in self.handler_chain(p) for p in back)  # type: ignore[attr-defined]

    def _moved_on(self, start: Block, ctx: Ctx, stop: FrozenSet[Block],
                  result: Tuple[Optional[List[Any]], Optional[Block]]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        """A loop/try/with statement's way on, which must not be the block it started at unless
        the walk stops there (``continue`` to a loop whose body starts with the statement): the
        walk would build the same statement again and again, so the region was misread."""
        if result[0] is not None and result[1] is start and start not in stop \
                and self.loop_jump(start, ctx) is None:
            raise StructureError("a statement that goes on where it started")
        return result

    def compound(self, build: Any, block: Block, stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
                 out: List[ast.stmt]) -> Tuple[Optional[List[Any]], Optional[Block]]:
        """Run a loop/try/with builder with the values below it saved and out of its reach.

        A 3.12+ comprehension loop (iterator over an empty display) is an expression, not a
        statement: nothing is saved for it.
        """
        if not _inline_comprehension_shape(stack):
            self.spill_before_compound(out, stack)
        saved = self.floor
        saved_outer = self.outer_floor
        self.outer_floor = saved  # for builders that also walk what follows their statement
        self.floor = max(saved, len(stack) - 1) if _inline_comprehension_shape(stack) else len(stack)
        try:
            return build(block, stack, ctx, stop, out)
        finally:
            self.floor = saved
            self.outer_floor = saved_outer

    def loop_jump(self, block: Block, ctx: Ctx) -> Optional[ast.stmt]:
        loop = ctx.loop
        if loop is None:
            return None
        # A block that only jumps on (3.12+ puts ``continue`` in one) counts as its target; so
        # does one that only holds NOPs and falls on: 3.10-3.13 start ``while True:`` with a NOP
        # of its line, where an enclosing ``while c:`` also starts its body -- the inner loop's
        # ``continue`` goes to that NOP (which may head the outer loop), not to the inner head.
        conts = loop.conts
        for _ in range(16):
            if block is loop.header or block is loop.cont or block is loop.brk or block in conts:
                break
            if len(block.instrs) == 1 and block.last.op == "JUMP" and block.jump is not None:
                block = block.jump
            elif block.jump is None and block.fallthrough is not None \
                    and all(i.op == "NOP" for i in block.instrs):
                block = block.fallthrough
            else:
                break
        if block is loop.brk or (loop.brk is not None and block in self.brk_copies.get(loop.brk, ())):
            return ast.Break()
        if block is loop.cont or block in conts:
            return ast.Continue()
        return None

    # one block ---------------------------------------------------------------------------------
    def run_block(self, block: Block, stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
                  out: List[ast.stmt]) -> Optional[Tuple[List[Any], Optional[Block]]]:
        # Readings tried and undone can nest (each arm of an and/or value before 3.12 walks the
        # rest of the chain: 2**n blocks for n terms): past a generous budget the structured
        # reading gives up and the fallback, linear, is used -- the decompiler never stalls.
        runs = self.__dict__.get("_blocks_run", 0) + 1
        self._blocks_run = runs
        if runs > 200 * len(self.cfg.blocks) + 10000:
            raise StructureError("structuring gave up after %d block walks (%d blocks)"
                                 % (runs - 1, len(self.cfg.blocks)))
        cut = self.break_cuts.get(block)
        if cut is not None:
            # a ``break`` path holding a copy of the code after the loop (see loops.py): run
            # up to the iterator's pop, then go where the loop's ``break`` goes
            k, target = cut
            for ins in block.instrs[:k]:
                self.step(ins, stack, out)
            return stack, target
        case_start = self.__dict__.get("_case_start")
        if case_start is None:
            # (asked of every instruction: Dynamo's code loads dozens of values in a row, and
            # try_match would scan each run of loads from every one of them for a MATCH_CLASS)
            has_class = any(i.op == "MATCH_CLASS" for i in self.instrs)  # type: ignore[attr-defined]
            case_start = self._case_start = _CASE_START if has_class else _CASE_START_NO_CLASS
        for k, ins in enumerate(block.instrs[:-1]):
            if ins.op in case_start or (k == 0 and stack and id(stack[-1]) in self.__dict__.get(
                    "_next_case_subjects", ())):  # (a match's next case: see try_match)
                m = self.try_match(block, k, stack, ctx, stop, out)  # type: ignore[attr-defined]
                if m is not False:
                    return m
            self.step(ins, stack, out)
        last = block.last
        if last.op in POP_JUMPS:
            return self.build_if(block, stack, ctx, stop, out)
        if last.op in VALUE_JUMPS:
            return self.build_value_branch(block, stack, ctx, stop, out)
        if last.op == "FOR_ITER":
            raise StructureError("FOR_ITER outside a loop header")
        if last.op == "JUMP":
            return stack, block.jump
        self.step(last, stack, out)
        if last.op in _TERMINAL:
            return None
        return stack, block.fallthrough

    # conditions --------------------------------------------------------------------------------
    def branch_condition(self, block: Block, stack: List[Any]) -> Tuple[ast.expr, Block, Block]:
        """Pop the block's condition: (expression, block when true, block when false)."""
        last = block.last
        v = self.value(stack.pop())
        jump, fall = block.jump, block.fallthrough
        if jump is None or fall is None:
            raise StructureError("conditional jump out of the code")
        if last.op == "POP_JUMP_IF_FALSE":
            return v, fall, jump
        if last.op == "POP_JUMP_IF_TRUE":
            return v, jump, fall
        # As for the jumps above, the arm that falls through is the ``if`` body: ``if x is None:
        # A`` jumps past A when ``x`` is not None.
        none = ast.Constant(None)
        if last.op == "POP_JUMP_IF_NONE":
            return ast.Compare(v, [ast.IsNot()], [none]), fall, jump
        return ast.Compare(v, [ast.Is()], [none]), fall, jump

    def _condition_only(self, block: Block, chain: FrozenSet[Block], stack: List[Any]) -> Optional[Tuple[ast.expr, Block, Block, List[Any]]]:
        """If ``block`` just computes another condition (no statements), that condition.

        ``chain``: the blocks of the condition folded so far; ``block`` must be entered only
        from them (so only where that condition sends it), in their exception region."""
        if not self._continues_condition(block, chain):
            return None
        try:
            trial = self._condition_operands(block, stack)
            if trial is None:
                return None
            e, t, f = self.branch_condition(block, trial)
        except StructureError:
            return None
        return e, t, f, trial

    def _continues_condition(self, block: Block, chain: FrozenSet[Block]) -> bool:
        """``block`` ends in a test, is entered only from ``chain`` in its exception region,
        and heads no loop: it can be one more operand of the condition ``chain`` computes."""
        return bool(block.preds) and set(block.preds) <= chain and block.last.op in POP_JUMPS \
            and block not in self.active_loops and not self.cfg.is_loop_header(block) \
            and block not in self.latch_tests \
            and all(block.handler == p.handler for p in block.preds)

    def _condition_operands(self, block: Block, stack: List[Any]) -> Optional[List[Any]]:
        """The stack after ``block``'s instructions before its test, or None when they make
        statements (then ``block`` is not only a condition)."""
        trial = list(stack)
        sink: List[ast.stmt] = []
        for ins in block.instrs[:-1]:
            self.step(ins, trial, sink)
        return None if sink else trial

    def _skip_trampoline(self, block: Block) -> Block:
        """Blocks that only drop a duplicated value and jump on (chained comparisons)."""
        while all(i.op in ("POP_TOP", "SWAP", "JUMP") for i in block.instrs) \
                and any(i.op == "POP_TOP" for i in block.instrs) and len(block.instrs) <= 3:
            nxt = block.jump if block.last.op == "JUMP" else block.fallthrough
            if nxt is None:
                break
            block = nxt
        return block

    def _meet(self, new: Block, old: Block, skip: Callable[[Block], Block],
              before: List[Any], after: List[Any]) -> Optional[Block]:
        """Where a condition's test sending to ``new`` and the earlier tests sending to ``old``
        both go, or None when they go to different places.

        Targets are the same through trampolines (``skip``).  They are also the same when
        ``old`` drops the duplicated middle operand of a chained comparison and then runs a copy
        of ``new``: 3.10+ copies a small exit (``return None``) into each jump to it, so the
        short-circuit cleanup of ``if a < b < c < d:`` carries its own copy of the code the last
        test jumps to.  Then ``new`` is the target, reached with the operand gone (``after`` is
        ``before`` less that operand).  Past that cleanup, two copies of one exit that leaves
        are one target too, and so are blocks that only jump to one place.  Elsewhere copies
        stay apart: ``if not a: x; elif b:
        y; else: x`` is not ``if a and b: y`` with ``x`` after it, though it runs the same.
        """
        a, b = skip(new), skip(old)
        if a is b:
            return new if new is old else b
        if len(before) == len(after) + 1 and not isinstance(before[-1], (M.Exc, M.ExcPart)) \
                and _drops_into_copy(b, a):
            # (not the handled exception an ``except`` clause drops once its test matched:
            # ``except E: raise`` then ``except: if not c: raise`` are two clauses)
            return a
        if b is not old and not a.succs and not b.succs and same_code(a, b):
            return a  # two copies of one exit, one after the chain's cleanup (a 3.12+ latch)
        if b is not old and past_lone_jumps(a) is past_lone_jumps(b):
            return a  # (3.11 jumps from a chain's last test to where its cleanup goes)
        return None

    def compound_condition(self, block: Block, stack: List[Any]) -> Tuple[ast.expr, Block, Block, List[Any]]:
        """Fold chains of condition-only blocks into one ``and``/``or`` expression.

        Targets are compared through trampolines (blocks that only drop a duplicated value and
        jump on, as chained comparisons leave); a trampoline is only bypassed where folding
        needed it, since elsewhere its pop is real.
        """
        cond, t, f, stack, _ = self._fold_condition(block, stack)
        return cond, t, f, stack

    def _sub_condition(self, block: Block, chain: FrozenSet[Block], stack: List[Any]) -> Optional[Tuple[ast.expr, Block, Block, List[Any], FrozenSet[Block]]]:
        """If ``block`` starts a whole ``and``/``or`` of its own (no statements), entered only
        from ``chain``: that condition, its targets, the stack after it and its blocks."""
        if not self._continues_condition(block, chain):
            return None
        # Remembered per block and stack: an ``if``/``elif`` chain's every test starts a group
        # that runs down the rest of the chain, once for each enclosing test and again when the
        # test's own ``if`` is built -- quadratic in the chain's length without this.  The group
        # does not depend on ``chain`` (checked above); what else it reads is in the key.  The
        # remembered nodes are kept apart from the ones handed out (a caller may mark them),
        # and the stack's own values stay shared.
        cache = self.__dict__.get("_group_cache")
        if cache is None:
            cache = self._group_cache = {}
        key = (block, tuple(map(id, stack)), self.floor,
               frozenset(self.active_loops), frozenset(self.latch_tests))
        known = cache.get(key)
        if known is None:
            try:
                trial = self._condition_operands(block, stack)
                found = None if trial is None else self._fold_condition(block, trial, through_jumps=True)
            except (StructureError, IndexError):
                found = None
            # (``stack`` is kept with the entry: the ids in the key stay its values')
            known = cache[key] = (list(stack), found if found is None else
                                  (copy_tree([found[0], found[3]], stack), found[1], found[2], found[4]))
            return found
        if known[1] is None:
            return None
        (cond, st), t, f, blocks = known[1]
        cond, st = copy_tree([cond, st], stack)
        return cond, t, f, st, blocks

    def _through_jumps(self, block: Block) -> Block:
        """Past blocks that only jump (3.12+ gives each ``continue`` of a condition its own)."""
        for _ in range(16):
            if len(block.instrs) != 1 or block.last.op != "JUMP" or block.jump is None \
                    or block.jump is block:
                break
            block = block.jump
        return self._skip_trampoline(block)

    def _past_cleanup_jump(self, arm: Block, chain: FrozenSet[Block]) -> Tuple[Block, FrozenSet[Block]]:
        """Where ``arm`` leads, and the blocks passed, when the way there jumps over a chained
        comparison's cleanup: 3.10+ end ``a < b < c or d`` with the last comparison jumping past
        the ``POP_TOP`` the earlier ones go to when false, and both lead to ``d``'s test.  That
        test is one more operand when every way into it is from ``chain``, by such a lone jump
        or such a cleanup entered only from ``chain`` (else ``arm`` itself, nothing passed)."""
        def lone_jump(b: Block) -> bool:
            return len(b.instrs) == 1 and b.last.op == "JUMP" and b.jump is not None \
                and b.jump is not b and bool(b.preds) and set(b.preds) <= chain

        entry = arm.jump if lone_jump(arm) else arm
        passed = set()
        for p in entry.preds:
            if p in chain:
                continue
            if lone_jump(p) and p.jump is entry:
                passed.add(p)
                continue
            if not p.preds or not set(p.preds) <= chain or p.handler != entry.handler \
                    or not any(i.op == "POP_TOP" for i in p.instrs) \
                    or self._skip_trampoline(p) is not entry:
                return arm, frozenset()
            passed.add(p)
        if not passed:
            return arm, frozenset()
        return entry, frozenset(passed)

    def _fold_condition(self, block: Block, stack: List[Any], through_jumps: bool = False
                        ) -> Tuple[ast.expr, Block, Block, List[Any], FrozenSet[Block]]:
        """``compound_condition``, also returning the blocks the condition spans.

        A block joins the condition when it computes one more test (no statements) and is
        entered only from the condition's blocks so far: it runs exactly when the condition
        reaches it, so ``cond and x`` / ``cond or x`` (when the other targets agree) is exact.
        That covers groups on either side: ``a or (b and c)``, ``(a and b) or c``.
        """
        cond, t, f = self.branch_condition(block, stack)
        chain = frozenset([block])
        # Inside a nested group, and when matching one, targets that only jump on to the same
        # place are the same target; elsewhere that is left to the loop/if builders.
        skip = self._through_jumps if through_jumps else self._skip_trampoline
        jskip = self._through_jumps
        while True:
            # The next operand: a block computing one more test (``cond and x``/``cond or x``),
            # else one arm that is a whole ``and``/``or`` of its own (``a or (b and c)``, ``a and
            # (b or c)``: both ways the group ends where ``a`` jumps to).
            grown = None
            for group in (False, True):
                for kind, arm in ((ast.And, t), (ast.Or, f)):
                    arm, passed = self._past_cleanup_jump(arm, chain)
                    if passed and not group:
                        # (past a chained comparison's cleanup the operand is read whole, as a
                        # group: ``not a < b < c or not 0 < (p := x) < 1`` -- one block at a
                        # time it is ``not 0 < (p := x) or not ...``, whose shared middle
                        # operand is then used conditionally)
                        continue
                    if group:
                        z = self._sub_condition(arm, chain | passed, stack)
                        operand = None if z is None else (z[:4], z[4] | passed)
                    else:
                        y = self._condition_only(arm, chain | passed, stack)
                        operand = None if y is None else (y, frozenset([arm]) | passed)
                    if operand is not None:
                        grown = self._grow(kind, cond, t, f, stack, operand[0], group,
                                           jskip if group else skip)
                        if grown is not None and passed and _shares_conditionally(grown[0], grown[3]):
                            grown = None  # (read as nested tests instead, as before this layout)
                        if grown is not None:
                            cond, t, f, stack = grown
                            chain = chain | operand[1]
                            break
                if grown is not None:
                    break
            if grown is None:
                chosen = self._grow_choice(cond, t, f, chain, stack, jskip)
                if chosen is None:
                    return cond, t, f, stack, chain
                cond, t, f, stack, chain = chosen

    def _grow_choice(self, cond: ast.expr, t: Block, f: Block, chain: FrozenSet[Block],
                     stack: List[Any], skip: Callable[[Block], Block]
                     ) -> Optional[Tuple[ast.expr, Block, Block, List[Any], FrozenSet[Block]]]:
        """``cond`` choosing between two conditions that go to the same two places: a
        conditional expression tested (``if (a if c else b) and x:`` jumps from ``c`` to the
        test of ``a`` or of ``b``, each jumping on by its truth).  Read as branches instead,
        the code after them was read once per arm, and once more per such operand after it:
        2**n for n operands.  The condition, its targets, the stack after it and its blocks,
        or None."""
        if t is f:
            return None
        zt = self._sub_condition(t, chain, stack)
        if zt is None:
            return None
        zf = self._sub_condition(f, chain | zt[4], stack)
        if zf is None or zt[4] & zf[4]:
            return None
        et, tt, ft, st_t, bt = zt
        ef, tf, ff, st_f, bf = zf
        if len(st_t) != len(st_f) or any(x is not y for x, y in zip(st_t, st_f)):
            return None
        for negated, (f_true, f_false) in ((False, (tf, ff)), (True, (ff, tf))):
            m_true = self._meet(f_true, tt, skip, st_t, st_f)
            m_false = self._meet(f_false, ft, skip, st_t, st_f) if m_true is not None else None
            if m_false is None:
                continue
            test, body, orelse = _laid_out(cond, _grouped(et), _grouped(negate(ef) if negated else ef), t, f)
            blocks = chain | bt | bf
            # (the arm laid out first jumps over the other to a target: that lone jump is part
            # of the condition, for the operand after it, entered only from the condition)
            for start, target in ((tt, m_true), (ft, m_false), (tf, m_true), (ff, m_false)):
                while start is not target and len(start.instrs) == 1 and start.last.op == "JUMP" \
                        and start.jump is not None and set(start.preds) <= blocks:
                    blocks = blocks | {start}
                    start = start.jump
            return ast.IfExp(test, body, orelse), m_true, m_false, st_f, blocks
        return None

    def _grow(self, kind: type, cond: ast.expr, t: Block, f: Block, stack: List[Any],
              operand: Tuple[ast.expr, Block, Block, List[Any]], group: bool,
              skip: Callable[[Block], Block]) -> Optional[Tuple[ast.expr, Block, Block, List[Any]]]:
        """``cond and x`` (``kind`` And: ``x`` is where ``cond`` goes when true) or ``cond or x``
        (Or: where it goes when false), ``x`` testing ``e2`` with targets ``t2``/``f2``: the
        condition, targets and stack after it, or None when ``x``'s other target is not
        where ``cond`` short-circuits to (tried with ``e2`` as it is, then negated)."""
        e2, t2, f2, st = operand
        short = f if kind is ast.And else t
        for negated, (goes_on, other) in ((False, (t2, f2) if kind is ast.And else (f2, t2)),
                                          (True, (f2, t2) if kind is ast.And else (t2, f2))):
            m = self._meet(other, short, skip, stack, st)
            if m is None:
                continue
            e = _grouped(e2) if group else e2
            value = boolop(kind, cond, negate(e) if negated else e)
            return (value, goes_on, m, st) if kind is ast.And else (value, m, goes_on, st)
        return None

    def build_if(self, block: Block, stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
                 out: List[ast.stmt]) -> Optional[Tuple[List[Any], Optional[Block]]]:
        cond, t, f, stack, chain = self._fold_condition(block, list(stack))
        # 3.10+ ``while c:`` (guard + loop re-testing ``c`` at its latch) first: its guard's
        # false arm may itself be a ``break``/``continue`` (``while c: ... else: break``).
        guarded = self.build_guarded_while(cond, t, f, stack, ctx, stop, out, block)
        if guarded is not None:
            return None if guarded[0] is None else guarded  # type: ignore[return-value]
        loop = ctx.loop
        # ``if c: break`` / ``if c: continue`` where the jump leaves the loop body
        if loop is not None:
            for target, other, c in ((t, f, cond), (f, t, negate(cond))):
                j = self.loop_jump(target, ctx)
                meet = self.cfg.common_pdom(t, f)
                if isinstance(j, ast.Continue) and self._tests_reach_loop_end(block, chain, ctx) \
                        and (meet in (target, None, self._through_jumps(target))
                             or meet not in loop.body):
                    # A written ``continue`` is a jump of its own that the test jumps over (or
                    # falls into); a test that jumps straight to the loop's end is an ``if``
                    # whose body is the rest of the loop (``for x in xs: if c: body``), which
                    # ends there too, never ends or leaves the loop (the arms meet nowhere in
                    # it: ``if c: ...; break``).  The ``if`` statement says the same and
                    # compiles back to this layout; where it cannot be built (a ``try`` whose
                    # handler jumps to the loop's start itself), ``if not c: continue`` can.
                    saved, written = self.save_state(), len(out)
                    # (through a 3.12+ test's own jump back: the arms meet at the loop's start)
                    back = self._through_jumps(target) \
                        if len(target.preds) == 1 and target.preds[0].fallthrough is target else target
                    arm_t, arm_f = (back, f) if target is t else (t, back)
                    try:
                        return self.if_statement(cond, arm_t, arm_f, list(stack), ctx, stop, out)
                    except StructureError:
                        self.restore_state(saved)
                        del out[written:]
                if j is not None and target not in stop and other is not target:
                    if self.loop_jump(other, ctx) is None or other in stop:
                        self.emit(out, ast.If(c, [j], []), stack)
                        return stack, other
        return self.if_statement(cond, t, f, stack, ctx, stop, out)

    def _tests_reach_loop_end(self, block: Block, chain: FrozenSet[Block], ctx: Ctx) -> bool:
        """The condition ``chain`` (starting at ``block``) goes to the loop's continue point the
        way the compiler lays out an ``if`` whose body runs to the end of the loop, not by a
        written ``continue``.

        Up to 3.11 such a test jumps there itself, while a ``continue`` is a jump of its own
        that the last test falls into.  3.12+ only jump forward conditionally: a test jumps to
        the loop's closing jump, or, where the compiler sent it straight back to the start, it
        falls into a ``JUMP_BACKWARD`` of its own, its sense inverted; a written ``continue``
        is one jump that the last test falls into and the others share.  A single test falling
        into a jump back of its own is told by its sense: ``if c: <rest>`` jumps on to the
        rest when ``c`` is true, ``if c: continue`` when it is false (``if x in y: <rest>`` and
        ``if x not in y: continue`` compile differently).
        """
        edges = []
        for b in chain:
            for succ, falls in ((b.jump, False), (b.fallthrough, True)):
                if succ is not None and succ not in chain \
                        and isinstance(self.loop_jump(succ, ctx), ast.Continue):
                    edges.append((b, succ, falls))
        if not edges:
            return False
        if not self.forward_only_tests:
            return not any(falls for _, _, falls in edges)
        fallen = [(b, succ) for b, succ, falls in edges if falls]
        if len(edges) == 1 and fallen:
            b, succ = fallen[0]
            return succ.preds == [b] and b.last.op == "POP_JUMP_IF_TRUE"
        return all(succ.preds == [b] for b, succ in fallen)

    def if_statement(self, cond: ast.expr, t: Block, f: Block, stack: List[Any], ctx: Ctx,
                     stop: FrozenSet[Block], out: List[ast.stmt]) -> Optional[Tuple[List[Any], Optional[Block]]]:
        """``if cond:`` with ``t`` and ``f`` as its arms (or a conditional expression, or a
        guarded ``while``), once the test is known not to be a ``break``/``continue``."""
        saved, written, entry = self.save_state(), len(out), list(stack)
        try:
            return self._if_statement(cond, t, f, stack, ctx, stop, out, False)
        except _MeetAtLoopPoint:
            # The arms meet only at the loop's next iteration (or its exit), and one goes on
            # elsewhere first: each ends in its own ``continue``/``break``.
            self.restore_state(saved)
            del out[written:]
            stack[:] = entry
            return self._if_statement(cond, t, f, stack, ctx, stop, out, True)

    def _if_statement(self, cond: ast.expr, t: Block, f: Block, stack: List[Any], ctx: Ctx,
                      stop: FrozenSet[Block], out: List[ast.stmt],
                      apart: bool) -> Optional[Tuple[List[Any], Optional[Block]]]:
        if t is f:
            # Both ways lead to the same place, but the test still calls ``bool(cond)``.
            self.emit(out, ast.If(cond, [ast.Pass()], []), stack)
            return stack, t
        merge = self.cfg.common_pdom(t, f) if not apart else None
        if merge is not None and ctx.region is not None and merge not in ctx.region \
                and merge not in stop and isinstance(self.private_exit(merge, ctx, stack), list):
            # Every way out of the try passes the ``break`` path (``if a or b: break`` in a
            # loop that never ends otherwise): that path is one arm, not where the arms meet.
            merge = None
        if merge is not None and ctx.loop is not None and not merge.succs and merge in (t, f) \
                and not _reaches_within_iteration(f if merge is t else t, merge, ctx.loop.header):
            # An arm that leaves (``assert`` in a ``try`` in a ``while True``: its raise) is
            # where every path ends when nothing else leaves the loop, but the other arm gets
            # there only by going round the loop: the arms meet at no point of this iteration.
            merge = None
        inner_stop = stop | {merge} if merge is not None else stop
        base = len(stack)

        def arms(stack: List[Any]) -> Tuple[WalkResult, WalkResult]:
            read = []
            for arm in (t, f):
                entry = list(stack)
                key, known = self._arm_known(arm, entry, ctx, inner_stop)
                read.append(known if known is not None else
                            self._arm_keep(key, entry, ctx, self.walk(arm, entry, ctx, inner_stop)))
            return read[0], read[1]

        def conditional_expression(then: WalkResult, orelse: WalkResult) -> bool:
            return then[1] is not None and orelse[1] is not None and then[2] is orelse[2] \
                and len(then[1]) == base + 1 and len(orelse[1]) == base + 1 and not then[0] and not orelse[0]

        if self.has_live_values(stack):
            # Values computed before the branch and used after it or inside it (Dynamo keeps
            # them on the stack): an ``if`` statement must compute them first, in temporaries,
            # or each arm would compute them again, after the condition.  A conditional
            # expression keeps them where they are.
            saved = self.save_state()
            try:
                (then_s, then_stack, then_end), (else_s, else_stack, else_end) = arms(stack)
                trial_ok = conditional_expression((then_s, then_stack, then_end),
                                                  (else_s, else_stack, else_end))
            except StructureError:
                trial_ok = False
            if not trial_ok and then_stack is None and else_stack is None \
                    and _single_return(then_s) and _single_return(else_s):
                # 3.10+ copies a short ``return`` into both arms: ``return (a, b if c else d)``
                # becomes two returns that share the values computed before the branch.
                merged = _merge_returns(*_laid_out(cond, then_s[0].value, else_s[0].value, t, f),  # type: ignore[attr-defined]
                                        [v for v in stack[self.floor:] if not isinstance(v, M.Marker)])
                if merged is not None:
                    self.emit(out, ast.Return(merged), [])
                    return None
            if not trial_ok:
                self.restore_state(saved)
                cond = self.spill_live(out, stack, cond)
                (then_s, then_stack, then_end), (else_s, else_stack, else_end) = arms(stack)
        else:
            # (Not for an exception-match test: handler recognition walks its arms itself.)
            # (also when the arms meet only at the loop's next iteration or exit as far as normal
            # flow tells: a ``try`` in one arm may meet the other through its clauses)
            joined = self._arms_to_join(t, f, stack, ctx, stop) \
                if (merge is None or (self.loop_jump(merge, ctx) is not None and self._has_try(t, f, ctx))) \
                and not any(isinstance(n, M.Marker) for n in all_nodes(cond)) else None
            if joined is not None:
                (then_s, then_stack, then_end), (else_s, else_stack, else_end) = joined
            else:
                (then_s, then_stack, then_end), (else_s, else_stack, else_end) = arms(stack)
        if conditional_expression((then_s, then_stack, then_end), (else_s, else_stack, else_end)):
            assert then_stack is not None and else_stack is not None
            then_v, else_v = self.value(then_stack[-1]), self.value(else_stack[-1])
            test, body, orelse = _laid_out(cond, then_v, else_v, t, f)
            chain = shared_tail_chain(test, body, orelse, boolop, negate) \
                if not any(isinstance(n, M.Marker) for n in all_nodes(test)) else None
            stack = else_stack[:-1] + [chain if chain is not None else ast.IfExp(test, body, orelse)]
            return stack, then_end
        if then_stack is None and else_stack is None and self.returns_const \
                and _single_return(then_s) and _single_return(else_s) \
                and (_copied_constant_return(t) or _copied_constant_return(f)):
            # 3.12+ compile ``return c`` to RETURN_CONST; a constant returned by a separate
            # RETURN_VALUE was the value of an expression whose arms met at one ``return`` that
            # the compiler then copied into each arm: ``return 'a' if c else 'b'``.
            c, a, b = _laid_out(cond, then_s[0].value, else_s[0].value, t, f)  # type: ignore[attr-defined]
            self.emit(out, ast.Return(ast.IfExp(c, a, b)), stack)
            return None
        if then_stack is None and else_stack is None and _single_return(then_s) \
                and _single_return(else_s) and _copied_return(then_s[0], else_s[0]) \
                and not any(isinstance(n, M.Marker) for n in all_nodes(cond)):
            # 3.10+ copy a short tail into each arm of a conditional expression: ``return (a
            # if a else 2) + 1`` became two returns, each at the one return's place in the
            # source (a ``return`` written twice is at two places).
            merged = _merge_returns(*_laid_out(cond, then_s[0].value, else_s[0].value, t, f), [])  # type: ignore[attr-defined]
            if merged is not None:
                self.emit(out, ast.Return(merged), stack)
                return None
        if then_stack is None and else_stack is None and len(then_s) > 1 and len(else_s) > 1 \
                and _constant_return(then_s[-1]) and ast.dump(then_s[-1]) == ast.dump(else_s[-1]):
            # Both arms end in the same ``return <constant>`` (3.10+ copy the function's closing
            # return into each): an ``if``/``else`` followed by that return, or, where the arm
            # laid out first is the shorter, ``if c: <arm>; return`` as a guard before the
            # other (``if not x: ...; return``).  Either compiles to this layout; the arm laid
            # out first is the one the test falls into, so it must be the ``if``'s body.
            c, first, second = (cond, then_s, else_s) \
                if self._arm_position(t, ctx) <= self._arm_position(f, ctx) else (negate(cond), else_s, then_s)
            if len(first) < len(second):
                self.emit(out, self.make_if(c, first, []), stack)
                out.extend(second)
            else:
                self.emit(out, self.make_if(c, first[:-1], second[:-1]), stack)
                out.append(then_s[-1])
            return None
        if (then_stack is None or else_stack is None) and self.cfg.dead_jumps \
                and not any(isinstance(n, M.Marker) for n in all_nodes(cond)):
            written = self._else_after_dead_jump(cond, t, f, then_s, then_stack, else_s, else_stack,
                                                 stack, ctx, stop, out)
            if written is not None:
                return written[0]
        if then_stack is None and else_stack is None:
            # Both arms leave: ``if c: <first arm in the code>`` and the other arm after it,
            # which is how such code is written (``if not x: raise ...`` for an assert).
            if self._arm_position(t, ctx) <= self._arm_position(f, ctx):
                self.emit(out, self.make_if(cond, then_s, []), stack)
                out.extend(else_s)
            else:
                self.emit(out, self.make_if(negate(cond), else_s, []), stack)
                out.extend(then_s)
            return None
        # One arm leaves (return/raise/break...).  Written first in the code, it is a guard:
        # ``if c: return`` and the other arm after the ``if``; written after the other arm, it
        # was an ``else:`` (``if c: x = 1 else: raise E``), which compiles back to that order.
        # (Not for a bare ``raise``/an exception match: handler recognition reads those as
        # ``if not match: <re-raise>``.)
        plain = not any(isinstance(n, M.Marker) for n in all_nodes(cond))
        guard = self._leaving_guard(cond, t, f, (then_s, then_stack, then_end),
                                    (else_s, else_stack, else_end), ctx, stop, plain)
        if guard is not None:
            self.emit(out, guard[0], stack)
            out.extend(guard[1])
            return None
        if then_stack is None:
            if f.start < t.start and else_s and plain and _else_leaves_plainly(then_s):
                self.emit(out, self.make_if(negate(cond), else_s, then_s), stack)
                return else_stack, else_end
            self.emit(out, self.make_if(cond, then_s, []), stack)
            out.extend(else_s)
            return else_stack, else_end
        if else_stack is None:
            if t.start < f.start and then_s and plain and _else_leaves_plainly(else_s):
                self.emit(out, self.make_if(cond, then_s, else_s), stack)
                return then_stack, then_end
            self.emit(out, self.make_if(negate(cond), else_s, []), stack)
            out.extend(then_s)
            return then_stack, then_end
        if then_end is not None and else_end is not None and then_end is not else_end:
            # One arm stopped at a lone jump to where the other ends: 3.13+ put the jump that
            # ends an ``if`` arm in a ``try`` body outside the try's region (so the walk stops
            # there), while the other arm falls out of the region into the code after it.
            if past_lone_jumps(then_end) is else_end:
                then_end = else_end
            elif past_lone_jumps(else_end) is then_end:
                else_end = then_end
        if then_end is not else_end and not (then_end is not None and else_end is not None
                                             and same_code(then_end, else_end)):
            if not apart and merge is not None and merge in (then_end, else_end) \
                    and self.loop_jump(merge, ctx) is not None:
                raise _MeetAtLoopPoint()
            raise StructureError("branches of an if meet nowhere")
        if len(then_stack) != len(else_stack):
            raise StructureError("branches leave different stack depths")
        if any(a is not b and not same_expr(a, b) for a, b in zip(then_stack, else_stack)):
            raise StructureError("branches leave different values on the stack")
        if then_s and else_s and self._arm_position(f, ctx) < self._arm_position(t, ctx):
            # The compiler lays an ``if``'s body out first: the arm the test falls into
            # (``if not a or b: x = 1 else: ...`` where the condition read ``a and not b``).
            self.emit(out, self.make_if(negate(cond), else_s, then_s), stack)
        else:
            self.emit(out, self.make_if(cond, then_s, else_s), stack)
        return then_stack, then_end

    def _else_after_dead_jump(self, cond: ast.expr, t: Block, f: Block, then_s: List[ast.stmt],
                              then_stack: Optional[List[Any]], else_s: List[ast.stmt],
                              else_stack: Optional[List[Any]], stack: List[Any], ctx: Ctx,
                              stop: FrozenSet[Block], out: List[ast.stmt]
                              ) -> Optional[Tuple[Optional[Tuple[List[Any], Optional[Block]]]]]:
        """``if c: <leaves> else: <other>`` where 3.8/3.9 left the unreachable jump that closed
        the body over the ``else`` clause (``if n < 1: raise E elif n == 1: ...``): without the
        ``else`` the jump is not compiled and the layout differs.  The arm laid out first must
        leave and sit right before the other, the dead jump between them; the other arm is
        walked up to the jump's target.  Returns ``(what _if_statement returns,)`` or None."""
        first_is_t = t.start < f.start
        first_stack, first_s = (then_stack, then_s) if first_is_t else (else_stack, else_s)
        second = f if first_is_t else t
        if first_stack is not None or not first_s:
            return None
        target = self.cfg.dead_jumps.get(second.start - 1)
        if target is None:
            return None
        c = cond if first_is_t else negate(cond)
        first_s = _ending_in_else(first_s)
        end = self.cfg.block_at.get(target)
        other_stack = else_stack if first_is_t else then_stack
        if end is None and other_stack is None:
            # Both arms leave and the jump went to code dropped as unreachable (the closing
            # ``return None``): the other arm is whole already.
            self.emit(out, self.make_if(c, first_s, else_s if first_is_t else then_s), stack)
            return (None,)
        if end is None or end.start <= second.start:
            return None
        saved = self.save_state()
        try:
            second_s, second_stack, second_end = self.walk(second, list(stack), ctx, stop | {end})
        except StructureError:
            self.restore_state(saved)
            return None
        if not second_s or (second_stack is not None and (
                second_end is not end or self.loop_jump(end, ctx) is not None)):
            self.restore_state(saved)
            return None
        self.emit(out, self.make_if(c, first_s, second_s), stack)
        return ((second_stack, second_end) if second_stack is not None else None,)

    def _leaving_guard(self, cond: ast.expr, t: Block, f: Block, then: WalkResult, orelse: WalkResult,
                       ctx: Ctx, stop: FrozenSet[Block], plain: bool
                       ) -> Optional[Tuple[ast.stmt, List[ast.stmt]]]:
        """``if not c: return`` then the rest of a loop body, where the test falls into a
        ``return``/``raise`` of its own and jumps on to the rest (3.10+ copy a ``break``'s
        short closing ``return`` into the loop: ``while True: ...; if not s: break; ...``).

        Walked up to where the arms meet, the rest goes back to the loop's start and the other
        arm is empty, meeting the join only to leave there; written as ``if c: <rest>;
        continue`` and the ``return`` after it, it compiles with the test's sense and the arms
        swapped.  Returns the guard and the statements after it, or None."""
        for (arm_s, arm_stack, _), (other_s, other_stack, other_end), arm, other, c in (
                (then, orelse, t, f, negate(cond)), (orelse, then, f, t, cond)):
            if arm_stack is not None or not arm_s or not isinstance(arm_s[-1], ast.Continue) \
                    or other_s or other_stack is None or other_end is not other or not plain \
                    or other.start > arm.start or len(other.preds) != 1 or other in stop \
                    or ctx.loop is None or self.loop_jump(other, ctx) is not None:
                continue
            saved = self.save_state()
            try:
                tail_s, tail_stack, _ = self.walk(other, list(other_stack), ctx, stop)
            except StructureError:
                self.restore_state(saved)
                continue
            if tail_stack is None and tail_s and len(tail_s) <= 2 \
                    and isinstance(tail_s[-1], (ast.Return, ast.Raise)):
                return self.make_if(c, tail_s, []), arm_s
            self.restore_state(saved)
        return None

    def _has_try(self, t: Block, f: Block, ctx: Ctx) -> bool:
        """An arm starts a ``try``/``with`` statement (a handler other than the region's)."""
        return any(self.effective_handler(b) != ctx.exc for b in (t, f))  # type: ignore[attr-defined]

    def _arms_to_join(self, t: Block, f: Block, stack: List[Any], ctx: Ctx,
                      stop: FrozenSet[Block]) -> Optional[Tuple[WalkResult, WalkResult]]:
        """Both arms walked up to where they meet when an arm also returns or raises.

        Then no block post-dominates both arms (the ``return`` path never reaches the code after
        the ``if``), and walking each arm to its end would copy that code into both.  The join
        is the first block (in code order) both arms reach by normal flow; it is only used when
        each arm, walked up to it, either gets there or leaves.  None: no such join.
        """
        def reach(start: Block) -> Dict[Block, None]:
            seen: Dict[Block, None] = {}
            work = [start]
            while work:
                b = work.pop()
                if b in seen or b in stop or b in self.active_loops \
                        or (ctx.region is not None and b not in ctx.region) \
                        or self.loop_jump(b, ctx) is not None or len(seen) > 2000:
                    continue
                seen[b] = None
                work.extend(b.succs)
                # (and into the clauses of a ``try`` in the arm: ``except E: break`` is how a
                # ``while True`` in it goes on, an edge no post-dominator sees)
                h = self.effective_handler(b)  # type: ignore[attr-defined]
                if h is not None and h != ctx.exc and h in self.cfg.block_at:
                    work.append(self.cfg.block_at[h])
            return seen

        from_t, from_f = reach(t), reach(f)
        common = [b for b in from_f if b in from_t]
        if common:
            join = min(common, key=lambda b: b.start)
        else:
            # One arm always leaves and the other goes on after it in the code: ``if c: x = 1
            # else: return`` continues where the first arm jumps past the second.
            first, second = (from_t, from_f) if t.start < f.start else (from_f, from_t)
            if not first or not second:
                return None  # an arm that is a ``break``/``continue`` or outside the region
            end = max(b.start for b in second)
            after = [b for b in first if b.start > end]
            if not after:
                return None
            join = min(after, key=lambda b: b.start)
        saved = self.save_state()
        inner_stop = stop | {join}
        try:
            result = (self.walk(t, list(stack), ctx, inner_stop), self.walk(f, list(stack), ctx, inner_stop))
        except StructureError:
            result = None
        if result is not None and all(r[1] is None or r[2] is join for r in result) \
                and any(r[1] is not None for r in result):
            return result
        self.restore_state(saved)
        return None

    def _arm_position(self, arm: Block, ctx: Ctx) -> float:
        """Where an arm's code is, for putting the first one in the ``if``: a jump back to the
        loop's start (``continue``, written nowhere) counts as last."""
        if isinstance(self.loop_jump(arm, ctx), ast.Continue):
            return float("inf")
        return arm.start

    def make_if(self, cond: ast.expr, body: List[ast.stmt], orelse: List[ast.stmt]) -> ast.stmt:
        if not body and not orelse:
            return ast.If(test_form(cond), [ast.Pass()], [])
        if not body:
            return ast.If(test_form(negate(cond)), orelse, [])
        return ast.If(test_form(cond), body, orelse)

    def build_value_branch(self, block: Block, stack: List[Any], ctx: Ctx, stop: FrozenSet[Block],
                           out: List[ast.stmt]) -> Optional[Tuple[List[Any], Optional[Block]]]:
        last = block.last
        raw = stack[-1]
        v = self.value(raw)
        jump, fall = block.jump, block.fallthrough
        if jump is None or fall is None:
            raise StructureError("value jump out of the code")
        kind = ast.And if last.op == "JUMP_IF_FALSE_OR_POP" else ast.Or
        merge = self.cfg.common_pdom(jump, fall)
        if merge is None:
            # Nothing post-dominates: either each arm leaves through its own copy of the tail
            # (``return a < b < c``: 3.8-3.11 return from the chain's cleanup, 3.12+ copy the
            # return), or, inside a loop that only returns from its middle, the short-circuit
            # target is where the operands meet.  The first is tried first.
            saved = self.save_state()
            try:
                j_s, j_stack, j_end = self.walk(jump, stack, ctx, stop)
                f_s, f_stack, f_end = self.walk(fall, stack[:-1], ctx, stop)
                both_leave = j_stack is None and f_stack is None
            except (StructureError, IndexError):
                both_leave = False
            if not both_leave:
                self.restore_state(saved)
                j_s, j_stack, j_end = [], stack, jump
                f_s, f_stack, f_end = self.walk(fall, stack[:-1], ctx, stop | {jump})
        else:
            inner_stop = stop | {merge}
            read = []
            for arm, entry in ((jump, stack), (fall, stack[:-1])):
                key, known = self._arm_known(arm, entry, ctx, inner_stop)
                read.append(known if known is not None else
                            self._arm_keep(key, entry, ctx, self.walk(arm, entry, ctx, inner_stop)))
            (j_s, j_stack, j_end), (f_s, f_stack, f_end) = read
        if j_stack is None and f_stack is None:
            # Both arms leave through copies of one tail: ``return a and b``, and 3.12+'s
            # ``x = a < b < c; return x``.
            # The value is one node: where the short-circuit arm has it, the other arm has the
            # and/or's last operand.
            rest = operand_at_hole(j_s, f_s, v)
            if rest is None:
                raise StructureError("and/or whose arms leave by different code")
            # Both arms consumed what lay below (the duplicated middle operand of a chained
            # comparison); leaving discards the rest, so nothing is saved.
            combined = boolop(kind, v, rest)
            for stmt in f_s:
                self.emit(out, replace_nodes(stmt, {id(rest): combined}), [])
            return None
        if j_s or f_s or j_stack is None or f_stack is None or j_end is not f_end \
                or len(j_stack) != len(f_stack):
            raise StructureError("and/or whose operands contain statements")
        jv = j_stack[-1]
        rest = self.value(f_stack[-1])
        # (``raw``: the value as the stack holds it, where ``v`` also names it: ``(y := f())
        # and y``, a store pending on the operand, makes ``v`` the walrus)
        if jv is v or jv is raw or same_expr(jv, v):
            result = boolop(kind, v, rest)
        else:
            raise StructureError("and/or whose short-circuit path changes the value")
        return f_stack[:-1] + [result], j_end
