"""3.14+ deferred annotations (PEP 649/749): ``__annotate__`` functions back into annotations.

From 3.14 annotations are not evaluated where they are written.  The compiler puts them in a
function, ``__annotate__(format)``, that builds the dict when asked:

* a ``def``'s annotations: ``SET_FUNCTION_ATTRIBUTE 16`` gives the function its
  ``__annotate__``, which returns a dict display ``{'x': int, 'return': str}``;
* a class body stores ``__annotate_func__``, a module ``__annotate__``; theirs fill a dict one
  annotation at a time (``d['x'] = int``).  An annotation inside a compound statement (every one
  in a module) only counts once the statement has run: the body adds its index to the set
  ``__conditional_annotations__`` there (``__conditional_annotations__.add(0)``), and the
  function tests ``0 in __conditional_annotations__``.

The annotated statement itself compiles to its plain store (``x: int = 1`` to ``x = 1``) or to
nothing (``x: int``).  Decompiling, the entries of ``__annotate__`` are decoded
(:func:`annotate_entries`) and written back as annotated statements
(:func:`merge_annotations`): at their index's mark when conditional, else in order at the top
level of the class body, joined to a plain store of the same name where one is in the right
place.  Recompiled, CPython makes the same ``__annotate__`` and the same body again.
"""
import ast
import types
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from pellucid.decompiler.errors import StructureError

if TYPE_CHECKING:
    from pellucid.decompiler.functions import FunctionStub

#: names a class or module body binds for deferred annotations, with no source of their own
BOOKKEEPING = ("__annotate__", "__annotate_func__", "__conditional_annotations__")
CONDITIONAL_SET = "__conditional_annotations__"

Entry = Tuple[str, ast.expr, Optional[int]]  # (name, annotation, index of its mark or None)


class AnnotationMark(ast.stmt):
    """Where ``__conditional_annotations__.add(index)`` ran: the place of annotation ``index``."""

    _fields = ("index",)

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index


class AnnotationsDef(ast.stmt):
    """A class or module body's ``__annotate__`` function, decoded (``entries``)."""

    _fields = ()

    def __init__(self, entries: List[Entry]) -> None:
        super().__init__()
        self.entries = entries


def is_annotate(v: Any) -> bool:
    """Whether ``v`` (a stack value) is a compiler-made ``__annotate__`` function."""
    from pellucid.decompiler.functions import FunctionStub
    return isinstance(v, FunctionStub) and v.value.co_name == "__annotate__" \
        and v.value.co_varnames[:1] == ("format",) and v.value.co_argcount == 1


def _instructions_after_format_check(dec: Any, code: types.CodeType) -> Tuple[Any, List[Any], int]:
    """A decompiler for ``code`` (an ``__annotate__`` function), its instructions, and the index
    after ``if format > 2: raise NotImplementedError``."""
    sub = _annotate_decompiler()(code, dec.consts)
    ins = sub.instrs
    ops = [(i.op, i.arg) for i in ins[:6]]
    if len(ops) < 6 or ops[0] != ("LOAD_FAST", "format") or ops[1] != ("LOAD_CONST", 2) \
            or ops[2] != ("COMPARE", ">") or ops[3][0] != "POP_JUMP_IF_FALSE" \
            or ops[4] != ("LOAD_BUILTIN", "NotImplementedError") or ops[5] != ("RAISE_VARARGS", 1) \
            or ins[3].target != 6:
        raise StructureError("__annotate__ does not start with its format check")
    return sub, ins, 6


_ANNOTATE_DECOMPILER: Any = None


def _annotate_decompiler() -> Any:
    """A body decompiler for ``__annotate__`` functions: ``*args: *Ts`` is ``UNPACK_SEQUENCE 1``
    of the value, put into the dict at once (an item nothing else uses): read as ``*Ts``."""
    global _ANNOTATE_DECOMPILER
    if _ANNOTATE_DECOMPILER is None:
        from pellucid.decompiler.body import BodyDecompiler

        class AnnotateBody(BodyDecompiler):
            def op_UNPACK_SEQUENCE(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Any) -> None:
                nxt = self.instrs[ins.index + 1] if ins.index + 1 < len(self.instrs) else None
                if arg == 1 and nxt is not None and (nxt.op == "BUILD_MAP" or (
                        nxt.op == "LOAD_CONST" and isinstance(nxt.arg, str))):
                    stack.append(ast.Starred(self.value(stack.pop()), ast.Load()))
                    return
                super().op_UNPACK_SEQUENCE(arg, stack, out, ins)

        _ANNOTATE_DECOMPILER = AnnotateBody
    return _ANNOTATE_DECOMPILER


