"""Write a guard tree (:mod:`pellucid.dynamo.guard_tree`) as one readable Python function.

The function has the signature ``guard_<n>(L, G)``: ``L`` is the frame's locals as a dict, ``G``
the globals of the compiled function's module (the dict Dynamo's ``G`` accessor reads).  It holds
one check per line, each with the user's source line the guard came from::

    if not (type(L['n']) is int and L['n'] == 3):  return False  # from: b = y + n  (t.py:8 in f)

Objects the checks compare against (types, object ids, DispatchKeySets, the global-state
snapshot...) are names bound in :attr:`RenderedGuard.namespace`, never reprs pasted into the
source.  Helpers come from :mod:`pellucid.dynamo.guard_helpers` by an import at the top of the
source, so the source compiles on its own and needs only the namespace to run::

    >>> rendered = render_guard(entry.guard_manager, "guard_0")    # doctest: +SKIP
    >>> evaluate(rendered, {"x": torch.ones(2)})                   # doctest: +SKIP
    True
"""
import builtins
import keyword
import re
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from pellucid.dynamo.guard_tree import (
    CodePart, GuardTree, LeafCheck, RelationalCheck, SourceNode, UnsupportedGuardError,
    read_guard_tree,
)

__all__ = ["RenderedCheck", "RenderedGuard", "render_guard", "render_tree", "evaluate", "failing_check",
           "guard_scope", "UnsupportedGuardError"]

HELPERS_MODULE = "pellucid.dynamo.guard_helpers"


@dataclass
class RenderedCheck:
    """One line of the rendered guard and the Dynamo guard it stands for."""
    kind: str
    lineno: int
    text: str
    #: ``leaf`` (a leaf guard), ``dict`` (a DictGuardManager built-in), ``relational``, ``epilogue``
    origin: str
    delegated: bool = False
    #: ``id()`` of the Dynamo guard object, to match rendered lines with the tree's leaves
    leaf_id: Optional[int] = None


@dataclass
class RenderedGuard:
    """A guard function's source, the objects it needs bound, and its name."""
    source: str
    namespace: Dict[str, Any]
    name: str
    checks: List[RenderedCheck] = field(default_factory=list)
    #: the ``G`` to pass when evaluating in this process
    globals_dict: Optional[Dict[str, Any]] = field(default=None, repr=False)
    tree: Optional[GuardTree] = field(default=None, repr=False)
    _function: Optional[Callable[..., bool]] = field(default=None, repr=False, compare=False)

    @property
    def delegated(self) -> List[RenderedCheck]:
        """Checks that call Dynamo's own leaf object instead of Python code."""
        return [c for c in self.checks if c.delegated]

    def function(self) -> Callable[..., bool]:
        """The compiled guard function, with the namespace bound (compiled once)."""
        if self._function is None:
            code = compile(self.source, "<pellucid %s>" % self.name, "exec")
            scope = dict(self.namespace)
            exec(code, scope)
            self._function = scope[self.name]
        return self._function


def guard_scope(rendered: RenderedGuard) -> Dict[str, Any]:
    """A copy of the globals the guard function runs with (its namespace and its helpers'
    imports), to read a value as the guard reads it, without compiling the whole function.

    >>> eval("lambda L, G: L['x'].shape", guard_scope(rendered))   # doctest: +SKIP
    """
    if rendered._function is not None:
        return dict(rendered._function.__globals__)  # type: ignore[attr-defined]
    lines = rendered.source.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    try:
        k = lines.index("def %s(L, G):" % rendered.name)
    except ValueError:
        k = -1
    if k < 0 or lines[-3:] != _TAIL:
        return dict(rendered.function().__globals__)  # type: ignore[attr-defined]
    # (what runs before the definition -- the imports -- is all that runs besides it)
    scope = dict(rendered.namespace)
    exec(compile("\n".join(lines[:k]) + "\n", "<pellucid %s>" % rendered.name, "exec"), scope)
    return scope


def evaluate(rendered: RenderedGuard, f_locals: Dict[str, Any],
             globals_dict: Optional[Dict[str, Any]] = None) -> bool:
    """Run the rendered guard on ``f_locals``; the answer Dynamo's ``guard_manager.check`` gives.

    >>> evaluate(render_guard(entry.guard_manager, "guard_0"), {"x": x})   # doctest: +SKIP
    True
    """
    g = rendered.globals_dict if globals_dict is None else globals_dict
    return bool(rendered.function()(f_locals, g))


