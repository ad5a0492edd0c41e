"""Which stdlib modules the swap suite and the benches decompile, and how their functions are found.

This is the one copy of that logic: ``tests/swap`` (the swap suite and its child runner) and
``bench/fidelity.py`` / ``bench/speed.py`` all import it, the benches by putting this folder on
``sys.path``.  It imports nothing but the standard library, so it can be loaded as a plain
top-level module from anywhere.

Targets
-------
Each :class:`Target` names a stdlib module, the CPython test modules (from the interpreter's own
``test`` package) that exercise it, and the implementation modules whose functions belong to it:

* most targets are one module (``textwrap``, ``urllib.parse``, ``html.parser`` ...);
* ``json``, ``email`` and ``tomllib`` are packages: every pure-Python submodule (a ``.py`` file,
  found with :func:`pkgutil.walk_packages`) is included -- ``json.decoder``, ``json.encoder``,
  ``json.scanner``, ``json.tool``; all of ``email.*`` including ``email.mime.*``;
  ``tomllib._parser``, ``tomllib._re``, ``tomllib._types``;
* ``collections`` includes ``collections.abc`` and ``_collections_abc``, the module that really
  defines the ABCs ``collections.abc`` re-exports (frozen into the interpreter from 3.11 on, where
  its code's file name is ``<frozen _collections_abc>``).

Which functions belong to a module
----------------------------------
A function belongs to module ``M`` when its ``__code__.co_filename`` is ``M``'s file.  They are
found in three ways, see :func:`collect_functions`:

1. a walk of ``M``'s namespace: module-level functions; classes defined in ``M`` and, recursively,
   their nested classes; staticmethod / classmethod ``__func__``; property ``fget`` / ``fset`` /
   ``fdel``; ``functools.cached_property`` / ``partialmethod`` / ``partial`` ``.func``;
   ``singledispatchmethod``; and every ``__wrapped__`` chain (``functools.wraps``,
   ``lru_cache``), each object once, under the first path it is reached by.  Closures a
   decorator in ``M`` made at import time (``typing._tp_cache``'s ``inner``) are reached this way
   too and count as ``M``'s functions;
2. the module's static definitions -- every ``def`` at module or class level, read from the
   module's compiled code -- tell which functions the walk could not reach.  A live function
   object with such a code object found by a :mod:`gc` scan (``typing``'s special forms keep
   theirs inside ``_SpecialForm`` instances) counts as canonical too;
3. definitions with no live function at all are reported as :class:`NoBytecode`: most were
   replaced by a C accelerator (``functools.reduce`` by ``_functools.reduce``, the pure-Python
   ``collections.OrderedDict`` by the C one); namespace members implemented in C that claim the
   module (``collections.deque``, ``functools.partial``) are listed as well.

Functions the gc scan finds whose code is nested deeper in ``M``'s code than a static
definition are closures made at run time by ``M``'s code elsewhere (the ``helper`` that
``contextlib.contextmanager`` makes for every decorated generator in the process).  They are
returned separately as ``closures``: their number depends on what else is imported, so they are
swapped but not counted with the module's functions.  A function whose code claims ``M``'s
file name but appears nowhere in ``M``'s compiled code (a decompiler's scratch function, say)
is ignored.
"""
from __future__ import annotations

import functools
import gc
import importlib
import inspect
import pkgutil
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

CO_NEWLOCALS = inspect.CO_NEWLOCALS
"""Code flag that tells a function body (and lambda / comprehension) from a class or module body."""

_C_DESCRIPTORS = (
    types.BuiltinFunctionType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.ClassMethodDescriptorType,
)


@dataclass(frozen=True)
class Target:
    """A stdlib module the swap suite decompiles, with the CPython tests that exercise it."""

    name: str
    tests: Tuple[str, ...]
    submodules: bool = False
    extra: Tuple[str, ...] = ()
    since: Tuple[int, int] = (3, 8)
    legacy_doctests: Tuple[str, ...] = ()
    """Modules whose doctests an old-style ``test_main()`` (no ``load_tests``) added by hand."""

    def available(self, version: Optional[Sequence[int]] = None) -> bool:
        """Whether the module exists on Python ``version`` (default: the running one)."""
        return tuple((version or sys.version_info)[:2]) >= self.since


