"""Mutants of recompiled functions, for testing the verifier's soundness.

A mutant is the decompiled source of a function (the form :func:`pellucid.recompile` accepted)
with one behaviour-changing edit, compiled the way :func:`pellucid.recompile` compiles it.  The
edits (:data:`OPERATORS`) are those a structuring bug makes:

* ``swap``           two neighbouring statements that both call something change places;
* ``out-of-loop``    a loop body's last statement that does not break or continue moves to just
                     after the loop;
* ``into-loop``      the statement just before a loop moves to the end of its body;
* ``into-finally``   a ``try`` body's last statement moves to the start of its ``finally``;
* ``out-of-finally`` a ``finally``'s first statement moves to just after the ``try``;
* ``drop-except``    one ``except`` clause goes (the ``try`` too, when it was the only one);
* ``compare``        a comparison operator changes (``<`` to ``<=``, ``in`` to ``not in``...);
* ``move-break``     a ``break`` moves before the statement in front of it, or becomes ``continue``;
* ``negate-if``      an ``if``'s or ``while``'s test is negated;
* ``constant``       an int constant changes by one;
* ``drop-call``      an expression statement that calls something goes.

Each operator is applied at every place it fits (``limit`` mutants per function at most).  A
mutant whose source no longer compiles is dropped.  Used by ``tests/test_verify_mutation.py``
(a fast subset) and ``bench/verify_mutation.py`` (construct cases and stdlib functions).
"""
import ast
import copy
import sys
import types
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

PY = sys.version_info[:2]

if PY < (3, 9):
    import astunparse

    def _unparse(tree: ast.AST) -> str:
        return astunparse.unparse(tree)
else:
    def _unparse(tree: ast.AST) -> str:
        return ast.unparse(tree)


def _calls(node: ast.AST) -> bool:
    return any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom)) for n in ast.walk(node))


def _stmt_lists(root: ast.AST) -> Iterator[List[ast.stmt]]:
    """Every statement list inside ``root`` (bodies, else clauses, handlers...), outermost
    first, not descending into nested functions or classes."""
    todo = [root]
    while todo:
        node = todo.pop(0)
        for name in ("body", "orelse", "finalbody"):
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield value
                for s in value:
                    if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        todo.append(s)
        for h in getattr(node, "handlers", None) or []:
            yield h.body
            todo.extend(h.body)
        for c in getattr(node, "cases", None) or []:
            yield c.body
            todo.extend(c.body)


def _body_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``fn``'s body, not descending into nested functions or classes."""
    todo: List[ast.AST] = list(fn.body)  # type: ignore[attr-defined]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                      ast.Lambda)):
                todo.append(child)


_LOOPS = (ast.For, ast.While, ast.AsyncFor)
_COMPARE_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
                 ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
                 ast.Is: ast.IsNot, ast.IsNot: ast.Is}


def _op_swap(fn: ast.AST) -> Iterator[Callable[[], None]]:
    for body in _stmt_lists(fn):
        for i in range(len(body) - 1):
            a, b = body[i], body[i + 1]
            if _calls(a) and _calls(b) and not isinstance(a, _LOOPS) and not isinstance(b, _LOOPS):
                def edit(body: List[ast.stmt] = body, i: int = i) -> None:
                    body[i], body[i + 1] = body[i + 1], body[i]
                yield edit