def render_guard(guard_manager: Any, name: str = "guard_0",
                 shared_names: Optional[Dict[str, Any]] = None,
                 trees: Optional[Dict[int, Tuple[Any, GuardTree, Dict[str, RenderedGuard]]]] = None
                 ) -> RenderedGuard:
    """Render a cache entry's ``guard_manager`` as ``def <name>(L, G) -> bool``.

    ``shared_names`` (name -> object) lets several guards written into one file avoid binding
    one name to two different objects; it is updated with this guard's names.  ``trees``
    (``id`` of a guard manager -> (that manager, its tree, its renderings by name)) keeps the
    trees read and the guards rendered (without ``shared_names``), for a guard wanted twice (to
    explain a recompilation, then for the dump): Dynamo builds a guard manager once and does
    not change it, rendering only reads the tree, and a :class:`RenderedGuard` is only read.

    >>> r = render_guard(entry.guard_manager, "guard_0")   # doctest: +SKIP
    >>> print(r.source)                                     # doctest: +SKIP
    """
    if trees is None:
        return render_tree(read_guard_tree(guard_manager), name, shared_names)
    known = trees.get(id(guard_manager))
    if known is None or known[0] is not guard_manager:
        known = trees[id(guard_manager)] = (guard_manager, read_guard_tree(guard_manager), {})
    if shared_names is not None:
        return render_tree(known[1], name, shared_names)
    rendered = known[2].get(name)
    if rendered is None:
        rendered = known[2][name] = render_tree(known[1], name)
    return rendered


def render_tree(tree: GuardTree, name: str = "guard_0",
                shared_names: Optional[Dict[str, Any]] = None) -> RenderedGuard:
    """Render an already-read :class:`GuardTree` (see :func:`render_guard`)."""
    r = _Renderer(tree, name, shared_names)
    return r.render()


# --------------------------------------------------------------------------------- naming

_RESERVED = {"L", "G", "torch", "True", "False", "None"}
_MISSING = object()
_BUILTINS = vars(builtins)


def _builtin(name: str) -> Any:
    """``getattr(builtins, name, _MISSING)``.

    A name that is not a dunder is only looked up in the module's dict (neither the module
    type nor ``object`` has such an attribute, and builtins has no ``__getattr__``): getattr's
    miss builds an AttributeError message, ~1 us, for each of the hundred-odd names bound and
    classes named in a large guard.
    """
    if name[:2] != "__" and type(builtins) is ModuleType and "__getattr__" not in _BUILTINS:
        return _BUILTINS.get(name, _MISSING)
    return getattr(builtins, name, _MISSING)


class _Names(object):
    """Names for bound objects: readable, one name per object, no clash across guards."""

    def __init__(self, shared: Optional[Dict[str, Any]]) -> None:
        self.shared = shared if shared is not None else {}
        self.bound: Dict[str, Any] = {}
        self.by_id: Dict[int, str] = {}
        self.counters: Dict[str, int] = {}
        #: the names in ``bound`` that start with "dispatch_keys", in the same order
        self.dispatch_names: List[str] = []

    def _add(self, name: str, obj: Any) -> None:
        if name not in self.bound and name.startswith("dispatch_keys"):
            self.dispatch_names.append(name)
        self.bound[name] = obj

    def _free(self, name: str, obj: Any) -> bool:
        if name in _RESERVED or keyword.iskeyword(name) or _builtin(name) is not _MISSING:
            return False
        for table in (self.bound, self.shared):
            if name in table and table[name] is not obj:
                return False
        return True

    def bind(self, obj: Any, hint: str, exact: bool = False) -> str:
        """A name for ``obj``; ``exact`` demands ``hint`` itself (Dynamo text uses that name)."""
        key = id(obj)
        if key in self.by_id and not exact:
            return self.by_id[key]
        hint = re.sub(r"\W", "_", hint) or "obj"
        if hint[0].isdigit():
            hint = "_" + hint
        if exact:
            if not self._free(hint, obj) and not (hint in self.bound and self.bound[hint] is obj):
                raise UnsupportedGuardError("Dynamo's guard text needs the name %r, already "
                                            "bound to another object" % hint)
            name = hint
        else:
            name = hint
            n = self.counters.get(hint, 0)
            while not self._free(name, obj):
                n += 1
                name = "%s_%d" % (hint, n)
            self.counters[hint] = n
        self._add(name, obj)
        self.shared[name] = obj
        self.by_id.setdefault(key, name)
        return name

    def numbered(self, obj: Any, stem: str) -> str:
        """``stem_0``, ``stem_1``... for objects with no natural name (ids, leaf objects)."""
        key = id(obj)
        if key in self.by_id:
            return self.by_id[key]
        n = self.counters.get(stem + "#", 0)
        while True:
            name = "%s_%d" % (stem, n)
            n += 1
            if self._free(name, obj):
                break
        self.counters[stem + "#"] = n
        self._add(name, obj)
        self.shared[name] = obj
        self.by_id[key] = name
        return name


