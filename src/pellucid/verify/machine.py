"""Symbolic execution of one program's neutral instructions up to its next observable event.

:func:`run` executes instructions that cannot run user code (stack moves, local variables,
building tuples...) directly on a :class:`MState`, and stops at the first instruction that can:
it returns an :class:`Event` describing it (``key``: what is observable about it, compared with
the other program's event) and how to continue after each outcome (success with result terms,
an exception, an exhausted iterator).  Pure decisions the state cannot settle (``x is None`` on an
unknown ``x``) are events too: both programs must ask the same question.

Anything this module does not model stops the check (:class:`Unsupported`), because a wrong
"equivalent" is worse than none.
"""
# (Annotations stay unevaluated: the interpreter defines small continuation functions at every
# event, and evaluating ``Tuple[Term, ...]`` there each time was a measurable share of a check.)
from __future__ import annotations

import builtins
import types
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from pellucid.bytecode.features import (EXCEPTION_IS_ONE_VALUE, MAKE_FUNCTION_POPS_QUALNAME,
                                        MATCH_PUSHES_SUCCESS)
from pellucid.bytecode.instruction import Instr
from pellucid.bytecode.normalize import normalize
from pellucid.verify.terms import (LASTI, NULL, UNBOUND, Term, const_term, const_value,
                                   container_kind, is_bool, is_exception, is_singleton, is_str,
                                   maybe_unbound)

NEW_EXC = EXCEPTION_IS_ONE_VALUE  # one exception value and PUSH_EXC_INFO; before: six values

EXCINFO_ARG: Term = ("arg", "<caller exc_info>")
CONST_PREFIX = "__pellucid_const_"


class Unsupported(Exception):
    """Something the checker does not model: the verdict becomes "not verified"."""


class MState:
    """One program's machine state: position, value stack, variables, handled exception."""

    __slots__ = ("pc", "stack", "vars", "excinfo", "ehstack", "nalloc", "unwinding", "heap",
                 "nmeth")

    def __init__(self) -> None:
        self.pc = 0
        self.stack: List[Term] = []
        self.vars: Dict[str, Term] = {}  # name -> term; absent means unbound
        self.excinfo: Term = EXCINFO_ARG  # what sys.exc_info() would report
        # <=3.10: EXCEPT_HANDLER blocks (stack level, exc_info they saved)
        self.ehstack: List[Tuple[int, Term]] = []
        self.nalloc = 0  # lists built since the last effect (their identity terms)
        # list methods bound since the last effect (their identity terms: counted apart from
        # the lists, so that binding one does not rename the lists built after it)
        self.nmeth = 0
        self.unwinding: Optional[Term] = None  # exception leaving the function
        # Contents of the exact lists this program built that no user code can have seen yet
        # (see "Lists" below).  A list term absent from it is opaque: its contents are only
        # known to be the same in both programs, and reaching them is an effect.
        self.heap: Dict[Term, Tuple[Term, ...]] = {}

    def copy(self) -> "MState":
        s = MState.__new__(MState)
        s.pc = self.pc
        # (``copy()``: up to 3.10 ``dict(d)`` inserts item by item, five times slower)
        s.stack = self.stack.copy()
        s.vars = self.vars.copy()
        s.excinfo = self.excinfo
        s.ehstack = self.ehstack.copy()
        s.nalloc = self.nalloc
        s.nmeth = self.nmeth
        s.unwinding = self.unwinding
        s.heap = self.heap.copy()
        return s

    def shape(self) -> Tuple[Any, ...]:
        return (tuple(self.stack), tuple(sorted(self.vars.items())), self.excinfo,
                tuple(self.ehstack), self.nalloc, self.nmeth, self.unwinding,
                tuple(sorted(self.heap.items(), key=repr)))


Cont = Callable[[MState, Tuple[Term, ...]], None]


class Event:
    """An observable step.  ``kind``: "effect" (may run user code / raise), "decide" (a pure
    question), "return", "unwind" (exception leaves the function)."""

    __slots__ = ("kind", "key", "ins", "nres", "ok", "exhausted", "can_raise", "observe",
                 "bool_result", "raised")

    def __init__(self, kind: str, key: Tuple[Any, ...], ins: Optional[Instr], nres: int = 0,
                 ok: Optional[Cont] = None, exhausted: Optional[Cont] = None, can_raise: bool = True,
                 observe: bool = True, bool_result: bool = False) -> None:
        self.kind = kind
        self.key = key
        self.ins = ins
        self.nres = nres
        self.ok = ok
        self.exhausted = exhausted
        self.can_raise = can_raise
        self.observe = observe  # compare the observable variables at this point
        self.bool_result = bool_result
        # Where an exception of the effect goes, when not to the instruction's handler:
        # ``raised(state, exception)``
        self.raised: Optional[Callable[[MState, Term], None]] = None


_FAST_OPS = frozenset({"LOAD_FAST", "STORE_FAST", "DELETE_FAST", "LOAD_FAST_AND_CLEAR"})
class Side:
    """One program: its code object, neutral instructions and the names it can observe."""

    def __init__(self, code: types.CodeType, code_keys: Dict[int, Term],
                 bindings: Optional[Dict[str, Any]] = None) -> None:
        self.code = code
        self.bindings = bindings or {}
        self.instrs = normalize(code)
        self.code_keys = code_keys
        # pc -> the term of that LOAD_CONST's constant, filled as they run (a term depends only
        # on the constant and ``code_keys``; most constants are loaded again and again)
        self.const_terms: Dict[int, Term] = {}
        self.cellnames = frozenset(code.co_cellvars) | frozenset(code.co_freevars)
        self.sorted_cells = sorted(self.cellnames)
        self._code_objects: Optional[Dict[Term, types.CodeType]] = None  # see code_object
        # module code: its names live in a dict, the module's globals (see _list_step)
        self.module = code.co_name == "<module>" and not code.co_flags & 0x02
        # The fallback's with-statement prologues, by start index (pellucid.verify.idioms)
        self.prologues: Dict[int, Any] = {}
        if "__pellucid_m" in code.co_varnames:
            from pellucid.verify.idioms import find_with_prologues
            self.prologues.update(find_with_prologues(self.instrs))
        if "__pellucid_ok" in code.co_varnames:
            from pellucid.verify.idioms import find_import_froms
            self.prologues.update(find_import_froms(self.instrs))
        # Variables are modelled by name.  A local slot named like a free variable (Dynamo's
        # resume functions keep one, unused) would be confused with it if it were used.
        shadowed = set(code.co_varnames) & set(code.co_freevars)
        if shadowed:
            nargs = (code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04)
                     + bool(code.co_flags & 0x08))
            if shadowed & set(code.co_varnames[:nargs]) or any(
                    i.op in _FAST_OPS and i.arg in shadowed for i in self.instrs):
                raise Unsupported("%s uses a local variable named like a free variable"
                                  % code.co_name)

    def code_object(self, term: Term) -> Optional[types.CodeType]:
        """The code object among this code's constants whose term is ``term``."""
        if self._code_objects is None:
            self._code_objects = {const_term(c, self.code_keys): c for c in self.code.co_consts
                                  if isinstance(c, types.CodeType)}
        return self._code_objects.get(term)

    def first_target(self) -> int:
        """The first index control can reach other than by falling through: every index below it
        is reached only from the start, instruction after instruction (control moves elsewhere
        than to the next instruction only through a jump's or a handler's target).  No path of
        the exploration comes back to such an index: see ``Explorer.explore``."""
        targets = [len(self.instrs)]
        for i in self.instrs:
            if i.target is not None:
                targets.append(i.target)
            h = i.handler
            while h is not None:
                targets.append(h.target)
                h = h.outer
        return min(targets)

    def initial(self) -> MState:
        st = MState()
        code = self.code
        flags = code.co_flags
        nargs = (code.co_argcount + code.co_kwonlyargcount + bool(flags & 0x04) + bool(flags & 0x08))
        for name in code.co_varnames[:nargs]:
            st.vars[name] = ("arg", name)
        for name in code.co_freevars:
            st.vars[name] = ("cellv", name, -1)
        return st

    def where(self, ins: Optional[Instr]) -> str:
        if ins is None:
            return "%s: end of code" % self.code.co_name
        line = "" if ins.lineno is None else ", line %d" % ins.lineno
        return "offset %d%s (%s)" % (ins.offset, line, ins.op)


# --------------------------------------------------------------------------- helpers

def _pop(st: MState, n: int) -> List[Term]:
    if n == 0:
        return []
    if len(st.stack) < n:
        raise Unsupported("stack underflow")
    out = st.stack[-n:]
    del st.stack[-n:]
    return out


def _advance(st: MState) -> None:
    st.pc += 1


def _pred(term: Term) -> Tuple[Term, bool]:
    """Strip ``not``: ``(base predicate, polarity)``."""
    pol = True
    while term[0] == "not":
        term = term[1]
        pol = not pol
    return term, pol


def _is_term(a: Term, b: Term) -> Term:
    x, y = sorted((a, b), key=repr)
    return ("is", x, y)


def truth(term: Term, facts: Dict[Term, bool]) -> Optional[bool]:
    """Truth value of a known-bool or constant term, if the facts settle it."""
    base, pol = _pred(term)
    val: Optional[bool] = None
    if base[0] == "const" or base[0] == "tuple":
        ok, v = const_value(base)
        if ok:
            val = bool(v)
        elif base[0] == "tuple":
            val = bool(base[1])
        elif base[1] in ("Ellipsis", "NotImplemented", "code"):
            val = True
    elif base[0] == "is":
        a, b = base[1], base[2]
        if a == b and a[0] not in ("v",):
            val = True
        elif a[0] in _FRESH_EACH_TIME or b[0] in _FRESH_EACH_TIME or a[0] == "unbound_exc":
            pass  # (a new object each time it is made: never folded)
        elif is_singleton(a) and (b[0] in ("const", "tuple", "list")) and a != b:
            val = False
        elif is_singleton(b) and (a[0] in ("const", "tuple", "list")) and a != b:
            val = False
    if val is None:
        val = facts.get(base)
    if val is None:
        return None
    return val if pol else not val


def _decide(base: Term, ins: Instr) -> Event:
    return Event("decide", ("decide", base), ins, can_raise=False, observe=False)


# --------------------------------------------------------------------------- lists
#
# A list term ``("list", epoch, k)`` is always an *exact* ``list`` (BUILD_LIST, or slicing a
# known list); a list's class cannot be reassigned, so that stays true.  While the list is in
# ``MState.heap`` its contents are known and the operations of the list type on it that cannot
# run user code -- append, extend by a list or tuple, subscripts with ints and slices of ints,
# tuple conversion -- are executed on the contents (they may still raise IndexError: that
# exception is then an event of both programs).  The order of such operations is not
# observable; what is compared is the contents wherever a list is observed (an effect's
# operands, the original's variables, a returned value), with identities compared only as
# the aliasing among what is observed at once.  Known lists reachable from an effect's
# operands (or from a cell, which user code can read) *escape*: both programs rename them to the
# same canonical term and forget their contents, after which they are accessed through effects.
#
# Dicts built with ``str`` constant keys (``BUILD_MAP``, ``BUILD_CONST_KEY_MAP``: hashing an exact
# str runs no user code) are kept the same way, as ``("dict", epoch, k)`` with contents
# ``(key1, value1, key2, value2, ...)``, but no operation is executed on them except passing one
# as ``**kwargs``; anything else is an effect they escape through.
#
# Functions built here (MAKE_FUNCTION) are kept the same way, as ``("func", "n", k)`` with the
# least ``k`` not in use (both programs build the functions they share in the same order,
# though not always between the same effects: the fallback writes a ``def`` where the function
# is first used).  Their contents are ``(code, name1, value1, ...)``:
# the code's term and their attributes (those MAKE_FUNCTION sets, ``__name__``, ``__qualname__``)
# sorted by name.  Setting one of those attributes while the function is known (the fallback
# does, after its ``def``) changes the contents, running no user code.
#
# A list's bound ``append``/``extend`` (``LOAD_ATTR`` on an exact list) is kept the same way, as
# ``("meth", epoch, k)`` with contents ``(name, receiver)``: each binding makes a new object, and
# it is one -- the same object wherever the term is -- so what user code can tell of it (its
# receiver, which method, and identity: ``m is m2``) is what ``observe`` compares, with the
# aliasing among everything observed at once.  Calling it while it is known is ``LIST_APPEND``
# / ``LIST_EXTEND`` on its receiver.  Handed to user code (an effect's operand, an attribute
# set, a cell) it escapes like a list, and its receiver with it (``m.__self__``): from then on
# user code may call it at any effect, which is an effect on a list both programs hold alike,
# and the program's own calls of it are effects compared as usual.  Binding it runs no user
# code (``list`` is exact, its methods fixed), so when it is bound does not matter, only which
# list it is bound to -- and that is its receiver term, fixed at binding.

