"""Source back to a code object that can replace the original (``func.__code__ = ...``).

The decompiled definition is compiled inside a wrapper function whose parameters are the
original's free variables, so the new code gets the same closure layout; then names, flags and
the file name are set to match.  Without a file to write to, the code also gets the original's
line numbers (:mod:`pellucid.decompiler.source_lines`).
"""
import ast
import os
import types
from typing import Any, Dict, List, Optional

from pellucid.bytecode.features import AST_TYPE_PARAMS
from pellucid.bytecode.imported_names import import_bound_names
from pellucid.decompiler.constants import ConstantPool
from pellucid.decompiler.functions import kind_flags
from pellucid.decompiler.render import code_to_ast, is_module_code
from pellucid.decompiler.source_lines import at_first_line, place_at_original_lines
from pellucid.decompiler.tree_nodes import name_ids
from pellucid.decompiler.unparse import unparse
from pellucid.errors import DecompileError

_KIND_FLAGS = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200  # varargs, varkw, generator, coroutine, iterable coroutine, async gen
# CO_ITERABLE_COROUTINE (set by @types.coroutine) has no source form; like every other flag it
# is copied onto the new code below, so it is not compared.
_SOURCE_KIND_FLAGS = _KIND_FLAGS & ~0x100
WRAPPER = "__pellucid_closure__"
TARGET = "__pellucid_target__"


class Recompiled:
    """Result of recompiling: the code object, its source, and names it needs bound."""

    def __init__(self, code: types.CodeType, source: str, bindings: Dict[str, Any]) -> None:
        self.code = code
        self.source = source
        self.bindings = bindings


