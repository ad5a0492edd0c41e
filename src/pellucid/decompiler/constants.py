"""Constants as expressions: literals where Python has them, names bound at recompile otherwise."""
import ast
import math
from typing import Any, Dict, Optional


def is_literal(value: Any) -> bool:
    """Whether ``value`` can be written as a literal that evaluates to an equal constant.

    >>> is_literal((1, 'a', None)), is_literal(object())
    (True, False)
    """
    # Exact types only: a subclass (torch.Size, a namedtuple, an IntEnum member) written as a
    # literal would come back as the base type.
    if value is None or value is Ellipsis or type(value) in (bool, int, str, bytes, float, complex):
        return True
    if type(value) in (tuple, frozenset):
        return all(is_literal(v) for v in value)
    return False


def _float_expr(v: float) -> ast.expr:
    # inf and nan as constant expressions the compiler folds back (``1e309``, ``1e309 - 1e309``),
    # not ``float('inf')``, which would look the name ``float`` up at run time.
    if math.isnan(v):
        nan = ast.BinOp(ast.Constant(math.inf), ast.Sub(), ast.Constant(math.inf))
        folded = math.inf - math.inf
        if math.copysign(1.0, folded) != math.copysign(1.0, v):
            return ast.UnaryOp(ast.USub(), nan)  # keep the sign bit, which copysign can see
        return nan
    if v < 0 or (v == 0 and math.copysign(1.0, v) < 0):
        return ast.UnaryOp(ast.USub(), ast.Constant(-v))
    return ast.Constant(v)


def _positive(x: float) -> bool:
    return math.copysign(1.0, x) > 0


def _imaginary(k: float) -> ast.expr:
    """An expression folding to ``complex(+0.0, k)`` for ``k`` with a positive sign."""
    if math.isnan(k):
        inf = ast.Constant(complex(0.0, math.inf))
        return ast.BinOp(inf, ast.Sub(), ast.Constant(complex(0.0, math.inf)))
    return ast.Constant(complex(0.0, k))  # unparsed as ``1e309j`` when infinite


def _same_complex(a: Any, b: complex) -> bool:
    return type(a) is complex and repr(a) == repr(b) and all(
        math.copysign(1.0, p) == math.copysign(1.0, q) for p, q in ((a.real, b.real), (a.imag, b.imag)))


def _folds_to(expr: ast.expr, v: complex) -> bool:
    node = ast.fix_missing_locations(ast.Expression(expr))
    return _same_complex(eval(compile(node, "<constant>", "eval"), {"__builtins__": {}}), v)


def _complex_expr(v: complex) -> Optional[ast.expr]:
    """An expression the compiler folds back to exactly ``v`` (signs of zeros and of NaNs
    included), or None."""
    first = _complex_form(v)
    if first is not None and (not (math.isnan(v.real) or math.isnan(v.imag)) or _folds_to(first, v)):
        return first
    # A NaN's sign bit depends on how the arithmetic goes (3.14 changed mixed real/complex
    # arithmetic): try the other spellings, checked by folding them here.
    nan_j = ast.BinOp(ast.Constant(complex(0.0, math.inf)), ast.Sub(), ast.Constant(complex(0.0, math.inf)))
    parts = [_imaginary(v.imag) if not math.isnan(v.imag) else nan_j]
    if not math.isnan(v.imag):
        parts.append(_imaginary(-v.imag))
    neg = ast.USub
    for real in (_float_expr(v.real), _float_expr(-v.real)):
        for imag in parts:
            for op in (ast.Add, ast.Sub):
                for cand in (ast.BinOp(real, op(), imag), ast.UnaryOp(neg(), ast.BinOp(real, op(), imag)),
                             ast.BinOp(imag, op(), real), ast.UnaryOp(neg(), imag)):
                    if _folds_to(cand, v):
                        return cand
    return None