_HEAP_KINDS = ("list", "dict", "func", "meth")


def is_list(t: Any) -> bool:
    """An exact list built here (known, opaque, or a variable standing for such lists)."""
    return type(t) is tuple and container_kind(t) == "list"


def is_dict(t: Any) -> bool:
    return type(t) is tuple and container_kind(t) == "dict"


def is_set(t: Any) -> bool:
    """An exact set built here (not a heap object: its contents are not followed)."""
    return type(t) is tuple and container_kind(t) == "set"


def _new_set(st: MState, op: str, epoch: int) -> Term:
    """A new empty exact set (``op``: what made it, for the reader)."""
    return ("set", epoch, _alloc(st, epoch))


def is_func(t: Any) -> bool:
    return type(t) is tuple and len(t) == 3 and t[0] == "func"


def _is_heap_object(t: Any) -> bool:
    return type(t) is tuple and len(t) == 3 and t[0] in _HEAP_KINDS


# Terms are immutable and shared: a variable's term is the same object at every later event of a
# path, and in every state copied from it.  So whether a term holds any list or dict term at all
# (then no heap can change what is observed of it, and no list is reachable through it) is
# remembered per term object, for one check.  Keyed by ``id``: the entry of a term without lists
# is the term itself, that of a term with some is the 1-tuple ``(term,)``.  Each entry keeps its
# term alive, so no other object can get that id while the entry exists: ``memo.get(id(t)) is t``
# says "known free", any other entry "known not free".  (``not_known_free`` runs the first test
# over many terms at once.)
Memo = Dict[int, Any]


def not_known_free(terms: Iterable[Any], memo: Memo) -> List[Any]:
    """The items of ``terms`` not known to hold no list, in order."""
    # (a comprehension: faster than chaining ``map``s of ``id``, ``memo.get`` and ``is_not``
    # into ``compress``, from 3.8 to 3.13)
    get = memo.get
    return [t for t in terms if get(id(t)) is not t]


def heap_free(t: Tuple[Any, ...], memo: Memo) -> bool:
    """Whether the tuple ``t`` holds no list or dict term at any depth (``memo``: see above)."""
    try:
        return _heap_free(t, memo)
    except RecursionError:
        return False  # (a deep term is only "not known free": callers then walk it)


def _heap_free(t: Tuple[Any, ...], memo: Memo) -> bool:
    get = memo.get
    hit = get(id(t))
    if hit is not None:
        return hit is t
    free = True
    if len(t) == 3 and t[0] in _HEAP_KINDS:  # _is_heap_object(t), as _walk and observe
        free = False
    else:
        for x in t:
            if type(x) is tuple:
                hit = get(id(x))  # (the memo looked up here first: most items are known)
                if hit is not None:
                    if hit is x:
                        continue
                    free = False
                    break
                if not _heap_free(x, memo):
                    free = False
                    break
    memo[id(t)] = t if free else (t,)
    return free


def _walk(roots: Iterable[Any], heap: Dict[Term, Tuple[Term, ...]], out: List[Term], seen: set,
          memo: Optional[Memo] = None) -> None:
    # Depth first, parents before children, left to right, with an explicit stack: terms are
    # large and this runs at every effect, so no call per sub-term (nor per root: the roots --
    # a list, tuple or view -- are walked one after the other, as if the items of one tuple).
    if not roots:
        return  # (an empty part of a state: most handler blocks...)
    if memo is not None:
        # (the roots already known to hold no list are dropped at once: most of a state's are)
        todo = not_known_free(roots, memo)
    else:
        todo = list(roots)
    todo.reverse()
    pop, push = todo.pop, todo.extend
    while todo:
        t = pop()
        if type(t) is not tuple:
            continue
        if memo is not None:
            hit = memo.get(id(t))  # (heap_free, inlined: this is hot)
            if hit is None:
                if heap_free(t, memo):
                    continue  # nothing below adds to ``out`` or ``seen``
            elif hit is t:
                continue
        if len(t) == 3 and t[0] in _HEAP_KINDS:  # _is_heap_object(t)
            if t in seen:
                continue
            seen.add(t)
            out.append(t)
            items = heap.get(t)
            if items:
                push(reversed(items))
            continue
        push(reversed(t))


def reachable_lists(roots: Sequence[Any], heap: Dict[Term, Tuple[Term, ...]],
                    memo: Optional[Memo] = None) -> List[Term]:
    """List terms reachable from ``roots`` (through known contents), in first-seen order."""
    out: List[Term] = []
    _walk(roots, heap, out, set(), memo)
    return out


def state_roots(st: MState) -> List[Iterable[Any]]:
    """Everything in ``st`` that can refer to a list, in groups (each walked as its terms in
    order: walking a tuple of them would find the same lists)."""
    return [st.stack, st.vars.values(), (st.excinfo,), st.ehstack, (st.unwinding,)]


def _state_lists(st: MState, memo: Optional[Memo], early: bool = True
                 ) -> Tuple[Any, set, List[Iterable[Any]]]:
    """The known lists of ``st`` its state refers to (what ``gc_lists`` keeps), the list terms
    found, and the groups of ``state_roots`` not walked: a walk stops ``early`` once every known
    list is found (the rest of the state cannot add a live one); walking the rest into the same
    set completes it to every list term the state reaches."""
    heap = st.heap
    keys = heap.keys()
    out: List[Term] = []
    seen: set = set()
    parts = state_roots(st)
    for i, part in enumerate(parts):
        _walk(part, heap, out, seen, memo)
        if early and keys <= seen:
            return keys, seen, parts[i + 1:]
    return keys & seen, seen, []


def observe(terms: Sequence[Any], heap: Dict[Term, Tuple[Term, ...]],
            memo: Optional[Memo] = None) -> Tuple[Any, ...]:
    """What can be observed of ``terms`` (observed together): each known list becomes its
    contents, numbered by first occurrence so that aliasing is kept; opaque lists stay terms."""
    if not heap:
        return tuple(terms)  # no known list: every term is observed as it is
    numbers: Dict[Term, int] = {}

    # (list comprehensions that call snap only on tuples: this runs on every variable at
    # every effect, and most sub-terms are leaves)
    def snap(t: Any) -> Any:
        if len(t) == 3 and t[0] in _HEAP_KINDS:  # _is_heap_object(t)
            if t not in heap:
                return t
            if t in numbers:
                return ("listref", numbers[t])
            numbers[t] = len(numbers)
            return ("known " + t[0], numbers[t],
                    tuple([snap(x) if type(x) is tuple else x for x in heap[t]]))
        return tuple([snap(x) if type(x) is tuple else x for x in t])

    if memo is None:
        return tuple([snap(t) if type(t) is tuple else t for t in terms])
    # A term without list or dict terms is observed as it is (snap would rebuild it equal) and
    # numbers no list.
    return tuple([snap(t) if type(t) is tuple and not heap_free(t, memo) else t for t in terms])


def rename_lists(st: MState, mapping: Dict[Term, Term], memo: Optional[Memo] = None,
                 held: Optional[Iterable[str]] = None, entries: Optional[List[int]] = None
                 ) -> None:
    """Rename list terms everywhere in ``st`` (an injective renaming: alpha conversion).
    ``held``: the names of ``st.vars`` whose terms may hold a list (every other one known free
    in ``memo``): only those are looked at; likewise the stack's ``entries`` (indices)."""
    if not mapping:
        return

    get = (memo if memo is not None else {}).get

    def ren(t: Any) -> Any:
        if type(t) is not tuple:
            return t
        # (a term without lists is kept as it is: rebuilding it would give an equal term; the
        # memo is looked up here first, most terms are known)
        h = get(id(t))
        if h is t:
            return t
        if h is None and memo is not None and heap_free(t, memo):
            return t
        if _is_heap_object(t):
            return mapping.get(t, t)
        return tuple([ren(x) for x in t])

    # (the terms already known free are kept without a call: a state of Dynamo's long straight
    # line holds a thousand variables, most of them known free, and this runs at every join)
    stack = st.stack
    if entries is not None and memo is not None:
        st.stack = stack = stack.copy()
        for i in entries:
            t = stack[i]
            if get(id(t)) is not t:
                stack[i] = ren(t)
    else:
        st.stack = [t if get(id(t)) is t else ren(t) for t in stack]
    if held is not None and memo is not None:
        # (in place: the names keep their order; ``st.vars`` is a copy of its own here)
        variables = st.vars
        for k in held:
            v = variables[k]
            if get(id(v)) is not v:
                variables[k] = ren(v)
    else:
        st.vars = {k: v if get(id(v)) is v else ren(v) for k, v in st.vars.items()}
    st.excinfo = ren(st.excinfo)
    st.ehstack = [(lvl, ren(t)) for lvl, t in st.ehstack]
    st.heap = {ren(k): tuple([ren(x) for x in v]) for k, v in st.heap.items()}
    if st.unwinding is not None:
        st.unwinding = ren(st.unwinding)


def escape_lists(st: MState, roots: Sequence[Any], epoch: int,
                 memo: Optional[Memo] = None) -> None:
    """User code may now hold the known lists reachable from ``roots``: forget their contents
    and give them canonical names (the same in both programs, whose observations agreed)."""
    if not st.heap:
        return  # nothing known to forget
    if memo is not None:
        get = memo.get
        if all(get(id(t)) is t or type(t) is not tuple or heap_free(t, memo) for t in roots):
            return  # no list reachable (the commonest case: no walk)
    mapping: Dict[Term, Term] = {}
    for t in reachable_lists(roots, st.heap, memo):
        if t in st.heap:
            mapping[t] = (t[0], epoch, -1 - len(mapping))
    if mapping:
        rename_lists(st, mapping, memo)
        for t in mapping.values():
            del st.heap[t]


def gc_lists(st: MState, memo: Optional[Memo] = None) -> None:
    """Drop the contents of known lists nothing refers to any more."""
    heap = st.heap
    if not heap:
        return
    live = _state_lists(st, memo)[0]
    if len(live) < len(heap):
        for t in [t for t in heap if t not in live]:
            del heap[t]


def can_forget_lists(o: MState, c: MState, memo: Optional[Memo] = None) -> bool:
    """Whether ``forget_lists`` would succeed, changing neither state (a join only needs the
    answer: its generalised state has no known lists whatever they were)."""
    if o.heap == c.heap:
        # (no walk: every list known on either side is known on both, with the same contents;
        # one live on one side only is unreachable on the other)
        return True
    # (what is left of each heap after ``gc_lists``, without removing anything)
    live_o, seen_o, rest_o = _state_lists(o, memo)
    live_c, seen_c, rest_c = _state_lists(c, memo)
    if not live_o and not live_c:
        return True  # nothing known on either side (the checks below find nothing)
    ho, hc = o.heap, c.heap
    for t in live_o & live_c:
        if ho[t] != hc[t]:
            return False
    # A list known on one side only must not be reachable (already opaque) on the other.  (The
    # walk reaches only live lists, so it finds the same with the whole heap as with the live.)
    for one, other, other_live, other_seen, rest in ((live_o, c, live_c, seen_c, rest_c),
                                                     (live_c, o, live_o, seen_o, rest_o)):
        only = one - other_live
        if only:
            out: List[Term] = []
            for part in rest:  # (the walk goes on where it stopped)
                _walk(part, other.heap, out, other_seen, memo)
            if not only.isdisjoint(other_seen):
                return False
    return True


def _without(st: MState, keep: Iterable[Term]) -> MState:
    """A view of ``st`` (sharing everything) whose heap lacks the objects ``keep``."""
    view = MState.__new__(MState)
    for name in MState.__slots__:
        setattr(view, name, getattr(st, name))
    view.heap = {k: v for k, v in st.heap.items() if k not in keep}
    return view


def forget_lists_except(o: MState, c: MState, keep_o: Iterable[Term], keep_c: Iterable[Term],
                        memo: Optional[Memo] = None) -> bool:
    """``forget_lists`` for every known object but ``keep_o`` (of ``o``) and ``keep_c`` (of
    ``c``), which stay known.  (Checked as if the kept ones were opaque: conservative.)"""
    keep_o, keep_c = set(keep_o), set(keep_c)
    if not keep_o and not keep_c:
        return forget_lists(o, c, memo)
    if can_forget_lists(_without(o, keep_o), _without(c, keep_c), memo):
        o.heap = {k: v for k, v in o.heap.items() if k in keep_o}
        c.heap = {k: v for k, v in c.heap.items() if k in keep_c}
        return True
    gc_lists(o, memo)
    gc_lists(c, memo)
    return False


