"""Source back to a code object that can replace the original (``func.__code__ = ...``).

The decompiled definition is compiled inside a wrapper function whose parameters are the
original's free variables, so the new code gets the same closure layout; then names, flags and
the file name are set to match.  Without a file to write to, the code also gets the original's
line numbers (:mod:`pellucid.decompiler.source_lines`).
"""
import ast
import os
import types
from typing import Any, Dict, List, Optional, Tuple

from pellucid.bytecode.features import AST_TYPE_PARAMS, DEFERRED_ANNOTATIONS, SUPER_ATTR_INSTRUCTION
from pellucid.bytecode.imported_names import import_bound_names
from pellucid.bytecode.normalize import shared_results
from pellucid.decompiler.annotations_setup import future_annotations
from pellucid.decompiler.annotate_host import annotate_host_tree, lazy_value_host_tree
from pellucid.decompiler.constants import ConstantPool
from pellucid.decompiler.functions import kind_flags
from pellucid.decompiler.render import code_to_ast, is_module_code
from pellucid.decompiler.source_lines import at_first_line, place_at_original_lines
from pellucid.decompiler.tree_nodes import all_nodes, name_ids
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


def _tree_for_recompile(code: types.CodeType, keep_locals: Any, const_tag: str = "",
                        imports: bool = True) -> "tuple[ast.Module, ConstantPool]":
    pool = ConstantPool(const_tag)
    if is_module_code(code):
        return code_to_ast(code, consts=pool)
    host = annotate_host_tree(code, pool) or lazy_value_host_tree(code, pool)
    if host is not None:
        return host, pool
    # 3.14+ compiles a class body's annotations eagerly (as the original under the annotations
    # future did: text stored in ``__annotations__``) only under that future import too.
    pool.future_annotations = DEFERRED_ANNOTATIONS and future_annotations(code)
    tree, pool = code_to_ast(code, name=target_name(code), consts=pool)
    fn = at_first_line(tree.body[0], code)
    if keep_locals:
        _declare_locals(fn, code, cells_only=keep_locals == CELLS)
    if code.co_freevars:
        _declare_freevars(fn, code)
        args = ast.arguments(posonlyargs=[], args=[ast.arg(n, None) for n in code.co_freevars],
                             vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
        give_back = at_first_line(ast.Return(ast.Name(fn.name, ast.Load())), code)
        wrapper = ast.FunctionDef(WRAPPER, args, [fn, give_back], [], None)
        if AST_TYPE_PARAMS:
            wrapper.type_params = []
        tree = ast.Module([at_first_line(wrapper, code)], [])
    declaration = _imports_declaration(code) if imports else None
    if declaration is not None:
        tree.body.append(declaration)
    if pool.future_annotations:
        tree.body.insert(0, ast.ImportFrom("__future__", [ast.alias("annotations", None)], 0))
    if _super_unoptimized(code):
        # 3.12+ compiles ``super().attr`` to LOAD_SUPER_ATTR (reading the __class__ cell
        # itself) unless the module names ``super`` at its top level; the original was compiled
        # so.  A never-run ``if False: super`` at the top keeps the plain call.
        tree.body.append(ast.If(ast.Constant(False), [ast.Expr(ast.Name("super", ast.Load()))],
                                []))
    return tree, pool


def _super_unoptimized(code: types.CodeType) -> bool:
    """3.12+: ``code`` (or a code object in it) calls the global ``super`` but no instruction
    is LOAD_SUPER_ATTR -- its module named ``super`` at the top level."""
    if not SUPER_ATTR_INSTRUCTION:
        return False
    calls = False
    todo = [code]
    while todo:
        c = todo.pop()
        names = c.co_names
        if "super" in names:
            import dis
            for ins in dis.get_instructions(c):
                if ins.opname == "LOAD_SUPER_ATTR":
                    return False
                if ins.opname == "LOAD_GLOBAL" and ins.argval == "super":
                    calls = True
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return calls


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
    declaration = ast.If(ast.Constant(False), [ast.Expr(refs)], [])
    declaration._pellucid_note = "never runs: makes %s free, as in the original" % _listed(missing)  # type: ignore[attr-defined]
    # First (after a docstring), not last: a statement at the end gives the implicit
    # ``return None`` after it a line, and 3.11+ then no longer copy that return into each
    # arm of a closing ``if`` as they did in the original.
    first = fn.body[0] if fn.body else None
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
        and isinstance(first.value.value, str)
    fn.body.insert(1 if docstring else 0, declaration)


SLOT_PREFIX = "__pellucid_slot_"
CELLS = "cells"  # keep_locals: only the cell variables


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


def _declare_locals(fn: ast.FunctionDef, code: types.CodeType, cells_only: bool = False) -> None:
    """Declare, in never-run code, the original's local slots (``cells_only``: only its cell
    variables, all a frame Dynamo lays out needs besides the arguments and free variables)."""
    names = [] if cells_only else _standins(code)
    # Cell variables the rendered body does not use in a nested scope (Dynamo keeps every cell
    # of the function it transformed, also those only its resume functions use): assigning them
    # here and naming them in a never-compiled lambda makes them cells of the new code too.
    args = set(code.co_varnames[:_nargs(code)])
    cells = [n for n in code.co_cellvars if n not in code.co_freevars]
    names += [n for n in cells if n not in args and n not in names]
    # (an argument that is a cell -- ``self`` read in a comprehension on <= 3.11 -- needs no
    # assignment, only the lambda naming it)
    if not names and not cells:
        return
    # ``if False:`` is never compiled to instructions, but (3.10+) its names get local slots in
    # the order they appear, which is all this statement is for.
    stmts: List[ast.stmt] = []
    if names:
        targets: List[ast.expr] = [ast.Name(n, ast.Store()) for n in names]
        stmts.append(ast.Assign(targets, ast.Constant(None)))
    if cells:
        no_args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                kw_defaults=[], kwarg=None, defaults=[])
        refs = ast.Tuple([ast.Name(n, ast.Load()) for n in cells], ast.Load())
        stmts.append(ast.Expr(ast.Lambda(no_args, refs)))
    layout = ast.If(ast.Constant(False), stmts, [])
    if cells_only:
        layout._pellucid_note = "never runs: makes %s, as in the original" % (  # type: ignore[attr-defined]
            _listed(cells) + (" cells" if len(cells) > 1 else " a cell"))
    body = fn.body
    at = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str) else 0
    body.insert(at, layout)