class _Int(object):
    """A bound integer (an id): distinct holder so equal ints get their own names."""

    def __init__(self, value: int) -> None:
        self.value = value


# ------------------------------------------------------------------------------- rendering

_LITERAL_TYPES = (int, str, bytes, bool, type(None))


def _is_literal(v: Any) -> bool:
    t = type(v)
    if t in _LITERAL_TYPES:
        return True
    if t is float:
        return v == v and v not in (float("inf"), float("-inf"))
    if t in (tuple, list, set, frozenset):
        if t is frozenset:
            return False  # frozenset has no literal form
        if t is set and not v:
            return False  # "set()" is a call, "{}" a dict
        return all(_is_literal(x) for x in v)
    if t is dict:
        return all(_is_literal(k) and _is_literal(x) for k, x in v.items())
    return False


def _one_line(text: str) -> str:
    if text.isprintable():
        return text.strip()  # (every line break str.splitlines knows is unprintable)
    return " ".join(text.splitlines()).strip()


class _Negation(str):
    """``not CALL(...)`` as built by a renderer here: the text, and the call it negates (so
    :func:`_negate` needs no parse for the hundred-odd such checks of a large guard)."""

    positive: str


def _not_call(call: str) -> str:
    """``not <call>`` for ``call`` a single call expression (``f(...)``)."""
    text = _Negation("not " + call)
    text.positive = call
    return text


def _negate(expr: str) -> Optional[str]:
    """``X`` when ``expr`` is ``not X``, so the check reads ``if X: return False``."""
    if isinstance(expr, _Negation):
        return expr.positive
    if not expr.startswith("not "):
        return None  # the answer below too; most checks end here, without a parse
    import ast
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return expr[len("not "):] if expr.startswith("not ") else None
    return None


