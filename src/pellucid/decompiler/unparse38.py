"""Source text on Python 3.8 without the backport's extra parentheses, and with docstrings.

Python 3.8 has no ``ast.unparse``; the ``astunparse`` backport writes every operator, comparison,
lambda, conditional expression and ``yield`` in parentheses (``while (a < n):``,
``((a | b) | c)``, ``(- (a ** 2))``) and every docstring as a one-line escaped string.  The
writer here keeps astunparse's statements and replaces its expressions: each expression is
written knowing how tightly its context binds, and is parenthesised only when the grammar needs
it.  Docstrings are written as triple-quoted strings.

Binding strength, loosest first (the grammar's own order of the expression rules)::

    NAMED  x := v          TUPLE  a, b          YIELD  yield x         TEST   lambda / a if c else b
    OR     or              AND    and           NOT    not x           CMP    < == in is ...
    BOR    |               BXOR   ^             BAND   &               SHIFT  << >>
    ARITH  + -             TERM   * / // % @    FACTOR -x +x ~x        POWER  **
    AWAIT  await x         PRIMARY a.b a[b] a(b)                       ATOM

An expression is parenthesised when its own strength is below what its place asks for.
"""
import ast
import io
from typing import Any, Callable, Iterable, List

NAMED, TUPLE, YIELD, TEST, OR, AND, NOT, CMP, BOR, BXOR, BAND, SHIFT, ARITH, TERM, FACTOR, \
    POWER, AWAIT, PRIMARY, ATOM = range(19)

_BINOPS = {
    ast.Add: ("+", ARITH), ast.Sub: ("-", ARITH), ast.Mult: ("*", TERM), ast.MatMult: ("@", TERM),
    ast.Div: ("/", TERM), ast.FloorDiv: ("//", TERM), ast.Mod: ("%", TERM),
    ast.LShift: ("<<", SHIFT), ast.RShift: (">>", SHIFT), ast.BitOr: ("|", BOR),
    ast.BitXor: ("^", BXOR), ast.BitAnd: ("&", BAND), ast.Pow: ("**", POWER),
}
_UNARY = {ast.Invert: ("~", FACTOR), ast.UAdd: ("+", FACTOR), ast.USub: ("-", FACTOR),
          ast.Not: ("not ", NOT)}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
           ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}


def docstring_literal(text: str) -> str:
    r'''``text`` as a triple-quoted string literal whose value is exactly ``text``: newlines and
    tabs as they are, backslashes, quotes that would end it and unprintable characters escaped.

    >>> print(docstring_literal('Say "hi".\n    Path: C:\\x'))
    """Say "hi".
        Path: C:\\x"""
    >>> eval(docstring_literal('a"""b"')) == 'a"""b"'
    True
    '''
    out: List[str] = []
    for k, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"' and (text[k + 1:k + 2] == '"' and text[k + 2:k + 3] == '"'
                            or k == len(text) - 1 or out[-2:] == ['"', '"']):
            out.append('\\"')  # (would close the literal, or touch its closing quotes)
        elif ch in "\n\t" or ch.isprintable():
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1])
    return '"""' + "".join(out) + '"""'


