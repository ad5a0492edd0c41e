"""Functions, lambdas and classes: ``MAKE_FUNCTION`` and ``__build_class__`` back to definitions.

Also where a code object's signature (``/``, ``*``, defaults, annotations) and a function body's
declarations (docstring, ``global``, ``nonlocal``) are rebuilt.
"""
import ast
import dis
import inspect
import types
from typing import Any, Dict, List, Optional, Sequence, Set

from pellucid.bytecode.features import (AST_TYPE_PARAMS, CO_HAS_DOCSTRING,
                                        MAKE_FUNCTION_POPS_QUALNAME)
from pellucid.bytecode.instruction import Instr
from pellucid.bytecode.normalize import raw_instructions
from pellucid.decompiler import markers as M
from pellucid.decompiler.errors import StructureError
from pellucid.decompiler.source_lines import at_first_line
from pellucid.decompiler.tree_nodes import CONTEXTS, child_nodes

_AST = ast.AST
CO_VARARGS = inspect.CO_VARARGS
CO_VARKEYWORDS = inspect.CO_VARKEYWORDS
CO_COROUTINE = inspect.CO_COROUTINE
CO_ASYNC_GENERATOR = inspect.CO_ASYNC_GENERATOR
CO_GENERATOR = inspect.CO_GENERATOR
_FRAME_KINDS = CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR
_RETURN_GENERATOR = dis.opmap.get("RETURN_GENERATOR")


def kind_flags(code: types.CodeType) -> int:
    """``co_flags`` as far as they decide what calling the code makes.

    From 3.11 a call makes a generator, coroutine or async generator only by running the
    RETURN_GENERATOR instruction; a code object that has the flag but not the instruction (made
    with ``code.replace(co_flags=...)``) runs as a plain function, so it is decompiled as one.
    """
    flags = code.co_flags
    if _RETURN_GENERATOR is None or not flags & _FRAME_KINDS:
        return flags
    raw = code.co_code
    if any(raw[i] == _RETURN_GENERATOR for i in range(0, len(raw), 2)):
        return flags
    return flags & ~_FRAME_KINDS
_CLASS_BOOKKEEPING = ("__module__", "__qualname__", "__firstlineno__", "__static_attributes__",
                      "__classcell__", "__classdictcell__")


def private_name(class_name: str, name: str) -> str:
    """``name`` as the compiler stores it inside ``class <class_name>:`` (name mangling).

    >>> private_name("_Node", "__next"), private_name("A", "__init__"), private_name("__", "__x")
    ('_Node__next', '__init__', '__x')
    """
    if not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    stripped = class_name.lstrip("_")
    return "_%s%s" % (stripped, name) if stripped else name


def _demangle_attributes(body: List[ast.stmt], class_name: str, static: Optional[Set[str]]) -> None:
    """Write ``obj._Name__x`` as ``obj.__x`` in the code of ``class Name`` (its methods too):
    the compiler mangles the latter into the former there, so the bytecode is the same.

    3.13 also records the names a method assigns on ``self`` as written (the class's
    ``__static_attributes__``, given as ``static``): a mangled name recorded as such was
    written mangled, and stays so.  Nested classes mangle with their own name: not entered.
    """
    prefix = "_" + class_name.lstrip("_") + "__"
    if prefix == "___":
        return  # a class named only with underscores mangles nothing
    work: List[ast.AST] = list(body)
    while work:
        node = work.pop()
        if isinstance(node, ast.ClassDef):
            # (its bases, keywords and decorators are read in this class's code)
            work.extend(node.bases)
            work.extend(node.keywords)
            work.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Attribute):
            attr = node.attr
            if attr.startswith(prefix) and (static is None or attr not in static):
                plain = attr[len(prefix) - 2:]
                if private_name(class_name, plain) == attr:
                    node.attr = plain
        work.extend(child_nodes(node))


class PendingClass(M.Marker):
    """A ``class`` statement whose name binding (STORE) has not been seen yet."""