def _jumps_out(s: ast.stmt) -> bool:
    """Whether ``s`` holds a ``break``/``continue`` of the loop around it."""
    todo: List[ast.AST] = [s]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if isinstance(node, _LOOPS + (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo.extend(node.orelse if isinstance(node, _LOOPS) else [])
            continue
        todo.extend(ast.iter_child_nodes(node))
    return False


def _op_out_of_loop(fn: ast.AST) -> Iterator[Callable[[], None]]:
    for body in _stmt_lists(fn):
        for i, s in enumerate(body):
            if not isinstance(s, _LOOPS) or len(s.body) < 2:
                continue
            movable = [k for k, t in enumerate(s.body) if not _jumps_out(t)]
            if movable:
                def edit(body: List[ast.stmt] = body, i: int = i, k: int = movable[-1]) -> None:
                    loop = body[i]
                    body.insert(i + 1, loop.body.pop(k))
                yield edit


def _op_into_loop(fn: ast.AST) -> Iterator[Callable[[], None]]:
    for body in _stmt_lists(fn):
        for i, s in enumerate(body):
            if i > 0 and isinstance(s, _LOOPS) and _calls(body[i - 1]):
                def edit(body: List[ast.stmt] = body, i: int = i) -> None:
                    moved = body.pop(i - 1)
                    body[i - 1].body.append(moved)
                yield edit


def _tries(fn: ast.AST) -> Iterator[Tuple[List[ast.stmt], int, Any]]:
    for body in _stmt_lists(fn):
        for i, s in enumerate(body):
            if isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
                yield body, i, s


def _op_into_finally(fn: ast.AST) -> Iterator[Callable[[], None]]:
    for body, i, t in _tries(fn):
        if not t.finalbody:
            continue
        inner = t.body
        if len(inner) == 1 and isinstance(inner[0], ast.Try) and not inner[0].finalbody:
            inner = inner[0].body  # (try/except/finally written as a try/except in a try)
        if len(inner) >= 2:
            def edit(t: Any = t, inner: List[ast.stmt] = inner) -> None:
                t.finalbody.insert(0, inner.pop())
            yield edit


def _op_out_of_finally(fn: ast.AST) -> Iterator[Callable[[], None]]:
    for body, i, t in _tries(fn):
        if t.finalbody:
            def edit(body: List[ast.stmt] = body, i: int = i, t: Any = t) -> None:
                moved = t.finalbody.pop(0)
                if not t.finalbody:
                    t.finalbody.append(ast.Pass())
                body.insert(i + 1, moved)
            yield edit


def _op_drop_except(fn: ast.AST) -> Iterator[Callable[[], None]]:
    for body, i, t in _tries(fn):
        for k in range(len(t.handlers)):
            def edit(body: List[ast.stmt] = body, i: int = i, t: Any = t, k: int = k) -> None:
                del t.handlers[k]
                if not t.handlers:
                    if t.finalbody:
                        t.body.extend(t.orelse)
                        t.orelse = []
                    else:
                        body[i:i + 1] = t.body + t.orelse
            yield edit


def _op_compare(fn: ast.AST) -> Iterator[Callable[[], None]]:
    for node in _body_nodes(fn):
        if isinstance(node, ast.Compare):
            for k, op in enumerate(node.ops):
                if type(op) in _COMPARE_SWAP:
                    def edit(node: ast.Compare = node, k: int = k) -> None:
                        node.ops[k] = _COMPARE_SWAP[type(node.ops[k])]()
                    yield edit


def _op_move_break(fn: ast.AST) -> Iterator[Callable[[], None]]:
    for body in _stmt_lists(fn):
        for i, s in enumerate(body):
            if isinstance(s, ast.Break):
                if i > 0:
                    def edit(body: List[ast.stmt] = body, i: int = i) -> None:
                        body[i - 1], body[i] = body[i], body[i - 1]
                    yield edit

                def edit2(body: List[ast.stmt] = body, i: int = i) -> None:
                    body[i] = ast.Continue()
                yield edit2


def _op_negate_if(fn: ast.AST) -> Iterator[Callable[[], None]]:
    for node in _body_nodes(fn):
        if isinstance(node, (ast.If, ast.While)):
            def edit(node: Any = node) -> None:
                node.test = ast.UnaryOp(ast.Not(), node.test)
            yield edit


def _op_constant(fn: ast.AST) -> Iterator[Callable[[], None]]:
    for node in _body_nodes(fn):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            def edit(node: ast.Constant = node) -> None:
                node.value = node.value + 1
            yield edit


def _op_drop_call(fn: ast.AST) -> Iterator[Callable[[], None]]:
    for body in _stmt_lists(fn):
        for i, s in enumerate(body):
            if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
                def edit(body: List[ast.stmt] = body, i: int = i) -> None:
                    body[i] = ast.Pass()
                yield edit


OPERATORS: Dict[str, Callable[[ast.AST], Iterator[Callable[[], None]]]] = {
    "swap": _op_swap, "out-of-loop": _op_out_of_loop, "into-loop": _op_into_loop,
    "into-finally": _op_into_finally, "out-of-finally": _op_out_of_finally,
    "drop-except": _op_drop_except, "compare": _op_compare, "move-break": _op_move_break,
    "negate-if": _op_negate_if, "constant": _op_constant, "drop-call": _op_drop_call,
}


class Mutant(object):
    """One edited recompiled function: ``code`` (laid out as ``pellucid.recompile``'s),
    ``bindings`` (constants without a literal form) and ``source``."""

    __slots__ = ("operator", "site", "code", "bindings", "source")

    def __init__(self, operator: str, site: int, code: types.CodeType, bindings: Dict[str, Any],
                 source: str) -> None:
        self.operator = operator
        self.site = site
        self.code = code
        self.bindings = bindings
        self.source = source


def _find_def(tree: ast.AST, name: str) -> Optional[ast.AST]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None


def mutants(func: types.FunctionType, limit: int = 40,
            operators: Optional[List[str]] = None) -> Iterator[Mutant]:
    """Mutants of ``func``'s recompiled form (see the module docstring), at most ``limit``,
    taking the operators in turn so that each gets its share."""
    from pellucid.decompiler.api import _checked_for
    from pellucid.decompiler.recompile import find_nested_code, target_name

    code = func.__code__
    try:
        checked = _checked_for(code, func)
    except Exception:  # (not recompiled at all: no mutants)
        return
    if checked.result is None:
        return
    source = checked.result.source
    bindings = checked.result.bindings
    name = target_name(code)
    per_operator: List[Iterator[Tuple[str, int, str]]] = []
    for op in operators or list(OPERATORS):
        per_operator.append(_edited_sources(source, name, op))
    made = 0
    while per_operator and made < limit:
        for it in list(per_operator):
            item = next(it, None)
            if item is None:
                per_operator.remove(it)
                continue
            op, site, text = item
            try:
                module = compile(text, code.co_filename, "exec", dont_inherit=True, optimize=0)
            except (SyntaxError, ValueError):  # (≤3.11: an edit that wrote a NUL byte)
                continue
            new = find_nested_code(module, name)
            if new is None:
                continue
            new = new.replace(co_name=code.co_name, co_flags=code.co_flags)
            yield Mutant(op, site, new, bindings, text)
            made += 1
            if made >= limit:
                return


def _edited_sources(source: str, name: str, op: str) -> Iterator[Tuple[str, int, str]]:
    tree = ast.parse(source)
    fn = _find_def(tree, name)
    if fn is None:
        return
    count = sum(1 for _ in OPERATORS[op](fn))
    for site in range(count):
        copy_tree = copy.deepcopy(tree)
        copy_fn = _find_def(copy_tree, name)
        edits = list(OPERATORS[op](copy_fn))
        edits[site]()
        ast.fix_missing_locations(copy_tree)
        try:
            text = _unparse(copy_tree)
        except Exception:
            continue
        if text != source:
            yield op, site, text


# --------------------------------------------------------------------------- judging mutants

class Judged(object):
    """A mutant of a construct case with the verifier's verdict and whether it behaves
    differently from the original on the case's inputs (None: could not be run)."""

    __slots__ = ("case", "mutant", "verdict", "behaves_differently", "note")

    def __init__(self, case: Any, mutant: Mutant, verdict: Any,
                 behaves_differently: Optional[bool], note: str = "") -> None:
        self.case = case
        self.mutant = mutant
        self.verdict = verdict
        self.behaves_differently = behaves_differently
        self.note = note

    @property
    def unsound(self) -> bool:
        """The verifier accepted a mutant that behaves differently."""
        return bool(self.behaves_differently) and bool(self.verdict.ok)


def _outcomes(case: Any, code: Optional[types.CodeType], bindings: Dict[str, Any]) -> Any:
    """Run every call of ``case`` (with the function's code replaced by ``code``) in this
    process; the comparable outcomes (see ``test_constructs._call``)."""
    import test_constructs as tc

    namespace = tc._exec_case(case)
    func = tc._resolve(namespace, case.func)
    if code is not None:
        func.__globals__.update(bindings)
        func.__code__ = code
    return [tc._call(case, namespace, func, call) for call in case.calls]


def _in_child(case: Any, code: Optional[types.CodeType], bindings: Dict[str, Any],
              timeout: float) -> Any:
    """``_outcomes`` in a forked child (a mutant may loop forever, or exit): the outcomes, or
    a string saying why there are none."""
    import os
    import pickle
    import select
    import signal

    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(rfd)
        try:
            try:
                data = pickle.dumps(("ok", _outcomes(case, code, bindings)))
            except BaseException as exc:  # (the harness itself failed, e.g. a closure size)
                data = pickle.dumps(("error", "%s: %s" % (type(exc).__name__, exc)))
            with os.fdopen(wfd, "wb") as out:
                out.write(data)
        finally:
            os._exit(0)
    os.close(wfd)
    chunks = []
    with os.fdopen(rfd, "rb") as inp:
        ready, _, _ = select.select([inp], [], [], timeout)
        if ready:
            chunks.append(inp.read())
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    os.waitpid(pid, 0)
    if not chunks or not chunks[0]:
        return "timeout"
    kind, value = pickle.loads(chunks[0])
    return value if kind == "ok" else kind + ": " + value


def judge_case(case: Any, limit: int = 40, timeout: float = 5.0,
               operators: Optional[List[str]] = None) -> List[Judged]:
    """Every mutant of the construct ``case``'s function, judged (see :class:`Judged`)."""
    import test_constructs as tc
    from pellucid.verify import check_equivalent

    namespace = tc._exec_case(case)
    func = tc._resolve(namespace, case.func)
    want = _in_child(case, None, {}, timeout)
    if isinstance(want, str):
        return []
    out = []
    for m in mutants(func, limit, operators):
        verdict = check_equivalent(func.__code__, m.code, m.bindings)
        got = _in_child(case, m.code, m.bindings, timeout)
        if isinstance(got, str) and got.startswith("error"):
            out.append(Judged(case, m, verdict, None, got))
        else:
            out.append(Judged(case, m, verdict, got != want, got if isinstance(got, str) else ""))
    return out