def can_forget_lists_except(o: MState, c: MState, keep_o: Iterable[Term], keep_c: Iterable[Term],
                            memo: Optional[Memo] = None) -> bool:
    """Whether ``forget_lists_except`` would succeed (changing neither state)."""
    keep_o, keep_c = set(keep_o), set(keep_c)
    if not keep_o and not keep_c:
        return can_forget_lists(o, c, memo)
    return can_forget_lists(_without(o, keep_o), _without(c, keep_c), memo)


def forget_lists(o: MState, c: MState, memo: Optional[Memo] = None) -> bool:
    """Make every known list of both programs opaque (at a loop, where contents would grow
    without bound).  Sound only when each list reachable in both programs has the same contents
    in both -- it is afterwards assumed to -- so this returns False when that is not so (and
    then only the lists nothing refers to are dropped, as ``gc_lists`` does)."""
    if can_forget_lists(o, c, memo):
        o.heap = {}
        c.heap = {}
        return True
    gc_lists(o, memo)
    gc_lists(c, memo)
    return False


def _seq_items(t: Term, heap: Dict[Term, Tuple[Term, ...]]) -> Optional[Tuple[Term, ...]]:
    """Items of a known list or of a tuple term (iterating them runs no user code)."""
    if is_list(t) and t in heap:
        return heap[t]
    if t[0] == "tuple":
        return t[1]
    return None


def _int_const(t: Term) -> Optional[int]:
    return t[2] if t[0] == "const" and t[1] == "int" else None


def _index(t: Term) -> Any:
    """An int or a slice of ints/None that indexing with runs no user code, else None."""
    n = _int_const(t)
    if n is not None:
        return n
    if t[0] == "slice" and 3 <= len(t) <= 4:
        parts = []
        for p in t[1:]:
            if p == ("const", "None", None):
                parts.append(None)
            elif _int_const(p) is not None:
                parts.append(_int_const(p))
            else:
                return None
        return slice(*parts)
    return None


def _closure_of_fresh_lambda(side: "Side", fn: Term, heap: Dict[Term, Tuple[Term, ...]]
                             ) -> Optional[Term]:
    """``(lambda: name).__closure__``: the closure tuple of a function built here whose code is
    exactly ``return name`` over the one free variable ``name``, with no other attribute.
    Reading ``__closure__`` of a plain function runs no user code."""
    contents = heap.get(fn) if is_func(fn) else None
    if contents is None:
        return None
    attrs = dict(zip(contents[1::2], contents[2::2]))
    if set(attrs) - {"__name__", "__qualname__"} != {"closure"}:
        return None
    closure = attrs["closure"]
    if closure[0] != "tuple" or len(closure[1]) != 1 or closure[1][0][0] != "cellref":
        return None
    name = closure[1][0][1]
    c = side.code_object(contents[0])
    if c is not None:
        body = [(i.op, i.arg) for i in normalize(c)]
        if (c.co_freevars == (name,) and c.co_argcount == 0 and c.co_kwonlyargcount == 0
                and not c.co_flags & 0x3AC  # no *args/**kwargs, not a generator/coroutine
                and body == [("LOAD_DEREF", name), ("RETURN_VALUE", None)]):
            return closure
    return None


# Every op ``_list_step`` tests for (any other is answered False at once).  A test
# (tests/test_verify.py) reads its comparisons and checks this set names exactly them.
_LIST_STEP_OPS = frozenset({"LIST_APPEND", "LIST_EXTEND", "LIST_TO_TUPLE", "SUBSCR", "STORE_SUBSCR",
                            "DELETE_SUBSCR", "DICT_MERGE", "DICT_UPDATE", "LOAD_ATTR",
                            "STORE_ATTR", "BUILD_SET", "BUILD_MAP_UNPACK_WITH_CALL",
                            "BUILD_MAP_UNPACK", "STORE_NAME", "LOAD_NAME", "DELETE_NAME"})
_NAME_OPS = ("STORE_NAME", "LOAD_NAME", "DELETE_NAME")
# What the fallback's handlers save and restore around ``raise e`` (see ``_list_step``).
_EXC_SLOTS = ("__context__", "__traceback__")


# A bound method of a set or str built here, ``("method", name, receiver)``, stands for a
# new object each time it is made, but its term does not tell two of them apart: it may only be
# called (``method_escapes`` says where it is used otherwise).  Likewise the fallback's
# ``zip(keys, values)``, ``("zip", keys, values)``, which only ``dict()`` may take.
_FRESH_EACH_TIME = ("method", "zip")

def method_escapes(key: Tuple[Any, ...], memo: Dict[int, Any]) -> bool:
    """Whether the effect ``key`` hands a bound method term to user code other than by calling
    it (``memo``: per term object, as ``heap_free``'s)."""
    parts = key[2:] if key[0] == "call" and key[1][0] == "method" else key[1:]
    return any(type(t) is tuple and _holds_method(t, memo) for t in parts)


def _holds_method(t: Tuple[Any, ...], memo: Dict[int, Any]) -> bool:
    hit = memo.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    found = (len(t) == 3 and t[0] in _FRESH_EACH_TIME) or any(
        type(x) is tuple and _holds_method(x, memo) for x in t)
    memo[id(t)] = (t, found)
    return found


def _list_done(st: MState, npop: int, push: Tuple[Term, ...] = ()) -> None:
    """A list operation done without an event: pop ``npop`` values, push ``push``, go on."""
    _pop(st, npop)
    st.stack.extend(push)
    _advance(st)


def _list_step(side: "Side", st: MState, ins: Instr, epoch: int, facts: Dict[Term, bool]) -> Any:
    """List and tuple operations on known contents.  Returns an event, ``None`` (done) or
    ``False`` (not such an operation: handled as usual)."""
    op = ins.op
    if op not in _LIST_STEP_OPS:
        return False  # (most effects: answered before anything else is looked at)
    arg, stack, heap = ins.arg, st.stack, st.heap

    if op in ("LIST_APPEND", "LIST_EXTEND") and isinstance(arg, int) and len(stack) > arg:
        lst, v = stack[-1 - arg], stack[-1]
        if is_list(lst) and lst in heap:
            items = (v,) if op == "LIST_APPEND" else _seq_items(v, heap)
            if items is not None:
                heap[lst] = heap[lst] + items
                _list_done(st, 1)
                return None
    elif op == "LIST_TO_TUPLE" and stack and is_list(stack[-1]) and stack[-1] in heap:
        _list_done(st, 1, (("tuple", heap[stack[-1]]),))
        return None
    elif op == "SUBSCR" and len(stack) >= 2:
        seq, key = stack[-2], stack[-1]
        items = _seq_items(seq, heap)
        idx = _index(key) if items is not None else None
        if idx is not None:
            try:
                got = items[idx]  # type: ignore[index]
            except (IndexError, ValueError):
                return _raise_only(ins, ("getitem", seq, key))
            if not isinstance(idx, slice):
                _list_done(st, 2, (got,))
            elif seq in heap:  # list.__getitem__ with a slice returns a new exact list
                new = ("list", epoch, _alloc(st, epoch))
                heap[new] = tuple(got)
                _list_done(st, 2, (new,))
            else:
                _list_done(st, 2, (("tuple", tuple(got)),))
            return None
    elif op == "STORE_SUBSCR" and len(stack) >= 3 and is_list(stack[-2]) and stack[-2] in heap:
        v, lst, key = stack[-3], stack[-2], stack[-1]
        idx = _index(key)
        new_items = _seq_items(v, heap) if isinstance(idx, slice) else (v,)
        if idx is not None and new_items is not None:
            work = list(heap[lst])
            try:
                if isinstance(idx, slice):
                    work[idx] = list(new_items)
                else:
                    work[idx] = v
            except (IndexError, ValueError):
                return _raise_only(ins, ("setitem", lst, key, v))
            heap[lst] = tuple(work)
            _list_done(st, 3)
            return None
    elif op == "DELETE_SUBSCR" and len(stack) >= 2 and is_list(stack[-2]) and stack[-2] in heap:
        lst, key = stack[-2], stack[-1]
        idx = _index(key)
        if idx is not None:
            work = list(heap[lst])
            try:
                del work[idx]
            except (IndexError, ValueError):
                return _raise_only(ins, ("delitem", lst, key))
            heap[lst] = tuple(work)
            _list_done(st, 2)
            return None
    elif op in ("BUILD_MAP_UNPACK_WITH_CALL", "BUILD_MAP_UNPACK") and isinstance(arg, int) \
            and len(stack) >= arg and all(is_dict(d) and d in heap for d in stack[len(stack) - arg:]):
        # 3.8's ``f(**{'a': x}, **d)``: known dicts with str keys merged into a new one (a key
        # given twice is TypeError for a call: left to the effect).
        merged: Dict[Term, Term] = {}
        for d in stack[len(stack) - arg:]:
            contents = heap[d]
            for k, v in zip(contents[0::2], contents[1::2]):
                if k in merged and op == "BUILD_MAP_UNPACK_WITH_CALL":
                    return False
                merged[k] = v
        _pop(st, arg)
        _build_dict(st, [x for kv in merged.items() for x in kv], epoch)
        _advance(st)
        return None
    elif op in _NAME_OPS and side.module and isinstance(arg, str) and arg.startswith("__pellucid"):
        # Module code: the fallback's own names (its marker, state, slots, builtins module)
        # in the module's globals, a dict.  Assumed: no user code reads or writes names
        # starting with ``__pellucid`` (recompile binds its constants under such names too).
        # They are followed as variables of the program.
        if op == "STORE_NAME":
            v = stack.pop()
            st.vars[arg] = v
        elif op == "LOAD_NAME":
            stop = _unless_bound(side, st, ins, arg, facts, "global", epoch)
            if stop is not None:
                return None if stop is _RAISED else stop
            stack.append(st.vars[arg])
        else:
            stop = _unless_bound(side, st, ins, arg, facts, "global", epoch)
            if stop is not None:
                return None if stop is _RAISED else stop
            del st.vars[arg]
        _advance(st)
        return None
    elif op == "BUILD_SET" and arg == 0:
        # An empty set: no item to hash, no user code.
        _list_done(st, 0, (_new_set(st, op, epoch),))
        return None
    elif op == "STORE_ATTR" and len(stack) >= 2 and arg in _EXC_SLOTS:
        value, obj = stack[-2], stack[-1]
        if value == (("tbof", obj) if arg == "__traceback__" else ("excattr", arg, obj, epoch)):
            # Writing back what was read in this epoch (no user code ran since): the slot
            # holds it again, whatever ``raise`` did to it in between.
            _list_done(st, 2)
            return None
    elif op == "STORE_ATTR" and len(stack) >= 2 and is_func(stack[-1]) and stack[-1] in heap \
            and arg in _SETTABLE and _settable(_SETTABLE[arg], stack[-2]):
        # The fallback's ``fn.__defaults__ = ...`` after its ``def``: no user code has the
        # function yet.
        name = arg if arg in ("__name__", "__qualname__") else arg[2:-2]
        _set_part(st, stack[-1], name, stack[-2])
        _list_done(st, 2)
        return None
    elif op in ("DICT_MERGE", "DICT_UPDATE") and isinstance(arg, int) and len(stack) > arg:
        # One known dict into another (``f(**{})`` compiles to this): str keys, no user code.
        target, src = stack[-1 - arg], stack[-1]
        if is_dict(target) and target in heap and is_dict(src) and src in heap:
            items = dict(zip(heap[target][0::2], heap[target][1::2]))
            if op == "DICT_MERGE" and any(k in items for k in heap[src][0::2]):
                return False  # a repeated keyword argument: TypeError, left to the effect
            items.update(zip(heap[src][0::2], heap[src][1::2]))
            heap[target] = tuple(x for kv in items.items() for x in kv)
            _list_done(st, 1)
            return None
    elif op == "LOAD_ATTR" and stack:
        obj = stack[-1]
        if is_list(obj) and arg in ("append", "extend"):
            # A new bound method of an exact list (see "Lists" above).
            meth = ("meth", epoch, st.nmeth)
            st.nmeth += 1
            heap[meth] = (const_term(arg), obj)
            _list_done(st, 1, (meth,))
            return None
        if arg in _EXC_SLOTS and is_exception(obj):
            # The fallback re-enters a handler with ``raise e`` after saving e.__context__ and
            # e.__traceback__, and restores them at once (below).  Assumed: an exception's
            # __context__/__traceback__ are BaseException's own slots (no class overrides
            # them), so reading them runs no user code.  The context read is only ever written
            # back: its term names the exception and the epoch it was read in.  (Tracebacks
            # are not modelled: ``("tbof", e)`` is e's, whatever frames it went through.)
            value = ("tbof", obj) if arg == "__traceback__" else ("excattr", arg, obj, epoch)
            _list_done(st, 1, (value,))
            return None
        if arg in ("add", "update") and is_set(obj):
            # A new bound method of an exact set: calling it is SET_ADD / SET_UPDATE (which
            # runs set.update's own code: the fallback writes SET_UPDATE so).
            _list_done(st, 1, (("method", arg, obj),))
            return None
        if arg == "join" and obj == _EMPTY_STR:
            # A new bound method of the str ''.
            _list_done(st, 1, (("method", arg, obj),))
            return None
        if arg == "__closure__":
            closure = _closure_of_fresh_lambda(side, obj, heap)
            if closure is not None:
                _list_done(st, 1, (closure,))
                return None
    return False