TARGETS: Tuple[Target, ...] = (
    Target("textwrap", ("test.test_textwrap",)),
    Target("difflib", ("test.test_difflib",), legacy_doctests=("difflib",)),
    Target("argparse", ("test.test_argparse",)),
    Target("json", ("test.test_json",), submodules=True),
    Target("shlex", ("test.test_shlex",)),
    Target("fractions", ("test.test_fractions",)),
    Target("string", ("test.test_string",)),
    Target("colorsys", ("test.test_colorsys",)),
    Target("base64", ("test.test_base64",)),
    Target("calendar", ("test.test_calendar",)),
    Target("configparser", ("test.test_configparser",)),
    Target("ipaddress", ("test.test_ipaddress",)),
    Target("pprint", ("test.test_pprint",)),
    Target("statistics", ("test.test_statistics",)),
    Target("urllib.parse", ("test.test_urlparse",)),
    Target("html.parser", ("test.test_htmlparser",)),
    Target("fnmatch", ("test.test_fnmatch",)),
    Target("glob", ("test.test_glob",)),
    Target("gettext", ("test.test_gettext",)),
    Target("csv", ("test.test_csv",)),
    Target("graphlib", ("test.test_graphlib",), since=(3, 9)),
    Target("tomllib", ("test.test_tomllib",), submodules=True, since=(3, 11)),
    Target("contextlib", ("test.test_contextlib", "test.test_contextlib_async")),
    Target("dataclasses", ("test.test_dataclasses",)),
    Target("enum", ("test.test_enum",)),
    Target("functools", ("test.test_functools",)),
    Target(
        "collections",
        ("test.test_collections", "test.test_ordered_dict", "test.test_userdict",
         "test.test_userlist", "test.test_userstring"),
        submodules=True,
        extra=("_collections_abc",),
        legacy_doctests=("collections",),
    ),
    Target("ast", ("test.test_ast",)),
    Target("typing", ("test.test_typing",)),
    Target("email", ("test.test_email",), submodules=True),
)
"""Every target; :func:`available_targets` drops those the running Python lacks."""


def available_targets(version: Optional[Sequence[int]] = None) -> List[Target]:
    """The targets that exist on Python ``version``, in suite order."""
    return [target for target in TARGETS if target.available(version)]


def target_by_name(name: str) -> Target:
    """The target called ``name``; :class:`KeyError` names the known ones if there is none."""
    for target in TARGETS:
        if target.name == name:
            return target
    raise KeyError(f"no swap target {name!r}; known: {', '.join(t.name for t in TARGETS)}")


def is_pure_python(module: types.ModuleType) -> bool:
    """Whether ``module`` was loaded from Python source (or is frozen Python), not from C."""
    spec = getattr(module, "__spec__", None)
    if spec is not None and spec.origin == "frozen":
        return True
    return str(getattr(module, "__file__", None) or "").endswith(".py")


def module_names(target: Target) -> List[str]:
    """Names of the modules whose functions make up ``target``, importing it to find submodules."""
    names = [target.name]
    if target.submodules:
        package = importlib.import_module(target.name)
        for info in pkgutil.walk_packages(getattr(package, "__path__", []), target.name + "."):
            if info.name.rsplit(".", 1)[-1] != "__main__":
                names.append(info.name)
    names.extend(target.extra)
    return names


def import_modules(target: Target) -> List[types.ModuleType]:
    """Import every pure-Python module of ``target`` and return them, in :func:`module_names` order."""
    modules: Dict[int, types.ModuleType] = {}
    for name in module_names(target):
        module = importlib.import_module(name)  # 3.13: collections.abc *is* _collections_abc
        if is_pure_python(module):
            modules.setdefault(id(module), module)
    return list(modules.values())


def module_name(module: types.ModuleType) -> str:
    """The name ``module`` was imported under (``_collections_abc`` calls itself ``collections.abc``)."""
    spec = getattr(module, "__spec__", None)
    return spec.name if spec is not None else module.__name__


