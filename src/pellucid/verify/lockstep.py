"""Lockstep symbolic execution of two code objects (translation validation).

Both programs run from the same symbolic inputs.  Each runs to its next observable event
(:mod:`pellucid.verify.machine`); the two events must be identical (same kind, same operand
terms) and, at events where user code can run, the variables the original program has must hold
the same terms on both sides.  Every outcome of the event is then explored on both sides at once:
an effect succeeds with fresh result terms shared by both programs, or raises a fresh exception
that both programs' handlers receive; a pure decision forks on its answer.

Loops are handled at event points: the pair of positions ``(original pc, candidate pc)`` keeps
the states it was reached with.  A state that is an instance of a kept one is already covered; after
a few distinct arrivals the kept state is generalised (anti-unification: terms that differ become
shared variables, so equalities between the two programs survive) and exploration continues from
the generalisation, which converges for the loops compilers produce.  (An event the original
reaches by falling through from its start is reached once: nothing is kept there.)
"""
import heapq
import itertools
from itertools import compress
from operator import is_not
from typing import Any, Dict, List, Optional, Tuple

from pellucid.verify.machine import (_HEAP_KINDS, STR_RESULTS, Memo, MState, Side, Unsupported,
                                     can_forget_lists_except, escape_lists, forget_lists_except,
                                     gc_lists, go_handler, heap_free, method_escapes,
                                     not_known_free, observe, reachable_lists, rename_lists, run)
from pellucid.verify.terms import NULL, UNBOUND, Term, has_kind, kind_of, maybe_unbound, render

KEEP = 1  # distinct states kept per position pair before generalising


class Mismatch(Exception):
    """The two programs differ observably (or at least: provably not shown equal here)."""


class TooLarge(Exception):
    pass


class Pair:
    __slots__ = ("o", "c", "facts", "epoch", "names", "rounds", "reads")

    def __init__(self, o: MState, c: MState, facts: Dict[Term, bool], epoch: int) -> None:
        self.o, self.c, self.facts, self.epoch = o, c, facts, epoch
        # How many times the original went back to an earlier instruction on this path (see
        # ``Explorer.explore``).
        self.rounds = 0
        # The variable names of ``o`` and of ``c``, sorted, once ``instance`` needed them (only
        # for a kept pair: those are never changed).
        self.names: Optional[Tuple[List[str], List[str]]] = None
        # The globals read in ``epoch`` that the states or facts hold, once ``instance``
        # needed them (only for a kept pair: those are never changed).
        self.reads: Optional[set] = None

    def copy(self) -> "Pair":
        # (without __init__: a copy is made at almost every event)
        p = Pair.__new__(Pair)
        p.o = self.o.copy()
        p.c = self.c.copy()
        p.facts = self.facts.copy()
        p.epoch = self.epoch
        p.names = None
        p.reads = None
        p.rounds = self.rounds
        return p


# --------------------------------------------------------------------------- generalisation

def _is_var(t: Any) -> bool:
    return (type(t) is tuple and len(t) == 4 and t[0] == "v" and type(t[1]) is int
            and type(t[2]) is bool)


_STRUCTURAL = frozenset({"tuple", "not", "typeof", "tbof", "is", "converted", "tested",
                         "import_failed"})


class _Joiner:
    def __init__(self, counter: List[int], facts_a: Dict[Term, bool],
                 facts_b: Dict[Term, bool], epoch_a: int = -1, epoch_b: int = -1) -> None:
        self.memo: Dict[Tuple[Term, Term], Term] = {}
        # A global read in its state's current epoch (no effect since) is the global's value
        # now: two of the same name stay one, in the joined state's epoch (see ``_current``).
        self.epoch_a, self.epoch_b = epoch_a, epoch_b
        self.epoch = max(epoch_a, epoch_b)
        self.counter = counter
        # (a variable that may be unbound but was found bound on that path is bound there)
        self.facts_a = facts_a
        self.facts_b = facts_b

    def term(self, a: Term, b: Term) -> Term:
        if a == b:
            return a
        if a[0] == b[0] and a[0] in _STRUCTURAL and len(a) == len(b):
            if a[0] == "tuple":
                if len(a[1]) == len(b[1]):
                    return ("tuple", tuple(self.term(x, y) for x, y in zip(a[1], b[1])))
            else:
                return (a[0],) + tuple(self.term(x, y) for x, y in zip(a[1:], b[1:]))
        if a[0] == "g" and b[0] == "g" and len(a) == 3 and len(b) == 3 and a[1] == b[1] \
                and a[2] == self.epoch_a and b[2] == self.epoch_b and self.epoch_a >= 0:
            return ("g", a[1], self.epoch)
        key = (a, b)
        v = self.memo.get(key)
        if v is None:
            self.counter[0] += 1
            # NULL is what LOAD_FAST_AND_CLEAR saves for an unbound variable.
            flag = (a in (UNBOUND, NULL) or b in (UNBOUND, NULL)
                    or (maybe_unbound(a) and not self.facts_a.get(("bound", a)))
                    or (maybe_unbound(b) and not self.facts_b.get(("bound", b))))
            # A variable standing for exact bools stays one: branching on it is a pure decision;
            # likewise for strs (joining them runs no user code).
            # Variables that may stand for NULL get negative numbers (see ``_call_parts``).
            num = -self.counter[0] if NULL in (a, b) else self.counter[0]
            v = ("v", num, bool(flag), kind_of(a, b))
            self.memo[key] = v
        return v

    def state(self, a: MState, b: MState) -> MState:
        """The generalisation of ``a`` and ``b``, without known lists (see ``join``)."""
        if len(a.stack) != len(b.stack) or len(a.ehstack) != len(b.ehstack):
            raise Unsupported("states reaching one position differ in shape (stack height %d vs %d)"
                              % (len(a.stack), len(b.stack)))
        term = self.term
        s = MState.__new__(MState)
        s.pc = a.pc
        s.unwinding = a.unwinding
        s.heap = {}
        # Later allocations must not reuse an identity either state already holds.
        s.nalloc = max(a.nalloc, b.nalloc)
        s.nmeth = max(a.nmeth, b.nmeth)
        # (most terms are the same object in both states: no call for those)
        s.stack = stack = a.stack.copy()
        for i in compress(itertools.count(), map(is_not, a.stack, b.stack)):
            stack[i] = term(stack[i], b.stack[i])
        # (only the names whose terms are not the same object in both are looked at: most are,
        # and are found at C speed)
        aget, bget = a.vars.get, b.vars.get
        out: Dict[str, Term] = a.vars.copy()
        s.vars = out
        for name in _differing(a.vars, b.vars):
            x = term(aget(name, UNBOUND), bget(name, UNBOUND))
            if x != UNBOUND:
                out[name] = x
            else:
                out.pop(name, None)
        s.excinfo = term(a.excinfo, b.excinfo)
        eh = []
        for (la, ta), (lb, tb) in zip(a.ehstack, b.ehstack):
            if la != lb:
                raise Unsupported("handler blocks differ at a loop")
            eh.append((la, term(ta, tb)))
        s.ehstack = eh
        return s