# --------------------------------------------------------------------------- the interpreter

MAX_PURE_STEPS = 20000


def run(side: Side, st: MState, facts: Dict[Term, bool], epoch: int, counter: List[int]) -> Event:
    """Execute pure instructions from ``st.pc`` and return the next event (``st`` is updated up to
    the event's instruction, which is left unexecuted: an event can be produced again)."""
    instrs = side.instrs
    n = len(instrs)
    consts = side.const_terms
    steps = 0
    # (Only ``go_handler`` replaces ``st.stack`` -- when the exception leaves the function, and
    # the loop then stops -- and nothing here replaces ``st.vars``: both are read once.)
    stack = st.stack
    variables = st.vars
    prologues = side.prologues
    loops: Dict[int, Any] = {}  # (see _endless)
    # (``counter`` counts every step; it is read only after an event, so it is added to once)
    while True:
        if st.unwinding is not None:
            counter[0] += steps
            return Event("unwind", ("unwind", st.unwinding), None, can_raise=False)
        pc = st.pc
        if prologues and pc in prologues:
            ev = _prologue_event(side, st, prologues[pc])
            if ev is not None:
                counter[0] += steps
                return ev
        if not 0 <= pc < n:
            raise Unsupported("execution falls off the end of %s" % side.code.co_name)
        steps += 1
        ins = instrs[pc]
        op = ins.op
        if steps > _LOOP_CHECK_STEPS:
            if steps > MAX_PURE_STEPS:
                raise Unsupported("no observable event within %d steps (endless pure loop?)"
                                  % steps)
            if ins.target is not None and ins.target <= pc and _endless(st, pc, loops):
                # The same state again at a jump back, with no event in between: the program
                # runs forever without doing anything observable.
                counter[0] += steps
                return Event("return", ("runs forever",), ins, can_raise=False, observe=False)
        # The commonest pure steps, done here exactly as ``_step`` does them (a call per step
        # was a measurable share of a check); anything else, or any doubt, goes to ``_step``.
        if op == "LOAD_FAST":
            v = variables.get(ins.arg)
            if v is not None and v[0] not in _UNSURE_KINDS:
                stack.append(v)
                st.pc = pc + 1
                continue
        elif op == "LOAD_CONST":
            v = consts.get(pc)
            if v is None:
                v = consts[pc] = const_term(ins.arg, side.code_keys)
            stack.append(v)
            st.pc = pc + 1
            continue
        elif op == "STORE_FAST":
            if stack:
                v = stack.pop()
                if v == NULL:
                    variables.pop(ins.arg, None)
                else:
                    variables[ins.arg] = v
                st.pc = pc + 1
                continue
        elif op == "POP_TOP":
            if stack:
                stack.pop()
                st.pc = pc + 1
                continue
        elif op == "PUSH_NULL":
            stack.append(NULL)
            st.pc = pc + 1
            continue
        if op not in _STEP_OPS:
            # (what _step does with such an op, without the call: most events are these)
            ev = _list_step(side, st, ins, epoch, facts) if op in _LIST_STEP_OPS else False
            if ev is False:
                ev = _effect_op(side, st, ins, epoch, facts)
        else:
            ev = _step(side, st, ins, facts, epoch)
        if ev is not None:
            counter[0] += steps
            return ev
        stack = st.stack


def _prologue_event(side: Side, st: MState, pro: Any) -> Optional[Event]:
    """The fallback's with-statement prologue ``pro`` (``pellucid.verify.idioms``) as the one
    effect BEFORE_WITH / BEFORE_ASYNC_WITH is: the manager's special methods looked up, the
    bound ``__exit__`` and what ``__enter__`` returned are its two results.  Or its lookup for
    ``from m import name`` as IMPORT_FROM's second half (None: not taken, ``m.name`` worked)."""
    if not hasattr(pro, "kind"):
        ok_flag = st.vars.get("__pellucid_ok", UNBOUND)
        if ok_flag == const_term(True):
            return None  # (the block is jumped over)
        module = st.vars.get(pro.module_slot, UNBOUND)
        if ok_flag != const_term(False) or module == UNBOUND or maybe_unbound(module):
            raise Unsupported("the fallback's import-from lookup in an unexpected state")

        def found(s: MState, res: Tuple[Term, ...]) -> None:
            s.vars[pro.result_slot] = res[0]
            s.pc = pro.end

        return Event("effect", ("import_from_fallback", module, pro.name),
                     side.instrs[pro.end - 1], 1, found)
    m = st.vars.get("__pellucid_m", UNBOUND)
    if m == UNBOUND or maybe_unbound(m):
        raise Unsupported("a with-statement prologue without its manager")

    def ok(s: MState, res: Tuple[Term, ...]) -> None:
        s.vars[pro.exit_slot] = res[0]
        s.vars[pro.result_slot] = res[1]
        # (the unbound __enter__, a temporary of the prologue: read by nothing after it)
        s.vars["__pellucid_enter"] = ("special", m, pro.kind)
        s.pc = pro.end

    return Event("effect", (pro.kind, m), side.instrs[pro.end - 1], 2, ok)


_LOOP_CHECK_STEPS = 1000  # pure steps in one run before looking for an endless pure loop


def _endless(st: MState, pc: int, loops: Dict[int, Any]) -> bool:
    """Whether ``st`` at ``pc`` is a state this run already had there (a pure loop that will
    never end).  Looked for only in runs that are already long: each is a snapshot of the state."""
    snapshot = (tuple(st.stack), tuple(sorted(st.vars.items())), st.excinfo, tuple(st.ehstack),
                tuple(sorted(st.heap.items(), key=repr)))
    seen = loops.setdefault(pc, set())
    if snapshot in seen:
        return True
    seen.add(snapshot)
    return False


def go_handler(side: Side, st: MState, ins: Optional[Instr], exc: Term) -> None:
    """Transfer to the handler covering ``ins`` with exception ``exc`` (or start unwinding)."""
    h = ins.handler if ins is not None else None
    if h is None:
        st.unwinding = exc
        st.stack = []
        return
    if NEW_EXC:
        if len(st.stack) < h.depth:
            raise Unsupported("handler depth %d above stack height %d" % (h.depth, len(st.stack)))
        del st.stack[h.depth:]
        if h.lasti:
            st.stack.append(LASTI)
        st.stack.append(exc)
    else:
        # Leaving an ``except`` body restores the exception state it saved (EXCEPT_HANDLER block).
        while st.ehstack and st.ehstack[-1][0] >= h.depth:
            st.excinfo = st.ehstack.pop()[1]
        if len(st.stack) < h.depth:
            raise Unsupported("handler depth %d above stack height %d" % (h.depth, len(st.stack)))
        del st.stack[h.depth:]
        prev = st.excinfo
        st.ehstack.append((h.depth, prev))
        st.stack.extend([("tbof", prev), prev, ("typeof", prev), ("tbof", exc), exc, ("typeof", exc)])
        st.excinfo = exc
    st.pc = h.target


BUILTINS_MODULE: Term = ("module", "builtins")


def _known_match(exc: Term, cls: Term, facts: Dict[Term, bool]) -> Optional[bool]:
    """``except cls`` on ``exc`` when it needs no user code: catching ``BaseException`` always
    matches, and whether an iterator's exception is ``StopIteration`` is known."""
    exc = _exc_of(exc)
    if cls == ("builtin", "BaseException") and is_exception(exc):
        return True
    if exc[0] == "stop" and _builtin_exception(cls):
        return cls[1] in ("StopIteration", "Exception", "BaseException")
    if is_exception(exc) and exc[0] != "unbound_exc" and _builtin_exception(cls):
        return facts.get(("excis", exc, cls[1]))  # (see the pure question in _step)
    if exc[0] == "unbound_exc" and cls[0] == "builtin":
        # UnboundLocalError (a local or the code's own cell) or NameError (a free variable, a
        # global; 3.8-3.13 alike): builtin classes, whose subclass test runs no user code.
        raised = "NameError" if exc[1] in ("free", "global") else "UnboundLocalError"
        return cls[1] in _BASES_OF[raised]
    if cls == ("builtin", "StopIteration"):
        if exc[0] == "stop":
            return True
        return facts.get(("excis", exc, "StopIteration"))
    return None


_BASES_OF = {"UnboundLocalError": ("UnboundLocalError", "NameError", "Exception", "BaseException"),
             "NameError": ("NameError", "Exception", "BaseException")}


def _builtin_exception(cls: Term) -> bool:
    """Whether ``cls`` is a builtin exception class read from the builtins module."""
    if cls[0] != "builtin":
        return False
    obj = getattr(builtins, cls[1], None)
    return isinstance(obj, type) and issubclass(obj, BaseException)


def _import_from(side: "Side", st: MState, ins: Instr, facts: Dict[Term, bool]) -> Optional[Event]:
    """IMPORT_FROM: ``getattr(module, name)``; when that raises AttributeError, the module
    named ``<module.__name__>.<name>`` from ``sys.modules`` (or ImportError), which the fallback
    writes out as ``try: x = m.name`` / ``except AttributeError:`` / its own lookup
    (``pellucid.verify.idioms``): three events, the second a pure question."""
    stack = st.stack
    top = _need(stack, ins.op, 1)[0]
    if top[0] == "import_failed":
        _, module, exc = top
        known = facts.get(("excis", exc, "AttributeError"))
        if known is None:
            return _decide(("excis", exc, "AttributeError"), ins)
        stack.pop()
        if not known:
            go_handler(side, st, ins, exc)
            return None
        stack.append(top)  # (the effect's one value to pop: the module stays below)
        return _effect(st, ins, ("import_from_fallback", module, ins.arg), 1, 1)

    def failed(s: MState, exc: Term, module: Term = top) -> None:
        s.stack.append(("import_failed", module, exc))  # (the same instruction runs again)

    ev = _effect(st, ins, ("getattr", top, ins.arg), 0, 1)
    ev.raised = failed
    return ev


def _exc_of(term: Term) -> Term:
    return term[1] if term[0] == "typeof" else term


def _effect(st: MState, ins: Instr, key: Tuple[Any, ...], npop: int, nres: int,
            push: Optional[Callable[[MState, Tuple[Term, ...]], None]] = None,
            bool_result: bool = False) -> Event:
    """An effect consuming ``npop`` stack values and pushing its ``nres`` results."""
    if push is None:
        # (most effects: one of the functions made once below, instead of a closure each time)
        plain = _PLAIN_OK[npop] if 0 <= npop < len(_PLAIN_OK) else _plain_ok(npop)
        return Event("effect", key, ins, nres, plain, None, True, True, bool_result)
    pushed = push

    def ok(s: MState, res: Tuple[Term, ...]) -> None:
        # (_pop and _advance inlined: this runs after most effects, on both sides)
        stack = s.stack
        if npop:
            if len(stack) < npop:
                raise Unsupported("stack underflow")
            del stack[-npop:]
        pushed(s, res)
        s.pc += 1

    return Event("effect", key, ins, nres, ok, None, True, True, bool_result)


def _plain_ok(npop: int) -> Cont:
    """What ``_effect``'s ``ok`` does without ``push``: pop ``npop`` values, push the results."""

    def ok(s: MState, res: Tuple[Term, ...]) -> None:
        stack = s.stack
        if npop:
            if len(stack) < npop:
                raise Unsupported("stack underflow")
            del stack[-npop:]
        stack.extend(res)
        s.pc += 1

    return ok


_PLAIN_OK = [_plain_ok(n) for n in range(16)]


def _push_bool(s: MState, res: Tuple[Term, ...]) -> None:
    s.stack.append(res[0])


def _push_negated(s: MState, res: Tuple[Term, ...]) -> None:
    s.stack.append(("not", res[0]))


def _raise_only(ins: Instr, key: Tuple[Any, ...]) -> Event:
    return Event("effect", key, ins, 0, None)