def module_filenames(module: types.ModuleType) -> Set[str]:
    """The ``co_filename`` values the module's own code objects can carry."""
    names = {f"<frozen {module_name(module)}>"}
    filename = getattr(module, "__file__", None)
    if filename:
        names.add(filename)
    return names


@dataclass
class FunctionRecord:
    """One Python function object that belongs to a module, and the path it was reached by."""

    module: str
    name: str
    function: types.FunctionType

    @property
    def key(self) -> str:
        """``module:path``, e.g. ``json.decoder:JSONDecoder.decode``."""
        return f"{self.module}:{self.name}"

    @property
    def code(self) -> types.CodeType:
        """The function's current code object."""
        return self.function.__code__


@dataclass
class NoBytecode:
    """A definition or member of a module that has no Python bytecode to swap, and why."""

    module: str
    name: str
    reason: str


@dataclass
class ModuleFunctions:
    """Everything :func:`collect_functions` found for one module."""

    module: str
    functions: List[FunctionRecord] = field(default_factory=list)
    closures: List[FunctionRecord] = field(default_factory=list)
    no_bytecode: List[NoBytecode] = field(default_factory=list)


def _wrapped_of(obj: Any) -> Any:
    """``obj.__wrapped__`` read without running any descriptor or ``__getattr__``, else None."""
    try:
        wrapped = inspect.getattr_static(obj, "__wrapped__", None)
    except Exception:  # pragma: no cover - exotic objects
        return None
    return None if wrapped is obj else wrapped


def _inner_callables(obj: Any) -> Iterator[Tuple[str, Any]]:
    """The callables a decorator-like object holds, as ``(attribute, value)`` pairs."""
    if isinstance(obj, (staticmethod, classmethod)):
        yield "__func__", obj.__func__
    elif isinstance(obj, (property, types.DynamicClassAttribute)):
        for attr in ("fget", "fset", "fdel"):
            yield attr, getattr(obj, attr)
    elif isinstance(obj, (functools.partial, functools.partialmethod)):
        yield "func", obj.func
    elif isinstance(obj, functools.cached_property):
        yield "func", obj.func
    elif isinstance(obj, getattr(functools, "singledispatchmethod", ())):
        yield "dispatcher", getattr(obj, "dispatcher", None)
        yield "func", getattr(obj, "func", None)
    registry = inspect.getattr_static(obj, "registry", None) if callable(obj) else None
    if isinstance(registry, types.MappingProxyType):  # functools.singledispatch
        for cls, impl in registry.items():
            yield f"registry[{getattr(cls, '__qualname__', cls)}]", impl
    yield "__wrapped__", _wrapped_of(obj)


class _NamespaceWalk:
    """Depth-first walk of one module's namespace that collects the functions defined in it."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.name = module_name(module)
        self.files = module_filenames(module)
        self.found: List[FunctionRecord] = []
        self._seen: Set[int] = set()

    def run(self) -> List[FunctionRecord]:
        """Walk the module's globals in definition order and return what was found."""
        for name, value in list(vars(self.module).items()):
            if not (name.startswith("__") and name.endswith("__")) or callable(value):
                self._visit(name, value)
        return self.found

    def _visit(self, path: str, obj: Any) -> None:
        if obj is None or id(obj) in self._seen:
            return
        if isinstance(obj, type):
            if self._defined_here(obj):
                self._seen.add(id(obj))
                for name, value in list(vars(obj).items()):
                    self._visit(f"{path}.{name}", value)
            return
        if isinstance(obj, types.ModuleType):
            return
        self._seen.add(id(obj))
        if isinstance(obj, types.FunctionType) and obj.__code__.co_filename in self.files:
            self.found.append(FunctionRecord(self.name, path, obj))
        for attr, inner in _inner_callables(obj):
            if inner is not None:
                self._visit(f"{path}.{attr}", inner)

    def _defined_here(self, cls: type) -> bool:
        """Whether ``cls`` was made by this module (not merely imported into it)."""
        if getattr(cls, "__module__", None) == self.module.__name__:
            return True
        return any(
            isinstance(v, types.FunctionType) and v.__code__.co_filename in self.files
            for v in vars(cls).values()
        )