def _joined_facts(fa: Dict[Term, bool], fb: Dict[Term, bool], ea: int, eb: int) -> Dict[Term, bool]:
    """The facts both states hold; and whether a global read in each state's current epoch is
    bound, when both agree, for the joined state's epoch (see ``_Joiner``)."""
    facts = {k: v for k, v in fa.items() if fb.get(k) == v}
    if ea != eb:
        e = max(ea, eb)
        for k, v in fa.items():
            if k[0] == "bound" and k[1][0] == "g" and len(k[1]) == 3 and k[1][2] == ea:
                if fb.get(("bound", ("g", k[1][1], eb))) == v:
                    facts[("bound", ("g", k[1][1], e))] = v
    return facts


def _current_reads(t: Any, epoch: int, out: set) -> None:
    """The globals read in ``epoch`` that the term ``t`` holds (into ``out``)."""
    todo = [t]
    while todo:
        x = todo.pop()
        if type(x) is tuple:
            if len(x) == 3 and x[0] == "g" and x[2] == epoch:
                out.add(x[1])
            else:
                todo.extend(x)


def _state_terms(st: MState) -> List[Any]:
    return [st.stack, list(st.vars.values()), st.excinfo, st.ehstack, st.unwinding,
            list(st.heap.items())]


def _relabelled(general: Pair, p: Pair) -> Optional[Pair]:
    """``p`` with its global reads of its current epoch as reads of ``general``'s, when
    ``general`` holds such reads and the epochs differ (``p`` itself otherwise); None when
    ``p`` already holds reads of ``general``'s epoch (two reads would become one)."""
    if general.epoch == p.epoch:
        return p
    found = general.reads
    if found is None:
        found = set()
        _current_reads((_state_terms(general.o), _state_terms(general.c),
                        list(general.facts)), general.epoch, found)
        general.reads = found
    if not found:
        return p
    clash: set = set()
    _current_reads((_state_terms(p.o), _state_terms(p.c), list(p.facts)), general.epoch, clash)
    if clash:
        return None
    e_p, e_g = p.epoch, general.epoch

    def ren(t: Any) -> Any:
        if type(t) is not tuple:
            return t
        if len(t) == 3 and t[0] == "g" and t[2] == e_p:
            return ("g", t[1], e_g)
        return tuple([ren(x) for x in t])

    q = p.copy()
    for st in (q.o, q.c):
        st.stack = [ren(t) for t in st.stack]
        st.vars = {k: ren(v) for k, v in st.vars.items()}
        st.excinfo = ren(st.excinfo)
        st.ehstack = [(lvl, ren(t)) for lvl, t in st.ehstack]
        st.heap = {ren(k): tuple([ren(x) for x in v]) for k, v in st.heap.items()}
        if st.unwinding is not None:
            st.unwinding = ren(st.unwinding)
    q.facts = {ren(k): v for k, v in q.facts.items()}
    q.epoch = e_g
    return q


def _forgettable(p: Pair, keep_o: Dict[Term, Any], keep_c: Dict[Term, Any], memo: Memo) -> None:
    """Raise unless the known lists of ``p`` but ``keep_o``/``keep_c`` can be forgotten
    (``forget_lists_except``)."""
    if (p.o.heap or p.c.heap) and not can_forget_lists_except(p.o, p.c, keep_o, keep_c, memo):
        raise Unsupported("lists being built reach a loop with different contents")


def _same_objects(a: Dict[Term, Any], b: Dict[Term, Any]) -> Dict[Term, Any]:
    """The known objects ``a`` and ``b`` both hold with the same contents, and whose contents
    refer to no known object of either that is not kept so (a list's bound method whose list is
    forgotten is forgotten with it: kept, it would name a list the joined state no longer knows,
    and its receiver would stop being the variable's list -- each round of a loop would then
    make a new generalisation, and the loop never converge)."""
    if not a or not b:
        return {}
    keep = {k: v for k, v in a.items() if b.get(k) == v}
    while keep:
        stale = [k for k, v in keep.items() if _refers_to_dropped(v, keep, a, b)]
        if not stale:
            break
        for k in stale:
            del keep[k]
    return keep


def _refers_to_dropped(contents: Tuple[Any, ...], keep: Dict[Term, Any], a: Dict[Term, Any],
                       b: Dict[Term, Any]) -> bool:
    """Whether ``contents`` holds (at any depth) a known object of ``a`` or ``b`` not in ``keep``."""
    todo = list(contents)
    while todo:
        x = todo.pop()
        if type(x) is tuple:
            if len(x) == 3 and x[0] in _HEAP_KINDS and (x in a or x in b):
                if x not in keep:
                    return True
                continue
            todo.extend(x)
    return False