# What ``_unless_bound`` returns when the load or ``del`` raised (the state is at the handler).
_RAISED = Event("raised", ("raised",), None)


def _unless_bound(side: "Side", st: MState, ins: Instr, name: str, facts: Dict[Term, bool],
                  kind: str, epoch: int) -> Optional[Event]:
    """The decision a load or ``del`` of ``name`` stops at when it may be unbound, ``_RAISED``
    when it is unbound (reading an unbound variable raises UnboundLocalError or NameError,
    running no user code: the state goes to the handler with that exception), None when it is
    known to be bound."""
    v = st.vars.get(name, UNBOUND)
    if maybe_unbound(v) and v != UNBOUND:
        known = facts.get(("bound", v))
        if known is None:
            return _decide(("bound", v), ins)
        if known:
            return None
    elif v != UNBOUND:
        return None
    # (a new exception each time: its term names what its type and message are made of, not
    # which one it is -- ``is`` between two is never folded; two raised for one name between
    # the same two effects stand for each other)
    go_handler(side, st, ins, ("unbound_exc", kind, name, epoch))
    return _RAISED


def _deref_kind(side: "Side", name: str) -> str:
    """What an unbound cell variable is to the exception its read raises: the code's own
    ("cell": UnboundLocalError) or its closure's ("free": NameError)."""
    return "free" if name in side.code.co_freevars else "cell"


def _load_var(side: "Side", st: MState, ins: Instr, name: str, facts: Dict[Term, bool], kind: str,
              epoch: int) -> Optional[Event]:
    stop = _unless_bound(side, st, ins, name, facts, kind, epoch)
    if stop is None:
        st.stack.append(st.vars[name])
        _advance(st)
    return None if stop is _RAISED else stop


def _delete_var(side: "Side", st: MState, ins: Instr, name: str, facts: Dict[Term, bool],
                kind: str, epoch: int) -> Optional[Event]:
    stop = _unless_bound(side, st, ins, name, facts, kind, epoch)
    if stop is None:
        del st.vars[name]
        _advance(st)
    return None if stop is _RAISED else stop


def _alloc(st: MState, epoch: int) -> int:
    k = st.nalloc
    st.nalloc += 1
    return k


def _branch(st: MState, ins: Instr, cond: Term, jump_if: bool, pop_on_jump: bool,
            facts: Dict[Term, bool], epoch: int) -> Optional[Event]:
    """Conditional jump on ``cond`` (TOS): fold, decide, or test its truth (an effect)."""
    kept = cond
    if cond[0] == "tested":  # (see ``ok`` below)
        kept, cond = cond[1], cond[2]
    if is_bool(cond) or cond[0] in ("const", "tuple"):
        val = truth(cond, facts)
        if val is None:
            if cond[0] in ("const",):
                raise Unsupported("truth value of constant %r" % (cond,))
            return _decide(_pred(cond)[0], ins)
        taken = (val == jump_if)
        st.stack.pop()
        if taken:
            if not pop_on_jump:
                st.stack.append(kept)
            st.pc = ins.target
        else:
            _advance(st)
        return None

    # bool(x) runs x.__bool__/__len__: an effect whose exact-bool result replaces x on the
    # stack; the jump itself is then decided on that result.
    def ok(s: MState, res: Tuple[Term, ...]) -> None:
        # ``x or y`` keeps x itself (not its bool) when it jumps: x and its bool, until this
        # jump is decided.  (Only this jump: a later test of x calls __bool__ again.)
        s.stack[-1] = res[0] if pop_on_jump else ("tested", cond, res[0])
    ev = Event("effect", ("bool", cond), ins, 1, ok, bool_result=True)
    return ev


_NEUTRAL_JUMPS = {"POP_JUMP_IF_FALSE": (False, True), "POP_JUMP_IF_TRUE": (True, True),
                  "JUMP_IF_FALSE_OR_POP": (False, False), "JUMP_IF_TRUE_OR_POP": (True, False)}

_FOLD_COMPARE = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


# Kinds of the terms a variable may hold unbound (``maybe_unbound``), and UNBOUND's.
_UNSURE_KINDS = frozenset({"v", "cellv", "unbound"})

# Every op ``_step`` tests for below: any other goes straight to ``_list_step`` and
# ``_effect_op``, as it would after failing every test (most effects are such ops).  A test
# (tests/test_verify.py) reads ``_step``'s comparisons and checks this set names exactly them.
_STEP_OPS = frozenset({
    "LOAD_CONST", "LOAD_FAST", "LOAD_FAST_AND_CLEAR", "STORE_FAST", "STORE_DEREF",
    "DELETE_FAST", "LOAD_DEREF", "DELETE_DEREF", "LOAD_CLOSURE", "POP_TOP", "PUSH_NULL", "COPY",
    "SWAP", "ROT", "JUMP", "BUILD_TUPLE", "BUILD_LIST", "BUILD_MAP", "BUILD_CONST_KEY_MAP",
    "BUILD_SLICE", "BUILD_STRING", "LOAD_ASSERTION_ERROR", "LOAD_BUILTIN", "STOPITERATION_ERROR",
    "ASYNC_GEN_WRAP", "UNPACK_SEQUENCE", "MAKE_FUNCTION", "SET_FUNCTION_ATTRIBUTE", "IMPORT_NAME",
    "LOAD_ATTR", "CHECK_EXC_MATCH", "EXC_MATCH2", "LOAD_GLOBAL", "PUSH_EXC_INFO", "POP_EXCEPT",
    "RERAISE", "RAISE_VARARGS", *_NEUTRAL_JUMPS, "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE",
    "RETURN_VALUE", "FOR_ITER", "UNARY", "TO_BOOL", "COMPARE", "NOP"})


# The neutral ops (pellucid.bytecode.neutral_ops) the checker does not model, so that
# ``_effect_op`` stops at them (Unsupported): those with no fixed stack effect, and END_SEND,
# which normalize never leaves in.  It models every other op of the table, each with the
# table's stack effect (tests/test_neutral_ops.py).
UNMODELLED = frozenset({
    "SEND", "END_FOR", "RETURN_GENERATOR", "BEGIN_FINALLY", "CALL_FINALLY", "POP_FINALLY",
    "END_FINALLY", "WITH_CLEANUP_START", "WITH_CLEANUP_FINISH", "UNSUPPORTED", "END_SEND",
})