def _evaluate(sub: Any, instrs: List[Any]) -> ast.expr:
    """The expression computed by ``instrs`` (straight-line code pushing one value)."""
    stack: List[Any] = []
    out: List[ast.stmt] = []
    for ins in instrs:
        if ins.target is not None or ins.op in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
            raise StructureError("annotation with control flow")
        sub.step(ins, stack, out)
    if out or len(stack) != 1:
        raise StructureError("annotation is not one expression")
    return sub.value(stack[0])  # type: ignore[no-any-return]


def function_annotations(dec: Any, stub: "FunctionStub") -> Dict[str, ast.expr]:
    """A ``def``'s annotations from its ``__annotate__`` (which returns a dict display).

    For ``def g(a: int) -> str`` (3.14+) the function returns ``{'a': int, 'return': str}``,
    and this gives ``{'a': Name('int'), 'return': Name('str')}``.
    """
    code = stub.value
    sub, ins, start = _instructions_after_format_check(dec, code)
    if len(ins) < start + 2 or ins[-1].op != "RETURN_VALUE" or ins[-2].op != "BUILD_MAP" \
            or any(i.target is not None for i in ins[start:]):
        # (a conditional expression in an annotation: let the structurer read the body)
        body = sub.statements()
        ret = body[-1] if body else None
        if not (len(body) == 2 and isinstance(ret, ast.Return) and isinstance(ret.value, ast.Dict)):
            raise StructureError("__annotate__ of a function does not return a dict display")
        d = ret.value
    else:
        stack: List[Any] = []
        out: List[ast.stmt] = []
        for i in ins[start:-1]:
            if i.target is not None:
                raise StructureError("annotation with control flow")
            sub.step(i, stack, out)
        if out or len(stack) != 1 or not isinstance(stack[0], ast.Dict):
            raise StructureError("__annotate__ of a function does not return a dict display")
        d = stack[0]
    if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in d.keys):
        raise StructureError("__annotate__ keys are not names")
    return {k.value: v for k, v in zip(d.keys, d.values)}  # type: ignore[union-attr]


def annotate_entries(dec: Any, stub: "FunctionStub") -> List[Entry]:
    """The annotations a class or module body's ``__annotate__`` adds, in order."""
    code = stub.value
    sub, ins, k = _instructions_after_format_check(dec, code)
    if k >= len(ins) or ins[k].op != "BUILD_MAP" or ins[k].arg != 0 or ins[-1].op != "RETURN_VALUE":
        raise StructureError("__annotate__ of a body does not fill a dict")
    k += 1
    end = len(ins) - 1
    entries: List[Entry] = []
    while k < end:
        cond: Optional[int] = None
        skip_to: Optional[int] = None
        if k + 3 < end and ins[k].op == "LOAD_CONST" and type(ins[k].arg) is int \
                and ins[k + 1].op in ("LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME") \
                and ins[k + 1].arg == CONDITIONAL_SET and ins[k + 2].op == "COMPARE" \
                and ins[k + 2].arg == "in" and ins[k + 3].op == "POP_JUMP_IF_FALSE":
            cond, skip_to = ins[k].arg, ins[k + 3].target
            k += 4
        j = k
        while j + 2 < end and not (ins[j].op == "COPY" and ins[j].arg == 2 and ins[j + 1].op == "LOAD_CONST"
                                   and ins[j + 2].op == "STORE_SUBSCR"):
            j += 1
        if j + 2 >= end:
            raise StructureError("__annotate__ entry without its store")
        name = ins[j + 1].arg
        if not isinstance(name, str):
            raise StructureError("__annotate__ key is not a name")
        entries.append((name, _evaluate(sub, ins[k:j]), cond))
        k = j + 3
        if skip_to is not None and skip_to != k:
            raise StructureError("conditional annotation does not skip exactly its entry")
    return entries