class _Renderer(object):
    def __init__(self, tree: GuardTree, name: str, shared: Optional[Dict[str, Any]]) -> None:
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError("guard name %r is not a Python identifier" % name)
        self.tree = tree
        self.name = name
        self.names = _Names(shared)
        self.helpers: List[str] = []
        self.uses_torch = False
        #: torch_path's answers by id (the objects are kept alive by the tree being rendered)
        self.torch_paths: Dict[int, Optional[str]] = {}
        #: the body's lines; each RenderedCheck's lineno is its line's index here until assemble()
        #: adds the line number of the first (no (line, check) pair per line: ~900 tuples kept
        #: alive to the end of a large render)
        self.body: List[str] = []
        #: the k_<KIND> method of each kind met, for this render
        self.kind_renderers: Dict[str, Any] = {}
        #: comment()'s texts by what they are made of, for this render
        self.comments: Dict[Tuple[str, Optional[str], Optional[str], str], str] = {}
        self.checks: List[RenderedCheck] = []

    # -- values
    def helper(self, name: str) -> str:
        if name not in self.helpers:
            self.helpers.append(name)
        return name

    def torch_path(self, obj: Any) -> Optional[str]:
        """``torch.float32``/``torch.nn.parameter.Parameter`` when that path gives back ``obj``."""
        # the same few dtypes and tensor types come back for every tensor check
        key = id(obj)
        if key in self.torch_paths:
            path = self.torch_paths[key]
            if path is not None:
                self.uses_torch = True
            return path
        path = self._torch_path(obj)
        self.torch_paths[key] = path
        return path

    def _torch_path(self, obj: Any) -> Optional[str]:
        import sys
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        module = getattr(obj, "__module__", None) if isinstance(obj, type) else None
        if isinstance(obj, type) and module and module.split(".")[0] == "torch":
            path = module + "." + obj.__qualname__
        elif isinstance(obj, torch.dtype):
            path = str(obj)
        else:
            return None
        cur: Any = torch
        for part in path.split(".")[1:]:
            cur = getattr(cur, part, None)
            if cur is None:
                return None
        if cur is not obj:
            return None
        # prefer the short public spelling: torch.Tensor, torch.nn.Parameter
        for short in ("torch." + getattr(obj, "__name__", ""), "torch.nn." + getattr(obj, "__name__", "")):
            c: Any = torch
            for part in short.split(".")[1:]:
                c = getattr(c, part, None)
            if c is obj:
                path = short
                break
        self.uses_torch = True
        return path

    def type_ref(self, t: type) -> str:
        name = getattr(t, "__name__", "")
        if name and _builtin(name) is t:
            return name
        path = self.torch_path(t)
        if path:
            return path
        return self.names.bind(t, getattr(t, "__qualname__", name) or "type_")

    def value(self, v: Any, hint: str = "value") -> str:
        """Source for value ``v``: a literal when its repr reads back exactly, else a bound name."""
        if _is_literal(v):
            return repr(v)
        if isinstance(v, type):
            return self.type_ref(v)
        path = self.torch_path(v)
        if path:
            return path
        return self.names.bind(v, hint)

    def bound_int(self, value: int, stem: str) -> str:
        return self.names.numbered(_Int(value), stem)

    # -- lines
    def comment(self, part: Optional[CodePart], extra: str = "") -> str:
        if type(part) is not CodePart:  # (None, or a describe() of its own)
            return self._comment(part, extra)
        # the parts of one source line carry the same comment: each is written once per render
        # (describe() reads these three fields only)
        key = (part.comment, part.user_line, part.location, extra)
        text = self.comments.get(key)
        if text is None:
            text = self.comments[key] = self._comment(part, extra)
        return text

    def _comment(self, part: Optional[CodePart], extra: str) -> str:
        bits = []
        if part is not None:
            note = part.describe()
            if note:
                bits.append(note)
        if extra:
            bits.append(extra)
        return _one_line("  ".join(bits))

    def emit_check(self, expr: str, kind: str, origin: str, comment: str,
                   leaf: Any = None, delegated: bool = False) -> None:
        # (_negate's answer without the call for the many checks that do not start with "not ")
        positive = expr.positive if isinstance(expr, _Negation) \
            else _negate(expr) if expr.startswith("not ") else None
        line = ("if %s: return False" % positive) if positive is not None \
            else "if not (%s): return False" % expr
        if comment:
            line += "  # " + comment
        # (kind, lineno, text, origin, delegated, leaf_id): positional, for a thousand checks
        rc = RenderedCheck(kind, len(self.body), line, origin, delegated,
                           id(leaf) if leaf is not None else None)
        self.body.append(line)
        self.checks.append(rc)

    def emit_comment(self, text: str) -> None:
        self.body.append("# " + _one_line(text))

    # -- leaf checks
    def leaf(self, check: LeafCheck, origin: str = "leaf") -> None:
        x = check.subject
        if check.delegate_reason is not None:  # (check.delegated, without the property's call)
            leaf_name = self.names.numbered(check.leaf, "dynamo_%s" % check.kind.lower())
            dynamo_text = "; ".join(p.code for p in check.parts)
            self.emit_check("%s(%s, %s)" % (self.helper("delegate"), leaf_name, x), check.kind,
                            origin, self.comment(check.parts[0] if check.parts else None,
                                                 "DELEGATED to Dynamo's %s leaf (%s): %s"
                                                 % (check.kind, check.delegate_reason, dynamo_text)),
                            leaf=check.leaf, delegated=True)
            return
        fn = self.kind_renderers.get(check.kind)
        if fn is None:
            fn = self.kind_renderers[check.kind] = getattr(self, "k_" + check.kind, None)
        if fn is None:  # a parser exists without a renderer: a pellucid bug, say so loudly
            raise UnsupportedGuardError("no renderer for %s guards" % check.kind)
        kind, leaf, comments = check.kind, check.leaf, self.comments
        for expr, part, extra in fn(check, x):
            if type(part) is CodePart:  # (comment() written out: a thousand checks)
                key = (part.comment, part.user_line, part.location, extra)
                text = comments.get(key)
                if text is None:
                    text = comments[key] = self._comment(part, extra)
            else:
                text = self._comment(part, extra)
            self.emit_check(expr, kind, origin, text, leaf)

    def k_TYPE_MATCH(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        t = c.params.get("type")
        if t is not None:
            return [("type(%s) is %s" % (x, self.type_ref(t)), c.parts[0], "")]
        ident = self.bound_int(c.params["type_id"], "type_id")
        return [("%s(%s, %s)" % (self.helper("check_type_id"), x, ident), c.parts[0], "")]

    def k_ID_MATCH(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        ident = self.bound_int(c.params["obj_id"], "obj_id")
        extra = ("the object of %s seen at compile time" % c.params["type_text"]) \
            if c.params.get("type_text") else ""
        return [("%s(%s, %s)" % (self.helper("check_obj_id"), x, ident), c.parts[0], extra)]

    def k_EQUALS_MATCH(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        v = c.params["value"]
        return [("type(%s) is %s and %s == %s" % (x, self.type_ref(type(v)), x,
                                                 self.value(v, "expected")), c.parts[0], "")]

    def k_TRUE_MATCH(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [("%s is True" % x, c.parts[0], "")]

    def k_FALSE_MATCH(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [("%s is False" % x, c.parts[0], "")]

    def k_NONE_MATCH(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [("%s is None" % x, c.parts[0], "")]

    def k_NOT_NONE(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [("%s is not None" % x, c.parts[0], "")]

    def k_FLOAT_IS_NAN(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [("%s(%s)" % (self.helper("float_is_nan"), x), c.parts[0], "")]

    def k_COMPLEX_IS_NAN(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [("%s(%s)" % (self.helper("complex_is_nan"), x), c.parts[0], "")]

    def k_LENGTH_CHECK(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [("len(%s) == %d" % (x, c.params["length"]), c.parts[0], "")]

    def k_DICT_LENGTH(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [("%s(%s, %d)" % (self.helper("check_dict_length"), x, c.params["length"]),
                 c.parts[0], "")]

    def k_TENSOR_MATCH(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        p = c.params
        keys = p["dispatch_keys"]
        keys_name = self._keys_name(keys)
        expr = ("%s(%s, %s, %s, %s, device_index=%r, requires_grad=%r, size=%r, stride=%r)"
                % (self.helper("check_tensor"), x, self.type_ref(p["tensor_type"]), keys_name,
                   self.value(p["dtype"], "dtype"), p["device_index"], p["requires_grad"],
                   list(p["size"]), list(p["stride"])))
        return [(expr, c.parts[0], "")]

    def _keys_name(self, keys: Any) -> str:
        # one name per distinct key set, however many TENSOR_MATCH guards rebuilt it
        # (only the names starting with "dispatch_keys": not the hundred-odd ids of a large guard)
        bound = self.names.bound
        for name in self.names.dispatch_names:
            obj = bound[name]
            if hasattr(obj, "raw_repr") and obj.raw_repr() == keys.raw_repr():
                return name
        return self.names.numbered(keys, "dispatch_keys")

    def k_DISPATCH_KEY_SET_MATCH(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        name = self._keys_name(c.params["dispatch_keys"])
        return [("%s.raw_repr() == %s.raw_repr()" % (x, name), c.parts[0], "")]

    def k_DIMENSION_DYNAMIC_MARKING_GUARD(self, c: LeafCheck, x: str
                                          ) -> List[Tuple[str, CodePart, str]]:
        out = []
        absent = [item[1] for item in c.params["items"] if item[0] == "absent"]
        if absent:
            # one line for "was not marked": the usual case, five attributes
            out.append((_not_call("%s(%s, %s)" % (self.helper("has_any_attr"), x,
                                                  ", ".join(repr(a) for a in absent))), c.parts[0],
                        "no mark_dynamic/mark_static/... marking at compile time"))
        for item, part in zip(c.params["items"], c.parts):
            if item[0] == "absent":
                continue
            elif item[0] == "subset":
                out.append(("%s(%s, %r, %s)" % (self.helper("dim_marking_subset"), x, item[1],
                                                self.value(item[2], "marked")), part, ""))
            else:
                out.append(("%s(%s, %r, %s, %r)" % (self.helper("dim_marking_dependent"), x,
                                                    item[1], self.value(item[2], "expected"),
                                                    item[3]), part, ""))
        return out

    def k_DICT_CONTAINS(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        expr = "%s(%s, %s)" % (self.helper("dict_contains"), x, self.value(c.params["key"], "key"))
        return [(expr if c.params["contains"] else _not_call(expr), c.parts[0], "")]

    def k_SET_CONTAINS(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        expr = "%s(%s, %s)" % (self.helper("set_contains"), x, self.value(c.params["item"], "item"))
        return [(expr if c.params["contains"] else _not_call(expr), c.parts[0], "")]

    def k_NO_HASATTR(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [(_not_call("hasattr(%s, %r)" % (x, c.params["attr"])), c.parts[0], "")]

    def k_TUPLE_ITERATOR_LEN(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [("type(%s) is %s and %s(%s) == %d" % (
            x, self.type_ref(c.params["type"]), self.helper("tuple_iterator_len"), x,
            c.params["length"]), c.parts[0], "")]

    def k_RANGE_ITERATOR_MATCH(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [("type(%s) is %s and %s(%s) == %r" % (
            x, self.type_ref(c.params["type"]), self.helper("normalize_range_iter"), x,
            tuple(c.params["state"])), c.parts[0], "")]

    def k_DICT_VERSION(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [("%s(%s) == %d" % (self.helper("dict_version"), x, c.params["version"]),
                 c.parts[0], "")]

    def k_MAPPING_KEYS_MATCH(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [("%s(%s, %s)" % (self.helper("check_mapping_keys"), x,
                                 self.value(c.params["keys"], "keys")), c.parts[0], "")]

    def k_DUAL_LEVEL_MATCH(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [("%s(%d)" % (self.helper("check_dual_level"), c.params["level"]), c.parts[0], "")]

    def k_GLOBAL_STATE(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        state = c.params["state"]
        name = self.names.bind(state, "global_state")
        shown = ", ".join("%s=%s" % (k, state[k]) for k in
                          ("grad_mode", "default_dtype", "num_threads", "deterministic_algorithms")
                          if k in state)
        return [("%s(%s)" % (self.helper("check_global_state"), name), None,
                 "torch global state as at compile time: %s, autocast, torch_function..." % shown)]

    def k_TORCH_FUNCTION_MODE_STACK(self, c: LeafCheck, x: str
                                    ) -> List[Tuple[str, CodePart, str]]:
        types = c.params["mode_types"]
        arg = "[%s]" % ", ".join(self.type_ref(t) for t in types)
        return [("%s(%s)" % (self.helper("check_torch_function_mode_stack"), arg), None,
                 "active TorchFunctionMode types, innermost last")]

    def k_DEFAULT_DEVICE(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        return [("%s(%s)" % (self.helper("check_default_device"),
                             self.value(c.params["device"], "default_device")), c.parts[0], "")]

    def k_LAMBDA_GUARD(self, c: LeafCheck, x: str) -> List[Tuple[str, CodePart, str]]:
        if "saved_tensors_hooks" in c.params:
            ids = c.params["saved_tensors_hooks"]
            arg = "None" if ids is None else self.value(ids, "saved_tensors_hooks_ids")
            return [("%s(%s)" % (self.helper("check_saved_tensors_hooks"), arg), c.parts[0],
                     "saved_tensors_hooks as at compile time")]
        for name, obj in c.params.get("names", {}).items():
            self.names.bind(obj, name, exact=True)
        return [(code, part, "") for code, part in zip(c.params["exprs"], c.parts)]

    # -- relational
    def relational(self, r: RelationalCheck) -> None:
        part = r.parts[0] if r.parts else None
        if r.kind == "NO_TENSOR_ALIASING":
            self.emit_check("%s(%s)" % (self.helper("check_no_aliasing"), ", ".join(r.subjects)),
                            r.kind, "relational",
                            "no input tensor is passed twice (the compiled code assumes distinct "
                            "tensors)", leaf=r.leaf)
        elif r.kind == "OBJECT_ALIASING":
            self.emit_check("%s is %s" % (r.subjects[1], r.subjects[0]), r.kind, "relational",
                            self.comment(part, "the same object, as at compile time"), leaf=r.leaf)
        elif r.kind == "STORAGE_OVERLAPPING":
            self.emit_check("%s(overlapping=[%s], non_overlapping=[%s])" % (
                self.helper("check_overlapping"), ", ".join(r.params["overlapping"]),
                ", ".join(r.params["non_overlapping"])), r.kind, "relational",
                self.comment(part), leaf=r.leaf)
        elif r.kind == "SYMBOLIC_SHAPE_GUARD":
            for name, obj in r.params.get("names", {}).items():
                self.names.bind(obj, name, exact=True)
            for code, p in zip(r.params["exprs"], r.parts):
                self.emit_check(code, r.kind, "relational", self.comment(p), leaf=r.leaf)
        else:
            raise UnsupportedGuardError("no renderer for relational %s guards" % r.kind)

    # -- tree
    def node(self, node: SourceNode) -> None:
        info = node.dict_info
        if node.checks or info is not None:
            what = node.guarded_type.__name__ if node.guarded_type is not None else "value"
            self.emit_comment("%s  (%s, via %s)" % (node.expr, what, node.accessor))
        if info is not None:
            if info.expected_type is not None:
                self.emit_check("type(%s) is %s" % (node.expr, self.type_ref(info.expected_type)),
                                "DICT_TYPE", "dict", "built into Dynamo's DictGuardManager")
            if info.size is not None:
                length = ("len(%s) == %d" % (node.expr, info.size)
                          if info.expected_type is dict else
                          "%s(%s, %d)" % (self.helper("check_dict_length"), node.expr, info.size))
                self.emit_check(length, "DICT_SIZE", "dict", info.size_note)
        for check in node.checks:
            self.leaf(check)
        if not node.checks and not node.children and info is None and not node.relational_kinds:
            # a manager with nothing under it still fails when its accessor cannot read the value:
            # Dynamo uses that as a hasattr guard (GuardBuilder.HASATTR)
            line = "%s  # must be readable (Dynamo's accessor %s doubles as the check)" % (
                node.expr, node.accessor)
            rc = RenderedCheck(kind="ACCESS", lineno=len(self.body), text=line, origin="accessor")
            self.body.append(line)
            self.checks.append(rc)
        for child in node.children:
            self.node(child)

    def render(self) -> RenderedGuard:
        tree = self.tree
        if tree.root.checks:
            self.emit_comment("process-wide state")
            for check in tree.root.checks:
                self.leaf(check)
        for child in tree.root.children:
            self.node(child)
        if tree.relational:
            self.emit_comment("guards relating several values")
            for r in tree.relational:
                self.relational(r)
        if tree.epilogue:
            self.emit_comment("run last by Dynamo (symbolic shapes, object identity)")
            for check in tree.epilogue:
                self.leaf(check, origin="epilogue")
        return self.assemble()

    def assemble(self) -> RenderedGuard:
        head: List[str] = []
        # accessor expressions from guard_tree call helpers too: collect every one the body uses
        from pellucid.dynamo import guard_helpers
        # the body as it goes into the source: indenting lines changes no ``\bname(`` in them
        body_text = "\n        ".join(self.body)
        used = set(self.helpers)
        # (a helper the renderer called is in already: no need to find it in 240 kB of text)
        called = _reversed_called_names(body_text)
        used.update(n for n in guard_helpers.__all__ if n not in used
                    and (n[::-1] in called if _WORD.fullmatch(n) else _calls(body_text, n)))
        missing = [n for n in used if n not in guard_helpers.__all__]
        if missing:
            raise UnsupportedGuardError("rendered guard calls unknown helpers %s" % missing)
        if used:
            head.append("from %s import %s" % (HELPERS_MODULE, ", ".join(sorted(used))))
        if self.uses_torch:
            head.append("import torch")
        if self.names.bound:
            head.append("# %s needs these names bound (RenderedGuard.namespace):" % self.name)
            for bound_name, obj in self.names.bound.items():
                shown = obj.value if isinstance(obj, _Int) else obj
                head.append("#   %-20s %s" % (bound_name, _one_line(_short_repr(shown))))
        lines = list(head)
        lines.append("")
        lines.append("")
        lines.append("def %s(L, G):" % self.name)
        lines.append('    """Whether Dynamo may run this cache entry\'s code for frame locals L.')
        lines.append("")
        lines.append("    Same answer as the entry's guard_manager.check(L); G is the compiled")
        lines.append("    function's module globals.  A value that cannot be read (missing key or")
        lines.append('    attribute, short list) is a miss, as in Dynamo.')
        lines.append('    """')
        lines.append("    try:")
        # a check's line number is its entry's position in ``lines`` (as if appended one by one)
        first = len(lines) + 1
        for rc in self.checks:
            rc.lineno += first
        if self.body:
            lines.append("        " + body_text)
        lines.append("        return True")
        lines.append("    except Exception:")
        lines.append("        return False")
        source = "\n".join(lines) + "\n"
        namespace = {k: (v.value if isinstance(v, _Int) else v) for k, v in self.names.bound.items()}
        return RenderedGuard(source=source, namespace=namespace, name=self.name,
                             checks=self.checks, globals_dict=self.tree.globals_dict,
                             tree=self.tree)


#: the names _reversed_called_names reports: every helper's (lower-case, eight letters or more)
_WORD = re.compile(r"[a-z_]{8,}")
#: in the reversed text: an opening bracket and a whole run of word characters after it, when
#: the run is such a name
_REVERSED_CALL = re.compile(r"\(([a-z_]{8,})(?!\w)")


def _reversed_called_names(text: str) -> Set[str]:
    """``N[::-1]`` for each name ``N`` matching :data:`_WORD` for which ``text`` has ``\\bN(``.

    For such a name, :func:`_calls` finds ``N(`` exactly when the whole run of word characters
    before some ``(`` is ``N``.  Reading the text backwards, that run is the one right after
    the bracket, which a pattern starting with ``(`` finds in one pass without backtracking
    (forwards, ``\\w+\\(`` retries from every character of every word).  One pass instead of
    one substring search of a GPT-2 guard's ~230 kB body per helper the renderer did not call;
    the names stay reversed (the caller reverses its few names instead of thousands of runs).
    Runs that cannot be a helper's name (``type``, ``len``, ``hasattr``, names with capitals or
    digits: a quarter of a GPT-2 guard's ~4000) are passed over without making a string.
    """
    return set(_REVERSED_CALL.findall(text[::-1]))


def _calls(text: str, name: str) -> bool:
    """Whether ``text`` has ``name(`` with no word character before it (``\\bname\\(``).

    A substring search per helper: a regular expression over the whole body (a GPT-2 guard
    is ~240 kB of text) cost several times more than everything else in assembling it.
    """
    pattern = name + "("
    at = text.find(pattern)
    while at >= 0:
        before = text[at - 1] if at else " "
        # ``\w`` is exactly the characters ``str.isalnum`` accepts, and ``_``
        if not (before.isalnum() or before == "_"):
            return True
        at = text.find(pattern, at + 1)
    return False


def _short_repr(obj: Any, limit: int = 100) -> str:
    try:
        text = repr(obj)
    except Exception:  # noqa: BLE001 - a description only
        text = "<%s>" % type(obj).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."


def failing_check(rendered: RenderedGuard, f_locals: Dict[str, Any],
                  globals_dict: Optional[Dict[str, Any]] = None) -> Optional[RenderedCheck]:
    """The first rendered check that fails for ``f_locals`` (None when the guard passes).

    Runs the guard under a line tracer, so the answer is the line the function really returned
    from; a value that could not be read reports the check being evaluated at the time.

    >>> failing_check(rendered, {"x": torch.ones(3)}).text    # doctest: +SKIP
    "if not (check_tensor(L['x'], ...)): return False  # from: a = x.sin()  (t.py:3 in f)"
    """
    g = rendered.globals_dict if globals_dict is None else globals_dict
    # A recompilation usually fails one of the first checks (the layer's own object): its
    # first lines alone, compiled, answer; compiling a guard of hundreds of checks was most of
    # the cost of explaining a recompilation (a model's layers: once per layer).
    prefix = _prefix_function(rendered)
    if prefix is not None:
        check = _run_traced(rendered, prefix, f_locals, g)
        if check is not None:
            return check
    return _run_traced(rendered, rendered.function(), f_locals, g)


#: a guard's first lines that :func:`failing_check` runs first: this share, at least the minimum
_PREFIX_SHARE = 4
_PREFIX_MIN = 40
_TAIL = ["        return True", "    except Exception:", "        return False"]


def _prefix_function(rendered: RenderedGuard) -> Optional[Callable[..., bool]]:
    """The guard function cut after its first checks, with ``return True`` after them: it
    runs the same lines in the same order, so where it returns False the whole function returns
    False on the same line.  Its own last lines are numbered past the whole function's end (no
    check of the whole function has their numbers).  None when the guard is short or not laid
    out as :class:`_Renderer` writes it."""
    lines = rendered.source.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if lines[-3:] != _TAIL:
        return None
    try:
        start = lines.index("def %s(L, G):" % rendered.name)
        body = lines.index("    try:", start) + 1
    except ValueError:
        return None
    end = len(lines) - 3
    cut = body + max(_PREFIX_MIN, (end - body) // _PREFIX_SHARE)
    # (at an ``if`` of the try body itself: no statement before it goes on after the cut --
    # an ``if`` continues none, as ``else`` or a bracket's closing line would)
    while cut < end and not lines[cut].startswith("        if "):
        cut += 1
    if cut >= end:
        return None
    source = "\n".join(lines[:cut] + [""] * (len(lines) - cut) + _TAIL) + "\n"
    try:
        code = compile(source, "<pellucid %s>" % rendered.name, "exec")
    except SyntaxError:
        return None
    scope = dict(rendered.namespace)
    exec(code, scope)
    fn = scope.get(rendered.name)
    return fn if callable(fn) else None


def _run_traced(rendered: RenderedGuard, fn: Callable[..., bool], f_locals: Dict[str, Any],
                g: Optional[Dict[str, Any]]) -> Optional[RenderedCheck]:
    import sys
    code = fn.__code__  # type: ignore[attr-defined]
    last: List[int] = []

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code is not code:
            return None
        if event == "line":
            last.append(frame.f_lineno)
        return tracer

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        ok = fn(f_locals, g)
    finally:
        sys.settrace(old)
    if ok:
        return None
    by_line = {c.lineno: c for c in rendered.checks}
    for lineno in reversed(last):
        if lineno in by_line:
            return by_line[lineno]
    return None