def _listed(names: List[str]) -> str:
    return ", ".join(names)


NOTE = "__pellucid_note_%d__"


def _one_line_notes(tree: ast.Module) -> Dict[str, Tuple[ast.stmt, str]]:
    """Put a placeholder (one line of source) where each ``if False:`` declaration with a note
    is; returns placeholder -> (the declaration, its one line).  Such a declaration never
    runs: written on one line with the note, it says so where it stands."""
    found: Dict[str, Tuple[ast.stmt, str]] = {}
    for node in all_nodes(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            for k, stmt in enumerate(stmts):
                note = getattr(stmt, "_pellucid_note", None)
                if note is None:
                    continue
                key = NOTE % len(found)
                inner = "; ".join(unparse(s) for s in stmt.body)  # type: ignore[attr-defined]
                found[key] = (stmt, "if False: %s  # %s" % (inner, note))
                stmts[k] = ast.Expr(ast.Name(key, ast.Load()))
    return found


def _restore_notes(tree: ast.Module, notes: Dict[str, Tuple[ast.stmt, str]], source: str) -> str:
    """Undo :func:`_one_line_notes` in ``tree``; its placeholders in ``source`` become the
    declarations' lines."""
    if not notes:
        return source
    for node in all_nodes(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            for k, stmt in enumerate(stmts):
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Name) \
                        and stmt.value.id in notes:
                    stmts[k] = notes[stmt.value.id][0]
    lines = source.split("\n")
    for i, line in enumerate(lines):
        key = line.strip()
        if key in notes:
            lines[i] = line[:len(line) - len(line.lstrip())] + notes[key][1]
    return "\n".join(lines)


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


def _rename_fallback_defs(code: types.CodeType, names: Dict[str, Any]) -> types.CodeType:
    """Give the code objects of the fallback's nested ``def __pellucid_fnN`` the name, qualified
    name and argument names of the code objects they stand for: a function's code, name and
    qualified name are what MAKE_FUNCTION made of the original's (the fallback's ``__name__``
    and ``__qualname__`` assignments then change nothing)."""
    consts = tuple(_rename_fallback_defs(c, names) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    # (3.15 qualifies a def's ``__annotate__`` by the def's name, ``f.<locals>.g.__annotate__``:
    # it is a constant beside the def's code, and follows the def's renaming)
    moved = {old.co_qualname + ".": new.co_qualname + "." for old, new in zip(code.co_consts, consts)
             if isinstance(old, types.CodeType) and old.co_name in names
             and getattr(old, "co_qualname", None) not in (None, getattr(new, "co_qualname", None))}
    if moved:
        consts = tuple(_moved_qualname(c, moved) if isinstance(c, types.CodeType) else c
                       for c in consts)
    changes: Dict[str, Any] = {}
    if any(a is not b for a, b in zip(consts, code.co_consts)):
        changes["co_consts"] = consts
    renamed = names.get(code.co_name)
    if renamed is not None:
        changes["co_name"] = renamed[0]
        if renamed[1] is not None and hasattr(code, "co_qualname"):
            changes["co_qualname"] = renamed[1]
        args = renamed[2]
        if code.co_varnames[:len(args)] != args and not set(args) & set(code.co_varnames[len(args):]):
            # (a comprehension's '.0', written '__pellucid__0' in source)
            changes["co_varnames"] = args + code.co_varnames[len(args):]
    return code.replace(**changes) if changes else code


def _moved_qualname(code: types.CodeType, moved: Dict[str, str]) -> types.CodeType:
    for old, new in moved.items():
        if code.co_qualname.startswith(old):
            return code.replace(co_qualname=new + code.co_qualname[len(old):])
    return code


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
                   qualname: Optional[str] = None, keep_locals: Any = False,
                   header: str = "", write: bool = True, const_tag: str = "",
                   imports: bool = True) -> Recompiled:
    """Recompile ``code``; see :func:`pellucid.recompile`.

    ``keep_locals``: the new code's ``co_varnames`` start with all of the original's, in order,
    and its cell variables are the original's; ``keep_locals=CELLS``: only the cell variables
    are (with the arguments and free variables, which always are, all that a frame Dynamo lays
    out for the original needs: it copies those by position, and nothing else).  ``imports``:
    declare the names the original's module imported (:func:`_imports_declaration`; only the
    form of some method calls depends on it).
    ``header`` (comment lines) goes before the source in the file and in what is compiled, so
    line numbers point into the file.  ``write=False`` compiles as if the file at ``path``
    existed, without writing it (the caller writes it).  ``const_tag`` goes into the names of
    the constants without a literal form (see ``bindings``).
    """
    _check_shadowed(code)
    with shared_results():  # (each code object's instructions read once; see render_code)
        tree, pool = _tree_for_recompile(code, keep_locals, const_tag, imports)
    notes = _one_line_notes(tree)
    # (only ``place_at_original_lines`` reads the tree afterwards, and it reads the positions
    # the decompiler tagged, not locations: the writer needs statements' lines alone)
    source = header + _restore_notes(tree, notes, unparse(tree, locate_all=False))
    return _compiled(code, source, tree, pool.bindings, pool.fallback_defs, path, qualname,
                     keep_locals, write)


def recompile_source(code: types.CodeType, source: str, bindings: Dict[str, Any], path: str,
                     keep_locals: Any = False) -> Recompiled:
    """What :func:`recompile_full` makes of ``source`` as if its decompiler had written it for
    ``code`` (with ``bindings`` for its constants without a literal form), compiled as the file
    at ``path`` (not written).  The result is as unproven as any recompiled code: verify it.

    >>> def f(x): return x + 1
    >>> recompile_source(f.__code__, "def f(x):\n    return x + 1", {}, "f.py").code.co_name
    'f'
    """
    return _compiled(code, source, None, bindings, {}, path, None, keep_locals, False)


def _compiled(code: types.CodeType, source: str, tree: Optional[ast.Module], bindings: Dict[str, Any],
              fallback_defs: Dict[str, Any], path: Optional[str], qualname: Optional[str],
              keep_locals: Any, write: bool) -> Recompiled:
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
            assert tree is not None  # (recompile_source always has a path)
            to_compile = ast.parse(source, filename)
            place_at_original_lines(to_compile, tree, code.co_firstlineno)
        # optimize=0: the original had its asserts (LOAD_ASSERTION_ERROR), keep them under -O too.
        module = compile(to_compile, filename, "exec", dont_inherit=True, optimize=0)
    except SyntaxError as exc:
        raise DecompileError("decompiled source of %s does not compile: %s" % (code.co_name, exc))
    if fallback_defs:
        module = _rename_fallback_defs(module, fallback_defs)
    if is_module_code(code):
        return Recompiled(module, source, bindings)
    name = target_name(code)
    new = find_nested_code(module, name)
    if new is None:
        raise DecompileError("recompiled source lost the function %s" % code.co_name)
    if keep_locals is True and (shadowed_locals(code) or repeated_locals(code)):
        new = _real_names(code, new)
    new = _hidden_parameters_back(code, new)
    nargs = _nargs(code)
    if new.co_varnames[:nargs] != code.co_varnames[:nargs] and len(new.co_varnames) >= nargs \
            and all(a == b or not a.isidentifier()
                    for a, b in zip(code.co_varnames[:nargs], new.co_varnames[:nargs])) \
            and not set(code.co_varnames[:nargs]) & set(new.co_varnames[nargs:]):
        # An argument source cannot name (a comprehension's '.0', decompiled on its own) was
        # written under a stand-in name: the code gets the original's back.
        new = new.replace(co_varnames=code.co_varnames[:nargs] + new.co_varnames[nargs:])
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
    if keep_locals is True and new.co_varnames[:len(code.co_varnames)] != code.co_varnames:
        problems.append("local slots %r do not start with %r" % (new.co_varnames, code.co_varnames))
    if keep_locals and new.co_cellvars != code.co_cellvars:
        problems.append("co_cellvars %r != %r" % (new.co_cellvars, code.co_cellvars))
    if problems:
        raise DecompileError("recompiled %s differs in layout: %s" % (code.co_name, ", ".join(problems)))
    compiled_qualname = (WRAPPER + ".<locals>." if code.co_freevars else "") + name
    # (what the code's own constants say first: they are what its nested code objects store)
    original_qualname = getattr(code, "co_qualname", None) or _qualname_in_consts(code) \
        or qualname or code.co_name
    new = _retarget_qualnames(new, compiled_qualname, original_qualname)
    changes: Dict[str, Any] = {"co_name": code.co_name, "co_flags": code.co_flags}
    if hasattr(code, "co_qualname") and new.co_qualname != code.co_qualname and (
            new.co_name == "__annotate__" or new.co_varnames[:1] == (".format",)):
        # (recompiled from its host definition, see annotate_host: the host's name is made up
        # where the original's is not an identifier)
        changes["co_qualname"] = code.co_qualname
    if not path:
        changes["co_filename"] = code.co_filename
    return Recompiled(new.replace(**changes), source, bindings)


def _qualname_in_consts(code: types.CodeType) -> Optional[str]:
    """Up to 3.10 a code object does not know its qualified name, but the functions it makes
    get theirs from its constants (``'outer.<locals>.f'`` before MAKE_FUNCTION), and the
    classes it makes store theirs: ``outer``."""
    strings = [c for c in code.co_consts if isinstance(c, str)]
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            tail = ".<locals>." + c.co_name
            # (a class body stores its own qualified name, one of its constants)
            for q in strings + [k for k in c.co_consts if isinstance(k, str)]:
                if q.endswith(tail) and q != tail:
                    return q[:-len(tail)]
    return None


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