def build(base: type) -> type:
    """The writer, as a subclass of astunparse's ``Unparser`` class ``base``."""

    class PrecedenceUnparser(base):  # type: ignore[misc, valid-type]
        """astunparse's writer with expressions parenthesised by binding strength."""

        def __init__(self, tree: Any, file: Any = None) -> None:
            self._need = TEST
            self._given = False
            self._docstrings: set = set()
            super().__init__(tree, file=file if file is not None else io.StringIO())

        # -- dispatch with a context ------------------------------------------------------------
        def dispatch(self, tree: Any) -> None:
            if isinstance(tree, ast.expr):
                if self._given:
                    self._given = False
                elif self._indent == 0 and not hasattr(self, "_started"):
                    self._need = OR  # an expression on its own (an f-string's part): kept tight
                else:
                    self._need = TEST  # an expression a statement writes
            self._started = True
            super().dispatch(tree)

        def _at(self, node: Any, need: int) -> None:
            """Write ``node`` where the grammar asks for binding strength ``need``."""
            saved = self._need
            self._need = need
            self._given = isinstance(node, ast.expr)
            try:
                super().dispatch(node) if not isinstance(node, ast.expr) else self.dispatch(node)
            finally:
                self._need = saved
                self._given = False

        def _open(self, own: int) -> bool:
            """Start an expression of strength ``own``; True if it needed a parenthesis."""
            if own < self._need:
                self.write("(")
                return True
            return False

        def _close(self, opened: bool) -> None:
            if opened:
                self.write(")")

        def _each(self, items: Iterable[Any], write: Callable[[Any], None], sep: str = ", ") -> None:
            first = True
            for item in items:
                if not first:
                    self.write(sep)
                first = False
                write(item)

        # -- statements whose parts have other contexts -----------------------------------------
        def _mark_docstring(self, body: List[Any]) -> None:
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                self._docstrings.add(id(body[0]))

        def _Module(self, tree: Any) -> None:
            self._mark_docstring(tree.body)
            super()._Module(tree)

        def _FunctionDef(self, t: Any) -> None:
            self._mark_docstring(t.body)
            super()._FunctionDef(t)

        def _AsyncFunctionDef(self, t: Any) -> None:
            self._mark_docstring(t.body)
            super()._AsyncFunctionDef(t)

        def _ClassDef(self, t: Any) -> None:
            self._mark_docstring(t.body)
            super()._ClassDef(t)

        def _Expr(self, tree: Any) -> None:
            self.fill()
            if id(tree) in self._docstrings:
                self.write(docstring_literal(tree.value.value))
                return
            self._at(tree.value, YIELD)

        def _Assign(self, t: Any) -> None:
            self.fill()
            for target in t.targets:
                self._at(target, TUPLE)
                self.write(" = ")
            self._at(t.value, TEST)
            comment = getattr(t, "type_comment", None)
            if comment:
                self.write(" # type: " + comment)

        def _AugAssign(self, t: Any) -> None:
            self.fill()
            self._at(t.target, TUPLE)
            self.write(" " + _BINOPS[type(t.op)][0] + "= ")
            self._at(t.value, TEST)

        def _Return(self, t: Any) -> None:
            self.fill("return")
            if t.value is not None:
                self.write(" ")
                self._at(t.value, TEST)

        def _Delete(self, t: Any) -> None:
            self.fill("del ")
            self._each(t.targets, lambda x: self._at(x, TEST))

        def _For(self, t: Any) -> None:
            self._for("for ", t)

        def _AsyncFor(self, t: Any) -> None:
            self._for("async for ", t)

        def _for(self, fill: str, t: Any) -> None:
            self.fill(fill)
            self._at(t.target, TUPLE)
            self.write(" in ")
            self._at(t.iter, TEST)
            self.enter()
            self.dispatch(t.body)
            self.leave()
            if t.orelse:
                self.fill("else")
                self.enter()
                self.dispatch(t.orelse)
                self.leave()

        # -- expressions ------------------------------------------------------------------------
        def _Name(self, t: Any) -> None:
            self.write(t.id)

        def _Constant(self, t: Any) -> None:
            value = t.value
            negative = isinstance(value, (int, float, complex)) and not isinstance(value, bool) \
                and repr(value).startswith("-")
            opened = self._open(FACTOR) if negative else False
            super()._Constant(t)
            self._close(opened)

        def _NamedExpr(self, t: Any) -> None:
            opened = self._open(NAMED)
            self._at(t.target, ATOM)
            self.write(" := ")
            self._at(t.value, TEST)
            self._close(opened)

        def _Tuple(self, t: Any) -> None:
            opened = self._open(TUPLE) if t.elts else (self.write("(") or True)
            self._each(t.elts, lambda e: self._at(e, TEST))
            if len(t.elts) == 1:
                self.write(",")
            self._close(opened)

        def _List(self, t: Any) -> None:
            self.write("[")
            self._each(t.elts, lambda e: self._at(e, TEST))
            self.write("]")

        def _Set(self, t: Any) -> None:
            self.write("{")
            self._each(t.elts, lambda e: self._at(e, TEST))
            self.write("}")

        def _Dict(self, t: Any) -> None:
            self.write("{")

            def item(kv: Any) -> None:
                k, v = kv
                if k is None:
                    self.write("**")
                    self._at(v, BOR)
                else:
                    self._at(k, TEST)
                    self.write(": ")
                    self._at(v, TEST)
            self._each(zip(t.keys, t.values), item)
            self.write("}")

        def _Starred(self, t: Any) -> None:
            self.write("*")
            self._at(t.value, BOR)

        def _comprehensions(self, generators: List[Any]) -> None:
            for gen in generators:
                self.write(" async for " if getattr(gen, "is_async", False) else " for ")
                self._at(gen.target, TUPLE)
                self.write(" in ")
                self._at(gen.iter, OR)
                for cond in gen.ifs:
                    self.write(" if ")
                    self._at(cond, OR)

        def _ListComp(self, t: Any) -> None:
            self.write("[")
            self._at(t.elt, TEST)
            self._comprehensions(t.generators)
            self.write("]")

        def _SetComp(self, t: Any) -> None:
            self.write("{")
            self._at(t.elt, TEST)
            self._comprehensions(t.generators)
            self.write("}")

        def _DictComp(self, t: Any) -> None:
            self.write("{")
            self._at(t.key, TEST)
            self.write(": ")
            self._at(t.value, TEST)
            self._comprehensions(t.generators)
            self.write("}")

        def _GeneratorExp(self, t: Any) -> None:
            self.write("(")
            self._at(t.elt, TEST)
            self._comprehensions(t.generators)
            self.write(")")

        def _Yield(self, t: Any) -> None:
            opened = self._open(YIELD)
            self.write("yield")
            if t.value is not None:
                self.write(" ")
                self._at(t.value, TEST)
            self._close(opened)

        def _YieldFrom(self, t: Any) -> None:
            opened = self._open(YIELD)
            self.write("yield from ")
            self._at(t.value, TEST)
            self._close(opened)

        def _Await(self, t: Any) -> None:
            opened = self._open(AWAIT)
            self.write("await ")
            self._at(t.value, PRIMARY)
            self._close(opened)

        def _Lambda(self, t: Any) -> None:
            opened = self._open(TEST)
            a = t.args
            self.write("lambda")
            if a.args or getattr(a, "posonlyargs", None) or a.vararg or a.kwonlyargs or a.kwarg:
                self.write(" ")
                self._arguments(a)
            self.write(": ")
            self._at(t.body, TEST)
            self._close(opened)

        def _IfExp(self, t: Any) -> None:
            opened = self._open(TEST)
            self._at(t.body, OR)
            self.write(" if ")
            self._at(t.test, OR)
            self.write(" else ")
            self._at(t.orelse, TEST)
            self._close(opened)

        def _BoolOp(self, t: Any) -> None:
            own = OR if isinstance(t.op, ast.Or) else AND
            opened = self._open(own)
            self._each(t.values, lambda v: self._at(v, own + 1),
                       " or " if own == OR else " and ")
            self._close(opened)

        def _UnaryOp(self, t: Any) -> None:
            sym, own = _UNARY[type(t.op)]
            opened = self._open(own)
            self.write(sym)
            self._at(t.operand, own)
            self._close(opened)

        def _BinOp(self, t: Any) -> None:
            sym, own = _BINOPS[type(t.op)]
            opened = self._open(own)
            if own == POWER:
                # right-associative, and its right operand may be a unary one (2 ** -1)
                self._at(t.left, POWER + 1)
                self.write(" ** ")
                self._at(t.right, FACTOR)
            else:
                self._at(t.left, own)
                self.write(" %s " % sym)
                self._at(t.right, own + 1)
            self._close(opened)

        def _Compare(self, t: Any) -> None:
            opened = self._open(CMP)
            self._at(t.left, CMP + 1)
            for op, right in zip(t.ops, t.comparators):
                self.write(" %s " % _CMPOPS[type(op)])
                self._at(right, CMP + 1)
            self._close(opened)

        def _Attribute(self, t: Any) -> None:
            value = t.value
            if isinstance(value, ast.Constant) and isinstance(value.value, int) \
                    and not isinstance(value.value, bool):
                self.write("(")  # (``1.real`` would read as a float literal)
                self._at(value, TEST)
                self.write(")")
            else:
                self._at(value, PRIMARY)
            self.write("." + t.attr)

        def _Call(self, t: Any) -> None:
            self._at(t.func, PRIMARY)
            self.write("(")
            parts: List[Any] = list(t.args) + list(t.keywords)
            self._each(parts, lambda p: self._at(p, TEST))
            self.write(")")

        def _keyword(self, t: Any) -> None:
            if t.arg is None:
                self.write("**")
                self._at(t.value, BOR)
            else:
                self.write(t.arg + "=")
                self._at(t.value, TEST)

        def _Subscript(self, t: Any) -> None:
            self._at(t.value, PRIMARY)
            self.write("[")
            key = t.slice
            if isinstance(key, ast.Index):
                key = key.value
            if isinstance(key, ast.ExtSlice):
                self._each(key.dims, lambda d: self._at(d, TEST))
                if len(key.dims) == 1:
                    self.write(",")
            elif isinstance(key, ast.Tuple) and key.elts:
                # (bare: ``a[1:2, 3]``; slices are not allowed inside parentheses)
                self._each(key.elts, lambda e: self._at(e, TEST))
                if len(key.elts) == 1:
                    self.write(",")
            else:
                self._at(key, TEST)
            self.write("]")

        def _Index(self, t: Any) -> None:
            self._at(t.value, TUPLE)

        def _Slice(self, t: Any) -> None:
            if t.lower is not None:
                self._at(t.lower, TEST)
            self.write(":")
            if t.upper is not None:
                self._at(t.upper, TEST)
            if t.step is not None:
                self.write(":")
                self._at(t.step, TEST)

    return PrecedenceUnparser