def _statement_lists(stmts: List[ast.stmt]) -> List[List[ast.stmt]]:
    out = [stmts]
    for st in stmts:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(st, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                out.extend(_statement_lists(inner))
        for h in getattr(st, "handlers", None) or []:
            out.extend(_statement_lists(h.body))
        for c in getattr(st, "cases", None) or []:
            out.extend(_statement_lists(c.body))
    return out


def _joinable(st: ast.stmt, name: str) -> bool:
    """``name = value``: what ``name: T = value`` compiles to in a body."""
    return isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
        and st.targets[0].id == name and not getattr(st, "type_comment", None)


def _annotated(name: str, annotation: ast.expr, store: Optional[ast.stmt]) -> ast.AnnAssign:
    value = store.value if isinstance(store, ast.Assign) else None
    node = ast.AnnAssign(ast.Name(name, ast.Store()), annotation, value, 1)
    if store is not None:
        ast.copy_location(node, store)
        if "_pos" in store.__dict__:
            node._pos = store._pos  # type: ignore[attr-defined]
    return node


def has_annotation_statements(stmts: List[ast.stmt]) -> bool:
    """Whether decoded annotations or marks are among ``stmts`` (nested lists too)."""
    return any(isinstance(st, (AnnotationMark, AnnotationsDef)) for block in _statement_lists(stmts)
               for st in block)


def merge_annotations(stmts: List[ast.stmt], code: types.CodeType) -> List[ast.stmt]:
    """A class or module body (of ``code``) with its decoded ``__annotate__`` written back as
    annotated statements, and the bookkeeping (the definition, the set, the marks) gone.
    (Then, once the body's implicit returns are gone, :func:`keep_annotation_cells`.)"""
    return _merge(stmts)


def keep_annotation_cells(stmts: List[ast.stmt], code: types.CodeType) -> List[ast.stmt]:
    """Where the body had cells that only annotations make, and none is left to make them
    again (``T.a: int = 1`` and ``(x): int`` compile to their store or to nothing, but still
    make the module create ``__conditional_annotations__``, and a class its ``__classdict__``
    cell), add an annotation that compiles to nothing else: ``(__annotations__): None``, inside
    ``if None:`` where the set must be made (a class makes it for conditional ones only)."""
    cells = code.co_cellvars
    need_set = CONDITIONAL_SET in cells
    need_classdict = "__classdict__" in cells and code.co_name != "<module>"
    if not (need_set or need_classdict) or _makes_annotation_cells(stmts, need_set):
        return stmts
    marker: ast.stmt = ast.AnnAssign(ast.Name("__annotations__", ast.Store()), ast.Constant(None), None, 0)
    if need_set:
        marker = ast.If(ast.Constant(None), [marker], [])
    return list(stmts) + [marker]


def _makes_annotation_cells(stmts: List[ast.stmt], conditional: bool) -> bool:
    """Whether ``stmts`` has an annotated statement (nested in a compound statement, if
    ``conditional``), or a definition whose annotations or type parameters use the class
    namespace."""
    for block in _statement_lists(stmts):
        nested = block is not stmts
        for st in block:
            if isinstance(st, ast.AnnAssign) and (nested or not conditional):
                return True
            if not conditional and isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    st.returns is not None or getattr(st, "type_params", None) or any(
                        a.annotation is not None for a in ast.walk(st.args) if isinstance(a, ast.arg))):
                return True
            if not conditional and (getattr(st, "type_params", None) or type(st).__name__ == "TypeAlias"):
                return True
    return False


