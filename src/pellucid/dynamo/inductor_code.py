"""Make Inductor's output code run from its dumped file, so a debugger can step through ``call()``.

Inductor turns each graph into a Python module (the "wrapper code": ``call(args)`` allocates
buffers and calls the compiled kernels), writes it to its cache directory under a name that is
the hash of its text, and imports it from there.  The dump's ``__compiled_fn_<n>.inductor.py``
(``.inductor_backward.py`` for a backward graph) holds that text, unchanged, below a header of
pellucid's.  While ``debug()`` is active, the functions of the module Inductor imported
(``call``, the ``Runner`` methods, ...) get as code the code compiled from the dumped file, so
breakpoints there are hit; they keep the module's globals (its kernels and constants), so the
module's top level -- compiling and loading the kernels -- does not run again.  Only after:

* the dumped text (below the header) hashes to the module's name: Inductor names the file it
  imports by the hash of its text, so this is the module Inductor would load for this text;
* each function's code compiled from the dumped file is the code of the function that runs
  with only its file name and line numbers changed -- identical bytecode, constants, names,
  flags and exception table, which is a proof of equivalence needing no symbolic run.

Otherwise Inductor's own module runs, and the outcome says why.

>>> same_code_but_lines(compile("x = 1", "a.py", "exec"), compile("\\nx = 1", "b.py", "exec"))
>>> same_code_but_lines(compile("x = 1", "a.py", "exec"), compile("x = 2", "a.py", "exec"))
'constant 0 of <module>: 1 != 2'
"""
import os
import types
from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

from pellucid.dynamo.graph_files import inductor_module_text
from pellucid.dynamo.torch_features import find

#: code-object attributes that must be equal for two code objects to run the same (everything
#: but the file name, the first line and the line table); absent ones (older Pythons) are skipped
_SAME = ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals", "co_stacksize",
         "co_flags", "co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_name",
         "co_qualname", "co_exceptiontable")

_NEWLOCALS = 0x2  # CO_NEWLOCALS: a function body (a class body shares its namespace)


def same_code_but_lines(a: types.CodeType, b: types.CodeType) -> Optional[str]:
    """None when ``a`` and ``b`` differ only in file name and line numbers (nested code objects
    included); else the first difference."""
    for attr in _SAME:
        if getattr(a, attr, None) != getattr(b, attr, None) and not (
                attr == "co_code" and _code_differs_in_first_line_only(a, b)):
            return "%s of %s differs" % (attr, a.co_name)
    if len(a.co_consts) != len(b.co_consts):
        return "the constants of %s differ" % a.co_name
    for k, (x, y) in enumerate(zip(a.co_consts, b.co_consts)):
        if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
            why = same_code_but_lines(x, y)
            if why is not None:
                return why
        elif not _same_constant(x, y) and not _first_line_constant(a, b, x, y):
            return "constant %d of %s: %r != %r" % (k, a.co_name, x, y)
    return None


def _code_differs_in_first_line_only(a: types.CodeType, b: types.CodeType) -> bool:
    """Whether the instructions of class bodies ``a`` and ``b`` differ only in the operand
    loading each one's ``__firstlineno__`` (3.14 loads a small int from the instruction's
    argument, not from the constants)."""
    import dis

    if a.co_flags & _NEWLOCALS or "__firstlineno__" not in a.co_names:
        return False
    xs, ys = list(dis.get_instructions(a)), list(dis.get_instructions(b))
    if len(xs) != len(ys):
        return False
    for k, (x, y) in enumerate(zip(xs, ys)):
        if (x.opcode, x.arg) == (y.opcode, y.arg):
            continue
        stores_first_line = k + 1 < len(xs) and xs[k + 1].argval == "__firstlineno__" \
            and xs[k + 1].opname.startswith("STORE")
        if not (stores_first_line and x.opcode == y.opcode
                and (x.argval, y.argval) == (a.co_firstlineno, b.co_firstlineno)):
            return False
    return True


def _first_line_constant(a: types.CodeType, b: types.CodeType, x: Any, y: Any) -> bool:
    """Whether ``x``/``y`` are the class bodies' ``__firstlineno__`` (3.13 keeps it as a constant)."""
    return not a.co_flags & _NEWLOCALS and "__firstlineno__" in a.co_names and type(x) is int \
        and type(y) is int and (x, y) == (a.co_firstlineno, b.co_firstlineno)


def _same_constant(x: Any, y: Any) -> bool:
    if type(x) is not type(y):
        return False
    if isinstance(x, (tuple, frozenset)):
        xs, ys = (sorted(x, key=repr), sorted(y, key=repr)) if isinstance(x, frozenset) else (x, y)
        return len(xs) == len(ys) and all(_same_constant(p, q) for p, q in zip(xs, ys))
    if isinstance(x, (float, complex)):
        return repr(x) == repr(y)  # (tells 0.0 from -0.0, and nan equals nan)
    if isinstance(x, types.CodeType):
        return same_code_but_lines(x, y) is None
    return bool(x == y)


