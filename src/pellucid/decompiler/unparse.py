"""AST -> source text on every supported Python (3.8 has no ``ast.unparse``: use the backport)."""
import ast
import io
from typing import Any, Dict, List, Set, Tuple

from pellucid.bytecode.features import AST_FIX_FILLS_NONE_END, AST_UNPARSE
from pellucid.decompiler import markers as M
from pellucid.decompiler.tree_nodes import CONTEXTS


_Unparser38 = None  # type: Any  # built on first use: astunparse exists only on 3.8


def unparse(tree: ast.AST, locate_all: bool = True) -> str:
    """Source text for ``tree``; fails loudly if a decompiler marker leaked into it.

    Nodes without a location get one (see :func:`_check_and_locate`).  ``locate_all=False``
    (3.9+) locates only statements and ``except`` clauses, all ``ast``'s writer reads a
    location of (a statement's line, for type comments): the text is the same, and the other
    nodes are left as they were, for a caller that reads no locations from the tree afterwards.

    >>> unparse(ast.parse("x = 1"))
    'x = 1'
    """
    _check_and_locate(tree, locate_all or _Dispatching is None)
    if _Dispatching is not None:
        return _Dispatching().visit(tree)  # type: ignore[no-any-return]
    if AST_UNPARSE:
        return ast.unparse(tree)
    global _Unparser38
    if _Unparser38 is None:
        _Unparser38 = _unparser_38()

    _fill_optional_fields(tree)
    out = io.StringIO()
    _Unparser38(tree, file=out)
    return out.getvalue().strip("\n")


def _writer_module() -> Any:
    """The module holding ``ast.unparse``'s writer class and its precedence table: ``ast``
    itself (``_Unparser``), or ``_ast_unparse`` where the writer moved out of it (3.14+, as
    ``Unparser``)."""
    # (3.14's ``ast.unparse`` sets ``ast._Unparser`` once it has run, but never
    # ``ast._Precedence``: ask for the module it moved to first)
    try:
        import _ast_unparse  # type: ignore[import-not-found]
    except ImportError:
        return ast
    return _ast_unparse