def _merge(stmts: List[ast.stmt]) -> List[ast.stmt]:
    defs = [st for st in stmts if isinstance(st, AnnotationsDef)]
    if len(defs) > 1:
        raise StructureError("two __annotate__ functions in one body")
    entries = defs[0].entries if defs else []
    top = [st for st in stmts if not isinstance(st, AnnotationsDef) and not _is_bookkeeping(st)]
    marks: Dict[int, Tuple[List[ast.stmt], ast.stmt, ast.stmt]] = {}  # index -> list, mark, top
    for st in top:
        for block in _statement_lists([st]):
            for inner in block:
                if isinstance(inner, AnnotationMark):
                    marks[inner.index] = (block, inner, st)
    # (a mark at the top level sits in ``top`` itself)
    for index, (block, mark, anc) in list(marks.items()):
        if anc is mark:
            marks[index] = (top, mark, anc)
    used = set()
    pos = 0  # annotations keep their order: each goes after the previous one

    def top_index(node: ast.stmt) -> int:
        return next(i for i, st in enumerate(top) if st is node)

    for name, annotation, cond in entries:
        if cond is not None:
            if cond not in marks:
                raise StructureError("conditional annotation %d has no mark" % cond)
            block, mark, anc = marks[cond]
            used.add(cond)
            at = next(i for i, st in enumerate(block) if st is mark)
            if at > 0 and _joinable(block[at - 1], name):
                new = _annotated(name, annotation, block[at - 1])
                block[at - 1:at + 1] = [new]
            else:
                new = _annotated(name, annotation, None)
                block[at] = new
            pos = max(pos, top_index(new if block is top else anc) + 1)
            continue
        k = pos
        # (a store after the next conditional annotation would put this one after it)
        while k < len(top) and not _joinable(top[k], name) and not _has_mark(top[k]):
            k += 1
        if k < len(top) and _joinable(top[k], name):
            top[k] = _annotated(name, annotation, top[k])
            pos = k + 1
        else:
            top.insert(pos, _annotated(name, annotation, None))
            pos += 1
    if set(marks) - used:
        raise StructureError("annotation mark without an annotation")
    return top


def _has_mark(st: ast.stmt) -> bool:
    return any(isinstance(inner, AnnotationMark) for block in _statement_lists([st]) for inner in block)


def _is_bookkeeping(st: ast.stmt) -> bool:
    return isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
        and st.targets[0].id == CONDITIONAL_SET and isinstance(st.value, (ast.Set, ast.Call))


def _is_format_check(st: ast.stmt, param: str) -> bool:
    """``if format > 2: raise NotImplementedError`` (the parameter is ``param``)."""
    if not (isinstance(st, ast.If) and not st.orelse and len(st.body) == 1):
        return False
    test, body = st.test, st.body[0]
    from pellucid.decompiler.fallback import _local  # (how a hidden parameter is spelled)
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) \
        and test.left.id in (param, _local(param)) \
        and len(test.ops) == 1 and isinstance(test.ops[0], ast.Gt) \
        and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == 2 \
        and isinstance(body, ast.Raise) and body.cause is None and isinstance(body.exc, ast.Name) \
        and body.exc.id == "NotImplementedError"


def lazy_value_body(code: types.CodeType, stmts: List[ast.stmt]) -> List[ast.stmt]:
    """The statements of a lazily evaluated value's function (a type parameter's bound or
    default, a type alias's value) without 3.14's ``if .format > 2: raise NotImplementedError``
    that the compiler puts first, so that they read as the one ``return <value>``."""
    if code.co_varnames[:1] == (".format",) and stmts and _is_format_check(stmts[0], ".format"):
        return stmts[1:]
    return stmts


def keeps_format_check(code: types.CodeType, stmts: List[ast.stmt]) -> bool:
    """Whether ``stmts``, the body of a lazily evaluated value's function decompiled on its own,
    still start with 3.14's format check: its ``raise NotImplementedError`` is the builtin
    itself (``LOAD_COMMON_CONSTANT``), which source can only spell as a global name."""
    return code.co_varnames[:1] == (".format",) and bool(stmts) and _is_format_check(stmts[0], ".format")


def plain_lazy_function(stub: Any) -> bool:
    """A lazily evaluated value's function as the compiler makes it: no annotations or keyword
    defaults, and no defaults but 3.14's ``.format=1``."""
    if stub.kwdefaults or stub.annotations:
        return False
    if stub.value.co_varnames[:1] == (".format",):
        d = stub.defaults
        return len(d) == 1 and isinstance(d[0], ast.Constant) and d[0].value == 1
    return not stub.defaults
