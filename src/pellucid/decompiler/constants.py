"""Constants as expressions: literals where Python has them, names bound at recompile otherwise."""
import ast
import math
from typing import Any, Dict


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


class ConstantPool:
    """Turns constants into expressions; non-literal ones become names listed in ``bindings``."""

    def __init__(self) -> None:
        self.bindings: Dict[str, Any] = {}
        self._by_id: Dict[int, str] = {}

    def expr(self, value: Any, as_set: bool = False) -> ast.expr:
        """Expression for ``value``; ``as_set`` writes a frozenset as a set display (``x in {1}``)."""
        if not is_literal(value):
            return self._bind(value)
        if isinstance(value, bool) or value is None or value is Ellipsis:
            return ast.Constant(value)
        if isinstance(value, float):
            return _float_expr(value)
        if isinstance(value, complex):
            if value.real == 0 and not math.isnan(value.imag) and not math.isinf(value.imag) \
                    and math.copysign(1.0, value.real) > 0 and value.imag >= 0:
                return ast.Constant(value)
            return self._bind(value)
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

    def _bind(self, value: Any) -> ast.expr:
        key = id(value)
        name = self._by_id.get(key)
        if name is None:
            hint = getattr(value, "__name__", type(value).__name__)
            hint = "".join(c if c.isalnum() else "_" for c in str(hint))[:30]
            name = "__pellucid_const_%d_%s" % (len(self.bindings), hint)
            self.bindings[name] = value
            self._by_id[key] = name
        return ast.Name(name, ast.Load())