def _tree_for_recompile(code: types.CodeType, keep_locals: bool,
                        const_tag: str = "") -> "tuple[ast.Module, ConstantPool]":
    pool = ConstantPool(const_tag)
    if is_module_code(code):
        return code_to_ast(code, consts=pool)
    tree, pool = code_to_ast(code, name=target_name(code), consts=pool)
    fn = at_first_line(tree.body[0], code)
    if keep_locals:
        _declare_locals(fn, code)
    if code.co_freevars:
        _declare_freevars(fn, code)
        args = ast.arguments(posonlyargs=[], args=[ast.arg(n, None) for n in code.co_freevars],
                             vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
        give_back = at_first_line(ast.Return(ast.Name(fn.name, ast.Load())), code)
        wrapper = ast.FunctionDef(WRAPPER, args, [fn, give_back], [], None)
        if AST_TYPE_PARAMS:
            wrapper.type_params = []
        tree = ast.Module([at_first_line(wrapper, code)], [])
    declaration = _imports_declaration(code)
    if declaration is not None:
        tree.body.append(declaration)
    return tree, pool


def _imports_declaration(code: types.CodeType) -> Optional[ast.stmt]:
    """``if False: import a, b`` for the names the original module imported (as its method
    calls show, see :mod:`pellucid.bytecode.imported_names`).  It never runs; it is there because
    3.11+ compiles ``a.f()`` differently when ``a`` is imported at module level.  It goes after
    the definition so that the definition's lines do not move."""
    names = import_bound_names(code)
    if not names:
        return None
    return ast.If(ast.Constant(False), [ast.Import([ast.alias(n, None) for n in names])], [])


def _declare_freevars(fn: ast.FunctionDef, code: types.CodeType) -> None:
    """Make every free variable of ``code`` free in the new code too, even one its body never
    reads (Dynamo's resume functions carry the whole closure of the function they resume):
    ``if False: (a, b)`` compiles to nothing but still makes the names free."""
    if not code.co_freevars:
        return
    used = name_ids(fn)
    missing = [n for n in code.co_freevars if n not in used]
    if not missing:
        return
    refs = ast.Tuple([ast.Name(n, ast.Load()) for n in missing], ast.Load())
    fn.body.append(ast.If(ast.Constant(False), [ast.Expr(refs)], []))


SLOT_PREFIX = "__pellucid_slot_"


def shadowed_locals(code: types.CodeType) -> List[str]:
    """Local variable slots of ``code`` named like one of its free variables.

    Source cannot say that (a name in a function is either local or free), but Dynamo's resume
    functions have it: the resumed function's argument cell ``x`` becomes a free variable and
    ``x`` also keeps its local slot, which nothing reads."""
    return [n for n in code.co_varnames if n in code.co_freevars]


def repeated_locals(code: types.CodeType) -> List[str]:
    """Names of more than one local variable slot of ``code``.

    Source cannot say that either, but Dynamo's resume functions (torch 2.15, Python 3.12+)
    have it: each inlined comprehension of the resumed function over the same variable name
    gets a slot of its own, all named alike."""
    seen: set = set()
    repeated: List[str] = []
    for n in code.co_varnames:
        if n in seen and n not in repeated:
            repeated.append(n)
        seen.add(n)
    return repeated


def _standins(code: types.CodeType) -> List[str]:
    """``co_varnames`` past the arguments as the recompiled source declares them: a slot named
    like a free variable, or like an earlier slot, under a stand-in name (renamed back after
    compiling, see ``_real_names``); under its own name it would make the free variable local,
    or be the earlier slot."""
    nargs = _nargs(code)
    seen = set(code.co_varnames[:nargs])
    names: List[str] = []
    for i, n in enumerate(code.co_varnames[nargs:], nargs):
        if n in code.co_freevars:
            names.append(SLOT_PREFIX + n)
        elif n in seen:
            names.append("%s%d_%s" % (SLOT_PREFIX, i, n))
        else:
            names.append(n)
        seen.add(n)
    return names


def _real_names(code: types.CodeType, new: types.CodeType) -> types.CodeType:
    """``new`` with the stand-in slot names of ``_standins`` named as in ``code``."""
    real = dict(zip(_standins(code), code.co_varnames[_nargs(code):]))
    return new.replace(co_varnames=tuple(real.get(n, n) for n in new.co_varnames))


def _check_shadowed(code: types.CodeType) -> None:
    """Refuse code that uses a local slot named like a free variable (the source's ``x`` would
    mean the free variable, so the decompiled code would read the wrong one), or a name of more
    than one slot (instructions name a slot by its name: which one would be a guess)."""
    shadowed = set(shadowed_locals(code)) | set(repeated_locals(code))
    if not shadowed:
        return
    from pellucid.bytecode.normalize import normalize
    if any(n in shadowed for n in code.co_varnames[:_nargs(code)]):
        raise DecompileError("%s: an argument is named like a free variable or another slot"
                             % code.co_name)
    for ins in normalize(code):
        if ins.op in ("LOAD_FAST", "STORE_FAST", "DELETE_FAST", "LOAD_FAST_AND_CLEAR") \
                and ins.arg in shadowed:
            raise DecompileError("%s: uses the local %r, which is named like a free variable or "
                                 "another slot" % (code.co_name, ins.arg))


def _declare_locals(fn: ast.FunctionDef, code: types.CodeType) -> None:
    names = _standins(code)
    # Cell variables the rendered body does not use in a nested scope (Dynamo keeps every cell
    # of the function it transformed, also those only its resume functions use): assigning them
    # here and naming them in a never-compiled lambda makes them cells of the new code too.
    args = set(code.co_varnames[:_nargs(code)])
    cells = [n for n in code.co_cellvars if n not in code.co_freevars]
    names += [n for n in cells if n not in args and n not in names]
    if not names:
        return
    # ``if False:`` is never compiled to instructions, but (3.10+) its names get local slots in
    # the order they appear, which is all this statement is for.
    targets: List[ast.expr] = [ast.Name(n, ast.Store()) for n in names]
    stmts: List[ast.stmt] = [ast.Assign(targets, ast.Constant(None))]
    if cells:
        no_args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                kw_defaults=[], kwarg=None, defaults=[])
        refs = ast.Tuple([ast.Name(n, ast.Load()) for n in cells], ast.Load())
        stmts.append(ast.Expr(ast.Lambda(no_args, refs)))
    layout = ast.If(ast.Constant(False), stmts, [])
    body = fn.body
    at = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str) else 0
    body.insert(at, layout)


def target_name(code: types.CodeType) -> str:
    """The name the recompiled definition gets: the original one where it is an identifier."""
    name = code.co_name
    if name.isidentifier() and not name.startswith("__pellucid") and name != WRAPPER:
        return name
    return TARGET


def _retarget_qualnames(code: types.CodeType, old: str, new: str) -> types.CodeType:
    """Give nested functions the qualified names they had (``f.<locals>.g``, not the wrapper's)."""
    if old == new:
        return code
    consts = []
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            c = _retarget_qualnames(c, old, new)
        elif isinstance(c, str) and c.startswith(old + ".<locals>."):
            c = new + c[len(old):]
        consts.append(c)
    changes: Dict[str, Any] = {"co_consts": tuple(consts)}
    qual = getattr(code, "co_qualname", None)
    if qual is not None and (qual == old or qual.startswith(old + ".")):
        changes["co_qualname"] = new + qual[len(old):]
    return code.replace(**changes)


def find_nested_code(code: types.CodeType, name: str) -> Optional[types.CodeType]:
    """The first code object named ``name`` nested (at any depth) in ``code``'s constants.

    >>> find_nested_code(compile("def f(): pass", "<s>", "exec"), "f").co_name
    'f'
    """
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            if c.co_name == name:
                return c
            found = find_nested_code(c, name)
            if found is not None:
                return found
    return None