# ---- known lists across a join
#
# Where several paths meet without a loop (Dynamo's ``if profiler enabled`` diamonds before each
# graph call, torch 2.15+), the lists built after the meeting point are the same on every path
# but named by when they were built (``("list", epoch, k)``), which differs between paths.  A
# join that forgot them would leave the original with opaque lists the candidate has not built
# yet.  So known lists are first renamed by the order in which the state reaches them
# (``("list", "k", i)``, per program); when both states then know the same lists at the same
# places, the join keeps them, with their contents generalised item by item.  A generalisation
# variable never stands for a term holding a known list (user code could then reach the list
# through it while its contents stay known), and no fact may mention one (facts are shared by
# both programs, whose lists are named apart): otherwise the join forgets them as before.

_CANON = "k"


def _named_canonically(heap: Dict[Term, Any]) -> bool:
    return any(k[1] == _CANON for k in heap)


def _holds_canonical(t: Any) -> bool:
    """Whether the term ``t`` holds a canonically named list or dict at any depth."""
    todo = [t]
    while todo:
        x = todo.pop()
        if type(x) is tuple:
            if len(x) == 3 and x[0] in _HEAP_KINDS and x[1] == _CANON:
                return True
            todo.extend(x)
    return False


class HeldNames:
    """The names of a program's variables whose terms may hold a list (are not known free, see
    ``machine.heap_free``): a superset, kept from one call to the next.  Dynamo's straight line
    binds a thousand variables, and successive joins and events along it see states that differ
    in a few: only those few are looked at (found at C speed, as ``_differing`` does), not every
    variable.  A name kept from the last call is one whose term is the same object now, so it is
    still not known free or is known free by now: walks skip the latter themselves.

    >>> memo = {}
    >>> held = HeldNames(memo)
    >>> t = ("r", 0, 0)
    >>> sorted(held.of({"a": ("list", 0, 0), "b": t}))
    ['a', 'b']
    >>> memo[id(t)] = t  # (``t`` found to hold no list)
    >>> sorted(held.of({"a": ("list", 0, 0), "b": t, "c": t}))
    ['a']
    """

    __slots__ = ("memo", "keys", "last", "names", "stack", "held")

    def __init__(self, memo: Memo, keys: bool = False) -> None:
        self.memo = memo
        self.keys = keys  # (the terms are the dict's keys, not its values: facts)
        self.last: Dict[Any, Any] = {}  # (a copy of the dict last asked about)
        self.names: set = set()
        self.stack: List[Any] = []  # (a copy of the stack last asked about)
        self.held: List[int] = []  # (its entries that may hold a list, by index)

    def of(self, variables: Dict[Any, Any]) -> set:
        """The keys of ``variables`` whose terms may hold a list."""
        last = self.last
        get = self.memo.get
        if self.keys:
            # (the terms are the keys, whatever their values: only the new keys are looked at)
            if len(last) < 2 * len(variables) and len(variables) < 2 * len(last):
                names = {t for t in self.names if t in variables and get(id(t)) is not t}
                names.update([t for t in variables.keys() - last.keys() if get(id(t)) is not t])
            else:
                names = {t for t in variables if get(id(t)) is not t}
            self.last = variables.copy()
            self.names = names
            return names
        if len(last) < 2 * len(variables) and len(variables) < 2 * len(last):
            changed = _differing(last, variables)
        else:
            changed = None
        if changed is None or 2 * len(changed) > len(variables):
            names = {n for n, t in variables.items() if get(id(t)) is not t}
        else:
            # (the names kept whose terms are known free by now are dropped: a term is
            # usually found free at the first event after it is bound)
            value = variables.__getitem__
            names = {n for n in self.names.difference(changed) if get(id(value(n))) is not value(n)}
            for n in changed:
                t = variables.get(n, names)  # (``names``: a stand-in for unbound)
                if t is not names and get(id(t)) is not t:
                    names.add(n)
        self.last = variables.copy()
        self.names = names
        return names

    def held_entries(self, stack: List[Any]) -> List[int]:
        """The indices of the entries of ``stack`` that may hold a list, in order.  (Dynamo's
        code pushes a graph's thousand arguments one event at a time: successive states'
        stacks share all but their last few entries, which are all that is looked at.)"""
        last = self.stack
        # (the entries that are not the same object as the last stack's at their place, found
        # at C speed: those and the entries past its end are all that may be new)
        changed = list(compress(itertools.count(), map(is_not, stack, last)))
        changed += range(len(last), len(stack))
        get = self.memo.get
        value = stack.__getitem__
        if 2 * len(changed) > len(stack):
            held = [i for i in range(len(stack))
                    if type(value(i)) is tuple and get(id(value(i))) is not value(i)]
        else:
            n = len(stack)
            again = set(changed)
            again.update([i for i in self.held if i < n])
            held = sorted([i for i in again
                           if type(value(i)) is tuple and get(id(value(i))) is not value(i)])
        self.stack = stack.copy()
        self.held = held
        return held


#: ``HeldNames`` of the original, of the candidate, and of the facts (keyed by term)
Held = Tuple[HeldNames, HeldNames, HeldNames]