def _dispatching_unparser() -> Any:
    """``ast.unparse``'s writer with each node class's ``visit_`` method looked up once per
    unparse instead of once per node (``NodeVisitor.visit`` builds the method's name and looks
    it up for every node: about a third of the writer's time on a long Dynamo function).  The
    same methods run in the same order, so the text is the same; a class without a method of
    its own goes to ``NodeVisitor.visit`` as before.  None where ``ast`` has no such writer
    (3.8), or one not dispatching through ``traverse``."""
    module = _writer_module()
    base = getattr(module, "_Unparser", None) or getattr(module, "Unparser", None)
    if base is None or not callable(getattr(base, "traverse", None)) or not AST_UNPARSE:
        return None
    visit_any = ast.NodeVisitor.visit

    class Dispatching(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._pellucid_visitors: Dict[type, Any] = {}  # node class -> its visit_ function

        def traverse(self, node: Any) -> None:
            if isinstance(node, list):
                for item in node:
                    self.traverse(item)
                return
            cls = type(node)
            visitor = self._pellucid_visitors.get(cls)
            if visitor is None:
                # (``NodeVisitor.visit``'s lookup; no instance has attributes of that form)
                visitor = getattr(type(self), "visit_" + cls.__name__, None)
                if visitor is None:
                    visitor = visit_any
                self._pellucid_visitors[cls] = visitor
            visitor(self, node)

        # A statement longer than LONG_LINE whose value is a call or a display of several items
        # is written again with its items on lines of their own.
        def visit_Assign(self, node: Any) -> None:
            self._wrapped(node, base.visit_Assign)

        def visit_Expr(self, node: Any) -> None:
            self._wrapped(node, base.visit_Expr)

        def visit_Return(self, node: Any) -> None:
            self._wrapped(node, base.visit_Return)

        def _wrapped(self, node: Any, visit: Any) -> None:
            start = len(self._source)
            visit(self, node)
            value = node.value
            if sum(len(piece) for piece in self._source[start:]) <= LONG_LINE \
                    or len(_items(value)) < 2:
                return
            del self._source[start:]
            value._pellucid_wrap = True
            try:
                visit(self, node)
            finally:
                del value._pellucid_wrap

        def visit_Call(self, node: Any) -> None:
            if not getattr(node, "_pellucid_wrap", False):
                base.visit_Call(self, node)
                return
            self.set_precedence(_precedence("ATOM"), node.func)
            self.traverse(node.func)
            self._one_per_line("(", node.args + node.keywords, ")")

        def visit_Tuple(self, node: Any) -> None:
            if not getattr(node, "_pellucid_wrap", False):
                base.visit_Tuple(self, node)
                return
            self._one_per_line("(", node.elts, ")")

        def visit_List(self, node: Any) -> None:
            if not getattr(node, "_pellucid_wrap", False):
                base.visit_List(self, node)
                return
            self._one_per_line("[", node.elts, "]")

        def _one_per_line(self, opening: str, items: List[Any], closing: str) -> None:
            # (items fill each line up to LONG_LINE, as a person wraps a long call: one per
            # line would make a short call of long names several times taller)
            self.write(opening)
            self._indent += 1
            self.fill()
            for k, item in enumerate(items):
                start = len(self._source)
                if k:
                    self.write(" ")
                self.traverse(item)
                self.write(",")
                if k and self._line_length() > LONG_LINE:
                    del self._source[start:]
                    self.fill()
                    self.traverse(item)
                    self.write(",")
            self._indent -= 1
            self.fill(closing)

        def _line_length(self) -> int:
            n = 0
            for piece in reversed(self._source):
                k = piece.rfind("\n")
                if k >= 0:
                    return n + len(piece) - k - 1
                n += len(piece)
            return n

    return Dispatching


LONG_LINE = 100  # characters of a statement past which its items go on lines of their own


def _items(value: Any) -> List[Any]:
    if isinstance(value, ast.Call):
        return list(value.args) + list(value.keywords)
    if isinstance(value, (ast.Tuple, ast.List)):
        return list(value.elts)
    return []


def _precedence(name: str) -> Any:
    return getattr(getattr(_writer_module(), "_Precedence"), name)


_Dispatching = _dispatching_unparser()


_END_IF_NONE = AST_FIX_FILLS_NONE_END


def _check_and_locate(tree: ast.AST, locate_all: bool = True) -> None:
    """Fail if a decompiler marker is left in ``tree``, and give every node its location as
    :func:`ast.fix_missing_locations` does (the parent's, where the node has none).

    One walk instead of two: over a long (Dynamo) function each whole-tree pass costs about a
    millisecond, and ``fix_missing_locations`` recurses through generators.  The walk is
    depth-first in field order like ``fix_missing_locations``, so a node reached twice (values
    shared between statements) takes its location from the same parent.

    Fields and locations are read from the node's ``__dict__``: ``ast``'s classes hold their
    fields and locations there, and the only class-level values they have for them are ``None``
    defaults (optional fields; 3.9+'s end positions), so ``d.get(name)`` is ``getattr(node,
    name, None)`` and ``name in d`` is ``hasattr`` for ``lineno``/``col_offset`` (and, on 3.8,
    which has no such defaults, for the end positions too).  Nodes of other classes are
    refused before their ``__dict__`` is read.

    ``locate_all=False``: only statements and ``except`` clauses are located.  No statement is
    below an expression, so each still gets the location it gets otherwise (from the nearest
    located statement or clause above it).
    """
    work: List[Tuple[ast.AST, Tuple[Any, Any, Any, Any]]] = [(tree, (1, 0, 1, 0))]
    pop, push = work.pop, work.append
    marker = M.Marker
    checked: Set[type] = set()  # classes already found to be ``ast``'s own (within this call)
    ast_type = ast.AST
    end_if_none = _END_IF_NONE
    contexts = CONTEXTS
    name_type = ast.Name
    statement_like = (ast.stmt, ast.excepthandler)
    while work:
        node, inherited = pop()
        cls = type(node)
        if cls in contexts:
            continue  # (a third of the nodes: no location, no children)
        if cls not in checked:
            # Markers and pseudo statements are ast.AST subclasses defined outside the ast module.
            if isinstance(node, marker) or cls.__module__ not in ("ast", "_ast"):
                raise ValueError("internal node left in tree: %r" % (node,))
            checked.add(cls)
        d = node.__dict__
        # (every located class has all four: lineno, col_offset, ends)
        if node._attributes and (locate_all or isinstance(node, statement_like)):
            if "lineno" in d:
                l0 = d["lineno"]
            else:
                l0 = node.lineno = inherited[0]
            if "col_offset" in d:
                l1 = d["col_offset"]
            else:
                l1 = node.col_offset = inherited[1]
            if d.get("end_lineno") is None if end_if_none else "end_lineno" not in d:
                l2 = node.end_lineno = inherited[2]
            else:
                l2 = d["end_lineno"]
            if d.get("end_col_offset") is None if end_if_none else "end_col_offset" not in d:
                l3 = node.end_col_offset = inherited[3]
            else:
                l3 = d["end_col_offset"]
            inherited = (l0, l1, l2, l3)
            if cls is name_type and type(d.get("id")) is str:
                # (the commonest node; its only child is its context)
                ctx = d.get("ctx")
                if isinstance(ctx, ast_type) and type(ctx) not in contexts:
                    push((ctx, inherited))
                continue
        elif cls is name_type and type(d.get("id")) is str:
            # (a name left unlocated: as above, its only child is its context)
            ctx = d.get("ctx")
            if isinstance(ctx, ast_type) and type(ctx) not in contexts:
                push((ctx, inherited))
            continue
        # (child_nodes, reversed, inlined)
        children: List[ast.AST] = []
        for name in node._fields:
            value = d.get(name)
            if type(value) is list:
                children.extend([v for v in value if isinstance(v, ast_type)])
            elif isinstance(value, ast_type):
                children.append(value)
        for child in reversed(children):
            push((child, inherited))


def _unparser_38() -> type:
    """astunparse's writer, with expressions parenthesised only where the grammar needs it and
    docstrings written as such (:mod:`pellucid.decompiler.unparse38`).

    The stack machine builds 3.9-shaped subscripts (``slice`` is the key expression itself):
    tuples holding slices are written bare between the brackets (``a[1:2, 3]``), the only form
    3.8 parses.
    """
    import astunparse  # type: ignore[import-not-found]

    from pellucid.decompiler.unparse38 import build

    class Unparser38(build(astunparse.Unparser)):  # type: ignore[misc]
        pass

        def _JoinedStr(self, t: ast.JoinedStr) -> None:
            # astunparse writes the literal parts as they are, so escape sequences were lost
            # (rf"\b{s}" read back as a backspace, "\r\n" as a newline, "\0" a null byte in
            # the source, "\x" left dangling): escape them, and pick a quote no expression
            # part uses (3.8 allows no backslash there).
            exprs: List[str] = []
            self._fstring_exprs(t, exprs)
            for quote in ("'", '"', "'''", '"""'):
                if not any(quote[0] in e for e in exprs):
                    break
            else:
                super()._JoinedStr(t)  # (no source form; compiling the result fails loudly)
                return
            parts: List[str] = []
            self._fstring_body(t, quote[0], parts)
            self.write("f" + quote + "".join(parts) + quote)

        def _fstring_exprs(self, t: ast.AST, out: List[str]) -> None:
            for value in getattr(t, "values", []):
                if isinstance(value, ast.FormattedValue):
                    out.append(self._fstring_expr(value.value))
                    if value.format_spec is not None:
                        self._fstring_exprs(value.format_spec, out)

        def _fstring_expr(self, node: ast.expr) -> str:
            text = io.StringIO()
            Unparser38(node, text)
            return text.getvalue().strip("\n")

        def _fstring_body(self, t: ast.AST, quote: str, parts: List[str]) -> None:
            for value in getattr(t, "values", []):
                if isinstance(value, ast.FormattedValue):
                    expr = self._fstring_expr(value.value)
                    parts.append("{ " if expr.startswith("{") else "{")
                    parts.append(expr)
                    if value.conversion not in (None, -1):
                        parts.append("!" + chr(value.conversion))
                    if value.format_spec is not None:
                        parts.append(":")
                        self._fstring_body(value.format_spec, quote, parts)
                    parts.append("}")
                elif isinstance(value, ast.Constant) and isinstance(value.value, str):
                    parts.append(_fstring_literal(value.value, quote))
                else:
                    raise ValueError("f-string part %r" % (value,))

    return Unparser38


def _fstring_literal(text: str, quote: str) -> str:
    r"""A literal part of an f-string, in its source form between ``quote`` quotes: braces
    doubled, backslashes, the quote character and what is not printable escaped.

    >>> print(_fstring_literal("a{b}'\n", "'"))
    a{{b}}\'\n
    """
    out = []
    for ch in text:
        if ch in "{}":
            out.append(ch * 2)
        elif ch == "\\":
            out.append("\\\\")
        elif ch == quote:
            out.append("\\" + ch)
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1])
    return "".join(out)


def _fill_optional_fields(tree: ast.AST) -> None:
    """3.8's nodes built by hand lack optional fields (``Constant.kind``...) astunparse reads."""
    for node in ast.walk(tree):
        for field in node._fields:
            if not hasattr(node, field):
                setattr(node, field, [] if field in _LIST_FIELDS else None)


_LIST_FIELDS = {"body", "orelse", "finalbody", "handlers", "decorator_list", "targets", "elts",
                "keys", "values", "args", "keywords", "names", "ifs", "generators", "ops",
                "comparators", "posonlyargs", "kwonlyargs", "kw_defaults", "defaults", "bases",
                "type_ignores", "items", "dims"}
