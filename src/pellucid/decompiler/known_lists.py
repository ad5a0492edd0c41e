"""Dynamo's stack shuffles through fresh lists, worked out: the lists disappear.

At a graph break Dynamo moves the values on its stack around with lists it builds for the
purpose and that nothing else ever sees: ``t = [a, b][0:2]``, ``t.extend([c])``,
``(u := [t])[0][0:0] = [f()]``, ``t[1:] = [t[2], t[1]]``, ``v = u[-1]``, ``del u[-1]``, and finally
``resume([], u, *v)``.  Decompiled one statement per operation, that is a dozen lines of list
plumbing around two or three real calls.

Within one statement list of a function, this pass follows the temporaries that hold such
lists: their contents are known (each item a value that cannot change: a constant, a temporary,
a plain local not bound again in that list), and every list operation that runs no user code --
displays, indexing and slicing with constants, ``extend``/``append`` with known items, slice and
item assignment, ``del`` of an item -- is done on the known contents instead of written out.
What remains is written where it happened: every expression that can run code keeps its place
in the order of evaluation (saved in a temporary when a list holds its value), and a list that
reaches other code (an argument, a returned value) is written there as a display of its contents
(``f(*t)`` with ``t`` known: its items as arguments).  This is exact only when the list object
itself is not needed again: the pass leaves the statement list as it was when a list would reach
other code while some temporary still refers to it, when a list temporary is used outside the
straight-line statements of its list, or when an index is out of range.

:mod:`pellucid.verify` models these lists the same way (contents of exact lists nothing else has
seen), so what this pass writes is checked like any other output.
"""
import ast
from typing import Any, Dict, List, Optional, Set, Tuple

from pellucid.decompiler.tree_nodes import all_nodes


class Bail(Exception):
    """The statement list is left as it was."""


class _Val:
    """A value the rewritten code computes: ``node`` (an expression), ``stable`` when reading
    it again later gives the same value without running code (a constant, a temporary, a plain
    local not bound again), ``effect`` when evaluating it can run code or raise."""

    __slots__ = ("node", "stable", "effect")

    def __init__(self, node: ast.expr, stable: bool, effect: bool) -> None:
        self.node = node
        self.stable = stable
        self.effect = effect


class _List:
    """A fresh exact list nothing but this code has seen; ``items`` are values (``_Val`` that
    are stable, or ``_List``/``_Tuple``)."""

    __slots__ = ("items", "escaped")

    def __init__(self, items: List[Any]) -> None:
        self.items = items
        self.escaped = False


class _Tuple:
    __slots__ = ("items",)

    def __init__(self, items: List[Any]) -> None:
        self.items = items


_SEQ = (_List, _Tuple)