def _canonical_side(st: MState, memo: Memo, held: Optional[HeldNames] = None) -> bool:
    """Rename the known lists of ``st`` canonically, in place; False when that cannot be done
    soundly (an opaque list already has such a name).  ``held``: where to find the names of
    ``st``'s program whose terms may hold a list (a fresh cache without it)."""
    if not st.heap:
        return True
    # The program's own variables first: the two programs' observations agree on them, so their
    # lists get the same canonical names on both sides (which ``join`` needs when it forgets
    # them: corresponding lists must be named alike); then the stack and the decompiler's
    # temporaries, which lay out alike in the two programs less often.  (In the order of their
    # names; a variable known to hold no list is skipped: the walk would skip it.)
    held = held or HeldNames(memo)
    names = held.of(st.vars)
    entries = held.held_entries(st.stack)
    ordered = sorted(names)
    get = st.vars.__getitem__
    roots: List[Any] = [get(n) for n in ordered if not n.startswith("__pellucid")]
    roots += [st.stack[i] for i in entries]
    roots += [get(n) for n in ordered if n.startswith("__pellucid")]
    roots += [st.excinfo, tuple(st.ehstack), st.unwinding]
    found = reachable_lists(roots, st.heap, memo)
    heap = st.heap
    # (what ``gc_lists`` would keep is what this walk found: the same roots, one walk less)
    live = set(found)
    for t in [t for t in heap if t not in live]:
        del heap[t]
    if not heap:
        return True
    if len([t for t in found if t in heap]) != len(heap):
        return False  # (known lists reached only through truths: no canonical order)
    mapping: Dict[Term, Term] = {}
    # (numbered per kind: a function only the fallback builds does not shift the lists' numbers)
    count: Dict[str, int] = {}
    for t in found:
        if t in heap:
            n = count.get(t[0], 0)
            count[t[0]] = n + 1
            if t[1] != _CANON or t[2] != n:
                mapping[t] = (t[0], _CANON, n)  # (a list named so already keeps its name)
        elif t[1] == _CANON:
            return False
    rename_lists(st, mapping, memo, names, entries)
    return True


def _canonical(p: Pair, memo: Memo, held: Optional[Held] = None) -> Optional[Pair]:
    """A copy of ``p`` with canonically named known lists (see above), or None.  (``held``:
    the original's, the candidate's and the facts' ``HeldNames``.)"""
    known = set(p.o.heap) | set(p.c.heap)
    # (the facts' terms are their keys: their values are bools)
    if known and p.facts:
        facts = held[2].of(p.facts) if held is not None else p.facts
        if not known.isdisjoint(reachable_lists(list(facts), {}, memo)):
            return None
    q = p.copy()
    held_o, held_c = held[:2] if held is not None else (None, None)
    if not (_canonical_side(q.o, memo, held_o) and _canonical_side(q.c, memo, held_c)):
        return None
    return q


def _join_keeping_lists(a: Pair, b: Pair, counter: List[int], memo: Memo,
                        held: Optional[Held] = None) -> Optional[Pair]:
    if not (a.o.heap or a.c.heap or b.o.heap or b.c.heap):
        return None
    ca = _canonical(a, memo, held)
    cb = _canonical(b, memo, held)
    if ca is None or cb is None:
        return None
    for x, y in ((ca.o, cb.o), (ca.c, cb.c)):
        if x.heap.keys() != y.heap.keys() or any(len(v) != len(y.heap[k]) for k, v in x.heap.items()):
            return None
    j = _Joiner(counter, ca.facts, cb.facts, a.epoch, b.epoch)
    o = j.state(ca.o, cb.o)
    c = j.state(ca.c, cb.c)
    o.heap = {k: tuple([j.term(x, y) for x, y in zip(v, cb.o.heap[k])]) for k, v in ca.o.heap.items()}
    c.heap = {k: tuple([j.term(x, y) for x, y in zip(v, cb.c.heap[k])]) for k, v in ca.c.heap.items()}
    if any(_holds_canonical(x) or _holds_canonical(y) for x, y in j.memo):
        return None
    facts = _joined_facts(ca.facts, cb.facts, a.epoch, b.epoch)
    return Pair(o, c, facts, max(a.epoch, b.epoch))


def _join_forgetting_aligned(a: Pair, b: Pair, counter: List[int], memo: Memo,
                             held: Optional[Held] = None) -> Optional[Pair]:
    """``join`` forgetting the known lists (as below), after naming them canonically: the two
    programs name a list by when they built it, which differs when one built others in between
    (the fallback's saved slots...); forgotten under those names, corresponding lists would
    become unrelated opaque lists.  Canonically named, a list of the original and one of the
    candidate with the same name correspond -- forgetting them is sound only when their contents
    agree, which ``can_forget_lists_except`` checks, as it does for lists named alike.  The
    forgotten lists of ``a`` are then renamed apart, with fresh names shared by its two
    programs, and likewise those of ``b``: the generalisation makes each pair of those one
    variable, the same in both programs."""
    if not (a.o.heap or a.c.heap or b.o.heap or b.c.heap):
        return None
    ca = _canonical(a, memo, held)
    cb = _canonical(b, memo, held)
    if ca is None or cb is None:
        return None
    keep_o = _same_objects(ca.o.heap, cb.o.heap)
    keep_c = _same_objects(ca.c.heap, cb.c.heap)
    for q in (ca, cb):
        if not can_forget_lists_except(q.o, q.c, keep_o, keep_c, memo):
            return None
    for q in (ca, cb):
        mapping: Dict[Term, Term] = {}
        # (a name kept on one side only stays, opaque on the other: it is not matched there
        # against any known object, and a later canonical naming refuses it -- see
        # ``_canonical_side``)
        for t in sorted(set(q.o.heap) | set(q.c.heap), key=repr):
            if t not in keep_o and t not in keep_c:
                counter[0] += 1
                mapping[t] = (t[0], "f", counter[0])
        for st, keep in ((q.o, keep_o), (q.c, keep_c)):
            st.heap = {k: v for k, v in st.heap.items() if k in keep}
            rename_lists(st, mapping, memo)
    j = _Joiner(counter, ca.facts, cb.facts, a.epoch, b.epoch)
    o = j.state(ca.o, cb.o)
    c = j.state(ca.c, cb.c)
    if any(_holds_canonical(x) or _holds_canonical(y) for x, y in j.memo):
        return None
    o.heap = keep_o
    c.heap = keep_c
    if keep_o:
        gc_lists(o, memo)
        gc_lists(c, memo)
    facts = _joined_facts(ca.facts, cb.facts, a.epoch, b.epoch)
    return Pair(o, c, facts, max(a.epoch, b.epoch))


