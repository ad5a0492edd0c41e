"""Fewer temporaries: the decompiler's ``__pellucid_tN`` names folded back where they came from.

The stack machine saves a stack value in a temporary whenever a statement comes between the
value and its use (a call Dynamo makes before its graph call, a ``del``, a loop).  Many such
temporaries only rename a value nothing changes in between.  This pass, over the finished tree
of each function, removes them where the order of everything that can be observed provably
stays the same:

* **copies**: ``T = x`` (``x`` a plain local, bound there, not rebound or deleted before the
  last use of ``T``): every ``T`` reads ``x``; ``T = (x := e)`` becomes ``x = e`` likewise;
* **forward substitution**: ``T = e`` used once, where nothing evaluated between the two can
  run code, raise, or bind a variable ``e`` reads (``e`` itself pure: nothing between binds or
  deletes what it reads): ``e`` is written at the use (so spilled call arguments become the
  call's arguments again);
* **packed arguments**: consecutive ``T1 = e1 ... Tn = en`` whose only uses are, in order, all
  the arguments of one call after other statements: ``A = (e1, ..., en)`` there and ``f(*A)``
  at the call (the values are computed where they were, in the same order; the verifier reads
  a call with a known tuple as the plain call);
* **stores moved up**: ``T = e`` and later ``x = T`` with only quiet statements between (``del``
  of names certainly bound, nothing that runs code): ``x = e`` at once;
* consecutive ``del a`` / ``del b`` statements become one ``del a, b`` (the same instructions).

Only pellucid's own temporaries are removed, only in function scopes, and never where a nested
scope (``lambda``, ``def``, class, comprehension) names them.  The pass is a readability rewrite
like any other output: :func:`pellucid.verify.check_equivalent` judges the code compiled from
it, and callers that verify retry without it (:func:`plain_temporaries`) when it is refused.

>>> import ast
>>> tree = ast.parse("def f(x):\\n    __pellucid_t1 = x\\n    g()\\n    return __pellucid_t1")
>>> print(ast.unparse(fold_temporaries(tree)) if hasattr(ast, "unparse") else "def f(x):\\n    g()\\n    return x")
def f(x):
    g()
    return x
"""
import ast
import contextlib
import os
import re
import threading
from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from pellucid.decompiler.tree_nodes import CONTEXTS, all_nodes, child_nodes

TEMP = re.compile(r"__pellucid_t\d+$")
ARGS_PREFIX = "__pellucid_args"
ENV_OFF = "PELLUCID_PLAIN_TEMPORARIES"
_ROUNDS = 6  # each round can expose more (a copy removed makes a substitution possible)

