"""Make compiled graphs run from their dumped files, so a debugger can step through them.

A graph file (``__compiled_fn_<n>.<stage>.py``) holds ``class GraphModule(torch.nn.Module):
def forward(...)``, the listing FX prints for a graph module.  For each graph module a
compiled function runs (found by walking the callable Dynamo installed), the ``forward`` of a
graph file that :func:`pellucid.verify.check_equivalent` finds equivalent to the module's own
``forward`` replaces its code while ``debug()`` is active; the module's globals stay FX's.

>>> forward_codes(compile("class GraphModule:\\n    def forward(self, x):\\n        return x\\n", "g.py", "exec"))[0].co_name
'forward'
"""
import collections
import re
import types
from typing import Any, Callable, Dict, List, Set, Tuple


def forward_codes(module_code: types.CodeType) -> List[types.CodeType]:
    """The ``forward`` code objects defined in a graph file, outermost first."""
    found: List[types.CodeType] = []

    def walk(code: types.CodeType) -> None:
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                if c.co_name == "forward":
                    found.append(c)
                walk(c)
    walk(module_code)
    return found


def graph_modules_in(root: Any, max_depth: int = 8) -> List[Any]:
    """Graph modules reachable from ``root`` through closures, bound methods, ``__wrapped__``,
    partials and containers (how Dynamo and AOT Autograd wrap the graphs they run)."""
    from torch.fx import GraphModule

    return reachable(root, lambda obj: isinstance(obj, GraphModule), max_depth)


def reachable(root: Any, wanted: Callable[[Any], bool], max_depth: int = 8) -> List[Any]:
    """Objects for which ``wanted`` is true, reachable from ``root`` the way
    :func:`graph_modules_in` walks (not looking inside a found object)."""
    from torch.autograd import Function

    found: List[Any] = []
    seen: Set[int] = set()
    # Breadth first, so that each object is first met by its shortest path: depth first, a
    # long detour could mark an object seen with too little depth left to reach what it holds
    # (3.14's ``__annotate_func__`` of AOT's autograd.Function subclass closes over the class
    # dict, a detour to ``compiled_fw`` two levels longer than the class attribute itself).
    frontier = collections.deque([(root, 0)])
    while frontier:
        obj, depth = frontier.popleft()
        if depth > max_depth or id(obj) in seen:
            continue
        seen.add(id(obj))
        if wanted(obj):
            found.append(obj)
            continue
        children: List[Any] = []
        if isinstance(obj, types.MethodType):
            children += [obj.__self__, obj.__func__]
        if isinstance(obj, types.FunctionType):
            children += [c.cell_contents for c in (obj.__closure__ or ()) if _filled(c)]
        if isinstance(obj, types.BuiltinMethodType) and isinstance(getattr(obj, "__self__", None), type):
            children.append(obj.__self__)  # (``SomeFunction.apply``, which torch 2.15's wrappers hold)
        for attr in ("__wrapped__", "func", "compiled_fn", "_compiled_fn", "fn"):
            child = getattr(obj, attr, None) if not isinstance(obj, (type, types.ModuleType)) else None
            if child is not None:
                children.append(child)
        if isinstance(obj, type) and issubclass(obj, Function):
            # AOT Autograd keeps its compiled forward and backward on the autograd.Function
            # subclass it makes for the graph (``compiled_fw``, ``compiled_bw``)
            children += [v for v in vars(obj).values() if callable(v) or hasattr(v, "__dict__")][:64]
        if isinstance(obj, (list, tuple)):
            children += list(obj)[:64]
        elif isinstance(obj, dict):
            children += list(obj.values())[:64]
        elif hasattr(obj, "__dict__") and not isinstance(obj, (type, types.ModuleType, types.FunctionType)):
            children += [v for v in vars(obj).values() if callable(v) or isinstance(v, (list, tuple))][:64]
        frontier += [(c, depth + 1) for c in children]
    return found


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def install_from_files(modules: List[Any], files: List[str],
                       verify: Callable[[types.CodeType, types.CodeType], Tuple[bool, str]]
                       ) -> Tuple[List[Callable[[], None]], Dict[str, str]]:
    """Give each graph module the ``forward`` of an equivalent graph file.

    Returns the undo actions and, per file, what happened (installed, or why not)."""
    undo: List[Callable[[], None]] = []
    outcome: Dict[str, str] = {}
    candidates: List[Tuple[str, types.CodeType]] = []
    for path in files:
        try:
            with open(path, encoding="utf-8") as fh:
                module_code = compile(fh.read(), path, "exec", dont_inherit=True)
        except (OSError, SyntaxError, ValueError) as exc:
            outcome[path] = "not used: %s" % exc
            continue
        codes = forward_codes(module_code)
        if codes:
            candidates.append((path, codes[0]))
        else:
            outcome.setdefault(path, "not used: no forward in the file")
    for gm in modules:
        func = getattr(type(gm), "forward", None)
        if not isinstance(func, types.FunctionType):
            continue
        reasons: List[str] = []
        for path, code in candidates:
            if code.co_freevars != func.__code__.co_freevars:
                continue
            ok, reason = verify(func.__code__, code)
            if ok:
                old = func.__code__
                func.__code__ = code

                def restore(func: types.FunctionType = func, old: types.CodeType = old) -> None:
                    func.__code__ = old
                undo.append(restore)
                outcome[path] = "installed"
                break
            reasons.append(reason)
        else:
            for path, _ in candidates:
                outcome.setdefault(path, "not used: no graph module it is equivalent to")
    return undo, outcome


_ASSIGN = re.compile(r'^\s+(\w+)(?:: "[^"]*")? = (.+?)(?:;  .*)?$')


def _operations(listing: str) -> List[Tuple[str, str]]:
    """The graph's computations in a listing, without the argument-unpacking prologue."""
    ops: List[Tuple[str, str]] = []
    for line in listing.splitlines():
        m = _ASSIGN.match(line)
        if m and not m.group(2).startswith(("next(args_iter)", "iter(args_list)")):
            ops.append((m.group(1), m.group(2)))
    return ops


def use_live_listings(graph: Any) -> None:
    """Replace a stage's listing by the one of the graph module that actually runs it.

    AOT Autograd calls its graphs with one list argument (``forward(self, args_list)``): the
    module it runs was regenerated after torch's trace printed the graph, so a file made from
    the trace could never be the code that runs.  The module's own listing (same operations,
    same shape comments) is written instead.  Only AOT stages are replaced: the Dynamo graph's
    listing is printed from the very module the backend receives.
    """
    if graph.compiled_fn is None or not any(s.stage.startswith("aot_") for s in graph.stages):
        return  # (printing a module's listing is the costly part, and none is needed)
    for gm in graph_modules_in(graph.compiled_fn):
        try:
            live = gm.print_readable(print_output=False, include_stride=True, include_device=True)
        except Exception:
            continue
        ops = _operations(live)
        if not ops:
            continue
        for stage in graph.stages:
            if stage.stage.startswith("aot_") and stage.source != live and _operations(stage.source) == ops:
                stage.source = live
                break