def module_code(module: types.ModuleType) -> Optional[types.CodeType]:
    """A fresh copy of the module's compiled code from its loader, or None."""
    spec = getattr(module, "__spec__", None)
    get_code = getattr(getattr(spec, "loader", None), "get_code", None)
    if spec is None or get_code is None:
        return None
    try:
        return get_code(spec.name)
    except Exception:
        return None


def static_definitions(code: Optional[types.CodeType]) -> Dict[Tuple[str, int], str]:
    """Every ``def`` at module or class level of a module's ``code``, keyed by (name, first line).

    Lambdas count (a module-level lambda is often bound to a name); comprehensions do not (they
    make no lasting function), nor do nested functions (they are part of the code of the
    function around them).  Values are qualified names.
    """
    definitions: Dict[Tuple[str, int], str] = {}
    if code is not None:
        _collect_definitions(code, "", definitions)
    return definitions


def nested_code_keys(code: Optional[types.CodeType]) -> Set[Tuple[str, int]]:
    """:func:`code_key` of every code object nested at any depth in a module's ``code``."""
    keys: Set[Tuple[str, int]] = set()
    stack = [code] if code is not None else []
    while stack:
        for const in stack.pop().co_consts:
            if isinstance(const, types.CodeType):
                keys.add(code_key(const))
                stack.append(const)
    return keys


def _collect_definitions(code: types.CodeType, prefix: str, out: Dict[Tuple[str, int], str]) -> None:
    for const in code.co_consts:
        if not isinstance(const, types.CodeType):
            continue
        if const.co_name.startswith("<generic parameters of"):  # PEP 695 wrapper, 3.12+
            _collect_definitions(const, prefix, out)
        elif const.co_flags & CO_NEWLOCALS:
            if const.co_name == "<lambda>" or not const.co_name.startswith("<"):
                out[(const.co_name, const.co_firstlineno)] = prefix + const.co_name
        else:  # a class body
            _collect_definitions(const, f"{prefix}{const.co_name}.", out)


def code_key(code: types.CodeType) -> Tuple[str, int]:
    """The (name, first line) pair that identifies a definition within its file."""
    return code.co_name, code.co_firstlineno


def _gc_functions(files: Set[str]) -> Dict[str, List[types.FunctionType]]:
    """All live Python functions whose code comes from one of ``files``, grouped by file."""
    found: Dict[str, List[types.FunctionType]] = {}
    for obj in gc.get_objects():
        # type(), not isinstance(): a dead weakref.proxy (torch leaves some) raises on isinstance
        if type(obj) is types.FunctionType:
            filename = obj.__code__.co_filename
            if filename in files:
                found.setdefault(filename, []).append(obj)
    return found


_HEAPTYPE = 1 << 9
_IMMUTABLETYPE = 1 << 8  # 3.10+; C types made from a spec have it, ``class`` statements never


def _is_c_callable(obj: Any) -> bool:
    """Whether ``obj`` is a function or class implemented in C."""
    if isinstance(obj, _C_DESCRIPTORS):
        return True
    if isinstance(obj, type):
        flags = obj.__flags__
        if not flags & _HEAPTYPE or (sys.version_info >= (3, 10) and flags & _IMMUTABLETYPE):
            return True
        members = list(vars(obj).values())
        has_python = any(
            isinstance(inner, types.FunctionType)
            for member in members
            for inner in [member] + [value for _, value in _inner_callables(member)]
        )
        return not has_python and any(isinstance(v, _C_DESCRIPTORS) for v in members)
    return False


def _accelerator_names(module: types.ModuleType) -> Set[str]:
    """``__module__`` values that mark a C object as belonging to ``module``."""
    name = module_name(module)
    parts = name.split(".")
    return {name, module.__name__, "_" + parts[0], "_" + parts[-1]}


def _lookup_path(module: types.ModuleType, qualname: str) -> Any:
    """What the dotted ``qualname`` resolves to in the module now (class dicts read statically)."""
    parts = qualname.split(".")
    obj: Any = vars(module).get(parts[0], None)
    for part in parts[1:]:
        if not isinstance(obj, type):
            return obj
        obj = vars(obj).get(part, None)
    return obj