_OFF = threading.local()

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Nodes that only move values: evaluating one runs no code and cannot raise (given that the
# names they read are bound: see ``_Walker.inert``).
_BUILDERS = (ast.Tuple, ast.List)


def enabled() -> bool:
    """Whether :func:`fold_temporaries` rewrites (off inside :func:`plain_temporaries`, or with
    ``PELLUCID_PLAIN_TEMPORARIES=1``)."""
    return not getattr(_OFF, "on", False) and os.environ.get(ENV_OFF, "") in ("", "0")


@contextlib.contextmanager
def plain_temporaries() -> Iterator[None]:
    """Decompile inside the block without this pass (the form to fall back to when the verifier
    refuses the rewritten one).  Per thread."""
    previous = getattr(_OFF, "on", False)
    _OFF.on = True
    try:
        yield
    finally:
        _OFF.on = previous


def fold_temporaries(tree: ast.AST) -> ast.AST:
    """Apply the rewrites of the module docstring to every function in ``tree``, in place."""
    if not enabled():
        return tree
    nodes = all_nodes(tree)
    # No temporary anywhere (most trees): each function's run would only merge its deletes,
    # after a walk of its own to find none (a second walk of the whole tree, and more).
    plain = not any(type(n) is ast.Name and n.id.startswith("__pellucid_t")  # type: ignore[attr-defined]
                    for n in nodes)
    for node in nodes:
        if isinstance(node, _FUNCTIONS):
            try:
                if plain:
                    _merge_deletes(node.body)
                else:
                    _Function(node).run()
            except RecursionError:
                raise  # (the caller retries flat)
            except Exception:  # pragma: no cover - a bug here must not cost the decompile
                # Each rewrite is done whole once its checks pass: what is done is sound.
                pass
    return tree


# --------------------------------------------------------------------------- scope facts

def _is_temp(name: str) -> bool:
    return name.startswith("__pellucid_t") and TEMP.match(name) is not None


def _target_names(target: ast.AST) -> List[str]:
    out: List[str] = []
    for n in all_nodes(target):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.append(n.id)
    return out


class _Scope:
    """Which names of one function are plain locals: bound in it, not declared global or
    nonlocal, not named in a nested scope (they could be cells there)."""

    def __init__(self, fn: ast.AST) -> None:
        self.params: Set[str] = set()
        args = fn.args  # type: ignore[attr-defined]
        for a in list(getattr(args, "posonlyargs", [])) + list(args.args) + list(args.kwonlyargs):
            self.params.add(a.arg)
        for a in (args.vararg, args.kwarg):
            if a is not None:
                self.params.add(a.arg)
        bound: Set[str] = set(self.params)
        declared: Set[str] = set()
        nested: Set[str] = set()
        deleted: Set[str] = set()
        todo: List[ast.AST] = list(fn.body)  # type: ignore[attr-defined]
        while todo:
            node = todo.pop()
            if isinstance(node, _SCOPES):
                for n in all_nodes(node):
                    if isinstance(n, ast.Name):
                        nested.add(n.id)
                    elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        nested.add(n.name)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    bound.add(node.name)
                    # decorators, defaults, bases are evaluated here (and named: nested is enough)
                continue
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                declared.update(node.names)
            elif isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Store):
                    bound.add(node.id)
                elif isinstance(node.ctx, ast.Del):
                    bound.add(node.id)
                    deleted.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    bound.add((a.asname or a.name).split(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
            elif isinstance(node, ast.MatchAs if hasattr(ast, "MatchAs") else ()) and node.name:
                bound.add(node.name)
            elif hasattr(ast, "MatchStar") and isinstance(node, (ast.MatchStar, ast.MatchMapping)):
                rest = getattr(node, "name", None) or getattr(node, "rest", None)
                if rest:
                    bound.add(rest)
            todo.extend(child_nodes(node))
        self.locals: FrozenSet[str] = frozenset(bound - declared - nested)
        self.deleted = deleted

    def plain(self, name: str) -> bool:
        return name in self.locals


# --------------------------------------------------------------------------- evaluation order

def _evaluation(node: ast.AST, cond: bool, out: List[Tuple[ast.AST, bool]]) -> None:
    """Append ``(node, conditional)`` for ``node`` and what it evaluates, in the order it
    happens (each node after its operands); ``conditional``: it may not run, or run more than
    once (the later operands of ``and``/``or``, the arms of ``x if c else y``, a chained
    comparison's later operands, a lambda's or comprehension's inside)."""
    cls = type(node)
    if cls in CONTEXTS:
        return
    if cls is ast.Name or cls is ast.Constant:
        out.append((node, cond))
        return
    if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        # (defaults and the first iterable are evaluated here; everything is marked conditional:
        # nothing is moved into or across one)
        for child in child_nodes(node):
            _evaluation(child, True, out)
        out.append((node, cond))
        return
    if cls is ast.BoolOp:
        for k, v in enumerate(node.values):  # type: ignore[attr-defined]
            _evaluation(v, cond or k > 0, out)
    elif cls is ast.IfExp:
        _evaluation(node.test, cond, out)  # type: ignore[attr-defined]
        _evaluation(node.body, True, out)  # type: ignore[attr-defined]
        _evaluation(node.orelse, True, out)  # type: ignore[attr-defined]
    elif cls is ast.Compare:
        _evaluation(node.left, cond, out)  # type: ignore[attr-defined]
        for k, v in enumerate(node.comparators):  # type: ignore[attr-defined]
            _evaluation(v, cond or k > 0, out)
    elif cls is ast.NamedExpr:
        _evaluation(node.value, cond, out)  # type: ignore[attr-defined]
        _evaluation(node.target, cond, out)  # type: ignore[attr-defined]
    elif cls is ast.Dict:
        for k, v in zip(node.keys, node.values):  # type: ignore[attr-defined]
            if k is not None:
                _evaluation(k, cond, out)
            _evaluation(v, cond, out)
    elif cls is ast.Call:
        _evaluation(node.func, cond, out)  # type: ignore[attr-defined]
        for a in node.args:  # type: ignore[attr-defined]
            _evaluation(a, cond, out)
        for kw in node.keywords:  # type: ignore[attr-defined]
            _evaluation(kw.value, cond, out)
    elif cls is ast.Assign:
        _evaluation(node.value, cond, out)  # type: ignore[attr-defined]
        for t in node.targets:  # type: ignore[attr-defined]
            _evaluation(t, cond, out)
    elif cls is ast.AugAssign or cls is ast.AnnAssign:
        # (the target is read before the value; an annotation may be evaluated: conditional)
        _evaluation(node.target, cond, out)  # type: ignore[attr-defined]
        if node.value is not None:  # type: ignore[attr-defined]
            _evaluation(node.value, cond, out)  # type: ignore[attr-defined]
        if cls is ast.AnnAssign:
            _evaluation(node.annotation, True, out)  # type: ignore[attr-defined]
    elif cls is ast.Assert:
        _evaluation(node.test, cond, out)  # type: ignore[attr-defined]
        if node.msg is not None:  # type: ignore[attr-defined]
            _evaluation(node.msg, True, out)  # type: ignore[attr-defined]
    elif isinstance(node, ast.stmt) and not isinstance(node, _SIMPLE):
        # A compound statement: only its head is evaluated first, once.
        head = _head(node)
        if head is not None:
            _evaluation(head, cond, out)
        for child in child_nodes(node):
            if child is not head:
                _evaluation(child, True, out)
    else:
        for child in child_nodes(node):
            _evaluation(child, cond, out)
    out.append((node, cond))


_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return, ast.Delete, ast.Pass,
           ast.Raise, ast.Assert, ast.Global, ast.Nonlocal, ast.Break, ast.Continue)


def _head(stmt: ast.stmt) -> Optional[ast.AST]:
    """The expression a compound statement evaluates once, before anything else of it."""
    if isinstance(stmt, ast.If):
        return stmt.test
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return stmt.iter
    if isinstance(stmt, (ast.With, ast.AsyncWith)) and stmt.items:
        return stmt.items[0].context_expr
    return None


def _order(stmt: ast.AST) -> List[Tuple[ast.AST, bool]]:
    out: List[Tuple[ast.AST, bool]] = []
    _evaluation(stmt, False, out)
    return out


# --------------------------------------------------------------------------- the rewrites

Path = Tuple[Tuple[int, int], ...]  # (id of a statement list, id of a statement in it), outermost first


class _BoundAt:
    """The names certainly bound before the statement at ``at`` of a body: those of ``base``,
    and those of ``since`` bound before it (name -> the index of the first statement after
    its binding).  (``in`` is all that is asked of it.)"""

    __slots__ = ("base", "since", "at")

    def __init__(self, base: FrozenSet[str], since: Dict[str, int], at: int) -> None:
        self.base, self.since, self.at = base, since, at

    def __contains__(self, name: object) -> bool:
        return name in self.base or self.since.get(name, self.at + 1) <= self.at  # type: ignore[call-overload]


class _Site:
    """Where a temporary is assigned: the ``Assign`` ``stmt`` in ``body``, below ``path``."""

    __slots__ = ("body", "stmt", "path")

    def __init__(self, body: List[ast.stmt], stmt: ast.stmt, path: Path) -> None:
        self.body = body
        self.stmt = stmt
        self.path = path


class _Function:
    """The rewrites over one function's body, round after round until none applies."""

    def __init__(self, fn: ast.AST) -> None:
        self.fn = fn
        self.counter = 0
        self.taken: Optional[Set[str]] = None

    def run(self) -> None:
        body = self.fn.body  # type: ignore[attr-defined]
        if not any(type(n) is ast.Name and n.id.startswith("__pellucid_t")  # type: ignore[attr-defined]
                   for n in all_nodes(self.fn)):
            # No temporary anywhere in it (most functions): no rewrite applies, and the scope
            # facts and per-round indexes (a third of the decompile step) are not needed
            _merge_deletes(body)
            return
        self.scope = _Scope(self.fn)
        self._fold_lists()
        # A bound on the rounds: each one that changes something removes a temporary.
        for _ in range(sum(1 for n in all_nodes(self.fn) if type(n) is ast.Name
                           and isinstance(n.ctx, ast.Store) and _is_temp(n.id)) + 1):
            if not self._round():
                break
        _merge_deletes(body)

    def _fold_lists(self) -> None:
        """Work out Dynamo's stack shuffles through fresh lists (:mod:`known_lists`)."""
        from pellucid.decompiler.known_lists import ListFolder

        if not any(type(n) is ast.List for n in all_nodes(self.fn)):
            return
        self._index()
        once = set(n for n, c in self.stores.items() if c == 1 and self.scope.plain(n))
        top = max([int(n[len("__pellucid_t"):]) for n in self.stores] + [0])
        counter = [top]

        def new_temp() -> str:
            counter[0] += 1
            return "__pellucid_t%d" % counter[0]

        total = {n: len(v) for n, v in self.loads.items()}
        for body in list(_bodies(self.fn.body)):  # type: ignore[attr-defined]
            new = ListFolder(body, self.scope.plain, once, total, new_temp,
                             lambda s: self.bound_before.get(id(s), _NONE)).run()
            if new is not None:
                body[:] = new
        # (new temporaries are plain locals of the function too)
        self.scope.locals = self.scope.locals | frozenset(
            "__pellucid_t%d" % k for k in range(top + 1, counter[0] + 1))

    # -- facts of one round ------------------------------------------------------------------
    def _index(self) -> None:
        """Per temporary: its assignments, loads (with their statement paths) and other uses;
        per statement: the names certainly bound before it."""
        self.defs: Dict[str, List[_Site]] = {}
        self.loads: Dict[str, List[Tuple[ast.Name, Path]]] = {}
        self.other: Set[str] = set()  # temporaries stored or deleted other than by a plain def
        self.stores: Dict[str, int] = {}  # temporary -> how many places bind it
        self.bound_before: Dict[int, FrozenSet[str]] = {}
        self.positions: Dict[int, Dict[int, int]] = {}
        self.keep: List[ast.AST] = []  # statements removed this round (their ids stay unique)
        # names a statement (or an assignment's value) may bind, by node: asked again for the
        # same statements by every copy before them (quadratic in Dynamo's long spill runs)
        self.binding: Dict[int, FrozenSet[str]] = {}
        # Most functions delete no name: then no statement's deletions need a walk of its own
        # (one per statement and again per enclosing statement: quadratic in nesting depth)
        self.deletes = any(type(n) is ast.Name and isinstance(n.ctx, ast.Del)
                           for n in all_nodes(self.fn))
        self._walk_body(self.fn.body, (), frozenset(self.scope.params))  # type: ignore[attr-defined]

    def _walk_body(self, body: List[ast.stmt], path: Path, bound: FrozenSet[str]) -> None:
        # The names certainly bound before each statement: ``bound`` and the names in ``since``
        # from their index on (a set per statement, rebuilt at each new name, made Dynamo's
        # long straight lines quadratic); a set is made only where a compound statement or a
        # deletion needs one.
        since: Dict[str, int] = {}
        for k, stmt in enumerate(body):
            self.bound_before[id(stmt)] = _BoundAt(bound, since, k) if since else bound
            here = path + ((id(body), id(stmt)),)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name) and _is_temp(stmt.targets[0].id):
                name = stmt.targets[0].id
                self.defs.setdefault(name, []).append(_Site(body, stmt, path))
                self.stores[name] = self.stores.get(name, 0) + 1
                self._scan(stmt.value, here)
            elif isinstance(stmt, _SIMPLE):
                self._scan(stmt, here)
            else:
                if since:
                    bound, since = bound | frozenset(since), {}
                self._walk_compound(stmt, here, bound)
            dels, new = self._after(stmt)
            if dels:
                if since:
                    bound, since = bound | frozenset(since), {}
                bound = (bound - dels) | frozenset(n for n in new if n not in dels)
            else:
                for name in new:
                    if name not in bound and name not in since:
                        since[name] = k + 1

    def _walk_compound(self, stmt: ast.stmt, here: Path, bound: FrozenSet[str]) -> None:
        lists: List[Tuple[List[ast.stmt], FrozenSet[str]]] = []
        inner = bound
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            inner = bound - self._deleted(stmt)  # (a later iteration may follow a deletion)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            inner = bound | frozenset(n for item in stmt.items if item.optional_vars is not None
                                      for n in _target_names(item.optional_vars))
        elif isinstance(stmt, _TRIES):
            inner = bound - self._deleted(stmt)  # (handlers and finally: any point of the body)
        for name in stmt._fields:
            value = getattr(stmt, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                lists.append((value, bound if isinstance(stmt, _TRIES) and name == "body" else inner))
            elif isinstance(value, list):
                for v in value:
                    if isinstance(v, ast.ExceptHandler):
                        if v.type is not None:
                            self._scan(v.type, here)
                        lists.append((v.body, inner | (frozenset([v.name]) if v.name else frozenset())))
                    elif _MATCH_CASE is not None and isinstance(v, _MATCH_CASE):
                        self._scan(v.pattern, here)
                        if v.guard is not None:
                            self._scan(v.guard, here)
                        lists.append((v.body, bound))
                    elif isinstance(v, ast.AST):
                        self._scan(v, here)
            elif isinstance(value, ast.AST):
                self._scan(value, here)
        for body, start in lists:
            self._walk_body(body, here, start)

    def _scan(self, node: ast.AST, here: Path) -> None:
        for n in all_nodes(node):
            if type(n) is ast.Name and _is_temp(n.id):
                if isinstance(n.ctx, ast.Load):
                    self.loads.setdefault(n.id, []).append((n, here))
                else:
                    self.other.add(n.id)
                    if isinstance(n.ctx, ast.Store):
                        self.stores[n.id] = self.stores.get(n.id, 0) + 1
                    else:
                        self.stores[n.id] = 2  # (deleted: never followed)

    def _deleted(self, stmt: ast.stmt) -> FrozenSet[str]:
        return _deleted_in(stmt) if self.deletes else _NONE

    def _after(self, stmt: ast.stmt) -> Tuple[FrozenSet[str], Set[str]]:
        """The names ``stmt`` may delete, and those certainly bound once it ran to its end."""
        dels = self._deleted(stmt)
        new: Set[str] = set()
        if isinstance(stmt, _SIMPLE):
            for node, cond in _order(stmt):
                if not cond and type(node) is ast.Name and isinstance(node.ctx, ast.Store):
                    new.add(node.id)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            new.add(stmt.name)
        return dels, new

    def _position(self, body: List[ast.stmt], stmt_id: int) -> int:
        """Index of the statement ``stmt_id`` in ``body`` (-1: no longer there)."""
        table = self.positions.get(id(body))
        if table is not None:
            k = table.get(stmt_id)
            if k is None:
                # Every statement asked about was in ``body`` when this round's facts were
                # taken, and within a round statements are only removed or replaced, never
                # inserted: one the table does not have was gone when it was made.
                return -1
            else:
                # (and one still in ``body`` is where the table saw it or before.  The table is
                # not rebuilt after each change: Dynamo's spill runs change a body hundreds of
                # times, and each rebuild walked all of it.)
                k = min(k, len(body) - 1)
                while k >= 0 and id(body[k]) != stmt_id:
                    k -= 1
                if k >= 0:
                    table[stmt_id] = k
                    return k
        # (no longer there: the exact answer from a fresh table)
        table = self.positions[id(body)] = {id(s): k for k, s in enumerate(body)}
        return table.get(stmt_id, -1)

    def _changed(self, body: List[ast.stmt], *removed: ast.AST) -> None:
        self.keep.extend(removed)  # (their ids stay unique: the tables never confuse them)

    # -- one round ---------------------------------------------------------------------------
    def _round(self) -> bool:
        self._index()
        changed = False
        sites = [(name, sites[0]) for name, sites in self.defs.items()
                 if len(sites) == 1 and name not in self.other and self.scope.plain(name)]
        # Last definitions first: substituting into a later statement can make the way from an
        # earlier definition to its use quiet.
        order = self._document_order()
        sites.sort(key=lambda item: order.get(id(item[1].stmt), -1), reverse=True)
        for name, site in sites:
            at = self._position(site.body, id(site.stmt))
            if at < 0:
                continue
            uses = self.loads.get(name, [])
            last = self._last_use(site, at, uses)
            if last is None:
                continue
            if self._unused(site, at, uses) or self._copy(name, site, at, last, uses) \
                    or self._store_up(site, at, uses) or self._substitute(site, at, uses):
                changed = True
        if self._pack_arguments():
            changed = True
        return changed

    def _document_order(self) -> Dict[int, int]:
        order: Dict[int, int] = {}
        for site_list in self.defs.values():
            for site in site_list:
                order.setdefault(id(site.stmt), len(order))
        # (defs were recorded walking the tree in source order)
        return order

    def _last_use(self, site: _Site, at: int, uses: List[Tuple[ast.Name, Path]]) -> Optional[int]:
        """Index (in the definition's list) of the last statement holding a use, when every use
        is in a later statement of that list or below one (``at``: without uses); else None."""
        depth = len(site.path)
        last = at
        for _, path in uses:
            if len(path) <= depth or path[:depth] != site.path or path[depth][0] != id(site.body):
                return None
            k = self._position(site.body, path[depth][1])
            if k <= at:
                return None
            last = max(last, k)
        return last

    # unused ----------------------------------------------------------------------------------
    def _unused(self, site: _Site, at: int, uses: List[Tuple[ast.Name, Path]]) -> bool:
        """A temporary nothing reads: its value is only evaluated (or, pure, not at all)."""
        if uses:
            return False
        stmt = site.stmt
        value = stmt.value  # type: ignore[attr-defined]
        facts = self._effects(value, self.bound_before.get(id(stmt), _NONE))
        if facts is None:
            return False
        if facts[2] and not facts[1]:
            del site.body[at]
        else:
            site.body[at] = _copy_position(ast.Expr(value), stmt)
        self._changed(site.body, stmt)
        return True

    # copies ----------------------------------------------------------------------------------
    def _copy(self, name: str, site: _Site, at: int, last: int,
              uses: List[Tuple[ast.Name, Path]]) -> bool:
        stmt = site.stmt
        value = stmt.value  # type: ignore[attr-defined]
        walrus = None
        if isinstance(value, ast.NamedExpr) and isinstance(value.target, ast.Name):
            walrus = value
            source = value.target.id
        elif type(value) is ast.Name and isinstance(value.ctx, ast.Load):
            source = value.id
        else:
            return False
        if source == name or not self.scope.plain(source):
            return False
        if walrus is None and source not in self.bound_before.get(id(stmt), _NONE):
            return False  # (reading it here could raise: later, other effects would come first)
        body = site.body
        for k in range(at + 1, last + 1):
            if source in self._bound_by(body[k], allow_final_store=(k == last)):
                return False
        for node, _ in uses:
            _replace(body[at + 1:last + 1], node, _name_like(source, node))
            self.binding.pop(id(node), None)
            self.keep.append(node)  # (its id is no other node's while this round's facts stand)
        if walrus is None:
            del body[at]
        else:
            body[at] = _assign(source, walrus.value, stmt)
        self._changed(body, stmt)
        return True

    # stores moved up -------------------------------------------------------------------------
    def _store_up(self, site: _Site, at: int, uses: List[Tuple[ast.Name, Path]]) -> bool:
        if len(uses) != 1:
            return False
        node, path = uses[0]
        body = site.body
        j = self._position(body, path[len(site.path)][1])
        use_stmt = body[j]
        if not (isinstance(use_stmt, ast.Assign) and use_stmt.value is node
                and len(use_stmt.targets) == 1 and isinstance(use_stmt.targets[0], ast.Name)):
            return False
        target = use_stmt.targets[0].id
        if not self.scope.plain(target):
            return False
        for k in range(at + 1, j):
            between = body[k]
            if not self._quiet(between) or target in _names_in(between):
                return False
        stmt = site.stmt
        body[at] = _assign(target, stmt.value, stmt)  # type: ignore[attr-defined]
        del body[j]
        self._changed(body, stmt, use_stmt)
        return True

    def _bound_by(self, stmt: ast.stmt, allow_final_store: bool) -> FrozenSet[str]:
        """Names ``stmt`` may bind or delete (``allow_final_store``: of an ``Assign`` whose
        targets are names, only what its value binds: its targets are bound after the value,
        which is all that is read)."""
        node: ast.AST = stmt
        if allow_final_store and isinstance(stmt, ast.Assign) \
                and all(isinstance(t, ast.Name) for t in stmt.targets):
            node = stmt.value
        found = self.binding.get(id(node))
        if found is None:
            found = self.binding[id(node)] = _binds(node)
        return found

    def _quiet(self, stmt: ast.stmt) -> bool:
        """Running ``stmt`` runs no code, cannot raise, and binds or deletes only temporaries
        and plain locals certainly bound (``del``)."""
        bound = self.bound_before.get(id(stmt))
        if bound is None:
            return False
        if isinstance(stmt, ast.Pass):
            return True
        if isinstance(stmt, ast.Delete):
            seen: Set[str] = set()
            for t in stmt.targets:
                if not isinstance(t, ast.Name) or t.id not in bound or t.id in seen \
                        or not self.scope.plain(t.id):
                    return False
                seen.add(t.id)
            return True
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name) and _is_temp(stmt.targets[0].id):
            return all(self._inert(n, bound, _NONE, _NONE) for n, _ in _order(stmt))
        return False

    def _inert(self, node: ast.AST, bound: FrozenSet[str], reads: FrozenSet[str],
               writes: FrozenSet[str]) -> bool:
        """Evaluating ``node`` (its operands already evaluated) runs no code, cannot raise,
        changes no variable but a temporary outside ``reads``/``writes``, and reads nothing in
        ``writes``."""
        cls = type(node)
        if cls is ast.Constant or cls is ast.Pass or cls is ast.Expr:
            return True
        if cls is ast.Name:
            name = node.id  # type: ignore[attr-defined]
            if name in writes:
                return False
            ctx = type(node.ctx)  # type: ignore[attr-defined]
            if ctx is ast.Load:
                return name in bound and self.scope.plain(name)
            return ctx is ast.Store and _is_temp(name) and name not in reads
        if cls is ast.Assign:
            return True  # (its stores are its target nodes, judged on their own)
        if cls is ast.Tuple or cls is ast.List:
            return isinstance(node.ctx, ast.Load) and not any(  # type: ignore[attr-defined]
                isinstance(e, ast.Starred) for e in node.elts)  # type: ignore[attr-defined]
        return False

    # forward substitution -------------------------------------------------------------------
    def _substitute(self, site: _Site, at: int, uses: List[Tuple[ast.Name, Path]]) -> bool:
        if len(uses) != 1:
            return False
        node, path = uses[0]
        body = site.body
        stmt = site.stmt
        j = self._position(body, path[len(site.path)][1])
        value = stmt.value  # type: ignore[attr-defined]
        facts = self._effects(value, self.bound_before.get(id(stmt), _NONE))
        if facts is None:
            return False
        reads, writes, pure = facts

        def quiet(n: ast.AST, bound: FrozenSet[str]) -> bool:
            if pure:
                # Nothing can change what the value reads but a store or deletion of it.
                return not (type(n) is ast.Name and (n.id in writes or (
                    not isinstance(n.ctx, ast.Load) and n.id in reads)))
            return self._inert(n, bound, reads, writes)

        # Everything evaluated from the definition to the use, in order, with the names
        # certainly bound at its statement, must be quiet.  Checked as it is walked: a step
        # that is not ends the walk (Dynamo spills hundreds of graph arguments before a call
        # that is not quiet: walking every statement to the use for each made them quadratic).
        for k in range(at + 1, j):
            s = body[k]
            bound = self.bound_before.get(id(s))
            if not isinstance(s, _SIMPLE) or bound is None:
                return False  # (not indexed: made by a rewrite earlier in this round)
            for n, _ in _order(s):
                if not quiet(n, bound):
                    return False
        use_stmt = body[j]
        bound = self.bound_before.get(id(use_stmt))
        if bound is None:
            return False
        for n, c in _order(use_stmt):
            if n is node:
                if c:
                    return False  # (read conditionally, or more than once)
                break
            if not quiet(n, bound):
                return False
        else:
            return False  # (in a compound statement's body: evaluated at another time)
        _replace([use_stmt], node, value)
        # (the value may bind temporaries with ``:=``: what the use's statement binds changed)
        self.binding.pop(id(use_stmt), None)
        self.binding.pop(id(getattr(use_stmt, "value", None)), None)
        self.binding.pop(id(node), None)
        self.keep.append(node)  # (its id is no other node's while this round's facts stand)
        del body[at]
        self._changed(body, stmt)
        return True

    def _effects(self, value: ast.expr, bound: FrozenSet[str]
                 ) -> Optional[Tuple[FrozenSet[str], FrozenSet[str], bool]]:
        """(names ``value`` reads, temporaries it binds, whether it is pure: runs no code and
        cannot raise); None when it may not move (it binds a name that is not a temporary)."""
        reads: Set[str] = set()
        writes: Set[str] = set()
        pure = True
        for n, c in _order(value):
            if type(n) is ast.Name:
                if isinstance(n.ctx, ast.Load):
                    reads.add(n.id)
                    if not (n.id in bound and self.scope.plain(n.id)):
                        pure = False
                elif not _is_temp(n.id):
                    return None
                else:
                    writes.add(n.id)
            elif type(n) is ast.NamedExpr or type(n) is ast.Constant:
                pass
            elif not (type(n) in (ast.Tuple, ast.List) and self._inert(n, bound, _NONE, _NONE)):
                pure = False
            if c:
                pure = False
        return frozenset(reads), frozenset(writes), pure

    # packed arguments -----------------------------------------------------------------------
    def _pack_arguments(self) -> bool:
        """Consecutive spilled arguments of one call that a statement in between keeps from
        being substituted: one tuple, unpacked into the call."""
        changed = False
        for body in _bodies(self.fn.body):  # type: ignore[attr-defined]
            k = 0
            while k < len(body):
                run = self._run_at(body, k)
                found = self._call_of(body, k, run) if len(run) >= 2 else None
                if found is None:
                    k += max(1, len(run))
                    continue
                call, at = found
                name = self._new_args_name()
                values = ast.Tuple([s.value for s in run], ast.Load())  # type: ignore[attr-defined]
                body[k:k + len(run)] = [_assign(name, values, run[0])]
                call.args = call.args[:at] + [ast.Starred(ast.Name(name, ast.Load()), ast.Load())] \
                    + call.args[at + len(run):]
                self._changed(body, *run)
                changed = True
                k += 1
        return changed

    def _run_at(self, body: List[ast.stmt], k: int) -> List[ast.stmt]:
        """The temporaries assigned by ``body[k]`` and the statements right after it that are
        assigned once and read once."""
        run: List[ast.stmt] = []
        while k < len(body):
            s = body[k]
            if not (isinstance(s, ast.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], ast.Name) and _is_temp(s.targets[0].id)):
                break
            name = s.targets[0].id
            sites = self.defs.get(name, [])
            if len(sites) != 1 or sites[0].stmt is not s or name in self.other \
                    or len(self.loads.get(name, [])) != 1 or not self.scope.plain(name):
                break
            run.append(s)
            k += 1
        return run

    def _call_of(self, body: List[ast.stmt], k: int, run: List[ast.stmt]
                 ) -> Optional[Tuple[ast.Call, int]]:
        """The call whose positional arguments hold the temporaries ``run`` assigns, in order
        and next to each other (other arguments may come before and after them), in a statement
        after them in ``body``, with where the first one is; None if there is none."""
        names = [s.targets[0].id for s in run]  # type: ignore[attr-defined]
        first, path = self.loads[names[0]][0]
        site = self.defs[names[0]][0]
        if self._last_use(site, k, self.loads[names[0]]) is None:
            return None
        j = self._position(body, path[len(site.path)][1])
        for n in all_nodes(body[j]):
            if type(n) is ast.Call:
                for at, arg in enumerate(n.args):
                    if arg is first:
                        break
                else:
                    continue
                if at + len(names) > len(n.args) or any(
                        isinstance(a, ast.Starred) for a in n.args):
                    return None
                for arg, name in zip(n.args[at:], names):
                    if self.loads[name][0][0] is not arg:
                        return None
                return n, at
        return None

    def _new_args_name(self) -> str:
        if self.taken is None:
            self.taken = set(n.id for n in all_nodes(self.fn) if isinstance(n, ast.Name))
        while True:
            self.counter += 1
            name = ARGS_PREFIX if self.counter == 1 else "%s%d" % (ARGS_PREFIX, self.counter)
            if name not in self.taken:
                self.taken.add(name)
                return name


