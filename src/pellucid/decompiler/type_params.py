"""PEP 695/696 type parameters (3.12+): ``def f[T](...)``, ``class C[T](...)``, ``type A[T] = ...``.

The compiler puts a generic definition inside a hidden function, ``<generic parameters of f>``,
which the enclosing code calls at once (passing the function's defaults, which are evaluated
outside): it makes each type parameter (``CALL_INTRINSIC_1 INTRINSIC_TYPEVAR`` /
``INTRINSIC_PARAMSPEC`` / ``INTRINSIC_TYPEVARTUPLE``; ``CALL_INTRINSIC_2
INTRINSIC_TYPEVAR_WITH_BOUND`` / ``_WITH_CONSTRAINTS`` with the bound as a lazily evaluated
function; 3.13's ``INTRINSIC_SET_TYPEPARAM_DEFAULT`` likewise), binds it to its name, and returns

* a function: ``MAKE_FUNCTION`` then ``INTRINSIC_SET_FUNCTION_TYPE_PARAMS``;
* a class: ``__build_class__`` with ``INTRINSIC_SUBSCRIPT_GENERIC(.type_params)`` (named
  ``.generic_base``) as the last base; the class body stores ``.type_params`` as
  ``__type_params__``;
* a type alias: ``INTRINSIC_TYPEALIAS`` of ``(name, type params, value function)``.

:func:`generic_definition` decompiles such a hidden function with :class:`GenericParameters`, a
body decompiler that reads those instructions as the type parameter list (bounds, constraints
and defaults through :class:`LazyValue`), and gives back what the enclosing body stores under
the definition's name: a function stub with ``type_params``, a pending class statement, or a
type alias marker.  A fallback (state machine) body writes the definition inside a small maker
function instead (:func:`fallback_maker_lines`).  Only code that uses type parameters reaches
this module (its opcodes and hidden functions occur nowhere else).
"""
import ast
import types
from typing import Any, Dict, List, Optional

from pellucid.bytecode.features import AST_TYPE_PARAM_DEFAULTS, GENERIC_CLASS_MANGLES_ENCLOSING
from pellucid.bytecode.instruction import Instr
from pellucid.decompiler import markers as M
from pellucid.decompiler.body import BodyDecompiler
from pellucid.decompiler.deferred_annotations import lazy_value_body, plain_lazy_function
from pellucid.decompiler.errors import StructureError
from pellucid.decompiler.functions import FunctionStub, PendingClass

# (the hidden function's name starts with "<generic parameters of ": functions.py and
# fallback.py test that before coming here)
# the hidden function's parameters: the generic function's defaults, evaluated outside it
_HIDDEN_ARGS = (".defaults", ".kwdefaults")


class TypeParam(M.Marker):
    """One type parameter being made (``value`` is its name)."""

    def __init__(self, kind: str, name: str, bound: Optional[ast.expr] = None) -> None:
        super().__init__(name)
        self.kind = kind  # "TypeVar", "ParamSpec" or "TypeVarTuple"
        self.bound = bound
        self.default: Optional[ast.expr] = None

    def node(self) -> ast.AST:
        """The ``ast`` type parameter (``ast.TypeVar`` ...; read by name: 3.12+ only)."""
        cls = getattr(ast, self.kind)
        fields: Dict[str, Any] = {"name": self.value}
        if self.kind == "TypeVar":
            fields["bound"] = self.bound
        if AST_TYPE_PARAM_DEFAULTS:
            fields["default_value"] = self.default
        elif self.default is not None:
            raise StructureError("type parameter default before 3.13")
        return cls(**fields)  # type: ignore[no-any-return]


class TypeParamList(M.Marker):
    """The tuple of the definition's type parameters (``value``: the TypeParam markers)."""


class GenericBase(M.Marker):
    """``Generic[*type params]``: the base ``INTRINSIC_SUBSCRIPT_GENERIC`` adds to a class."""


class ClassArguments(M.Marker):
    """The positional tuple of ``__build_class__`` called with ``*``/``**`` arguments
    (``value``: the raw stack values: class body, name, bases (starred ones as ast.Starred),
    Generic base)."""