def _complex_form(v: complex) -> Optional[ast.expr]:
    """An expression the compiler folds back to exactly ``v`` (signs of zeros included), or
    None.  Folding ``r + kj`` adds ``0.0`` to ``r`` and ``k`` to ``0.0``, which loses the sign of
    a negative zero; ``r - kj`` keeps ``r``; unary minus flips both signs exactly."""
    r, i = v.real, v.imag
    r_zero = r == 0.0
    if r_zero and _positive(r) and _positive(i):
        return _imaginary(i)
    if r_zero and not _positive(r) and not _positive(i):
        return ast.UnaryOp(ast.USub(), _imaginary(-i))
    if i == 0.0 and not _positive(i):
        if r_zero:
            return None  # (+0.0, -0.0): no folded form found
        return ast.UnaryOp(ast.USub(), ast.BinOp(_float_expr(-r), ast.Add(), _imaginary(0.0)))
    if not _positive(i):
        return ast.BinOp(_float_expr(r), ast.Sub(), _imaginary(-i))
    if r_zero:  # (-0.0, positive)
        if i == 0.0:
            return None
        return ast.UnaryOp(ast.USub(), ast.BinOp(ast.Constant(0.0), ast.Sub(), _imaginary(i)))
    return ast.BinOp(_float_expr(r), ast.Add(), _imaginary(i))


class ConstantPool:
    """Turns constants into expressions; non-literal ones become names listed in ``bindings``."""

    def __init__(self, tag: str = "") -> None:
        # ``tag`` goes into every bound name: code objects whose bindings share one namespace
        # (Dynamo's transformed code of one module) must not rebind each other's names.
        self.tag = tag
        self.bindings: Dict[str, Any] = {}
        self._by_id: Dict[int, str] = {}
        #: nested bodies decompiled with this pool, i.e. within one decompile (see
        #: ``fallback.body_or_fallback``): key -> (code, kept statements or None, declarer)
        self.bodies: Dict[Any, Any] = {}
        #: whether a ``LOAD_ASSERTION_ERROR`` was decompiled with this pool (``tidy`` has work)
        self.made_assertion = False
        #: the fallback's nested ``def`` names (unique within one decompile) -> the code object's
        #: own name and qualified name, which recompile gives the compiled code back
        self.fallback_defs: Dict[str, Any] = {}
        #: the source written is compiled under ``from __future__ import annotations`` (a module
        #: that imports it): annotations the flag stored as text are written as the expressions
        #: they spell.  Elsewhere (a function or class of such a module recompiled on its own)
        #: they stay string literals, which compile to the same text.
        self.future_annotations = False

    def expr(self, value: Any, as_set: bool = False) -> ast.expr:
        """Expression for ``value``; ``as_set`` writes a frozenset as a set display (``x in {1}``)."""
        if type(value) is str or value is None:
            return ast.Constant(value)  # (what the tests below conclude for the commonest constants)
        if not is_literal(value):
            return self._bind(value)
        if isinstance(value, bool) or value is None or value is Ellipsis:
            return ast.Constant(value)
        if isinstance(value, float):
            return _float_expr(value)
        if isinstance(value, complex):
            expr = _complex_expr(value)
            return expr if expr is not None else self._bind(value)
        if isinstance(value, (int, str, bytes)):
            if isinstance(value, int) and value < 0:
                return ast.UnaryOp(ast.USub(), ast.Constant(-value))
            return ast.Constant(value)
        if isinstance(value, tuple) and is_literal(value):
            return ast.Tuple([self.expr(v) for v in value], ast.Load())
        if isinstance(value, frozenset) and is_literal(value):
            elts = [self.expr(v) for v in sorted(value, key=repr)]
            if as_set and elts:
                return ast.Set(elts)
            call = ast.Call(ast.Name("frozenset", ast.Load()), [ast.Set(elts)] if elts else [], [])
            call._from_constant = True  # type: ignore[attr-defined]  # not a call in the source
            return call
        return self._bind(value)

    def bind(self, value: Any) -> ast.expr:
        """A name bound to ``value`` itself (see ``bindings``), literal or not."""
        return self._bind(value)

    def _bind(self, value: Any) -> ast.expr:
        key = id(value)
        name = self._by_id.get(key)
        if name is None:
            hint = getattr(value, "__name__", type(value).__name__)
            hint = "".join(c if c.isalnum() else "_" for c in str(hint))[:30]
            name = "__pellucid_const_%s%d_%s" % (self.tag, len(self.bindings), hint)
            self.bindings[name] = value
            self._by_id[key] = name
        return ast.Name(name, ast.Load())