def recompile_full(code: types.CodeType, path: Optional[str] = None,
                   qualname: Optional[str] = None, keep_locals: bool = False,
                   header: str = "", write: bool = True, const_tag: str = "") -> Recompiled:
    """Recompile ``code``; see :func:`pellucid.recompile`.

    ``keep_locals``: the new code's ``co_varnames`` start with all of the original's, in order.
    ``header`` (comment lines) goes before the source in the file and in what is compiled, so
    line numbers point into the file.  ``write=False`` compiles as if the file at ``path``
    existed, without writing it (the caller writes it).  ``const_tag`` goes into the names of
    the constants without a literal form (see ``bindings``).
    """
    _check_shadowed(code)
    tree, pool = _tree_for_recompile(code, keep_locals, const_tag)
    # (only ``place_at_original_lines`` reads the tree afterwards, and it reads the positions
    # the decompiler tagged, not locations: the writer needs statements' lines alone)
    source = header + unparse(tree, locate_all=False)
    filename = os.path.abspath(path) if path else code.co_filename
    if path and write:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(source + "\n")
    try:
        if path:
            to_compile: Any = source  # lines point into the file written there
        else:
            # The code keeps the original's file name, so it keeps its lines too: the source
            # parsed back, each node placed where the instructions it came from were.
            to_compile = ast.parse(source, filename)
            place_at_original_lines(to_compile, tree, code.co_firstlineno)
        # optimize=0: the original had its asserts (LOAD_ASSERTION_ERROR), keep them under -O too.
        module = compile(to_compile, filename, "exec", dont_inherit=True, optimize=0)
    except SyntaxError as exc:
        raise DecompileError("decompiled source of %s does not compile: %s" % (code.co_name, exc))
    if is_module_code(code):
        return Recompiled(module, source, pool.bindings)
    name = target_name(code)
    new = find_nested_code(module, name)
    if new is None:
        raise DecompileError("recompiled source lost the function %s" % code.co_name)
    if keep_locals and (shadowed_locals(code) or repeated_locals(code)):
        new = _real_names(code, new)
    new = _hidden_parameters_back(code, new)
    problems: List[str] = []
    for attr in ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount"):
        if getattr(new, attr, 0) != getattr(code, attr, 0):
            problems.append(attr)
    if new.co_freevars != code.co_freevars:
        problems.append("co_freevars %r != %r" % (new.co_freevars, code.co_freevars))
    if (new.co_flags & _SOURCE_KIND_FLAGS) != (kind_flags(code) & _SOURCE_KIND_FLAGS):
        problems.append("co_flags %#x != %#x" % (new.co_flags, code.co_flags))
    if new.co_varnames[:_nargs(code)] != code.co_varnames[:_nargs(code)]:
        problems.append("argument names")
    if keep_locals and new.co_varnames[:len(code.co_varnames)] != code.co_varnames:
        problems.append("local slots %r do not start with %r" % (new.co_varnames, code.co_varnames))
    if keep_locals and new.co_cellvars != code.co_cellvars:
        problems.append("co_cellvars %r != %r" % (new.co_cellvars, code.co_cellvars))
    if problems:
        raise DecompileError("recompiled %s differs in layout: %s" % (code.co_name, ", ".join(problems)))
    compiled_qualname = (WRAPPER + ".<locals>." if code.co_freevars else "") + name
    original_qualname = getattr(code, "co_qualname", qualname or code.co_name)
    new = _retarget_qualnames(new, compiled_qualname, original_qualname)
    changes: Dict[str, Any] = {"co_name": code.co_name, "co_flags": code.co_flags}
    if not path:
        changes["co_filename"] = code.co_filename
    return Recompiled(new.replace(**changes), source, pool.bindings)


def _hidden_parameters_back(code: types.CodeType, new: types.CodeType) -> types.CodeType:
    """``new`` with the original names of parameters no source can spell (``.0``, 3.14's
    ``.format``), which the decompiled source gave an identifier (fallback._local): no call can
    pass them by keyword, so only the name differed."""
    from pellucid.decompiler.fallback import _local
    n = _nargs(code)
    names = list(new.co_varnames)
    for k, name in enumerate(code.co_varnames[:n]):
        if not name.isidentifier() and k < len(names) and names[k] == _local(name):
            names[k] = name
    if names == list(new.co_varnames):
        return new
    return new.replace(co_varnames=tuple(names))


def _nargs(code: types.CodeType) -> int:
    n = code.co_argcount + code.co_kwonlyargcount
    if code.co_flags & 0x04:
        n += 1
    if code.co_flags & 0x08:
        n += 1
    return n