def _is_str_constant(v: Any) -> bool:
    return isinstance(v, ast.Constant) and isinstance(v.value, str)


def _class_arguments(items: List[Any]) -> bool:
    """Whether ``items`` start as __build_class__'s arguments do: class body, its name."""
    return len(items) >= 2 and isinstance(items[0], FunctionStub) and _is_str_constant(items[1]) \
        and items[0].value.co_name == items[1].value


class GenericParameters(BodyDecompiler):
    """The body of a ``<generic parameters of ...>`` function, read as one definition.

    Its only statement is the ``return`` of the definition: kept as :attr:`result` (no
    statement is written); the type parameters' own stores are part of the parameter list.
    """

    def __init__(self, code: types.CodeType, consts: Any, hidden: Dict[str, Any]) -> None:
        super().__init__(code, consts)
        self.hidden = hidden  # '.defaults' / '.kwdefaults' -> the value passed by the caller
        self.result: Any = None
        self.params: Optional[TypeParamList] = None  # stored as ``.type_params`` (classes)
        self.generic_base: Optional[GenericBase] = None

    # -- loads and stores of the hidden names ---------------------------------------------------
    def op_LOAD_FAST(self, arg: str, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if arg in self.hidden:
            stack.append(self.hidden[arg])
        elif arg == ".generic_base" and self.generic_base is not None:
            stack.append(self.generic_base)
        else:
            super().op_LOAD_FAST(arg, stack, out, ins)

    def store(self, target: ast.expr, v: Any, stack: List[Any], out: List[ast.stmt]) -> None:
        name = target.id if isinstance(target, ast.Name) else None
        if isinstance(v, TypeParam) and name == v.value:
            return  # ``COPY 1; STORE T``: the parameter's binding in this scope
        if isinstance(v, TypeParamList) and name == ".type_params":
            self.params = v
            return
        if isinstance(v, GenericBase) and name == ".generic_base":
            self.generic_base = v
            return
        super().store(target, v, stack, out)

    # -- making the type parameters ---------------------------------------------------------------
    def _new_param(self, kind: str, stack: List[Any], bound: Optional[ast.expr] = None) -> None:
        name = stack.pop()
        if not _is_str_constant(name):
            raise StructureError("type parameter name is not a constant")
        stack.append(TypeParam(kind, name.value, bound))

    def op_TYPEVAR(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        self._new_param("TypeVar", stack)

    def op_PARAMSPEC(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        self._new_param("ParamSpec", stack)

    def op_TYPEVARTUPLE(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        self._new_param("TypeVarTuple", stack)

    def op_TYPEVAR_WITH_BOUND(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        bound = self._lazy_value(stack.pop())
        self._new_param("TypeVar", stack, bound)

    def op_TYPEVAR_WITH_CONSTRAINTS(self, arg: Any, stack: List[Any], out: List[ast.stmt],
                                    ins: Instr) -> None:
        constraints = self._lazy_value(stack.pop())
        if not isinstance(constraints, ast.Tuple):
            raise StructureError("type parameter constraints are not a tuple display")
        self._new_param("TypeVar", stack, constraints)

    def op_SET_TYPEPARAM_DEFAULT(self, arg: Any, stack: List[Any], out: List[ast.stmt],
                                 ins: Instr) -> None:
        default = self._lazy_value(stack.pop())
        param = stack[-1] if stack else None
        if not isinstance(param, TypeParam) or param.default is not None:
            raise StructureError("type parameter default of an unexpected value")
        param.default = default

    def _lazy_value(self, stub: Any) -> ast.expr:
        """The expression a lazily evaluated bound/constraints/default function returns."""
        if not isinstance(stub, FunctionStub) or not plain_lazy_function(stub):
            raise StructureError("type parameter bound is not a plain function")
        body = lazy_value_body(stub.value, LazyValue(stub.value, self.consts).statements())
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            raise StructureError("type parameter bound is not a single expression")
        return body[0].value

    # -- what the type parameters are handed to --------------------------------------------------
    def op_BUILD_TUPLE(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        items = stack[len(stack) - arg:] if arg else []
        if items and all(isinstance(x, TypeParam) for x in items):
            del stack[len(stack) - arg:]
            stack.append(TypeParamList(items))
            return
        if arg == 3 and _is_str_constant(items[0]) and isinstance(items[1], TypeParamList) \
                and isinstance(items[2], FunctionStub) and items[2].value.co_name == items[0].value:
            # (name, type params, value function): the operand of INTRINSIC_TYPEALIAS
            del stack[len(stack) - arg:]
            stack.append(M.Marker(("type_alias_operand", items[0].value, items[2], items[1])))
            return
        if _class_arguments(items):
            del stack[len(stack) - arg:]  # __build_class__'s arguments, for CALL_FUNCTION_EX
            stack.append(ClassArguments(items))
            return
        super().op_BUILD_TUPLE(arg, stack, out, ins)

    # ``class C[T](A, *bases)``: __build_class__'s arguments are a list, extended with the
    # starred bases, appended the Generic base, made a tuple
    def op_BUILD_LIST(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        items = stack[len(stack) - arg:] if arg else []
        if _class_arguments(items):
            del stack[len(stack) - arg:]
            stack.append(ClassArguments(items))
            return
        super().op_BUILD_LIST(arg, stack, out, ins)

    def op_LIST_EXTEND(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if len(stack) > arg and isinstance(stack[-1 - arg], ClassArguments):
            seq = self.value(stack.pop())
            stack[-arg].value.append(ast.Starred(seq, ast.Load()))
            return
        super().op_LIST_EXTEND(arg, stack, out, ins)

    def op_LIST_APPEND(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if len(stack) > arg and isinstance(stack[-1 - arg], ClassArguments):
            v = stack.pop()
            stack[-arg].value.append(v)
            return
        super().op_LIST_APPEND(arg, stack, out, ins)

    def op_LIST_TO_TUPLE(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if not (stack and isinstance(stack[-1], ClassArguments)):
            super().op_LIST_TO_TUPLE(arg, stack, out, ins)

    def op_TYPE_ALIAS(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        operand = stack.pop()
        if not (isinstance(operand, M.Marker) and isinstance(operand.value, tuple)
                and operand.value[0] == "type_alias_operand" and len(operand.value) == 4):
            raise StructureError("INTRINSIC_TYPEALIAS of an unexpected operand")
        _, name, stub, params = operand.value
        body = lazy_value_body(stub.value, self.nested_body(stub.value))
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            raise StructureError("type alias value is not a single expression")
        stack.append(M.Marker(("type_alias", name, body[0].value, [p.node() for p in params.value])))

    def op_SET_FUNCTION_TYPE_PARAMS(self, arg: Any, stack: List[Any], out: List[ast.stmt],
                                    ins: Instr) -> None:
        params = stack.pop()
        func = stack.pop()
        if not isinstance(params, TypeParamList) or not isinstance(func, FunctionStub) \
                or func.type_params:
            raise StructureError("INTRINSIC_SET_FUNCTION_TYPE_PARAMS of unexpected values")
        func.type_params = [p.node() for p in params.value]
        stack.append(func)

    def op_SUBSCRIPT_GENERIC(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        params = stack.pop()
        if not (isinstance(params, ast.Name) and params.id == ".type_params") or self.params is None:
            raise StructureError("INTRINSIC_SUBSCRIPT_GENERIC of an unexpected value")
        stack.append(GenericBase(self.params))

    def op_UNPACK_SEQUENCE(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        # ``*args: *Ts``: the star annotation is the last item of the annotations tuple or is
        # followed by the next parameter's name
        if not _starred(self, arg, stack, ins, ("BUILD_TUPLE", "LOAD_CONST")):
            super().op_UNPACK_SEQUENCE(arg, stack, out, ins)

    def special_call(self, func: Any, args: List[Any], kwnames: tuple, stack: List[Any],
                     out: List[ast.stmt]) -> bool:
        if not isinstance(func, M.ClassBuilder):
            return super().special_call(func, args, kwnames, stack, out)
        npos = len(args) - len(kwnames)
        if npos < 3 or not isinstance(args[npos - 1], GenericBase):
            raise StructureError("generic class without its Generic base last")
        if not super().special_call(func, args[:npos - 1] + args[npos:], kwnames, stack, out):
            raise StructureError("generic class statement not recognised")
        self._set_class_params(stack[-1], args[npos - 1])
        return True

    def op_CALL_EX(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        has_kw, null_slot = arg
        if len(stack) < 2 + has_kw or not isinstance(stack[-1 - has_kw], ClassArguments):
            super().op_CALL_EX(arg, stack, out, ins)
            return
        # ``class C[T](Base, **kw)``: the keywords are one mapping
        kwargs = self.value(stack.pop()) if has_kw else None
        items = stack.pop().value
        func, self_arg = self._callable(stack, null_slot)
        if self_arg or not isinstance(func, M.ClassBuilder) or not isinstance(items[-1], GenericBase):
            raise StructureError("generic class statement not recognised")
        keywords: List[ast.keyword] = []
        if kwargs is not None:
            if not isinstance(kwargs, ast.Dict):
                keywords.append(ast.keyword(None, kwargs))
            else:
                for k, v in zip(kwargs.keys, kwargs.values):
                    if k is None:
                        keywords.append(ast.keyword(None, v))
                    elif _is_str_constant(k) and k.value.isidentifier():
                        keywords.append(ast.keyword(k.value, v))
                    else:
                        raise StructureError("class keyword is not a name")
        name = items[1].value
        bases = [self.value(b) for b in items[2:-1]]
        node = self.class_def(items[0], name, bases, keywords)
        stack.append(PendingClass(node))
        self._set_class_params(stack[-1], items[-1])

    def _set_class_params(self, pending: Any, base: GenericBase) -> None:
        if not isinstance(pending, PendingClass):
            raise StructureError("generic class statement not recognised")
        pending.value.type_params = [p.node() for p in base.value.value]

    def op_RETURN_VALUE(self, arg: Any, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if self.result is not None or out:
            raise StructureError("generic parameters function with more than one statement")
        self.result = stack.pop()


class LazyValue(BodyDecompiler):
    """A lazily evaluated bound, constraints or default: one ``return <expression>``.

    ``*Ts = *tuple[int]`` (3.13) evaluates its star expression as ``UNPACK_SEQUENCE 1`` of
    the value, returned at once: read back as the starred value.
    """

    def op_UNPACK_SEQUENCE(self, arg: int, stack: List[Any], out: List[ast.stmt], ins: Instr) -> None:
        if not _starred(self, arg, stack, ins, ("RETURN_VALUE",)):
            super().op_UNPACK_SEQUENCE(arg, stack, out, ins)


def _starred(dec: BodyDecompiler, arg: int, stack: List[Any], ins: Instr, uses: Any) -> bool:
    """``*value`` where the compiler writes it as ``UNPACK_SEQUENCE 1`` of the value and the
    item is used at once by an instruction in ``uses`` (a star default is returned, a star
    annotation ``*args: *Ts`` goes into the annotations tuple): pushes it, or says no."""
    instrs = dec.instrs
    nxt = instrs[ins.index + 1] if ins.index + 1 < len(instrs) else None
    if arg != 1 or nxt is None or nxt.op not in uses:
        return False
    stack.append(ast.Starred(dec.value(stack.pop()), ast.Load()))
    return True


def generic_definition(builder: Any, stub: FunctionStub, args: List[Any], kwnames: tuple) -> Any:
    """What calling the hidden function ``stub`` with ``args`` makes: a FunctionStub with
    ``type_params``, a PendingClass, or a ``type_alias`` marker (with its parameters)."""
    code = stub.value
    names = code.co_varnames[:code.co_argcount]
    if kwnames or len(args) != len(names) or stub.defaults or stub.kwdefaults or stub.annotations:
        raise StructureError("unexpected call of %s" % code.co_name)
    return _definition(code, builder.consts, args)[1]


def _definition(code: types.CodeType, pool: Any, args: List[Any]) -> Any:
    """``(decompiler, result)`` of the hidden function ``code`` called with ``args``."""
    names = code.co_varnames[:code.co_argcount]
    if any(n not in _HIDDEN_ARGS for n in names):
        raise StructureError("unexpected parameters of %s" % code.co_name)
    sub = GenericParameters(code, pool, dict(zip(names, args)))
    stmts = sub.statements()
    result = sub.result
    if stmts or result is None:
        raise StructureError("%s is not one generic definition" % code.co_name)
    if isinstance(result, FunctionStub) and result.type_params:
        return sub, result
    if isinstance(result, PendingClass) and result.value.type_params:
        return sub, result
    if isinstance(result, M.Marker) and isinstance(result.value, tuple) \
            and result.value[0] == "type_alias" and len(result.value) == 4:
        return sub, result
    raise StructureError("%s is not one generic definition" % code.co_name)


def fallback_maker_lines(code: types.CodeType, pool: Any, maker: str) -> List[str]:
    """For the fallback (state machine) body: ``def <maker>(<defaults>, <kwdefaults>):``
    holding the generic definition the hidden function ``code`` makes, returning it.

    The maker takes the hidden function's own arguments (the defaults, which are values in
    the fallback's stack slots): they are set as ``__defaults__``/``__kwdefaults__`` after
    the definition, which is written without them.  The definition's name is local to the
    maker: refused (StructureError) when code inside the definition reads that name, which
    would find the maker's variable instead of the enclosing scope's.  Its ``__qualname__``
    (a class's is set in its body) is the original one, not the maker's nesting.
    """
    from pellucid.decompiler.unparse import unparse

    names = code.co_varnames[:code.co_argcount]
    placeholders = {".defaults": ast.Tuple([], ast.Load()), ".kwdefaults": ast.Dict([], [])}
    sub, result = _definition(code, pool, [placeholders.get(n) for n in names])
    if isinstance(result, FunctionStub):
        name = result.value.co_name
        node: ast.stmt = sub.function_def(result, name, [])
        after = ["%s.__qualname__ = %r" % (name, result.value.co_qualname)]  # type: ignore[attr-defined]
    elif isinstance(result, PendingClass):
        if GENERIC_CLASS_MANGLES_ENCLOSING:
            # 3.12's symbol table (seen on 3.12.1) mangles the private names of a function that
            # follow a generic class statement anywhere inside it with that class's name, and
            # compiles them as NAME operations: the fallback's own (private) names would fail
            # ("no locals found when storing '__pellucid_s4'")
            raise StructureError("generic class in a fallback body on 3.12")
        node = result.value
        name = node.name
        qualname = _stored_qualname(result.value, code)
        if len(node.body) == 1 and isinstance(node.body[0], ast.Pass):
            node.body = []
        first = node.body[0] if node.body else None
        at = 1 if isinstance(first, ast.Expr) and _is_str_constant(first.value) else 0  # (docstring)
        node.body.insert(at, ast.Assign([ast.Name("__qualname__", ast.Store())], ast.Constant(qualname)))
        after = []
    else:
        name = result.value[1]
        node = ast.TypeAlias(ast.Name(name, ast.Store()), result.value[3], result.value[2])  # type: ignore[attr-defined]
        after = []
    private = name.startswith("__") and not name.endswith("__")  # (mangled in a class body)
    if not name.isidentifier() or private or _reads(code, name):
        raise StructureError("%s reads its own name" % code.co_name)
    params = ["__pellucid" + n.replace(".", "_") for n in names]
    after += ["%s.__%s__ = %s" % (name, n[1:], p) for n, p in zip(names, params)]
    body = unparse(ast.Module([node], [])).split("\n") + after + ["return %s" % name]
    return ["def %s(%s):" % (maker, ", ".join(params))] + ["    " + line for line in body]


def _stored_qualname(node: ast.ClassDef, code: types.CodeType) -> str:
    """The ``__qualname__`` the generic class's body stores (its code is the hidden function's
    constant named like the class)."""
    for c in code.co_consts:
        if isinstance(c, types.CodeType) and c.co_name == node.name:
            return c.co_qualname  # type: ignore[attr-defined,no-any-return]
    raise StructureError("class body of %s not found" % node.name)


def _reads(code: types.CodeType, name: str) -> bool:
    """Whether ``code`` or code nested in it reads ``name`` as a global or free variable."""
    if name in code.co_names or name in code.co_freevars:
        return True
    return any(isinstance(c, types.CodeType) and _reads(c, name) for c in code.co_consts)