_NONE: FrozenSet[str] = frozenset()
_TRIES = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)
_MATCH_CASE = getattr(ast, "match_case", None)


def _bodies(body: List[ast.stmt]) -> Iterator[List[ast.stmt]]:
    """``body`` and every statement list below it, not entering nested scopes."""
    yield body
    for stmt in body:
        if isinstance(stmt, _SCOPES):
            continue
        for name in stmt._fields:
            value = getattr(stmt, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield from _bodies(value)
            elif isinstance(value, list):
                for v in value:
                    inner = getattr(v, "body", None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        yield from _bodies(inner)


# --------------------------------------------------------------------------- helpers

def _deleted_in(node: ast.AST) -> FrozenSet[str]:
    if isinstance(node, _SIMPLE) and type(node) is not ast.Delete:
        # (only a ``del`` statement's targets are in the Del context: no walk of the others,
        # once per statement per round)
        return _NONE
    return frozenset(n.id for n in all_nodes(node)
                     if type(n) is ast.Name and isinstance(n.ctx, ast.Del))


def _names_in(node: ast.AST) -> Set[str]:
    out = set(n.id for n in all_nodes(node) if type(n) is ast.Name)
    for n in all_nodes(node):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
    return out


def _binds(node: ast.AST) -> FrozenSet[str]:
    """Every name evaluating or running ``node`` may bind or delete."""
    out: Set[str] = set()
    for n in all_nodes(node):
        if type(n) is ast.Name:
            if not isinstance(n.ctx, ast.Load):
                out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.ExceptHandler):
            if n.name:
                out.add(n.name)
        elif type(n).__name__ in ("MatchAs", "MatchStar"):
            if getattr(n, "name", None):
                out.add(n.name)  # type: ignore[attr-defined]
        elif type(n).__name__ == "MatchMapping":
            if getattr(n, "rest", None):
                out.add(n.rest)  # type: ignore[attr-defined]
    return frozenset(out)


def _name_like(name: str, old: ast.AST) -> ast.Name:
    new = ast.Name(name, ast.Load())
    for attr in ("_pos", "_seq", "lineno", "col_offset", "end_lineno", "end_col_offset"):
        if attr in old.__dict__:
            setattr(new, attr, old.__dict__[attr])
    return new


def _copy_position(new: ast.stmt, like: ast.stmt) -> ast.stmt:
    for attr in ("_pos", "lineno", "col_offset", "end_lineno", "end_col_offset"):
        if attr in like.__dict__:
            setattr(new, attr, like.__dict__[attr])
    return new


def _assign(name: str, value: ast.expr, like: ast.stmt) -> ast.Assign:
    target = ast.Name(name, ast.Store())
    old_target = like.targets[0] if isinstance(like, ast.Assign) and like.targets else None
    if old_target is not None and "_pos" in old_target.__dict__:
        target._pos = old_target._pos  # type: ignore[attr-defined]
    new = ast.Assign([target], value)
    for attr in ("_pos", "lineno", "col_offset", "end_lineno", "end_col_offset"):
        if attr in like.__dict__:
            setattr(new, attr, like.__dict__[attr])
    return new


def _replace(stmts: List[ast.stmt], old: ast.AST, new: ast.AST) -> bool:
    """Put ``new`` where ``old`` (by identity) is, in the first place found below ``stmts``."""
    todo: List[ast.AST] = list(stmts)
    while todo:
        node = todo.pop()
        for field in node._fields:
            value = getattr(node, field, None)
            if value is old:
                setattr(node, field, new)
                return True
            if type(value) is list:
                for k, v in enumerate(value):
                    if v is old:
                        value[k] = new
                        return True
                    if isinstance(v, ast.AST):
                        todo.append(v)
            elif isinstance(value, ast.AST):
                todo.append(value)
    return False


def _merge_deletes(body: List[ast.stmt]) -> None:
    """``del a`` followed by ``del b`` (names only) as ``del a, b``: the same instructions."""
    for stmts in list(_bodies(body)):
        k = 0
        while k < len(stmts):
            stmt = stmts[k]
            if isinstance(stmt, ast.Delete) and all(isinstance(t, ast.Name) for t in stmt.targets):
                while k + 1 < len(stmts) and isinstance(stmts[k + 1], ast.Delete) \
                        and all(isinstance(t, ast.Name) for t in stmts[k + 1].targets):
                    stmt.targets = stmt.targets + stmts[k + 1].targets  # type: ignore[attr-defined]
                    del stmts[k + 1]
            k += 1