def join(a: Pair, b: Pair, counter: List[int], memo: Memo,
         held: Optional[Held] = None) -> Pair:
    kept = _join_keeping_lists(a, b, counter, memo, held)
    if kept is not None:
        return kept
    aligned = _join_forgetting_aligned(a, b, counter, memo, held)
    if aligned is not None:
        return aligned
    # Known list contents would grow at each iteration: the joined state keeps only the known
    # objects both states hold alike (a function built before a loop, say).  (So the states
    # are only checked to allow forgetting the others, not copied to forget them.)
    keep_o = _same_objects(a.o.heap, b.o.heap)
    keep_c = _same_objects(a.c.heap, b.c.heap)
    _forgettable(a, keep_o, keep_c, memo)
    _forgettable(b, keep_o, keep_c, memo)
    j = _Joiner(counter, a.facts, b.facts, a.epoch, b.epoch)
    o = j.state(a.o, b.o)
    c = j.state(a.c, b.c)
    o.heap = keep_o
    c.heap = keep_c
    if keep_o or keep_c:
        gc_lists(o, memo)
        gc_lists(c, memo)
    facts = _joined_facts(a.facts, b.facts, a.epoch, b.epoch)
    return Pair(o, c, facts, max(a.epoch, b.epoch))


def _match(p: Any, t: Any, sigma: Dict[Term, Any], facts: Optional[Dict[Term, bool]] = None
           ) -> bool:
    """Whether the pattern ``p`` matches ``t`` (extending ``sigma``); ``facts``: those of the
    state ``t`` is from (a variable found bound there may stand where only bound ones may)."""
    if _is_var(p):
        if p in sigma:
            return sigma[p] == t
        if t == NULL or (not p[2] and (t == UNBOUND or (maybe_unbound(t) and not (
                facts is not None and facts.get(("bound", t)))))):
            return False
        if p[3] and not has_kind(t, p[3]):
            return False
        sigma[p] = t
        return True
    if type(p) is tuple:
        if type(t) is not tuple or len(p) != len(t):
            return False
        for x, y in zip(p, t):  # (a loop, not all() over a generator: this is hot)
            if not (_match(x, y, sigma, facts) if type(x) is tuple else x == y):
                return False
        return True
    return p == t


# id(term) -> (term, whether it holds no generalisation variable); see ``_var_free``
VarMemo = Dict[int, Tuple[Any, bool]]


def _var_free(p: Any, memo: VarMemo) -> bool:
    """Whether the tuple ``p`` holds no generalisation variable (``_is_var``) at any depth,
    remembered by term object as ``machine.heap_free`` does (``memo`` holds each term alive)."""
    hit = memo.get(id(p))
    if hit is not None and hit[0] is p:
        return hit[1]
    free = not _is_var(p)
    if free:
        for x in p:
            if type(x) is tuple and not _var_free(x, memo):
                free = False
                break
    memo[id(p)] = (p, free)
    return free


def _subst(p: Any, sigma: Dict[Term, Any]) -> Any:
    if _is_var(p):
        return sigma.get(p, p)
    if type(p) is tuple:
        return tuple(_subst(x, sigma) for x in p)
    return p


def _state_items(s: MState, names: List[str]) -> Tuple[Any, ...]:
    # (the heap is matched on its own, see ``instance``; the int first: the cheapest mismatch)
    return (s.nalloc, s.nmeth, tuple(s.stack), tuple(s.vars.get(n, UNBOUND) for n in names), s.excinfo,
            tuple(s.ehstack))


def _heap_items(s: MState) -> Tuple[Any, ...]:
    return tuple(sorted(s.heap.items(), key=repr))


def _names(g: MState, s: MState, general: Pair, i: int) -> List[str]:
    """The variable names of either state, sorted.  When ``s`` has the same names as ``g`` (most
    often) they are sorted once per kept pair ``general`` (see ``Pair.names``)."""
    if g.vars.keys() != s.vars.keys():
        return sorted(set(g.vars) | set(s.vars))
    names = general.names
    if names is None:
        names = general.names = (sorted(general.o.vars), sorted(general.c.vars))
    return names[i]


def _differing(gv: Dict[str, Term], sv: Dict[str, Term]) -> List[str]:
    """The names bound in ``gv`` or ``sv`` whose terms there are not the same object (a name bound
    in one only included), sorted.  Most terms are the same object: they are skipped at C speed,
    without going through every name of both (sorted) as a loop over their union would."""
    sget = sv.get
    out = list(compress(gv, map(is_not, gv.values(), map(sget, gv))))
    # ``out`` holds the names of ``gv`` that ``sv`` lacks; ``sv`` binds other names than those
    # of ``gv`` exactly when it binds more than the rest of ``gv``'s.
    missing = 0
    for n in out:
        if n not in sv:
            missing += 1
    if len(sv) != len(gv) - missing:
        out.extend(sv.keys() - gv.keys())  # (at C speed; sorted below)
    out.sort()
    return out