def closure_cell(node: ast.AST) -> bool:
    """``(lambda: name).__closure__[0]``: the cell of ``name`` (building the lambda and reading
    its closure runs no user code and cannot raise)."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
            and node.value.attr == "__closure__" and isinstance(node.value.value, ast.Lambda)):
        return False
    key = node.slice
    if isinstance(key, ast.Index):  # (3.8)
        key = key.value  # type: ignore[attr-defined]
    lam = node.value.value
    args = lam.args
    return isinstance(key, ast.Constant) and key.value == 0 and isinstance(lam.body, ast.Name) \
        and not (args.args or args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg)


class ListFolder:
    """Rewrites one statement list (see the module docstring).

    ``plain(name)``: a plain local of the function; ``temps``: the temporaries assigned exactly
    once and never deleted; ``total_loads``: how many times the function reads each; ``new_temp()``: a fresh temporary name; ``bound_before(stmt)``: the
    names certainly bound before ``stmt``."""

    def __init__(self, body: List[ast.stmt], plain: Any, temps: Set[str], total_loads: Dict[str, int],
                 new_temp: Any, bound_before: Any) -> None:
        self.body = body
        self.plain = plain
        self.temps = temps
        self.total_loads = total_loads
        self.new_temp = new_temp
        self.bound_before = bound_before

    def run(self) -> Optional[List[ast.stmt]]:
        """The rewritten statements, or None when nothing changed or the list is left as is."""
        body = self.body
        # Temporaries read anywhere else than in this list's own simple statements are left
        # alone (their loads are not followed), and so are lists they would hold.
        self.loads: Dict[str, int] = {}
        outside: Set[str] = set()
        defined: Set[str] = set()
        # name -> the index of the last statement that may bind it: a name is rebound at or after
        # statement k when that is k or more.  (A set per statement of the names bound from
        # there on copied every later one's: quadratic along Dynamo's straight line.)
        self.last_bound: Dict[str, int] = {}
        for k in range(len(body) - 1, -1, -1):
            stmt = body[k]
            names: Set[str] = set()
            simple = isinstance(stmt, _SIMPLE)
            for n in all_nodes(stmt):
                if type(n) is ast.Name:
                    if not isinstance(n.ctx, ast.Load):
                        names.add(n.id)
                        if simple and n.id in self.temps:
                            defined.add(n.id)
                    elif n.id in self.temps:
                        if simple:
                            self.loads[n.id] = self.loads.get(n.id, 0) + 1
                        else:
                            outside.add(n.id)
                elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(n.name)
                elif isinstance(n, (ast.Import, ast.ImportFrom)):
                    names.update((a.asname or a.name).split(".")[0] for a in n.names)
                elif isinstance(n, ast.ExceptHandler) and n.name:
                    names.add(n.name)
            for name in names:
                self.last_bound.setdefault(name, k)  # (the walk goes backwards: the first is the last)
        self.followed = set(n for n in defined - outside
                            if self.loads.get(n, 0) == self.total_loads.get(n, 0))
        self._find_working()
        if not any(self._starts_list(s) for s in body):
            return None
        self.env: Dict[str, Any] = {}
        out: List[ast.stmt] = []
        changed = False
        try:
            for k, stmt in enumerate(body):
                self.k = k
                new = self._statement(stmt)
                if new is None:
                    out.append(stmt)
                else:
                    out.extend(new)
                    changed = True
            for name, value in self.env.items():
                if self.loads.get(name, 0) and isinstance(value, _SEQ + (_Val,)):
                    raise Bail("%s is read after the list" % name)
        except Bail:
            return None
        return out if changed else None

    # -- statements ------------------------------------------------------------------------------
    def _find_working(self) -> None:
        """The expressions whose value is worked on as a list (indexed, sliced, extended,
        unpacked, an item of such a list...): ``self.working`` (node ids), and the followed
        temporaries that hold one (``self.worked``).  A display elsewhere is just written."""
        working: Set[int] = set()
        defs: Dict[str, ast.expr] = {}
        todo: List[ast.AST] = []
        for stmt in self.body:
            if not isinstance(stmt, _SIMPLE):
                continue
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                t = stmt.targets[0]
                if isinstance(t, ast.Name) and t.id in self.followed:
                    defs[t.id] = stmt.value
                elif isinstance(t, ast.Subscript) and isinstance(_key(t), ast.Slice):
                    todo.append(stmt.value)
            for n in all_nodes(stmt):
                if isinstance(n, ast.Subscript):
                    todo.append(n.value)
                elif isinstance(n, ast.Starred):
                    todo.append(n.value)
                elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                        and n.func.attr in ("extend", "append"):
                    todo.append(n.func.value)
                    todo.extend(n.args)
                elif isinstance(n, ast.NamedExpr) and n.target.id in self.followed:
                    defs[n.target.id] = n.value
        self.worked: Set[str] = set()
        while todo:
            n = todo.pop()
            if id(n) in working:
                continue
            working.add(id(n))
            if isinstance(n, ast.Name) and n.id in defs and n.id not in self.worked:
                self.worked.add(n.id)
                todo.append(defs[n.id])
            elif isinstance(n, (ast.List, ast.Tuple)):
                todo.extend(e.value if isinstance(e, ast.Starred) else e for e in n.elts)
            elif isinstance(n, ast.NamedExpr):
                todo.append(n.value)
                todo.append(n.target)
            elif isinstance(n, ast.Subscript):
                todo.append(n.value)  # (an item of a worked list may itself be one)
        self.working = working

    def _starts_list(self, stmt: ast.stmt) -> bool:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            return False
        t = stmt.targets[0]
        if isinstance(t, ast.Name) and t.id in self.worked:
            return any(isinstance(n, ast.List) for n in all_nodes(stmt.value))
        return isinstance(t, ast.Subscript) and any(
            isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name)
            and n.target.id in self.followed for n in all_nodes(t))

    def _mentions(self, stmt: ast.stmt) -> bool:
        for n in all_nodes(stmt):
            if type(n) is ast.Name and n.id in self.followed:
                return True
        return False

    def _statement(self, stmt: ast.stmt) -> Optional[List[ast.stmt]]:
        """The statements ``stmt`` becomes, or None to keep it as it is."""
        if not isinstance(stmt, _SIMPLE) or not (self._starts_list(stmt) or self._mentions(stmt)):
            if not isinstance(stmt, _SIMPLE) and self._mentions(stmt):
                raise Bail("a followed temporary in a compound statement")
            return None
        self.spills: List[ast.stmt] = []
        self.pending: List[_Val] = []
        if isinstance(stmt, ast.Assign):
            value = self._eval(stmt.value)
            rest: List[ast.expr] = []
            for target in stmt.targets:
                kept = self._store(target, value, len(stmt.targets) == 1)
                if kept is not None:
                    rest.append(kept)
            if rest:
                new = ast.Assign(rest, self._materialize(value))
                _copy_location(new, stmt)
                return self.spills + [new]
            return self.spills
        if isinstance(stmt, ast.Expr):
            call = stmt.value
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                    and call.func.attr in ("extend", "append") and len(call.args) == 1 \
                    and not call.keywords and not isinstance(call.args[0], ast.Starred) \
                    and isinstance(call.func.value, ast.Name) \
                    and isinstance(self.env.get(call.func.value.id), _List):
                target = self._eval(call.func.value)
                self._check_alive(target)
                item = self._eval(call.args[0])
                if call.func.attr == "append":
                    target.items.append(self._stable(item))
                    return self.spills
                if not isinstance(item, _SEQ):
                    raise Bail("extend by an unknown value")
                self._check_alive(item)
                target.items.extend(item.items)
                return self.spills
            value = self._eval(call)
            return self.spills + [_copy_location(ast.Expr(self._materialize(value)), stmt)]
        if isinstance(stmt, ast.Return):
            value = self._eval(stmt.value) if stmt.value is not None else None
            node = self._materialize(value) if value is not None else None
            return self.spills + [_copy_location(ast.Return(node), stmt)]
        if isinstance(stmt, ast.Delete):
            kept_targets: List[ast.expr] = []
            for target in stmt.targets:
                if isinstance(target, ast.Subscript):
                    seq, key, index = self._subscript(target, _List, "del with an unknown index")
                    if index is not None:
                        try:
                            del seq.items[index]
                        except IndexError:
                            raise Bail("del out of range")
                        continue
                    new_t = ast.Subscript(self._value_node(seq), self._materialize(key), ast.Del())
                    kept_targets.append(new_t)
                elif isinstance(target, ast.Name) and target.id not in self.followed:
                    kept_targets.append(target)
                else:
                    raise Bail("del of a followed name")
            if kept_targets:
                return self.spills + [_copy_location(ast.Delete(kept_targets), stmt)]
            return self.spills
        raise Bail("%s with a followed temporary" % type(stmt).__name__)

    def _store(self, target: ast.expr, value: Any, only: bool) -> Optional[ast.expr]:
        """Bind ``target`` to ``value``; returns the target to keep in an assignment (None:
        nothing to write)."""
        if isinstance(target, ast.Name) and target.id in self.followed and only:
            if isinstance(value, _Val) and not value.stable:
                # Its value is computed here; the temporary keeps it.
                self.env[target.id] = _Val(ast.Name(target.id, ast.Load()), True, False)
                return target
            self.env[target.id] = value
            return None
        if isinstance(target, ast.Subscript):
            seq, key, index = self._subscript(target, _List, "store with an unknown index")
            if index is not None:
                if isinstance(index, slice):
                    if not isinstance(value, _SEQ):
                        raise Bail("slice assignment of an unknown value")
                    self._check_alive(value)
                    items = list(value.items)
                    if index.step is not None:
                        raise Bail("extended slice")
                    seq.items[index] = items
                else:
                    try:
                        seq.items[index] = self._stable(value)
                    except IndexError:
                        raise Bail("store out of range")
                return None
            return ast.Subscript(self._value_node(seq), self._materialize(key), ast.Store())
        if isinstance(target, ast.Name) and target.id not in self.followed:
            return target
        raise Bail("a store this pass does not follow")

    def _subscript(self, node: ast.Subscript, kinds: Any, unknown: str) -> Tuple[Any, Any, Any]:
        """``node``'s value and key, evaluated, and the constant index into the value when it is
        a followed sequence of ``kinds`` (else None); ``Bail(unknown)`` for such a sequence
        indexed by anything but a constant."""
        seq = self._eval(node.value)
        key = self._eval(_key(node))
        if not isinstance(seq, kinds):
            return seq, key, None
        self._check_alive(seq)
        index = _constant_index(key)
        if index is None:
            raise Bail(unknown)
        return seq, key, index

    # -- expressions -----------------------------------------------------------------------------
    def _needs_look(self, node: ast.AST) -> bool:
        """Whether ``node`` holds a followed temporary or a list display (else it is evaluated
        as a whole, where it is written)."""
        for n in all_nodes(node):
            if type(n) is ast.Name and n.id in self.followed or type(n) is ast.List:
                return True
        return False

    def _eval(self, node: ast.expr) -> Any:
        cls = type(node)
        if cls is ast.Constant:
            return _Val(node, True, False)
        if cls is ast.Name:
            name = node.id  # type: ignore[attr-defined]
            if name in self.followed:
                self.loads[name] -= 1
                value = self.env.get(name)
                if value is None:
                    raise Bail("%s read before it is bound here" % name)
                if isinstance(value, _List) and value.escaped:
                    raise Bail("a list read after it was written out")
                return value
            if name in self.temps:
                return _Val(node, True, False)  # (assigned once, elsewhere: never changes)
            if self.plain(name) and name in self.bound_before(self.body[self.k]):
                return self._effect(_Val(node, self.last_bound.get(name, -1) < self.k, False))
            return self._effect(_Val(node, False, True))
        if closure_cell(node):
            return _Val(node, True, False)
        if cls is ast.Slice or cls is ast.UnaryOp and _constant_index(_Val(node, True, False)) is not None:
            if _constant_index(_Val(node, True, False)) is not None:
                return _Val(node, True, False)
        if not (cls is ast.List or cls is ast.Tuple) and not self._needs_look(node):
            return self._effect(_Val(node, False, True))
        if cls is ast.List and id(node) not in self.working:
            # Not worked on: written as it is, its items evaluated in place.
            vals = [self._eval(e) for e in node.elts]  # type: ignore[attr-defined]
            shown = ast.List([self._materialize(v) for v in vals], ast.Load())
            return self._effect(_Val(_copy_location(shown, node), False,
                                     any(v.effect for v in vals if isinstance(v, _Val))))
        if cls is ast.List and isinstance(node.ctx, ast.Load) or cls is ast.Tuple:  # type: ignore[attr-defined]
            items: List[Any] = []
            for e in node.elts:  # type: ignore[attr-defined]
                if isinstance(e, ast.Starred):
                    inner = self._eval(e.value)
                    if not isinstance(inner, _SEQ):
                        raise Bail("unpacking an unknown value into a display")
                    self._check_alive(inner)
                    items.extend(inner.items)
                else:
                    items.append(self._eval(e))
            if cls is ast.List:
                return _List([self._stable(v) for v in items])
            if all(not isinstance(v, _Val) or v.stable for v in items):
                return _Tuple(items)
            for v in items:
                if isinstance(v, _Val):
                    self._consume(v)
            return self._effect(_Val(ast.Tuple([self._value_node(v) for v in items], ast.Load()),
                                     False, any(isinstance(v, _Val) and v.effect for v in items)))
        if cls is ast.Subscript:
            seq, key, index = self._subscript(node, _SEQ, "an unknown index")  # type: ignore[arg-type]
            if index is not None:
                if isinstance(index, slice):
                    part = seq.items[index]
                    return _List(list(part)) if isinstance(seq, _List) else _Tuple(list(part))
                try:
                    return seq.items[index]
                except IndexError:
                    raise Bail("index out of range")
            sub = ast.Subscript(self._value_node(seq), self._materialize(key), ast.Load())
            return self._effect(_copy_location(sub, node), seq, key)
        if cls is ast.NamedExpr:
            value = self._eval(node.value)  # type: ignore[attr-defined]
            target = node.target  # type: ignore[attr-defined]
            if target.id in self.followed:
                if isinstance(value, _Val) and not value.stable:
                    self._consume(value)
                    value.node = ast.NamedExpr(ast.Name(target.id, ast.Store()), value.node)
                    self.env[target.id] = _Val(ast.Name(target.id, ast.Load()), True, False)
                    return self._effect(value)
                self.env[target.id] = value
                return value
            walrus = ast.NamedExpr(target, self._materialize(value))
            return self._effect(_Val(walrus, False, True))
        if cls is ast.Call:
            return self._effect(_Val(self._rebuild_call(node), False, True))  # type: ignore[arg-type]
        if cls is ast.Attribute:
            value = self._eval(node.value)  # type: ignore[attr-defined]
            if isinstance(value, _SEQ):
                raise Bail("an attribute of a known list")
            attr = ast.Attribute(self._materialize(value), node.attr, ast.Load())  # type: ignore[attr-defined]
            return self._effect(_Val(_copy_location(attr, node), False, True))
        raise Bail("%s holding a followed temporary or a list" % cls.__name__)

    def _rebuild_call(self, call: ast.Call) -> ast.Call:
        """``call`` with its operands evaluated in order; a known list or tuple unpacked into
        the arguments becomes its items."""
        func = self._eval(call.func)
        args: List[Tuple[bool, Any]] = []
        for a in call.args:
            if isinstance(a, ast.Starred):
                args.append((True, self._eval(a.value)))
            else:
                args.append((False, self._eval(a)))
        keywords = [(kw.arg, self._eval(kw.value)) for kw in call.keywords]
        # (nodes are built once every operand is evaluated: one saved in a temporary on the way
        # is written as that temporary)
        arg_nodes: List[ast.expr] = []
        for starred, v in args:
            if starred and isinstance(v, _SEQ):
                self._check_alive(v)
                arg_nodes.extend(self._materialize(item) for item in v.items)
            elif starred:
                arg_nodes.append(ast.Starred(self._materialize(v), ast.Load()))
            else:
                arg_nodes.append(self._materialize(v))
        new = ast.Call(self._materialize(func), arg_nodes,
                       [ast.keyword(k, self._materialize(v)) for k, v in keywords])
        return _copy_location(new, call)  # type: ignore[no-any-return]

    # -- values ------------------------------------------------------------------------------------
    def _effect(self, value: Any, *operands: Any) -> _Val:
        """``value`` computed now: its operands are part of it; it waits, in order, for the
        statement that uses it (or for a list that needs it saved)."""
        if isinstance(value, ast.AST):
            value = _Val(value, False, True)  # type: ignore[arg-type]
        for v in operands:
            if isinstance(v, _Val):
                self._consume(v)
        if value.effect or not value.stable:
            self.pending.append(value)
        return value

    def _consume(self, value: _Val) -> None:
        if value in self.pending:
            self.pending.remove(value)

    def _stable(self, value: Any) -> Any:
        """``value`` as a list item: saved in a temporary (with every value computed before it
        that still waits) unless reading it later is the same."""
        if not isinstance(value, _Val) or value.stable:
            return value
        at = self.pending.index(value) if value in self.pending else len(self.pending)
        for v in self.pending[:at + 1] if value in self.pending else self.pending + [value]:
            self._spill(v)
        self.pending = self.pending[at + 1:] if value in self.pending else []
        return value

    def _spill(self, value: _Val) -> None:
        name = self.new_temp()
        stmt = ast.Assign([ast.Name(name, ast.Store())], value.node)
        _copy_location(stmt, self.body[self.k])
        self.spills.append(stmt)
        value.node = ast.Name(name, ast.Load())
        value.stable = True
        value.effect = False

    def _value_node(self, value: Any) -> ast.expr:
        if isinstance(value, _Val):
            return value.node
        return self._materialize(value)

    def _materialize(self, value: Any) -> ast.expr:
        """The expression for ``value`` where other code gets it."""
        if isinstance(value, _Val):
            self._consume(value)
            return value.node
        if isinstance(value, _List):
            self._check_alive(value)
            if self._still_referred(value):
                raise Bail("a list reaches other code while a temporary still refers to it")
            value.escaped = True
            return ast.List([self._materialize(v) for v in value.items], ast.Load())
        if isinstance(value, _Tuple):
            return ast.Tuple([self._materialize(v) for v in value.items], ast.Load())
        raise Bail("no expression for %r" % (value,))

    def _check_alive(self, value: Any) -> None:
        if isinstance(value, _List) and value.escaped:
            raise Bail("a list used after it was written out")

    def _still_referred(self, target: _List) -> bool:
        """Whether a temporary still to be read refers to ``target`` (or to a list holding it)."""
        for name, value in self.env.items():
            if self.loads.get(name, 0) > 0 and _reaches(value, target):
                return True
        return False


def _reaches(value: Any, target: _List) -> bool:
    seen: Set[int] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        if v is target:
            return True
        if isinstance(v, _SEQ) and id(v) not in seen:
            seen.add(id(v))
            todo.extend(v.items)
    return False


def _key(node: ast.Subscript) -> ast.expr:
    key = node.slice
    if isinstance(key, ast.Index):  # (3.8)
        key = key.value  # type: ignore[attr-defined]
    return key  # type: ignore[return-value]


def _constant_index(key: Any) -> Any:
    """The int or slice of ints a key stands for, or None."""
    if isinstance(key, _Val) and isinstance(key.node, ast.Constant) and type(key.node.value) is int:
        return key.node.value
    if isinstance(key, _Val) and isinstance(key.node, ast.Slice):
        parts = []
        for p in (key.node.lower, key.node.upper, key.node.step):
            if p is None or isinstance(p, ast.Constant) and p.value is None:
                parts.append(None)
            elif isinstance(p, ast.Constant) and type(p.value) is int:
                parts.append(p.value)
            elif isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.USub) \
                    and isinstance(p.operand, ast.Constant) and type(p.operand.value) is int:
                parts.append(-p.operand.value)
            else:
                return None
        return slice(*parts)
    if isinstance(key, _Val) and isinstance(key.node, ast.UnaryOp) and isinstance(key.node.op, ast.USub) \
            and isinstance(key.node.operand, ast.Constant) and type(key.node.operand.value) is int:
        return -key.node.operand.value
    return None


def _shallow_copy(node: ast.AST) -> ast.AST:
    new = type(node).__new__(type(node))
    new.__dict__.update({k: (list(v) if isinstance(v, list) else v) for k, v in node.__dict__.items()})
    return new


def _copy_location(new: Any, old: ast.AST) -> Any:
    for attr in ("_pos", "lineno", "col_offset", "end_lineno", "end_col_offset"):
        if attr in old.__dict__:
            setattr(new, attr, old.__dict__[attr])
    return new


_SIMPLE = (ast.Assign, ast.Expr, ast.Return, ast.Delete)