def _step(side: Side, st: MState, ins: Instr, facts: Dict[Term, bool], epoch: int) -> Optional[Event]:  # noqa: C901
    op = ins.op
    if op not in _STEP_OPS:
        ev = _list_step(side, st, ins, epoch, facts)
        if ev is not False:
            return ev  # type: ignore[no-any-return]
        return _effect_op(side, st, ins, epoch, facts)
    arg = ins.arg
    stack = st.stack

    # ---- pure stack and variable operations (each op is tested by one branch, or by several
    # in a row: their order among different ops does not matter, the commonest come first)
    if op == "LOAD_FAST":
        v = st.vars.get(arg)
        if v is None or v[0] in _UNSURE_KINDS:
            return _load_var(side, st, ins, arg, facts, "local", epoch)
        stack.append(v)  # (certainly bound: what _load_var does then)
    elif op == "LOAD_CONST":
        v = side.const_terms.get(st.pc)  # (see Side.const_terms)
        if v is None:
            v = side.const_terms[st.pc] = const_term(arg, side.code_keys)
        stack.append(v)
    elif op == "STORE_FAST" or op == "STORE_DEREF":
        if not stack:
            raise Unsupported("stack underflow")
        v = stack.pop()
        if v == NULL:
            st.vars.pop(arg, None)
        else:
            st.vars[arg] = v
    elif op == "POP_TOP":
        if not stack:
            raise Unsupported("stack underflow")
        stack.pop()
    elif op == "PUSH_NULL":
        stack.append(NULL)
    elif op == "LOAD_GLOBAL":
        if arg.startswith(CONST_PREFIX) and arg in side.bindings:
            # recompile binds constants without a literal form under reserved global names.
            stack.append(const_term(side.bindings[arg], side.code_keys))
        else:
            term = ("g", arg, epoch)
            known = facts.get(("bound", term))
            if known is None:
                return _decide(("bound", term), ins)
            if not known:
                return _raise_only(ins, ("unbound global", arg))
            stack.append(term)
    elif op == "LOAD_ATTR":
        if stack and stack[-1] == BUILTINS_MODULE:
            stack[-1] = ("builtin", arg)
        else:
            # (what the last branch below does for it)
            ev = _list_step(side, st, ins, epoch, facts)
            if ev is not False:
                return ev  # type: ignore[no-any-return]
            return _effect_op(side, st, ins, epoch, facts)
    elif op == "COPY":
        if len(stack) < arg:
            raise Unsupported("stack underflow")
        stack.append(stack[-arg])
    elif op == "LOAD_FAST_AND_CLEAR":
        stack.append(st.vars.pop(arg, NULL))
    elif op == "DELETE_FAST":
        return _delete_var(side, st, ins, arg, facts, "local", epoch)
    elif op == "LOAD_DEREF":
        return _load_var(side, st, ins, arg, facts, _deref_kind(side, arg), epoch)
    elif op == "DELETE_DEREF":
        return _delete_var(side, st, ins, arg, facts, _deref_kind(side, arg), epoch)
    elif op == "LOAD_CLOSURE":
        stack.append(("cellref", arg))
    elif op == "SWAP":
        if len(stack) < arg:
            raise Unsupported("stack underflow")
        stack[-1], stack[-arg] = stack[-arg], stack[-1]
    elif op == "ROT":
        if len(stack) < arg:
            raise Unsupported("stack underflow")
        stack.insert(len(stack) - arg, stack.pop())
    elif op == "JUMP":
        st.pc = ins.target
        return None
    elif op == "BUILD_TUPLE":
        stack.append(("tuple", tuple(_pop(st, arg))))
    elif op == "BUILD_LIST":
        items = tuple(_pop(st, arg))
        lst = ("list", epoch, _alloc(st, epoch))
        st.heap[lst] = items
        stack.append(lst)
    elif op == "BUILD_MAP" and len(stack) >= 2 * arg and _str_keys(stack[len(stack) - 2 * arg::2]):
        _build_dict(st, _pop(st, 2 * arg), epoch)
    elif op == "BUILD_CONST_KEY_MAP" and len(stack) > arg and stack[-1][0] == "tuple" \
            and len(stack[-1][1]) == arg and _str_keys(stack[-1][1]):
        keys = stack.pop()[1]
        vals = _pop(st, arg)
        _build_dict(st, [x for pair in zip(keys, vals) for x in pair], epoch)
    elif op == "BUILD_SLICE":
        stack.append(("slice",) + tuple(_pop(st, arg)))
    elif op == "BUILD_STRING":
        items = _pop(st, arg)
        stack.append(("str", tuple(items)))
    elif op == "LOAD_ASSERTION_ERROR":
        stack.append(("builtin", "AssertionError"))
    elif op == "LOAD_BUILTIN":
        stack.append(("builtin", arg))
    elif op == "STOPITERATION_ERROR":
        stack.append(("stopiter_error", _pop(st, 1)[0]))
    elif op == "ASYNC_GEN_WRAP":
        stack.append(("agwrap", _pop(st, 1)[0]))
    elif op == "UNPACK_SEQUENCE" and stack and stack[-1][0] == "tuple" and len(stack[-1][1]) == arg:
        items = stack.pop()[1]
        stack.extend(reversed(items))
    elif op == "MAKE_FUNCTION":
        return _make_function(side, st, ins, epoch)
    elif op == "SET_FUNCTION_ATTRIBUTE":
        fn, attr = _pop(st, 2)[::-1]
        if not is_func(fn) or fn not in st.heap or arg not in _FUNCTION_FLAGS:
            raise Unsupported("SET_FUNCTION_ATTRIBUTE %r on %s" % (arg, fn[0]))
        _set_part(st, fn, _FUNCTION_FLAGS[arg], attr)
        stack.append(fn)
    elif op == "IMPORT_NAME" and arg == "builtins" and stack[-2:] == [const_term(0), const_term(None)]:
        # The fallback's ``import builtins as __pellucid_builtins``: the module is always loaded,
        # so this runs no user code (unless ``builtins.__import__`` itself was replaced).
        _pop(st, 2)
        stack.append(BUILTINS_MODULE)
    elif op in ("CHECK_EXC_MATCH", "EXC_MATCH2") and len(stack) >= 2 and _known_match(stack[-2], stack[-1], facts) is not None:
        val = _known_match(stack[-2], stack[-1], facts)
        _pop(st, 1 if op == "CHECK_EXC_MATCH" else 2)
        stack.append(("const", "bool", val))
    elif op in ("CHECK_EXC_MATCH", "EXC_MATCH2") and len(stack) >= 2 and \
            _builtin_exception(stack[-1]) and is_exception(_exc_of(stack[-2])):
        # ``except <builtin exception class>``: a subclass test of the exception's type, which
        # runs no user code (PyType_IsSubtype): a pure question.
        return _decide(("excis", _exc_of(stack[-2]), stack[-1][1]), ins)

    # ---- exception state
    elif op == "PUSH_EXC_INFO":
        exc = _pop(st, 1)[0]
        stack.append(st.excinfo)
        stack.append(exc)
        st.excinfo = exc
    elif op == "POP_EXCEPT":
        if NEW_EXC:
            st.excinfo = _pop(st, 1)[0]
        else:
            if not st.ehstack:
                raise Unsupported("POP_EXCEPT outside a handler")
            # Pops the saved triple off the top (a return value may sit below it: ROT_FOUR).
            st.ehstack.pop()
            triple = _pop(st, 3)
            st.excinfo = triple[1]
    elif op == "RERAISE":
        if NEW_EXC:
            exc = _pop(st, 1)[0]
        else:
            exc = _exc_of(_pop(st, 3)[1])
        go_handler(side, st, ins, exc)
        return None
    elif op == "RAISE_VARARGS":
        if arg == 0:
            if is_exception(st.excinfo):
                go_handler(side, st, ins, st.excinfo)
                return None
            return _raise_only(ins, ("raise", st.excinfo))
        if arg == 1 and is_exception(stack[-1]):
            # Raising an exception instance runs no user code (the fallback re-enters its
            # handlers this way, see ``_list_step``).
            go_handler(side, st, ins, stack[-1])
            return None
        return _raise_only(ins, ("raise",) + tuple(stack[-arg:]))

    # ---- control flow
    elif op in _NEUTRAL_JUMPS:
        jump_if, pop_on_jump = _NEUTRAL_JUMPS[op]
        if not stack:
            raise Unsupported("stack underflow")
        return _branch(st, ins, stack[-1], jump_if, pop_on_jump, facts, epoch)
    elif op in ("POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
        if not stack:
            raise Unsupported("stack underflow")
        # (The stack is left as it is: an instruction that yields an event must be re-runnable.)
        cond = _is_term(stack[-1], const_term(None))
        return _branch(st, ins, cond, op == "POP_JUMP_IF_NONE", True, facts, epoch)
    elif op == "RETURN_VALUE":
        # The frame ends: its variables are no longer observable.
        return Event("return", ("return", stack[-1] if stack else None), ins, can_raise=False,
                     observe=False)
    elif op == "FOR_ITER":
        def exhausted(s: MState, res: Tuple[Term, ...], target: Optional[int] = ins.target) -> None:
            _pop(s, 1)
            s.pc = target  # type: ignore[assignment]
        if not stack:
            raise Unsupported("stack underflow")
        ev = _effect(st, ins, ("next", stack[-1]), 0, 1)
        ev.exhausted = exhausted
        return ev
    elif op == "UNARY" and arg == "not":
        v = stack[-1]
        if is_bool(v) or v[0] == "tuple":
            t = truth(v, facts)
            stack[-1] = ("const", "bool", not t) if t is not None else ("not", v)
        else:
            def negate(s: MState, res: Tuple[Term, ...]) -> None:
                s.stack[-1] = ("not", res[0])
                _advance(s)
            return Event("effect", ("bool", v), ins, 1, negate, bool_result=True)
    elif op == "TO_BOOL":
        v = stack[-1]
        if not is_bool(v):
            def to_bool(s: MState, res: Tuple[Term, ...]) -> None:
                s.stack[-1] = res[0]
                _advance(s)
            return Event("effect", ("bool", v), ins, 1, to_bool, bool_result=True)
    elif op == "COMPARE" and arg in ("is", "is not"):
        b, a = stack.pop(), stack.pop()
        t = _is_term(a, b)
        stack.append(t if arg == "is" else ("not", t))
    elif op == "COMPARE" and arg in _FOLD_COMPARE and _foldable(stack[-2:]):
        b, a = stack.pop(), stack.pop()
        stack.append(("const", "bool", bool(_FOLD_COMPARE[arg](const_value(a)[1], const_value(b)[1]))))
    elif op == "COMPARE" and arg in ("in", "not in"):
        # ``a not in b`` is ``not (a in b)``: the same __contains__ call, whose result the
        # interpreter makes a bool, negated (3.14 compiles ``not a in b`` as ``in`` and a
        # negated jump, where ``not in`` compiled the same up to 3.13)
        _need(stack, op, 2)
        return _effect(st, ins, ("compare", "in", stack[-2], stack[-1]), 2, 1,
                       _push_bool if arg == "in" else _push_negated, bool_result=True)
    elif op == "NOP":
        pass
    else:
        ev = _list_step(side, st, ins, epoch, facts)
        if ev is not False:
            return ev  # type: ignore[no-any-return]
        return _effect_op(side, st, ins, epoch, facts)
    st.pc += 1  # (_advance)
    return None


_FOLD_TYPES = ("int", "str", "None", "bool")


def _foldable(pair: Sequence[Term]) -> bool:
    return len(pair) == 2 and all(t[0] == "const" and t[1] in _FOLD_TYPES for t in pair) \
        and pair[0][1] == pair[1][1]


# MAKE_FUNCTION's flags (and 3.13+'s SET_FUNCTION_ATTRIBUTE's argument): what each sets.  16
# (3.14+, PEP 649) is the ``__annotate__`` function; it only ever comes from
# SET_FUNCTION_ATTRIBUTE, so MAKE_FUNCTION's loop over the older flags never pops it.
_FUNCTION_FLAGS = {16: "annotate", 8: "closure", 4: "annotations", 2: "kwdefaults", 1: "defaults"}


def _make_function(side: Side, st: MState, ins: Instr, epoch: int) -> Optional[Event]:
    """A new function (see "Lists" above for its term and contents)."""
    flags = ins.arg or 0
    if MAKE_FUNCTION_POPS_QUALNAME:
        qual, code = _pop(st, 2)[::-1]
    else:
        code = _pop(st, 1)[0]
        qual = None
    parts: Dict[str, Term] = {}
    for bit in (8, 4, 2, 1):
        if flags & bit:
            parts[_FUNCTION_FLAGS[bit]] = _pop(st, 1)[0]
    obj = side.code_object(code)
    if obj is not None:
        parts["__name__"] = const_term(obj.co_name)
        q = getattr(obj, "co_qualname", None)
        parts["__qualname__"] = const_term(q) if q is not None else qual
    elif qual is not None:
        parts["__qualname__"] = qual
    fn = _fresh_function(st)
    st.heap[fn] = _func_contents(code, parts)
    st.stack.append(fn)
    _advance(st)
    return None


def _fresh_function(st: MState) -> Term:
    """The term of a function built now: ``("func", "n", k)`` with the least ``k`` no term of
    the state holds (so the same in both programs, and in every iteration of a loop that makes
    one whose previous one went to user code -- renamed then, see ``escape_lists``)."""
    taken = _state_lists(st, None, False)[1] | set(st.heap)
    k = 0
    while ("func", "n", k) in taken:
        k += 1
    return ("func", "n", k)


def _func_contents(code: Term, parts: Dict[str, Term]) -> Tuple[Any, ...]:
    return (code,) + tuple(x for name in sorted(parts) for x in (name, parts[name]))


def _set_part(st: MState, fn: Term, name: str, value: Term) -> None:
    """Set the attribute ``name`` of the known function ``fn``."""
    contents = st.heap[fn]
    parts = dict(zip(contents[1::2], contents[2::2]))
    parts[name] = value
    st.heap[fn] = _func_contents(contents[0], parts)


# Function attributes the fallback sets after its ``def`` (what MAKE_FUNCTION sets), and what
# their values must be for the assignment to run no user code and raise nothing.
_SETTABLE = {"__name__": "name", "__qualname__": "name", "__defaults__": "defaults",
             "__kwdefaults__": "kwdefaults"}


def _settable(kind: str, value: Term) -> bool:
    if kind == "name":
        return value[0] == "const" and value[1] == "str"
    if kind == "defaults":
        return value[0] == "tuple" or value == const_term(None)
    return value == const_term(None)  # (a dict would be shared: not modelled)


def _str_keys(keys: Sequence[Term]) -> bool:
    return all(k[0] == "const" and k[1] == "str" for k in keys)


def _build_dict(st: MState, flat: Sequence[Term], epoch: int) -> None:
    """A new exact dict of the (str constant key, value) pairs ``flat``: a repeated key keeps
    its first position and its last value, as dict insertion does."""
    items: Dict[Term, Term] = {}
    for k, v in zip(flat[0::2], flat[1::2]):
        items[k] = v
    d = ("dict", epoch, _alloc(st, epoch))
    st.heap[d] = tuple(x for kv in items.items() for x in kv)
    st.stack.append(d)


def _call_parts(stack_items: List[Term], null_slot: bool) -> Tuple[Term, List[Term]]:
    if not null_slot:
        return stack_items[0], list(stack_items[1:])
    a, b = stack_items[0], stack_items[1]
    if (a[0] == "v" and a[1] < 0) or (b[0] == "v" and b[1] < 0):  # generalised from a NULL slot
        raise Unsupported("a call slot may hold NULL")
    rest = list(stack_items[2:])
    if a == NULL:
        return b, rest
    if b == NULL:
        return a, rest
    return a, [b] + rest


def _int_arg(arg: Any) -> int:
    return arg if isinstance(arg, int) else 0


class _const:
    """A count that does not depend on the argument (``n``, read by ``_SIMPLE_COUNTS``)."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self, arg: Any) -> int:
        return self.n


# Effects that pop some values and push their results: op -> (values popped, results pushed, each
# a function of the argument; the event's key from the popped values and the argument).  (Built
# once: the interpreter looks an op up here at every effect.)
_SIMPLE_EFFECTS: Dict[str, Tuple[Callable[[Any], int], Callable[[Any], int],
                                 Callable[[List[Term], Any], Tuple[Any, ...]]]] = {
    "LOAD_ATTR": (_const(1), _const(1), lambda v, arg: ("getattr", v[0], arg)),
    "STORE_ATTR": (_const(2), _const(0), lambda v, arg: ("setattr", v[1], arg, v[0])),
    "DELETE_ATTR": (_const(1), _const(0), lambda v, arg: ("delattr", v[0], arg)),
    "BINARY": (_const(2), _const(1), lambda v, arg: ("binary", arg, v[0], v[1])),
    "INPLACE": (_const(2), _const(1), lambda v, arg: ("inplace", arg, v[0], v[1])),
    "UNARY": (_const(1), _const(1), lambda v, arg: ("unary", arg, v[0])),
    "COMPARE": (_const(2), _const(1), lambda v, arg: ("compare", arg, v[0], v[1])),
    "SUBSCR": (_const(2), _const(1), lambda v, arg: ("getitem", v[0], v[1])),
    # (``d[k] = v`` on an exact dict is what MAP_ADD does: PyDict_SetItem)
    "STORE_SUBSCR": (_const(3), _const(0), lambda v, arg: (
        "map_add" if is_dict(v[1]) else "setitem", v[1], v[2], v[0])),
    "DELETE_SUBSCR": (_const(2), _const(0), lambda v, arg: ("delitem", v[0], v[1])),
    "GET_ITER": (_const(1), _const(1), lambda v, arg: ("iter", v[0])),
    "GET_YIELD_FROM_ITER": (_const(1), _const(1), lambda v, arg: ("yield_from_iter", v[0])),
    "GET_AWAITABLE": (_const(1), _const(1), lambda v, arg: ("awaitable", v[0], arg)),
    "GET_AITER": (_const(1), _const(1), lambda v, arg: ("aiter", v[0])),
    "BEFORE_WITH": (_const(1), _const(2), lambda v, arg: ("with_enter", v[0])),
    "BEFORE_ASYNC_WITH": (_const(1), _const(2), lambda v, arg: ("async_with_enter", v[0])),
    "IMPORT_NAME": (_const(2), _const(1), lambda v, arg: ("import", arg, v[0], v[1])),
    "LAZY_IMPORT_NAME": (_const(2), _const(1), lambda v, arg: ("lazy_import", arg, v[0], v[1])),
    "IMPORT_STAR": (_const(1), _const(0), lambda v, arg: ("import_star", v[0])),
    "STORE_GLOBAL": (_const(1), _const(0), lambda v, arg: ("store_global", arg, v[0])),
    "DELETE_GLOBAL": (_const(0), _const(0), lambda v, arg: ("delete_global", arg)),
    "LOAD_NAME": (_const(0), _const(1), lambda v, arg: ("load_name", arg)),
    # 3.13 class bodies record their first line: a line number, which must not matter.
    "STORE_NAME": (_const(1), _const(0), lambda v, arg: ("store_name", arg, "<line>"
                                                         if arg == "__firstlineno__" else v[0])),
    "DELETE_NAME": (_const(0), _const(0), lambda v, arg: ("delete_name", arg)),
    "LOAD_CLASSDEREF": (_const(0), _const(1), lambda v, arg: ("load_classderef", arg)),
    "LOAD_FROM_DICT_OR_DEREF": (_const(1), _const(1),
                                lambda v, arg: ("load_dict_or_deref", arg, v[0])),
    "LOAD_FROM_DICT_OR_GLOBALS": (_const(1), _const(1),
                                  lambda v, arg: ("load_dict_or_globals", arg, v[0])),
    "LOAD_LOCALS": (_const(0), _const(1), lambda v, arg: ("load_locals",)),
    "LOAD_BUILD_CLASS": (_const(0), _const(1), lambda v, arg: ("load_build_class",)),
    "SETUP_ANNOTATIONS": (_const(0), _const(0), lambda v, arg: ("setup_annotations",)),
    "PRINT_EXPR": (_const(1), _const(0), lambda v, arg: ("print_expr", v[0])),
    "LIST_TO_TUPLE": (_const(1), _const(1), lambda v, arg: ("list_to_tuple", v[0])),
    "BUILD_SET": (_int_arg, _const(1), lambda v, arg: ("build_set", tuple(v))),
    "BUILD_MAP": (lambda arg: 2 * arg if isinstance(arg, int) else 0, _const(1),
                  lambda v, arg: ("build_map", tuple(v))),
    "BUILD_CONST_KEY_MAP": (lambda arg: (arg + 1) if isinstance(arg, int) else 0, _const(1),
                            lambda v, arg: ("build_const_key_map", tuple(v))),
    "UNPACK_SEQUENCE": (_const(1), _int_arg, lambda v, arg: ("unpack", v[0], arg)),
    "UNPACK_EX": (_const(1), lambda arg: arg[0] + 1 + arg[1],
                  lambda v, arg: ("unpack_ex", v[0], arg)),
    "CONVERT": (_const(1), _const(1), lambda v, arg: ("convert", arg, v[0])),
    # 3.14 t-strings: new Interpolation and Template objects (no user code runs)
    "BUILD_INTERPOLATION": (lambda arg: 3 if arg[1] else 2, _const(1),
                            lambda v, arg: ("interpolation", arg[0]) + tuple(v)),
    "BUILD_TEMPLATE": (_const(2), _const(1), lambda v, arg: ("template", v[0], v[1])),
    "LOAD_SUPER_ATTR": (_const(3), _const(1), lambda v, arg: ("super_attr", arg, v[0], v[1], v[2])),
    "MATCH_CLASS": (_const(3), _const(1), lambda v, arg: ("match_class", arg, v[0], v[1], v[2])),
    "PREP_RERAISE_STAR": (_const(2), _const(1), lambda v, arg: ("prep_reraise_star", v[0], v[1])),
    "CHECK_EG_MATCH": (_const(2), _const(2), lambda v, arg: ("check_eg_match", v[0], v[1])),
    # PEP 695 type parameters and aliases (3.12+ intrinsics): each makes a new object from its
    # operands (a bound is a function, evaluated lazily); compared as effects with them.
    "TYPEVAR": (_const(1), _const(1), lambda v, arg: ("typevar", v[0])),
    "PARAMSPEC": (_const(1), _const(1), lambda v, arg: ("paramspec", v[0])),
    "TYPEVARTUPLE": (_const(1), _const(1), lambda v, arg: ("typevartuple", v[0])),
    "SUBSCRIPT_GENERIC": (_const(1), _const(1), lambda v, arg: ("subscript_generic", v[0])),
    "TYPE_ALIAS": (_const(1), _const(1), lambda v, arg: ("type_alias", v[0])),
    "TYPEVAR_WITH_BOUND": (_const(2), _const(1), lambda v, arg: ("typevar_bound", v[0], v[1])),
    "TYPEVAR_WITH_CONSTRAINTS": (_const(2), _const(1),
                                 lambda v, arg: ("typevar_constraints", v[0], v[1])),
    "SET_FUNCTION_TYPE_PARAMS": (_const(2), _const(1),
                                 lambda v, arg: ("set_function_type_params", v[0], v[1])),
    "SET_TYPEPARAM_DEFAULT": (_const(2), _const(1),
                              lambda v, arg: ("set_typeparam_default", v[0], v[1])),
}
for _name in ("BUILD_TUPLE_UNPACK", "BUILD_LIST_UNPACK", "BUILD_SET_UNPACK", "BUILD_MAP_UNPACK",
              "BUILD_MAP_UNPACK_WITH_CALL", "BUILD_TUPLE_UNPACK_WITH_CALL"):
    _SIMPLE_EFFECTS[_name] = (_int_arg, _const(1),
                              lambda v, arg, key=_name.lower(): (key, tuple(v)))
del _name
# The ops of ``_SIMPLE_EFFECTS`` whose counts do not depend on the argument, with those counts
# (looked up instead of two calls at each such effect: most effects are these).
_SIMPLE_COUNTS: Dict[str, Tuple[int, int]] = {
    op: (npop.n, nres.n) for op, (npop, nres, _) in _SIMPLE_EFFECTS.items()
    if isinstance(npop, _const) and isinstance(nres, _const)}


def _need(stack: List[Term], op: str, n: int) -> List[Term]:
    """The top ``n`` values of ``stack``, which ``op`` uses."""
    if len(stack) < n:
        raise Unsupported("stack underflow at %s" % op)
    return stack[len(stack) - n:] if n else []


def _effect_op(side: Side, st: MState, ins: Instr, epoch: int,
               facts: Dict[Term, bool]) -> Optional[Event]:  # noqa: C901
    """Instructions that may run user code or raise: each one is an effect."""
    op, arg, stack = ins.op, ins.arg, st.stack
    if op == "CALL":
        argc, kwnames, null_slot = arg
        extra = 1 if kwnames is None else 0
        n = argc + (2 if null_slot else 1) + extra
        items = _need(stack, op, n)
        names = kwnames
        if kwnames is None:
            ok, names = const_value(items[-1])
            if not ok:
                raise Unsupported("keyword names are not a constant tuple")
            items = items[:-1]
        fn, args = _call_parts(items, null_slot)
        bound = _known_list_method(fn, st.heap)
        if bound is not None:
            if len(args) != 1 or names:
                raise Unsupported("list.%s called with %d arguments" % (bound[0], len(args)))
            return _list_method_call(st, ins, bound[0], bound[1], args[0], n)
        if fn[0] == "method" and fn[1] in ("add", "update") and is_set(fn[2]) and not names \
                and len(args) == 1:
            return _effect(st, ins, ("set_" + fn[1], fn[2], args[0]), n, 0,
                           lambda s, r: s.stack.append(const_term(None)))
        if fn[0] == "method" and fn[1] == "join" and fn[2] == _EMPTY_STR and not names \
                and len(args) == 1 and args[0][0] == "tuple" and all(map(is_str, args[0][1])):
            # ''.join of a tuple of strs (the fallback's BUILD_STRING): no user code, and the
            # same str, even the same object for one exact str.
            _pop(st, n)
            st.stack.append(("str", args[0][1]))
            _advance(st)
            return None
        if is_func(fn) and fn in st.heap and not args and not names:
            module = _import_helper(side, st.heap[fn])
            if module is not None:
                # The fallback's ``def h(): import a.b; return a`` called at once: IMPORT_NAME
                # in a frame of its own, with the same globals (and, in a function, the same
                # None for the locals).
                return _effect(st, ins, ("import", module, const_term(0), const_term(None)), n, 1)
        if fn[0] == "builtin" and not names:
            ev = _builtin_call(st, ins, fn[1], args, n, epoch)
            if ev is not False:
                return ev  # type: ignore[return-value]
        return _effect(st, ins, ("call", fn, tuple(args), tuple(names or ())), n, 1)
    if op == "CALL_EX":
        has_kw, null_slot = arg
        n = 1 + has_kw + (2 if null_slot else 1)
        items = _need(stack, op, n)
        kw = items[-1] if has_kw else None
        if kw == NULL:
            kw = None  # (3.14+: CALL_FUNCTION_EX's kwargs slot holds NULL when there are none)
        posargs = items[-1 - has_kw]
        fn, extra = _call_parts(items[:-1 - has_kw], null_slot)
        if extra:
            raise Unsupported("unexpected CALL_FUNCTION_EX layout")
        if is_list(posargs) and posargs in st.heap:
            # CALL_FUNCTION_EX turns an exact list into a tuple of its items, running no user code.
            posargs = ("tuple", st.heap[posargs])
        names, kwvals = (), ()  # type: Tuple[Any, ...], Tuple[Term, ...]
        if kw is not None and is_dict(kw) and kw in st.heap and kw not in reachable_lists(
                [tuple(stack[:-1]), tuple(st.vars.values()), st.excinfo, tuple(st.ehstack)],
                st.heap):
            # ``**d`` of a dict with known str keys that nothing else holds: only its contents
            # can matter, so ``f(*a, **{'k': v})`` is ``f(*a, k=v)`` and ``**{}`` is nothing.
            contents = st.heap[kw]
            names = tuple(const_value(k)[1] for k in contents[0::2])
            kwvals = contents[1::2]
            kw = None
        if kw is None and posargs[0] == "tuple" and fn[0] != "builtin" \
                and _known_list_method(fn, st.heap) is None:
            # ``f(*(a, b))`` with a known tuple is the call ``f(a, b)``: the compiler itself
            # writes a call with very many arguments this way (3.11+: over 30 stack items).
            return _effect(st, ins, ("call", fn, tuple(posargs[1]) + kwvals, names), n, 1)
        if kw is None and names:
            kw = ("kwargs", names, kwvals)
        return _effect(st, ins, ("call_ex", fn, posargs, kw), n, 1)
    if op == "COMPARE" and arg in ("in", "not in"):
        # ``a in b`` is one exact bool made of ``b.__contains__(a)`` (its truth taken inside the
        # same call), ``a not in b`` that bool negated: one effect, and a pure decision on it.
        vals = _need(stack, op, 2)
        key = ("contains", vals[0], vals[1])
        if arg == "in":
            return _effect(st, ins, key, 2, 1, bool_result=True)
        return _effect(st, ins, key, 2, 1, _push_negated, bool_result=True)
    simple = _SIMPLE_EFFECTS.get(op)
    if MATCH_PUSHES_SUCCESS:
        # 3.10's match instructions also push a success flag.
        def with_flag(s: MState, res: Tuple[Term, ...]) -> None:
            s.stack.append(res[0])
            s.stack.append(("b", res[0][1]))
        if op == "MATCH_CLASS":
            vals = _need(stack, op, 3)
            return _effect(st, ins, ("match_class", arg) + tuple(vals), 3, 1, with_flag)
        if op == "MATCH_KEYS":
            vals = _need(stack, op, 2)
            return _effect(st, ins, ("match_keys", vals[0], vals[1]), 0, 1, with_flag)
    if op == "BUILD_CONST_KEY_MAP" and isinstance(arg, int):
        vals = _need(stack, op, arg + 1)
        ok, keys = const_value(vals[-1])
        if ok and all(type(k) in (int, str) for k in keys):
            # Hashing int/str constants runs no user code: the same dict, built by the same
            # insertions, as BUILD_MAP of the (key, value) pairs.
            pairs = tuple(x for k, v in zip(vals[-1][1], vals[:-1]) for x in (k, v))
            return _effect(st, ins, ("build_map", pairs), arg + 1, 1)
    if simple is not None:
        counts = _SIMPLE_COUNTS.get(op)
        if counts is not None:
            npop, nres = counts  # (the same as calling the two functions of ``simple``)
        else:
            npop, nres = simple[0](arg), simple[1](arg)
        build = simple[2]
        vals = _need(stack, op, npop)
        key = build(vals, arg)
        if op in ("UNPACK_SEQUENCE", "UNPACK_EX"):
            # Results are pushed so that the first item ends on top.
            return _effect(st, ins, key, npop, nres, lambda s, r: s.stack.extend(reversed(r)))
        return _effect(st, ins, key, npop, nres)
    if op == "FORMAT":
        conv, has_spec = arg
        vals = _need(stack, op, 1 + has_spec)
        value = vals[0]
        if conv != -1 and value[0] != "converted":
            # ``!s``/``!r``/``!a`` is PyObject_Str/Repr/ASCII, then the format of its result
            # (3.12+ has two instructions for it): two effects, as ``format(repr(x), spec)``.
            return _convert_first(st, ins, conv, value, -1 - has_spec)
        if value[0] == "converted":
            value = value[1]
        elif not has_spec and value[0] == "const" and value[1] == "str":
            stack.pop()
            stack.append(value)
            _advance(st)
            return None
        # No spec formats as the spec '' does (PyObject_Format with NULL or an empty str).
        spec = vals[1] if has_spec else _EMPTY_STR
        return _effect(st, ins, ("format", -1, value, spec), 1 + has_spec, 1)
    if op in ("LIST_APPEND", "SET_ADD", "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE"):
        vals = _need(stack, op, arg + 1)
        return _effect(st, ins, (op.lower(), vals[0], vals[-1]), 1, 0)
    if op == "MAP_ADD":
        vals = _need(stack, op, arg + 2)
        return _effect(st, ins, ("map_add", vals[0], vals[-2], vals[-1]), 2, 0)
    if op == "IMPORT_FROM":
        return _import_from(side, st, ins, facts)
    if op == "GET_ANEXT":
        vals = _need(stack, op, 1)
        return _effect(st, ins, ("anext", vals[0]), 0, 1)
    if op == "GET_LEN":
        vals = _need(stack, op, 1)
        return _effect(st, ins, ("len", vals[0]), 0, 1)
    if op in ("MATCH_MAPPING", "MATCH_SEQUENCE"):
        vals = _need(stack, op, 1)
        return _effect(st, ins, (op.lower(), vals[0]), 0, 1, bool_result=True)
    if op == "MATCH_KEYS":
        vals = _need(stack, op, 2)
        return _effect(st, ins, ("match_keys", vals[0], vals[1]), 0, 1)
    if op == "COPY_DICT_WITHOUT_KEYS":
        vals = _need(stack, op, 2)
        return _effect(st, ins, ("copy_dict_without_keys", vals[0], vals[1]), 1, 1)
    if op == "EXC_MATCH2":
        vals = _need(stack, op, 2)
        return _effect(st, ins, ("exc_match", _exc_of(vals[0]), vals[1]), 2, 1, bool_result=True)
    if op == "CHECK_EXC_MATCH":
        vals = _need(stack, op, 2)
        return _effect(st, ins, ("exc_match", _exc_of(vals[0]), vals[1]), 1, 1, bool_result=True)
    if op == "WITH_EXCEPT_START":
        if NEW_EXC:
            vals = _need(stack, op, 4)
            exit_fn, exc = vals[0], vals[-1]
            if is_exception(exc):
                # __exit__(type(e), e, e.__traceback__): a call, as the fallback writes it
                args = (("typeof", exc), exc, ("tbof", exc))
                return _effect(st, ins, ("call", exit_fn, args, ()), 0, 1)
        else:
            vals = _need(stack, op, 7)
            exit_fn, exc = vals[0], _exc_of(vals[-2])
            if is_exception(exc) and vals[-3:] == [("tbof", exc), exc, ("typeof", exc)]:
                return _effect(st, ins, ("call", exit_fn, (("typeof", exc), exc, ("tbof", exc)),
                                         ()), 0, 1)
        return _effect(st, ins, ("with_exit", exit_fn, exc), 0, 1)
    if op in ("YIELD_VALUE",):
        vals = _need(stack, op, 1)
        return _effect(st, ins, ("yield", vals[0]), 1, 1)
    if op == "YIELD_FROM":
        vals = _need(stack, op, 2)
        return _effect(st, ins, ("yield_from", vals[0], vals[1]), 2, 1)
    if op == "END_ASYNC_FOR":
        return _exc_kind_decision(side, st, ins, "StopAsyncIteration", facts)
    if op == "CLEANUP_THROW":
        return _exc_kind_decision(side, st, ins, "StopIteration", facts)
    raise Unsupported("instruction %s is not modelled" % op)


_EMPTY_STR = const_term("")

# Effects whose result is always a str (maybe of a subclass): PyObject_Format, PyObject_Str...
STR_RESULTS = frozenset({"format", "convert"})

_CONVERSIONS = {"str": ord("s"), "repr": ord("r"), "ascii": ord("a")}


def _convert_first(st: MState, ins: Instr, conv: int, value: Term, at: int) -> Event:
    """The conversion of a FORMAT with one: an effect whose result replaces the value (marked
    as converted) at stack position ``at``; the FORMAT runs again on it, as one without."""
    def ok(s: MState, res: Tuple[Term, ...]) -> None:
        s.stack[at] = ("converted", res[0])

    return Event("effect", ("convert", conv, value), ins, 1, ok)


def _import_helper(side: "Side", contents: Tuple[Any, ...]) -> Optional[str]:
    """The module ``X`` when the known function ``contents`` is exactly ``def h(): import X;
    return <X's top package>`` (no defaults, closure or other attributes), else None."""
    if set(contents[1::2]) - {"__name__", "__qualname__"}:
        return None
    code = side.code_object(contents[0])
    if code is None or code.co_argcount or code.co_kwonlyargcount or code.co_flags & 0x3AC \
            or code.co_freevars:
        return None
    body = [(i.op, i.arg) for i in normalize(code)]
    if len(body) != 6 or body[2][0] != "IMPORT_NAME" or not isinstance(body[2][1], str):
        return None
    module = body[2][1]
    top = module.split(".")[0]
    if body != [("LOAD_CONST", 0), ("LOAD_CONST", None), ("IMPORT_NAME", module),
                ("STORE_FAST", top), ("LOAD_FAST", top), ("RETURN_VALUE", None)] \
            or type(body[0][1]) is not int:
        return None
    return module


def _known_list_method(fn: Term, heap: Dict[Term, Tuple[Term, ...]]
                       ) -> Optional[Tuple[str, Term]]:
    """``(name, list)`` when ``fn`` is a known bound ``append``/``extend`` of an exact list."""
    if fn[0] != "meth" or len(fn) != 3:
        return None
    contents = heap.get(fn)
    if contents is None:
        return None  # (escaped: user code holds it, a call is an ordinary effect)
    name, lst = contents
    ok, value = const_value(name)
    if ok and value in ("append", "extend") and is_list(lst):
        return value, lst
    return None


def _list_method_call(st: MState, ins: Instr, name: str, lst: Term, v: Term, n: int) -> Optional[Event]:
    """``lst.append(v)`` / ``lst.extend(v)`` on an exact list: what LIST_APPEND / LIST_EXTEND do
    (same effect key when it is an effect), except that the call also pushes ``None``."""
    none = const_term(None)
    items = (v,) if name == "append" else _seq_items(v, st.heap)
    if lst in st.heap and items is not None:
        st.heap[lst] = st.heap[lst] + items
        _pop(st, n)
        st.stack.append(none)
        _advance(st)
        return None
    return _effect(st, ins, ("list_" + name, lst, v), n, 0, lambda s, r: s.stack.append(none))


def _is_str_const(t: Term) -> bool:
    """A str constant: ``format(t, '')`` is ``t`` itself (``str.__format__`` with an empty spec
    returns an exact str unchanged), running no user code."""
    return t[0] == "const" and t[1] == "str"


def _builtin_call(st: MState, ins: Instr, name: str, args: List[Term], n: int, epoch: int) -> Any:
    """Calls of builtins the fallback translation uses for what an instruction does directly.

    Returns an event, ``None`` (done, no event) or ``False`` (an ordinary call)."""
    def pure(term: Term) -> None:
        _pop(st, n)
        st.stack.append(term)
        _advance(st)

    if name == "slice" and 1 <= len(args) <= 3:
        parts = args if len(args) > 1 else [const_term(None)] + args
        pure(("slice",) + tuple(parts))
        return None
    if len(args) == 1:
        x = args[0]
        if name == "bool":
            if is_bool(x):
                pure(x)
                return None
            return _effect(st, ins, ("bool", x), n, 1, bool_result=True)
        if name == "iter":
            return _effect(st, ins, ("iter", x), n, 1)
        if name == "next":
            return _effect(st, ins, ("next", x), n, 1)
        if name == "type" and is_exception(x):
            pure(("typeof", x))
            return None
        if name == "tuple" and is_list(x) and x in st.heap:
            pure(("tuple", st.heap[x]))
            return None
        if name == "tuple" and is_list(x):
            # (an opaque list, or a loop's variable standing for exact lists: LIST_TO_TUPLE)
            return _effect(st, ins, ("list_to_tuple", x), n, 1)
    if len(args) == 2:
        if name == "isinstance" and is_exception(args[0]):
            return _effect(st, ins, ("exc_match", args[0], args[1]), n, 1, bool_result=True)
        if name == "issubclass" and args[0][0] == "typeof":
            return _effect(st, ins, ("exc_match", args[0][1], args[1]), n, 1, bool_result=True)
        if name == "format":
            if args[1] == _EMPTY_STR and _is_str_const(args[0]):
                pure(args[0])  # (as FORMAT of a str constant without a spec, below)
                return None
            return _effect(st, ins, ("format", -1, args[0], args[1]), n, 1)
    if len(args) == 1 and name == "format":
        if _is_str_const(args[0]):
            pure(args[0])
            return None
        return _effect(st, ins, ("format", -1, args[0], _EMPTY_STR), n, 1)
    if len(args) == 1 and name in _CONVERSIONS:
        # str(x), repr(x), ascii(x): what the f-string conversions call (PyObject_Str...).
        return _effect(st, ins, ("convert", _CONVERSIONS[name], args[0]), n, 1)
    if name == "set" and not args:
        pure(_new_set(st, ins.op, epoch))
        return None
    if name in ("globals", "locals") and not args:
        # The frame's globals, a snapshot of its locals: no user code (only the fallback's
        # __import__ below takes them).
        pure(("frame_" + name,))
        return None
    if name == "__import__" and len(args) == 5 and args[1] == ("frame_globals",) \
            and args[2] == ("frame_locals",):
        ok, module = const_value(args[0])
        if ok and type(module) is str:
            # The fallback's ``__import__(name, globals(), locals(), fromlist, level)`` is what
            # IMPORT_NAME does -- assumed: with CPython's own __import__, which does not look
            # at the locals (IMPORT_NAME passes None for them in a function).
            return _effect(st, ins, ("import", module, args[4], args[3]), n, 1)
    if name == "zip" and len(args) == 2 and args[0][0] == "tuple" and args[1][0] == "tuple" \
            and len(args[0][1]) == len(args[1][1]):
        # The fallback's BUILD_CONST_KEY_MAP is ``dict(zip(keys, (v1, v2)))``: the zip of two
        # tuples of one length may only go to dict() (see ``method_escapes``).
        pure(("zip", args[0], args[1]))
        return None
    if name == "dict" and len(args) == 1 and args[0][0] == "zip":
        keys, vals = args[0][1], args[0][2]
        ok, consts = const_value(keys)
        if ok and all(type(k) in (int, str) for k in consts):
            pairs = [x for k, v in zip(keys[1], vals[1]) for x in (k, v)]
            if _str_keys(keys[1]):
                _pop(st, n)
                _build_dict(st, pairs, epoch)
                _advance(st)
                return None
            return _effect(st, ins, ("build_map", tuple(pairs)), n, 1)
    return False


def _exc_kind_decision(side: Side, st: MState, ins: Instr, kind: str,
                       facts: Dict[Term, bool]) -> Optional[Event]:
    """END_ASYNC_FOR / CLEANUP_THROW: go on if the exception is ``kind``, else re-raise it.

    Which kind an exception is cannot run user code: a pure decision."""
    stack = st.stack
    if ins.op == "END_ASYNC_FOR" and not NEW_EXC:
        if len(stack) < 7:
            raise Unsupported("stack underflow at END_ASYNC_FOR")
        exc = _exc_of(stack[-2])
    else:
        if not stack:
            raise Unsupported("stack underflow at %s" % ins.op)
        exc = stack[-1]
    if exc == NULL:
        raise Unsupported("%s without an exception" % ins.op)
    question = ("excis", exc, kind)
    known = True if (exc[0] == "stop" and kind == "StopIteration") else facts.get(question)
    if known is None:
        return _decide(question, ins)
    if not known:
        if NEW_EXC:
            stack.pop()
        else:
            _pop(st, 3)
        go_handler(side, st, ins, exc)
        return None
    if ins.op == "CLEANUP_THROW":
        _pop(st, 3)
        stack.append(("stopvalue", exc))
    elif NEW_EXC:
        _pop(st, 2)
    else:
        if not st.ehstack:
            raise Unsupported("END_ASYNC_FOR outside a handler")
        level, saved = st.ehstack.pop()
        del stack[level:]
        st.excinfo = saved
        _pop(st, 1)
    _advance(st)
    return None