def instance(general: Pair, p: Pair, memo: Memo, varmemo: VarMemo, kept: bool = False) -> bool:
    """Whether every concrete run ``p`` stands for is covered by ``general`` (``kept``: by a
    caller that never changes ``general``, see ``Pair.names``)."""
    # The parts of the states that collecting or forgetting lists cannot change are matched
    # first (gc_lists and forget_lists only change ``heap``): matching one pattern against one
    # term with one substitution gives the same answer in any order (a variable's first
    # occurrence binds it, every other must be equal to the same term), so matching them
    # before the heaps, with the substitution carried on, answers as matching all at once;
    # and most kept states fail here, before any copy or walk.
    if general.epoch != p.epoch:
        relabelled = _relabelled(general, p)
        if relabelled is None:
            return False
        p = relabelled
    if _named_canonically(general.o.heap) or _named_canonically(general.c.heap):
        # (known lists a generalisation kept through ``_join_keeping_lists`` are named
        # canonically; those ``join`` kept because both states held them alike are not)
        canon = _canonical(p, memo)
        if canon is None:
            return False
        p = canon
    # A quick rejection first, where kept states usually differ: a variable's pattern without
    # generalisation variables matches only an equal term (``_match`` compares such a pattern
    # item by item), so a variable whose term is not that one already decides.  (The names are
    # looked at in sorted order, those whose terms are the same object skipped.)
    try:
        for g, s in ((general.o, p.o), (general.c, p.c)):
            gv, sv = g.vars, s.vars
            for n in _differing(gv, sv):
                a = gv.get(n, UNBOUND)
                b = sv.get(n, UNBOUND)
                if a is not b and a != b and _var_free(a, varmemo):
                    return False
    except RecursionError:
        pass  # (only a shortcut: the full match below decides)
    if not kept:
        names_o = sorted(set(general.o.vars) | set(p.o.vars))
        names_c = sorted(set(general.c.vars) | set(p.c.vars))
    else:
        names_o = _names(general.o, p.o, general, 0)
        names_c = _names(general.c, p.c, general, 1)
    sigma: Dict[Term, Any] = {}
    if not _match((_state_items(general.o, names_o), _state_items(general.c, names_c)),
                  (_state_items(p.o, names_o), _state_items(p.c, names_c)), sigma, p.facts):
        return False
    if p.o.heap or p.c.heap:
        # (only the known lists change below: without any, no copy of the states is needed)
        p = p.copy()
        gc_lists(p.o, memo)
        gc_lists(p.c, memo)
    if p.o.heap.keys() - general.o.heap.keys() or p.c.heap.keys() - general.c.heap.keys():
        # A state whose lists are opaque covers one where they are known (and agree).
        if not forget_lists_except(p.o, p.c, general.o.heap, general.c.heap, memo):
            return False
    if not _match((_heap_items(general.o), _heap_items(general.c)),
                  (_heap_items(p.o), _heap_items(p.c)), sigma, p.facts):
        return False
    if (general.o.heap or general.c.heap) and any(_holds_canonical(t) for t in sigma.values()):
        return False  # (a variable would stand for a known list: see ``_join_keeping_lists``)
    for k, v in general.facts.items():
        if p.facts.get(_subst(k, sigma)) != v:
            return False
    return True


# --------------------------------------------------------------------------- the explorer