class Decorated(M.Marker):
    """``decorator(function_or_class)``: a decorated definition until it is stored by name."""

    def __init__(self, decorator: ast.expr, inner: M.Marker) -> None:
        super().__init__(inner)
        self.decorator = decorator


def build_arguments(code: types.CodeType, defaults: List[ast.expr],
                    kwdefaults: Dict[str, ast.expr],
                    annotations: Dict[str, ast.expr]) -> ast.arguments:
    """``ast.arguments`` matching ``code``'s argument layout.

    >>> ast.unparse(ast.arguments(**vars(build_arguments((lambda a, /, b=1, *c, d, **e: 0).__code__,
    ...     [ast.Constant(1)], {}, {})))) if hasattr(ast, 'unparse') else 'a, /, b=1, *c, d, **e'
    'a, /, b=1, *c, d, **e'
    """
    names = code.co_varnames
    npos = code.co_argcount
    nposonly = getattr(code, "co_posonlyargcount", 0)
    nkw = code.co_kwonlyargcount

    def arg(name: str) -> ast.arg:
        if not name.isidentifier():
            # ``.0``, a comprehension's iterator, when its code is decompiled on its own: the
            # spelling the fallback gives that local in the body
            from pellucid.decompiler.fallback import _local
            return ast.arg(_local(name), None)
        return ast.arg(name, annotations.get(name))

    posonly = [arg(n) for n in names[:nposonly]]
    regular = [arg(n) for n in names[nposonly:npos]]
    kwonly = [arg(n) for n in names[npos:npos + nkw]]
    k = npos + nkw
    vararg = kwarg = None
    if code.co_flags & CO_VARARGS:
        vararg = arg(names[k])
        k += 1
    if code.co_flags & CO_VARKEYWORDS:
        kwarg = arg(names[k])
    kw_defaults: List[Optional[ast.expr]] = [kwdefaults.get(a.arg) for a in kwonly]
    return ast.arguments(posonlyargs=posonly, args=regular, vararg=vararg, kwonlyargs=kwonly,
                         kw_defaults=kw_defaults, kwarg=kwarg, defaults=list(defaults))


class FunctionStub(M.FunctionStub):
    """MAKE_FUNCTION's result: code plus the default/annotation/closure expressions."""

    #: PEP 695 type parameters (``ast.TypeVar``...), set by pellucid.decompiler.type_params
    type_params: Sequence[ast.AST] = ()

    def __init__(self, code: types.CodeType) -> None:
        super().__init__(code)
        self.defaults: List[ast.expr] = []
        self.kwdefaults: Dict[str, ast.expr] = {}
        self.annotations: Dict[str, ast.expr] = {}

    def set_attribute(self, flag: int, v: Any) -> None:
        if flag == 1:
            if isinstance(v, ast.Tuple):
                self.defaults = list(v.elts)
            else:
                raise StructureError("defaults are not a tuple display")
        elif flag == 2:
            if isinstance(v, ast.Dict) and all(isinstance(k, ast.Constant) for k in v.keys):
                self.kwdefaults = {k.value: x for k, x in zip(v.keys, v.values)}
            else:
                raise StructureError("keyword defaults are not a dict display")
        elif flag == 4:
            if isinstance(v, ast.Tuple):  # 3.10+: flat (name, value, ...) tuple
                elts = v.elts
                self.annotations = {k.value: x for k, x in zip(elts[0::2], elts[1::2])}
            elif isinstance(v, ast.Dict):
                self.annotations = {k.value: x for k, x in zip(v.keys, v.values)}
            else:
                raise StructureError("annotations are not a display")