def _describe(obj: Any) -> str:
    """``module.qualname`` of a C object, for messages."""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    owner = getattr(obj, "__module__", None)
    return f"{owner}.{name}" if owner else str(name)


def _missing_definitions(
    module: types.ModuleType, definitions: Dict[Tuple[str, int], str], covered: Set[Tuple[str, int]]
) -> List[NoBytecode]:
    """Static definitions of ``module`` no live function carries, with the reason for each."""
    name = module_name(module)
    out: List[NoBytecode] = []
    for key, qualname in sorted(definitions.items(), key=lambda item: item[0][1]):
        if key in covered or key[0] == "<lambda>":
            continue
        current = _lookup_path(module, qualname)
        top = vars(module).get(qualname.split(".")[0], None)
        if _is_c_callable(top) or _is_c_callable(current):
            reason = f"replaced by C accelerator {_describe(top if _is_c_callable(top) else current)}"
        elif top is None:
            reason = "not bound in the module any more (deleted or never executed)"
        else:
            reason = ("no live function object carries this definition's code (a branch not "
                      "taken on this platform, or redefined under the same name)")
        out.append(NoBytecode(name, f"{qualname} (line {key[1]})", reason))
    return out


def _c_members(module: types.ModuleType) -> List[NoBytecode]:
    """Members of ``module`` implemented in C that belong to it (its accelerator's exports)."""
    owners = _accelerator_names(module)
    name = module_name(module)
    out = []
    for attr, value in vars(module).items():
        if _is_c_callable(value) and getattr(value, "__module__", None) in owners:
            out.append(NoBytecode(name, attr, f"implemented in C ({value.__module__})"))
    return out


def collect_functions(modules: Iterable[types.ModuleType]) -> List[ModuleFunctions]:
    """Find every Python function defined in each of ``modules`` (see the module docstring)."""
    modules = list(modules)
    files: Set[str] = set()
    for module in modules:
        files |= module_filenames(module)
    live = _gc_functions(files)
    return [_collect_one(module, live) for module in modules]


def _collect_one(module: types.ModuleType, live: Dict[str, List[types.FunctionType]]) -> ModuleFunctions:
    result = ModuleFunctions(module_name(module))
    result.functions = _NamespaceWalk(module).run()
    code = module_code(module)
    definitions = static_definitions(code)
    nested = nested_code_keys(code)
    seen = {id(record.function) for record in result.functions}
    covered = {code_key(record.code) for record in result.functions}
    extra: List[FunctionRecord] = []
    for filename in sorted(module_filenames(module)):
        for fn in live.get(filename, ()):
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            key = code_key(fn.__code__)
            if key in definitions:
                covered.add(key)
                result.functions.append(FunctionRecord(result.module, definitions[key] + " [gc]", fn))
            elif key in nested or not nested:
                extra.append(FunctionRecord(result.module, _closure_name(fn), fn))
            # else: a function that only claims the file name (e.g. made by a decompiler)
    result.closures = sorted(extra, key=lambda r: (r.name, r.code.co_firstlineno))
    result.no_bytecode = _missing_definitions(module, definitions, covered) + _c_members(module)
    return result


def _closure_name(fn: types.FunctionType) -> str:
    """Name a run-time closure by its code (its ``__qualname__`` may be copied by ``wraps``)."""
    code = fn.__code__
    name = getattr(code, "co_qualname", code.co_name)
    return f"{name}:{code.co_firstlineno} [closure as {fn.__qualname__}]"


def collect_target(target: Target) -> List[ModuleFunctions]:
    """Import ``target``'s modules and collect their functions."""
    return collect_functions(import_modules(target))


def unique_codes(records: Iterable[FunctionRecord]) -> List[FunctionRecord]:
    """One record per distinct code object (closures made from one ``def`` share theirs)."""
    seen: Set[int] = set()
    out = []
    for record in records:
        if id(record.code) not in seen:
            seen.add(id(record.code))
            out.append(record)
    return out


def selected_targets(names: Optional[Sequence[str]]) -> List[Target]:
    """The available targets named in ``names`` (all available ones when ``names`` is empty)."""
    if not names:
        return available_targets()
    chosen = [target_by_name(name) for name in names]
    return [target for target in chosen if target.available()]