class Explorer:
    def __init__(self, orig: Side, cand: Side, budget: int, states: int) -> None:
        self.orig = orig
        self.cand = cand
        self.budget = budget  # symbolic steps (see ``machine.run``)
        self.max_states = states  # states taken from the queue, and generalisations
        self.states = 0
        self.steps = [0]
        self.varcount = [0]
        code = orig.code
        self.observable = sorted(set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars))
        self.observable_set = frozenset(self.observable)
        self.cellnames = orig.cellnames | cand.cellnames  # (see _after_effect)
        self.paths = 0
        self.effects = 0
        self.memo: Memo = {}  # see machine.heap_free
        self.varmemo: VarMemo = {}  # see _var_free
        self.methodmemo: Dict[int, Any] = {}  # see machine.method_escapes
        # (the original's variables and stack, the candidate's, the facts)
        self.held = (HeldNames(self.memo), HeldNames(self.memo), HeldNames(self.memo, True))

    def explore(self) -> None:
        """Explore every path of both programs in lockstep (see the module docstring).

        States wait in a queue ordered by position (the original's index first): where paths
        meet, every state that reaches the same pair of positions -- and the same events there
        -- is taken together, so that a position is generalised once for all the arrivals known
        by then rather than once per path, and what follows it is explored once for them.  (The
        original's instructions come in an order where a forward jump goes to a later index,
        so the paths that meet at a position usually have all arrived before it is taken.)
        Before the position comes the number of times the path went back (a loop's next
        iteration): every path through a loop body reaches the loop's start again before any
        is taken there, so a loop with many branches is generalised once per round, not once
        per branch.
        """
        orig, cand, steps, budget = self.orig, self.cand, self.steps, self.budget
        max_states = self.max_states
        heap: List[Tuple[Any, ...]] = []
        seq = itertools.count()

        def push(p: Pair) -> None:
            start = p.o.pc
            eo = run(orig, p.o, p.facts, p.epoch, steps)
            ec = run(cand, p.c, p.facts, p.epoch, steps)
            if steps[0] > budget:
                raise TooLarge("not proven: too large to verify (more than %d symbolic steps)"
                               % budget)
            if p.o.pc < start:
                p.rounds += 1  # (a loop's next iteration: see above)
            # One instruction can be several events in a row (a truth test, then the decision
            # on its result): each is its own position.
            heapq.heappush(heap, (p.rounds, p.o.pc, p.c.pc, eo.key[0], ec.key[0], next(seq), p,
                                  eo, ec))

        push(Pair(self.orig.initial(), self.cand.initial(), {}, 0))
        seen: Dict[Tuple[Any, ...], List[Pair]] = {}
        first = self.orig.first_target()
        memo, varmemo = self.memo, self.varmemo
        while heap:
            item = heapq.heappop(heap)
            group = [item]
            while heap and heap[0][:5] == item[:5]:
                group.append(heapq.heappop(heap))
            self.states += len(group)
            if self.states > max_states:
                raise TooLarge("not proven: too large to verify (more than %d states)"
                               % max_states)
            key = item[1:5]
            eo = item[7]
            if eo.kind in ("return", "unwind") or item[1] < first:
                # The end of a path; or the original reached this event by falling through from
                # its start (see ``Side.first_target``): every other path of this exploration
                # has left that straight line -- through a jump or a handler, or by ending --
                # where the two outcomes of a decision or an effect part, or stops on it at
                # another event (the exception a load that may be unbound raises), so it never
                # comes back: no later arrival here is compared with this state, and it is not
                # kept.  Nothing else refers to such a state: its last outcome below may
                # continue from it instead of a copy.
                for item in group:
                    self._expand(item[6], item[7], item[8], True, push)
                continue
            kept = seen.get(key)
            if kept is None:
                kept = seen[key] = []
            fresh: List[Tuple[Pair, Any, Any]] = []
            for item in group:
                p = item[6]
                if not any(instance(g, p, memo, varmemo, True) for g in kept):
                    fresh.append((p, item[7], item[8]))
            if not fresh:
                continue
            if len(kept) + len(fresh) <= KEEP:
                for p, eo, ec in fresh:
                    # (kept as it is: from here on ``p`` is only read -- every outcome below
                    # continues from a copy -- and kept states are never changed)
                    kept.append(p)
                    self._expand(p, eo, ec, False, push)
                continue
            # More distinct states than are kept: their generalisation stands for them all.
            states = [p for p, _, _ in fresh]
            g = kept[-1] if len(kept) >= KEEP else states.pop(0)
            self.states += len(states)
            for p in states:
                g = join(g, p, self.varcount, memo, self.held)
            if len(kept) >= KEEP:
                kept[-1] = g
            else:
                kept.append(g)
            p = g.copy()
            eo = run(orig, p.o, p.facts, p.epoch, steps)
            ec = run(cand, p.c, p.facts, p.epoch, steps)
            self._expand(p, eo, ec, True, push)

    def _expand(self, p: Pair, eo: Any, ec: Any, private: bool, push: Any) -> None:
        """Compare the events ``eo``/``ec`` the state ``p`` stands at, and queue (``push``) the
        state after each of their outcomes.  ``private``: nothing else refers to ``p``."""
        if (eo.kind == "decide" or ec.kind == "decide") and (eo.kind != ec.kind or eo.key != ec.key):
            # A pure question one program asks and the other does not (yet): nothing is
            # observed, both answers are explored; the other program waits at its event.
            base = (eo if eo.kind == "decide" else ec).key[1]
            for val in (False, True):
                q = p if val and private else p.copy()
                _learn(q, base, val)
                push(q)
            return
        self._compare(p, eo, ec)
        if eo.kind in ("return", "unwind"):
            self.paths += 1
            return
        if eo.kind == "decide":
            base = eo.key[1]
            for val in (False, True):
                q = p if val and private else p.copy()
                _learn(q, base, val)
                push(q)
            return
        self.effects += 1
        if method_escapes(eo.key, self.methodmemo):
            raise Unsupported("a bound method made here reaches user code: %s" % _describe(eo, p.o))
        if eo.can_raise and eo.observe and eo.ins is not None and ec.ins is not None \
                and eo.ins.handler is None and ec.ins.handler is None \
                and eo.raised is None and ec.raised is None:
            # The exception leaves both frames at once: that path is one "unwind" event on
            # each side, with the same key (this exception) and, as observed, the variables
            # just compared equal at this event.  Between the two only ``_after_effect``
            # changes them, alike on both sides: cells get the same fresh terms, and the
            # known lists reachable from the effect's operands and the cells -- corresponding
            # lists, in the same order, as the observations agreed -- get the same canonical
            # names and become opaque; what is observed of the others is unchanged.  So that
            # comparison cannot fail and the path is only counted.
            self.paths += 1
        elif eo.can_raise:
            q = p.copy()
            exc: Term = ("e", p.epoch)
            if eo.key[0] == "next":
                # An iterator's StopIteration is exhaustion, never an exception.
                q.facts[("excis", exc, "StopIteration")] = False
            for side, ev, st in ((self.orig, eo, q.o), (self.cand, ec, q.c)):
                if ev.raised is not None:
                    ev.raised(st, exc)
                else:
                    go_handler(side, st, ev.ins, exc)
            push(self._after_effect(q, eo, ec))
        if eo.key[0] == "next":
            # FOR_ITER's exit, or ``next()`` raising StopIteration in the fallback's
            # ``try: x = next(it) except StopIteration: ...``.
            q = p.copy()
            stop: Term = ("stop", p.epoch)
            for side, ev, st in ((self.orig, eo, q.o), (self.cand, ec, q.c)):
                if ev.exhausted is not None:
                    ev.exhausted(st, ())
                else:
                    go_handler(side, st, ev.ins, stop)
            push(self._after_effect(q, eo, ec))
        if eo.ok is not None:
            q = p if private else p.copy()  # (the last outcome)
            if eo.bool_result:
                res: Tuple[Term, ...] = (("b", p.epoch),)
            elif eo.key[0] in STR_RESULTS:
                res = (("s", p.epoch),)
            elif eo.nres == 1:  # (the commonest: no generator)
                res = (("r", p.epoch, 0),)
            else:
                res = tuple(("r", p.epoch, i) for i in range(eo.nres))
            eo.ok(q.o, res)
            ec.ok(q.c, res)  # type: ignore[misc]
            push(self._after_effect(q, eo, ec))

    def _after_effect(self, q: Pair, eo: Any, ec: Any) -> Pair:
        o, c = q.o, q.c
        # The effect's operands, and whatever a closure can read, are user code's now.  (The
        # observations compared equal, so both programs name the escaped lists alike.  Without
        # known lists escape_lists changes nothing.)
        if o.heap:
            get = o.vars.get
            escape_lists(o, [eo.key] + [get(name, UNBOUND) for name in self.orig.sorted_cells],
                         q.epoch, self.memo)
        if c.heap:
            get = c.vars.get
            escape_lists(c, [ec.key] + [get(name, UNBOUND) for name in self.cand.sorted_cells],
                         q.epoch, self.memo)
        q.epoch += 1
        o.nalloc = c.nalloc = 0
        o.nmeth = c.nmeth = 0
        # User code (a closure) may have rebound any cell.  (One term per name for both sides:
        # comparisons of the two states then find the same object.)
        if self.cellnames:
            epoch = q.epoch
            fresh = {name: ("cellv", name, epoch) for name in self.cellnames}
            # (each side's names in the order of its own set, as they are bound)
            if self.orig.cellnames:
                o.vars.update([(name, fresh[name]) for name in self.orig.cellnames])
            if self.cand.cellnames:
                c.vars.update([(name, fresh[name]) for name in self.cand.cellnames])
        return q

    def _compare(self, p: Pair, eo: Any, ec: Any) -> None:
        if self._same_observation(p, eo, ec):
            # (``_same_observation`` says so only when the comparison below would find
            # everything equal; the handled exception is still compared.)
            if eo.observe and p.o.excinfo != p.c.excinfo and eo.kind != "unwind":
                self._compare_slow(p, eo, ec)
            return
        self._compare_slow(p, eo, ec)

    def _same_observation(self, p: Pair, eo: Any, ec: Any) -> bool:
        """A quick sufficient condition for ``_compare_slow`` finding the events and the observed
        variables equal (False: not known, compare in full).  This runs at every event, over
        every variable of the original, so it works on whole dicts at C speed."""
        if eo.kind != ec.kind or eo.key != ec.key or (
                (eo.exhausted is None) != (ec.exhausted is None) and eo.key[0] != "next"):
            return False
        ov = p.o.vars
        if eo.observe:
            cv = p.c.vars
            obs = self.observable_set
            # Each observed name maps to the same term on both sides, or to none on both:
            # every binding of the original is one of the candidate's, every name the original
            # binds is observed, and the candidate binds no other observed name.
            if not (ov.items() <= cv.items() and ov.keys() <= obs
                    and len(cv.keys() & obs) == len(ov)):
                return False
        # The observed terms are equal; what is observed of them is a function of the terms and
        # the heap, and a term without list or dict terms is observed as it is whatever the heap.
        ho, hc = p.o.heap, p.c.heap
        if ho == hc:
            return True
        terms: List[Any] = [eo.key]
        if eo.observe:
            # (only the variables that may hold a list: along Dynamo's straight line the
            # original's thousand variables change a few at a time, see ``HeldNames``)
            terms.extend([ov[n] for n in self.held[0].of(ov)])
        memo = self.memo
        # (only the terms not known free already are looked into: most are, see heap_free)
        return all(heap_free(t, memo) for t in not_known_free(terms, memo) if type(t) is tuple)

    def _compare_slow(self, p: Pair, eo: Any, ec: Any) -> None:
        # Lists are compared by contents, and by aliasing among everything observed here.
        names = self.observable if eo.observe else []
        seen_o = observe([eo.key] + [p.o.vars.get(n, UNBOUND) for n in names], p.o.heap)
        seen_c = observe([ec.key] + [p.c.vars.get(n, UNBOUND) for n in names], p.c.heap)
        if eo.kind != ec.kind or seen_o[0] != seen_c[0] or (
                (eo.exhausted is None) != (ec.exhausted is None) and eo.key[0] != "next"):
            raise Mismatch("original at %s: %s; candidate at %s: %s" % (
                self.orig.where(eo.ins), _describe(eo, p.o), self.cand.where(ec.ins),
                _describe(ec, p.c)))
        if eo.observe and seen_o != seen_c:
            # (one comparison of the whole observation; only a difference is looked into by
            # name -- this runs at every event, over every variable of the original)
            for i, name in enumerate(names):
                a = seen_o[i + 1]
                b = seen_c[i + 1]
                if a != b or (i == len(names) - 1 and seen_o != seen_c):
                    raise Mismatch("variable %r differs before %s (original at %s: %s; candidate at "
                                   "%s: %s)" % (name, _describe(eo, p.o), self.orig.where(eo.ins),
                                                render(a), self.cand.where(ec.ins), render(b)))
        if eo.observe:
            # When the frame is left by an exception its exc_info is dropped with it.
            if p.o.excinfo != p.c.excinfo and eo.kind != "unwind":
                raise Mismatch("the handled exception differs before %s (original at %s: %s; "
                               "candidate at %s: %s)" % (_describe(eo, p.o), self.orig.where(eo.ins),
                                                         render(p.o.excinfo), self.cand.where(ec.ins),
                                                         render(p.c.excinfo)))


def _learn(q: Pair, question: Term, answer: bool) -> None:
    """``q`` takes ``answer`` to the pure ``question``.  A variable found unbound is unbound:
    both programs' variables holding that term are dropped (so they compare as unbound)."""
    q.facts[question] = answer
    if not answer and question[0] == "bound":
        term = question[1]
        for st in (q.o, q.c):
            gone = [name for name, v in st.vars.items() if v == term]
            for name in gone:
                del st.vars[name]


def _describe(ev: Any, st: Optional[MState] = None) -> str:
    key = observe([ev.key], st.heap)[0] if st is not None else ev.key
    return "%s %s" % (ev.kind if ev.kind != "effect" else key[0],
                      ", ".join(render(k) if isinstance(k, tuple) else repr(k) for k in key[1:]))