def codes_by_qualname(module_code: types.CodeType) -> Dict[str, List[types.CodeType]]:
    """The function code objects defined in a module's code, by qualified name."""
    found: Dict[str, List[types.CodeType]] = {}

    def walk(code: types.CodeType, prefix: str) -> None:
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                name = getattr(c, "co_qualname", prefix + c.co_name)
                if c.co_flags & _NEWLOCALS:
                    found.setdefault(name, []).append(c)
                walk(c, name + (".<locals>." if c.co_flags & _NEWLOCALS else "."))
    walk(module_code, "")
    return found


def module_functions(module_globals: Dict[str, Any], origin: str) -> List[types.FunctionType]:
    """The functions of the module whose globals these are, defined in its file ``origin``:
    module-level functions and the methods of its classes."""
    found: List[types.FunctionType] = []
    seen: Set[int] = set()

    def add(obj: Any) -> None:
        obj = getattr(obj, "__func__", obj)  # (bound, static and class methods)
        if isinstance(obj, types.FunctionType) and obj.__code__.co_filename == origin \
                and id(obj) not in seen:
            seen.add(id(obj))
            found.append(obj)
    for value in list(module_globals.values()):
        add(value)
        if isinstance(value, type) and value.__module__ == module_globals.get("__name__"):
            for member in vars(value).values():
                add(member)
    return found


def live_modules(roots: Iterable[Any], origin: str) -> List[Dict[str, Any]]:
    """The globals of the modules loaded from ``origin`` that the compiled graph runs: found
    from the graph's callable (Inductor's ``call`` is a few wrappers down), else among the
    modules Inductor's code cache loaded from that file."""
    from pellucid.dynamo.graph_code import reachable

    def from_origin(obj: Any) -> bool:
        return isinstance(obj, types.FunctionType) and obj.__code__.co_filename == origin
    dicts: Dict[int, Dict[str, Any]] = {}
    for root in roots:
        for fn in reachable(root, from_origin, max_depth=12):
            dicts.setdefault(id(fn.__globals__), fn.__globals__)
    if not dicts:
        cache = find("torch._inductor.codecache.PyCodeCache")
        mods = list(getattr(cache, "modules", [])) + list(getattr(cache, "modules_no_attr", {}).values())
        for mod in mods:
            if getattr(mod, "__file__", None) == origin:
                dicts.setdefault(id(vars(mod)), vars(mod))
    return list(dicts.values())


def check_text(body: str, origin: str) -> Optional[str]:
    """None when ``body`` is the text Inductor stored as ``origin``; else why not."""
    key = os.path.splitext(os.path.basename(origin))[0]
    code_hash = find("torch._inductor.codecache.code_hash")
    if code_hash is not None:
        # (Inductor hashes the stripped text: see ``torch._inductor.codecache.write``)
        digest = code_hash(body.strip())
        if digest != key:
            return "its text hashes to %s, not to %s, the module Inductor loaded" % (digest, key)
        return None
    try:
        with open(origin, encoding="utf-8") as fh:
            stored = fh.read()
    except OSError as exc:
        return "Inductor's module %s cannot be read (%s)" % (origin, exc.strerror or exc)
    return None if stored == body else "its text differs from Inductor's module %s" % origin


def install_from_file(path: str, origin: Optional[str], roots: Iterable[Any]
                      ) -> Tuple[List[Callable[[], None]], str]:
    """Give the functions of Inductor's live module for ``origin`` the code of the dumped
    file ``path``; returns the undo actions and "installed" or why not."""
    if not origin:
        return [], "not used: torch's trace did not say which file Inductor loaded this code from"
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        return [], "not used: %s" % (exc.strerror or exc)
    body = inductor_module_text(text)
    if body is None:
        return [], "not used: pellucid's header is missing (the file was edited?)"
    why = check_text(body, origin)
    if why is not None:
        return [], "not used: %s" % why
    try:
        codes = codes_by_qualname(compile(text, path, "exec", dont_inherit=True))
    except (SyntaxError, ValueError) as exc:
        return [], "not used: %s" % exc
    swaps: List[Tuple[types.FunctionType, types.CodeType]] = []
    for module_globals in live_modules(roots, origin):
        for fn in module_functions(module_globals, origin):
            candidates = codes.get(getattr(fn.__code__, "co_qualname", fn.__qualname__), [])
            reasons = [same_code_but_lines(fn.__code__, c) for c in candidates]
            if None not in reasons:
                return [], "not used: %s() of Inductor's module differs from the file's: %s" % (
                    fn.__qualname__, reasons[0] if reasons else "not defined in the file")
            swaps.append((fn, candidates[reasons.index(None)]))
    if not swaps:
        return [], "not used: no function of Inductor's module %s is reachable from the compiled graph" % origin
    undo: List[Callable[[], None]] = []
    for fn, code in swaps:
        old = fn.__code__
        fn.__code__ = code

        def restore(fn: types.FunctionType = fn, old: types.CodeType = old) -> None:
            fn.__code__ = old
        undo.append(restore)
    return undo, "installed"