class FunctionBuilder:
    """Mixin over the body decompiler."""

    def op_MAKE_FUNCTION(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if MAKE_FUNCTION_POPS_QUALNAME:
            stack.pop()  # qualified name
        code_node = stack.pop()
        if not isinstance(code_node, ast.Constant) or not isinstance(code_node.value, types.CodeType):
            raise StructureError("MAKE_FUNCTION without a constant code object")
        stub = FunctionStub(code_node.value)
        for flag in (8, 4, 2, 1):
            if arg & flag:
                v = stack.pop()
                if flag != 8:
                    stub.set_attribute(flag, v)
        if arg & 4:
            self._spell_future_annotations(stub)
        stack.append(stub)

    def _spell_future_annotations(self, stub: FunctionStub) -> None:
        """Under ``from __future__ import annotations`` in the source written, the texts the
        flag stored as annotations become the expressions they spell (a string literal would be
        stored quoted)."""
        from pellucid.decompiler.annotations_setup import spelled_annotations
        spelled = spelled_annotations(stub.annotations, stub.value, self.consts)
        if spelled is None:
            raise StructureError("an annotation of %s has no source under the annotations future"
                                 % stub.value.co_name)
        stub.annotations = spelled

    def op_SET_FUNCTION_ATTRIBUTE(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        func = stack.pop()
        v = stack.pop()
        if not isinstance(func, FunctionStub):
            raise StructureError("SET_FUNCTION_ATTRIBUTE on a non-function")
        if arg == 16:  # 3.14+: the function's ``__annotate__``
            from pellucid.decompiler.deferred_annotations import function_annotations, is_annotate
            if not is_annotate(v):
                raise StructureError("__annotate__ is not a compiler-made annotation function")
            func.annotations = function_annotations(self, v)
            self._spell_future_annotations(func)
        elif arg != 8:
            func.set_attribute(arg, v)
            if arg == 4:
                self._spell_future_annotations(func)
        stack.append(func)

    # -- nested code ----------------------------------------------------------------------------
    def nested_body(self, code: types.CodeType, comprehension: bool = False) -> List[ast.stmt]:
        from pellucid.decompiler.fallback import body_or_fallback  # fallback when no structured form
        stmts, sub = body_or_fallback(code, self.consts, comprehension=comprehension)
        if comprehension:
            return stmts
        return finish_function_body(code, stmts, sub)

    def function_expr(self, stub: "FunctionStub") -> ast.expr:
        code = stub.value
        if code.co_name != "<lambda>":
            raise StructureError("function %s used as a value" % code.co_name)
        # (the body as decompiled: a function's finishing touches would drop ``return None``,
        # which is the whole of ``lambda: None``, and take a leading constant for a docstring)
        from pellucid.decompiler.fallback import body_or_fallback
        body, _ = body_or_fallback(code, self.consts)
        value = _one_expression(body)
        if value is None:
            raise StructureError("lambda body is not a single expression")
        node = ast.Lambda(build_arguments(code, stub.defaults, stub.kwdefaults, {}), value)
        return at_first_line(node, code)

    def function_def(self, stub: "FunctionStub", name: str, decorators: List[ast.expr]) -> ast.stmt:
        code = stub.value
        body = self.nested_body(code)
        args = build_arguments(code, stub.defaults, stub.kwdefaults, stub.annotations)
        returns = stub.annotations.get("return")
        kind = ast.AsyncFunctionDef if kind_flags(code) & (CO_COROUTINE | CO_ASYNC_GENERATOR) else ast.FunctionDef
        node = kind(name, args, body or [ast.Pass()], decorators, returns)
        if AST_TYPE_PARAMS:
            node.type_params = list(stub.type_params)
        return at_first_line(node, code)

    def class_def(self, stub: "FunctionStub", name: str, bases: List[ast.expr],
                  keywords: List[ast.keyword], statement_name: Optional[str] = "") -> ast.ClassDef:
        """``class <name>(bases, keywords):`` around the decompiled body of ``stub``.

        ``statement_name``: the name of the ``class`` statement the body will really be written
        under, which decides how the recompile mangles private names (default ``name``; None
        when unknown: then no ``def __f`` is written for a stored ``_C__f``)."""
        code = stub.value
        from pellucid.decompiler.fallback import body_or_fallback  # fallback when no structured form
        mangle_as = name if statement_name == "" else statement_name
        stmts, sub = body_or_fallback(code, self.consts, function=False, class_name=mangle_as)
        body: List[ast.stmt] = []
        static: Optional[Set[str]] = None
        for s in stmts:
            _drop_exit_bookkeeping(s)
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                tname = s.targets[0].id
                if tname == "__static_attributes__" and isinstance(s.value, ast.Tuple):
                    static = {e.value for e in s.value.elts if isinstance(e, ast.Constant)}
                if tname in _CLASS_BOOKKEEPING:
                    continue
                if tname == "__type_params__" and isinstance(s.value, ast.Name) \
                        and s.value.id == ".type_params":
                    continue  # a generic class's parameters (pellucid.decompiler.type_params)
                if tname == "__doc__" and not body and isinstance(s.value, ast.Constant):
                    body.append(ast.Expr(s.value))
                    continue
            if isinstance(s, ast.Return):
                continue
            body.append(s)
        if mangle_as is not None:
            _demangle_attributes(body, mangle_as, static)
        decls = sub.declarations()
        from pellucid.decompiler.class_scope import unbind_own_names
        body = unbind_own_names(body)
        node = ast.ClassDef(name, bases, keywords, decls + body or [ast.Pass()], [])
        if AST_TYPE_PARAMS:
            node.type_params = []
        return at_first_line(node, code)

    def declarations(self) -> List[ast.stmt]:
        out: List[ast.stmt] = []
        if self.globals_:
            out.append(ast.Global(sorted(self.globals_)))
        if self.nonlocals:
            out.append(ast.Nonlocal(sorted(self.nonlocals)))
        return out

    # -- definitions as statements -------------------------------------------------------------------
    def special_call(self, func: Any, args: List[Any], kwnames: tuple, stack: List[Any],
                     out: List[ast.stmt]) -> bool:
        if isinstance(func, M.ClassBuilder):
            if len(args) < 2 or not isinstance(args[0], FunctionStub):
                raise StructureError("__build_class__ without a class body")
            nkw = len(kwnames)
            pos = args[:len(args) - nkw]
            name_node = pos[1]
            if not isinstance(name_node, ast.Constant):
                raise StructureError("class name is not a constant")
            bases = [self.value(b) for b in pos[2:]]
            keywords = [ast.keyword(k, self.value(v)) for k, v in zip(kwnames, args[len(args) - nkw:])]
            node = self.class_def(args[0], name_node.value, bases, keywords)
            stack.append(PendingClass(node))
            return True
        if isinstance(func, FunctionStub) and func.value.co_name.startswith("<generic parameters of "):
            from pellucid.decompiler.type_params import generic_definition  # (3.12+ only)
            stack.append(generic_definition(self, func, args, kwnames))
            return True
        if len(args) == 1 and not kwnames and (isinstance(args[0], (PendingClass, Decorated)) or (
                isinstance(args[0], FunctionStub) and args[0].value.co_name != "<lambda>")):
            stack.append(Decorated(self.value(func), args[0]))
            return True
        if isinstance(func, FunctionStub) and func.value.co_name in (
                "<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>") and len(args) == 1 and not kwnames:
            stack.append(self.comprehension_from_code(func.value, args[0]))
            return True
        return False

    def definition_statement(self, target: ast.expr, v: Any) -> Optional[ast.stmt]:
        """``def``/``class`` when a (decorated) function or class is bound to its own name."""
        if not isinstance(target, ast.Name):
            return None
        decorators: List[ast.expr] = []
        node = v
        while isinstance(node, Decorated):
            decorators.append(node.decorator)
            node = node.value
        if isinstance(node, FunctionStub) and self._own_name(node.value.co_name, target.id):
            return self.function_def(node, node.value.co_name, decorators)
        if isinstance(node, PendingClass) and self._own_name(node.value.name, target.id):
            cls = node.value
            cls.decorator_list = decorators
            return cls
        return None


    def _own_name(self, defined: str, stored: str) -> bool:
        """Whether ``def <defined>`` (or ``class``) in this body binds the name ``stored``: the
        same name, or in a class body a private name the compiler mangled (``def __f`` in
        ``class A`` stores ``_A__f``)."""
        if defined == stored:
            return True
        class_name = self.class_name  # type: ignore[attr-defined]
        return class_name is not None and defined != private_name(class_name, defined) == stored


def _one_expression(body: List[ast.stmt]) -> Optional[ast.expr]:
    """The expression a lambda body returns: one ``return``, or ``if c: return a`` before
    ``return b`` -- 3.14+ gives each arm of ``lambda x: a if c else b`` its own return -- read
    back as ``a if c else b`` (the same code); ``None`` for any other body."""
    if len(body) == 1 and isinstance(body[0], ast.Return):
        return body[0].value if body[0].value is not None else ast.Constant(None)
    if not body or not isinstance(body[0], ast.If) or (body[0].orelse and len(body) > 1):
        return None
    first = body[0]
    then = _one_expression(first.body)
    orelse = _one_expression(list(first.orelse) if first.orelse else body[1:])
    if then is None or orelse is None:
        return None
    return ast.IfExp(first.test, then, orelse)


def _returns_none(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.Return):
        return False
    v = stmt.value
    return v is None or (isinstance(v, ast.Constant) and v.value is None)


def drop_tail_returns(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """A function body without the ``return None`` statements that end it anyway: the last
    statement of a block that is itself last (the arms of a last ``if``, the body of a last
    ``with``, the body and clauses of a last ``try``), where it has statements before it.

    3.10+ copy the function's closing ``return None`` into every path that reaches it, so each
    reads as a ``return`` written there.  Falling off the end returns the same ``None`` after
    the same ``__exit__`` calls and ``finally`` bodies; not so from a loop (the return also
    leaves it) or from a ``try`` body with an ``else`` clause (the return skips it).

    >>> body = ast.parse("with m:\\n    f()\\n    return None").body
    >>> len(drop_tail_returns(body)[0].body)
    1
    """
    if not stmts:
        return stmts
    if len(stmts) > 1 and _returns_none(stmts[-1]):
        return drop_tail_returns(stmts[:-1])
    last = stmts[-1]
    if isinstance(last, ast.If):
        last.body = drop_tail_returns(last.body)
        last.orelse = drop_tail_returns(last.orelse)
    elif isinstance(last, (ast.With, ast.AsyncWith)):
        last.body = drop_tail_returns(last.body)
    elif isinstance(last, ast.Try) or type(last).__name__ == "TryStar":
        if not last.orelse:  # type: ignore[attr-defined]
            last.body = drop_tail_returns(last.body)  # type: ignore[attr-defined]
        last.orelse = drop_tail_returns(last.orelse)  # type: ignore[attr-defined]
        for h in last.handlers:  # type: ignore[attr-defined]
            h.body = drop_tail_returns(h.body)
    elif type(last).__name__ == "Match":
        for case in last.cases:  # type: ignore[attr-defined]
            case.body = drop_tail_returns(case.body)
    return stmts


def _unused_free_variables(code: types.CodeType, stmts: List[ast.stmt]) -> List[str]:
    """``code``'s free variables the statements never name (``__class__`` and the like, which
    the compiler makes free for ``super()``, left out)."""
    if not code.co_freevars:
        return []
    named = set()
    for node in ast.walk(ast.Module(stmts, [])):
        if isinstance(node, ast.Name):
            named.add(node.id)
        elif isinstance(node, (ast.Nonlocal, ast.Global)):
            named.update(node.names)
    return [n for n in code.co_freevars if n not in named and not n.startswith("__class")]


def _is_bookkeeping(s: ast.stmt) -> bool:
    return isinstance(s, ast.Assign) and len(s.targets) == 1 and \
        isinstance(s.targets[0], ast.Name) and s.targets[0].id in _CLASS_BOOKKEEPING


def _drop_exit_bookkeeping(s: ast.stmt) -> None:
    """The compiler's own stores at each exit of a class body (3.13's
    ``__static_attributes__``) end the arms of an ``if`` the body ends in: not written, the
    class statement makes them."""
    if isinstance(s, ast.If):
        for arm in (s.body, s.orelse):
            while arm and _is_bookkeeping(arm[-1]):
                arm.pop()
            if arm:
                _drop_exit_bookkeeping(arm[-1])
        if not s.body:
            s.body.append(ast.Pass())


def finish_function_body(code: types.CodeType, stmts: List[ast.stmt], sub: Any,
                         nested: bool = True) -> List[ast.stmt]:
    """Docstring, ``global``/``nonlocal`` declarations, and no redundant final ``return``.

    ``nested``: the function is defined inside another one (not the code being decompiled),
    so its free variables can be declared ``nonlocal``."""
    if stmts and isinstance(stmts[-1], ast.Return) and stmts[-1].value is None:
        stmts = stmts[:-1]
    stmts = drop_tail_returns(stmts)
    head: List[ast.stmt] = []
    doc = docstring_of(code)
    if doc is not None:
        head.append(ast.Expr(ast.Constant(doc)))
    head.extend(sub.declarations())
    # A local the source does not bind (``A: int`` after ``return A``; an assignment the compiler
    # removed, ``if 0: A = 1``; one in a handler that cannot run) must stay local: without a
    # binding the recompiled function would read a global (NameError for UnboundLocalError).
    # An annotation of a simple name in a function is never evaluated and compiles to nothing.
    head.extend(ast.AnnAssign(ast.Name(n, ast.Store()), ast.Name("object", ast.Load()), None, 1)
                for n in unassigned_locals(code, stmts))
    unused = _unused_free_variables(code, head + stmts) if nested else []
    if unused:
        # A free variable no instruction uses (``def f(): nonlocal a``) is still part of the
        # function's closure.
        head.append(ast.Nonlocal(unused))
    body = head + stmts
    flags = kind_flags(code)
    if flags & CO_ASYNC_GENERATOR and _returns_value(body):
        # Only hand-made bytecode gets here (<= 3.10: the flag alone makes an async generator).
        from pellucid.errors import DecompileError

        raise DecompileError("%s is flagged as an async generator but returns a value; no Python "
                             "source has that form" % code.co_name)
    if flags & (CO_GENERATOR | CO_ASYNC_GENERATOR) and not _yields(body):
        # ``while False: yield`` leaves a generator without a yield instruction; the dead
        # yield keeps the flag (the compiler drops the code, not the flag).
        body.append(ast.If(ast.Constant(False), [ast.Expr(ast.Yield(None))], []))
    return body


def unassigned_locals(code: types.CodeType, body: List[ast.stmt]) -> List[str]:
    """Local (and cell) variables the instructions of ``code`` use that are not parameters or
    free variables (Dynamo's resume functions have local slots named like their free
    variables; declaring one would make the free variable local) and that ``body`` (its
    decompiled statements) never binds, in ``co_varnames``/``co_cellvars``
    order.  (The bytecode may bind them only in code that never runs, which is not written.)

    >>> def f():
    ...     return A
    ...     A: int
    >>> unassigned_locals(f.__code__, [ast.Return(ast.Name("A", ast.Load()))])
    ['A']
    """
    flags = code.co_flags
    nargs = code.co_argcount + code.co_kwonlyargcount + bool(flags & CO_VARARGS) \
        + bool(flags & CO_VARKEYWORDS)
    candidates = [n for n in code.co_varnames[nargs:] + tuple(
        n for n in code.co_cellvars if n not in code.co_varnames)
        if n not in code.co_varnames[:nargs] and n not in code.co_freevars
        and isinstance(n, str) and n.isidentifier()]
    if not candidates:
        return []
    used: Set[str] = set()
    for ins in raw_instructions(code):
        if ins.opcode in _LOCAL_OR_FREE_OPS:
            used.update(ins.argval if isinstance(ins.argval, tuple) else (ins.argval,))
    candidates = [n for n in candidates if n in used]
    if not candidates:
        return []  # (most functions: no walk of the body)
    bound = _bound_names(body, set(candidates))
    return [n for n in candidates if n not in bound]


# (dis's lists as one set: tested for every instruction of the code)
_LOCAL_OR_FREE_OPS = frozenset(dis.haslocal) | frozenset(dis.hasfree)

# Node types (exactly these, not subclasses) that bind no name themselves and are no scope.
_BINDS_NOTHING = frozenset([ast.Attribute, ast.Call, ast.Constant, ast.Load, ast.Subscript, ast.Tuple,
                            ast.List, ast.Assign, ast.Expr, ast.BinOp, ast.UnaryOp, ast.Compare,
                            ast.keyword, ast.Return, ast.If, ast.BoolOp, ast.Slice, ast.Dict])


def _bound_names(body: List[ast.stmt], wanted: Optional[Set[str]] = None) -> Set[str]:
    """Names ``body`` binds in its own scope -- and, to be safe, the targets of comprehensions
    (3.12+ keeps an inlined comprehension's variables among the function's locals, though the
    source binds them in the comprehension's scope).

    ``wanted``: the caller asks only which of these names are bound; the walk stops once a
    plain name binding has been found for each (the set returned may then lack others).  It
    begins with the first statement, where a function usually binds its locals."""
    bound: Set[str] = set()
    work: List[ast.AST] = list(reversed(body))  # (popped from the end: the first statement first)
    missing = set(wanted) if wanted else None
    append, extend, contexts = work.append, work.extend, CONTEXTS
    while work:
        node = work.pop()
        cls = type(node)
        if cls in contexts:
            continue  # (a third of the nodes: no children, no name)
        if cls is ast.Name and type(node.ctx) in CONTEXTS:
            # (the commonest node: its only child is its context, which binds nothing)
            if type(node.ctx) is not ast.Load:
                bound.add(node.id)
                if missing is not None and node.id in missing:
                    missing.discard(node.id)
                    if not missing:
                        return bound
            continue
        if cls in _BINDS_NOTHING:
            pass  # the common nodes: none of the tests below applies, only their children count
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)  # its body is another scope; its decorators, defaults are not
            work.extend(node.decorator_list)
            if not isinstance(node, ast.ClassDef):
                work.append(node.args)
            else:
                work.extend(node.bases + [k.value for k in node.keywords])
            continue
        elif isinstance(node, ast.Lambda):
            work.append(node.args)
            continue
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif type(node).__name__ in ("MatchAs", "MatchStar") and getattr(node, "name", None):
            bound.add(node.name)  # type: ignore[attr-defined]
        elif type(node).__name__ == "MatchMapping" and getattr(node, "rest", None):
            bound.add(node.rest)  # type: ignore[attr-defined]
        # (child_nodes inlined, less the contexts, which would only be popped and skipped:
        # this runs for every node of the function's body)
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                extend([v for v in value if isinstance(v, _AST)])
            elif isinstance(value, _AST) and type(value) not in contexts:
                append(value)
    return bound


def _returns_value(stmts: List[ast.stmt]) -> bool:
    """Whether the body (not nested functions or classes) has ``return <value>``."""
    work: List[ast.AST] = list(stmts)
    while work:
        node = work.pop()
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.stmt):
            work.extend(ast.iter_child_nodes(node))
    return False


def _yields(stmts: List[ast.stmt]) -> bool:
    """Whether the body (not nested functions or classes) yields."""
    work: List[ast.AST] = list(stmts)
    while work:
        node = work.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
                             ast.GeneratorExp)):
            continue
        work.extend(ast.iter_child_nodes(node))
    return False


def docstring_of(code: types.CodeType) -> Optional[str]:
    if code.co_name in ("<lambda>", "<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>", "<module>"):
        return None
    if CO_HAS_DOCSTRING:
        if not code.co_flags & CO_HAS_DOCSTRING:
            return None
    consts = code.co_consts
    if consts and isinstance(consts[0], str):
        return consts[0]
    return None
