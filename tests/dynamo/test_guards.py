"""Guards as Python: the rendered guard functions agree with Dynamo's guard manager.

Each case compiles a function (backend="eager"), renders every cache entry's guard, checks the
source compiles, and compares ``evaluate(rendered, f_locals)`` with ``guard_manager.check(f_locals)``
on frame locals that hit and that miss.
"""
import contextlib
import enum
import inspect
from typing import Any, Callable, Dict, List, Tuple

import pytest

torch = pytest.importorskip("torch")

import torch._dynamo  # noqa: E402

from pellucid.dynamo import guard_tree  # noqa: E402
from pellucid.dynamo.guard_render import evaluate, failing_check, render_guard  # noqa: E402
from pellucid.dynamo.guard_tree import UnsupportedGuardError, read_guard_tree  # noqa: E402

GLOBAL_SCALE = 2.0
GLOBAL_TENSOR = torch.ones(3)


class Color(enum.Enum):
    RED = 1
    BLUE = 2


def _entries(fn: Callable[..., Any]) -> List[Any]:
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list
    code = getattr(fn, "__code__", None) or fn.forward.__code__
    return _debug_get_cache_entry_list(code)


def _locals(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Dict[str, Any]:
    """The frame locals Dynamo's guards see on entry: bound arguments plus free variables."""
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    out = dict(bound.arguments)
    code = fn.__code__
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        out[name] = cell.cell_contents
    return out


class Tally(object):
    def __init__(self) -> None:
        self.hits = 0
        self.misses = 0


TALLY = Tally()


def _compare(fn_code_owner: Callable[..., Any], probes: List[Tuple[str, Dict[str, Any]]],
             ctx: Callable[[], Any] = contextlib.nullcontext) -> Tuple[int, int]:
    """Render each cache entry; compare with Dynamo on every probe.  Returns (#True, #False)."""
    entries = _entries(fn_code_owner)
    assert entries, "nothing was compiled"
    seen_true = seen_false = 0
    for i, entry in enumerate(entries):
        rendered = render_guard(entry.guard_manager, "guard_%d" % i)
        compile(rendered.source, "<guard_%d>" % i, "exec")
        assert not rendered.delegated, [c.text for c in rendered.delegated]
        for label, f_locals in probes:
            with ctx():
                want = entry.guard_manager.check(f_locals)
                got = evaluate(rendered, f_locals)
            if got != want:
                with ctx():
                    bad = failing_check(rendered, f_locals)
                pytest.fail("entry %d, probe %r: pellucid %r, Dynamo %r; failing line: %s\n%s" % (
                    i, label, got, want, bad.text if bad else None, rendered.source))
            if want:
                seen_true += 1
                TALLY.hits += 1
            else:
                seen_false += 1
                TALLY.misses += 1
    return seen_true, seen_false


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


# ----------------------------------------------------------------------------------- cases

def test_tensors_ints_floats_and_globals():
    def f(x, y, n, scale):
        a = x.sin()
        b = y * n + scale
        return a + b * GLOBAL_SCALE + GLOBAL_TENSOR.sum()

    cf = torch.compile(f, backend="eager")
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    cf(x, y, 3, 1.5)
    probes = [
        ("same", _locals(f, x, y, 3, 1.5)),
        ("new tensors, same meta", _locals(f, torch.randn(3, 4), torch.randn(3, 4), 3, 1.5)),
        ("dtype", _locals(f, x.double(), y, 3, 1.5)),
        ("shape", _locals(f, torch.randn(4, 4), y, 3, 1.5)),
        ("non-contiguous", _locals(f, torch.randn(4, 3).t(), y, 3, 1.5)),
        ("requires_grad", _locals(f, x.clone().requires_grad_(), y, 3, 1.5)),
        ("int value", _locals(f, x, y, 4, 1.5)),
        ("bool for int", _locals(f, x, y, True, 1.5)),
        ("float value", _locals(f, x, y, 3, 2.5)),
        ("int for float", _locals(f, x, y, 3, 1)),
        ("type", _locals(f, [1.0], y, 3, 1.5)),
        ("aliasing", _locals(f, x, x, 3, 1.5)),
        ("missing local", {"x": x, "y": y, "n": 3}),
    ]
    t, fl = _compare(f, probes)
    assert t and fl


def test_global_change_and_grad_mode():
    def f(x):
        return x * GLOBAL_SCALE

    cf = torch.compile(f, backend="eager")
    x = torch.randn(2)
    cf(x)
    probes = [("same", {"x": x}), ("int64", {"x": x.long()})]
    assert _compare(f, probes) == (1, 1)
    assert _compare(f, probes, ctx=torch.no_grad) == (0, 2)
    global GLOBAL_SCALE
    old = GLOBAL_SCALE
    try:
        GLOBAL_SCALE = 3.0
        assert _compare(f, probes) == (0, 2)
    finally:
        GLOBAL_SCALE = old


def test_compiled_under_no_grad():
    def f(x, w):
        return x @ w

    cf = torch.compile(f, backend="eager")
    x, w = torch.randn(2, 3), torch.randn(3, 3, requires_grad=True)
    with torch.no_grad():
        cf(x, w)
    probes = [("same", {"x": x, "w": w}), ("w no grad", {"x": x, "w": w.detach()})]
    t, fl = _compare(f, probes, ctx=torch.no_grad)
    assert t and fl
    assert _compare(f, probes) == (0, 2)  # grad mode flipped back on


def test_containers_and_enum():
    def f(lst, tup, d, c, k=3):
        out = lst[0] + tup[0] * tup[1] + k
        for key, v in d.items():
            out = out + v
        if c is Color.RED:
            out = out * 2
        return out

    cf = torch.compile(f, backend="eager")
    a, b = torch.ones(2), torch.ones(2)
    d = {"a": torch.ones(2), 1: torch.ones(2)}
    cf([a], (b, 2.5), d, Color.RED)
    base = _locals(f, [a], (b, 2.5), d, Color.RED)
    probes = [
        ("same", base),
        ("list len", dict(base, lst=[a, b])),
        ("tuple for list", dict(base, lst=(a,))),
        ("tuple float", dict(base, tup=(b, 3.5))),
        ("dict key order", dict(base, d={1: d[1], "a": d["a"]})),
        ("dict extra key", dict(base, d=dict(d, z=torch.ones(2)))),
        ("dict key renamed", dict(base, d={"b": d["a"], 1: d[1]})),
        ("dict value shape", dict(base, d={"a": torch.ones(3), 1: d[1]})),
        ("enum", dict(base, c=Color.BLUE)),
        ("default", dict(base, k=4)),
        ("aliasing in dict", dict(base, d={"a": a, 1: d[1]})),
    ]
    t, fl = _compare(f, probes)
    assert t and fl


def test_module_method():
    class M(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)
            self.k = 3

        def forward(self, x):
            return self.lin(x) * self.k

    m = M()
    cm = torch.compile(m, backend="eager")
    x = torch.randn(2, 3)
    cm(x)
    other = M()
    bigger = M()
    bigger.lin = torch.nn.Linear(3, 4)
    changed = M()
    changed.k = 4
    probes = [
        ("same", {"self": m, "x": x}),
        ("other instance", {"self": other, "x": x}),
        ("other weight shape", {"self": bigger, "x": x}),
        ("int attribute", {"self": changed, "x": x}),
        ("batch", {"self": m, "x": torch.randn(5, 3)}),
    ]
    t, fl = _compare(M.forward, probes)
    assert t and fl


def test_closure():
    def make():
        z = torch.ones(2)
        w = 2

        def h(x):
            return x + z * w
        return h

    h = make()
    torch.compile(h, backend="eager")(torch.ones(2))
    base = _locals(h, torch.ones(2))
    probes = [("same", base), ("free int", dict(base, w=5)), ("free tensor", dict(base, z=torch.ones(3))),
              ("aliasing", dict(base, x=base["z"]))]
    t, fl = _compare(h, probes)
    assert t and fl


def test_dynamic_shapes_mark_dynamic_and_relations():
    def f(x, y):
        return x[1:] * y[1:]

    cf = torch.compile(f, backend="eager")
    x, y = torch.randn(5, 3), torch.randn(5, 3)
    torch._dynamo.mark_dynamic(x, 0)
    torch._dynamo.mark_dynamic(y, 0)
    cf(x, y)
    marked = torch.randn(9, 3)
    torch._dynamo.mark_dynamic(marked, 0)
    marked_other = torch.randn(9, 3)
    torch._dynamo.mark_dynamic(marked_other, 1)
    probes = [
        ("same", {"x": x, "y": y}),
        ("other size", {"x": torch.randn(7, 3), "y": torch.randn(7, 3)}),
        ("sizes differ", {"x": torch.randn(7, 3), "y": torch.randn(6, 3)}),
        ("size 1", {"x": torch.randn(1, 3), "y": torch.randn(1, 3)}),
        ("static dim", {"x": torch.randn(7, 4), "y": torch.randn(7, 4)}),
        ("marked subset", {"x": marked, "y": torch.randn(9, 3)}),
        ("marked new dim", {"x": marked_other, "y": torch.randn(9, 3)}),
    ]
    t, fl = _compare(f, probes)
    assert t and fl


def test_automatic_dynamic_after_recompile():
    def f(x, n):
        return x.sum(0) * n

    cf = torch.compile(f, backend="eager")
    cf(torch.randn(4, 2), 2)
    cf(torch.randn(6, 2), 3)   # sizes and int become dynamic
    cf(torch.randn(1, 2), 3)   # 0/1 specialization: another entry
    assert len(_entries(f)) >= 2
    probes = [
        ("size 4", {"x": torch.randn(4, 2), "n": 2}),
        ("size 8", {"x": torch.randn(8, 2), "n": 7}),
        ("size 1", {"x": torch.randn(1, 2), "n": 3}),
        ("float n", {"x": torch.randn(8, 2), "n": 7.0}),
        ("rank", {"x": torch.randn(8), "n": 7}),
    ]
    t, fl = _compare(f, probes)
    assert t and fl


def test_duplicate_input_object_aliasing():
    def f(a, b):
        a.add_(1)
        return a + b

    cf = torch.compile(f, backend="eager")
    t = torch.ones(2)
    cf(t, t)       # compiled for the same tensor passed twice
    probes = [("aliased", {"a": t, "b": t}), ("other aliased", {"a": torch.ones(2), "b": torch.ones(2)})]
    s = torch.ones(2)
    probes.append(("same other", {"a": s, "b": s}))
    tt, fl = _compare(f, probes)
    assert tt and fl


def test_shape_relations_between_inputs():
    def f(x, y):
        if x.size(0) >= 2:
            return torch.cat([x, y]) + x.size(0)
        return x

    cf = torch.compile(f, backend="eager", dynamic=True)
    cf(torch.randn(4, 2), torch.randn(3, 2))
    probes = [
        ("same", {"x": torch.randn(4, 2), "y": torch.randn(3, 2)}),
        ("other sizes", {"x": torch.randn(9, 2), "y": torch.randn(2, 2)}),
        ("x small", {"x": torch.randn(1, 2), "y": torch.randn(3, 2)}),
        ("columns differ", {"x": torch.randn(4, 3), "y": torch.randn(3, 2)}),
    ]
    t, fl = _compare(f, probes)
    assert t and fl


class Holder(object):
    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


def test_hasattr_and_attributes():
    def f(x, obj):
        if hasattr(obj, "bias"):
            return x + obj.scale
        return x * obj.scale

    cf = torch.compile(f, backend="eager")
    x = torch.ones(2)
    cf(x, Holder(scale=2, bias=1))
    probes = [
        ("same", {"x": x, "obj": Holder(scale=2, bias=1)}),
        ("other bias value", {"x": x, "obj": Holder(scale=2, bias=7)}),
        ("no bias", {"x": x, "obj": Holder(scale=2)}),
        ("scale", {"x": x, "obj": Holder(scale=3, bias=1)}),
        ("no scale", {"x": x, "obj": Holder(bias=1)}),
    ]
    t, fl = _compare(f, probes)
    assert t >= 2 and fl >= 2
    rendered = render_guard(_entries(f)[0].guard_manager, "g")
    assert any(c.kind == "ACCESS" for c in rendered.checks) or any(
        c.kind == "NO_HASATTR" for c in rendered.checks)


def test_cpp_symbolic_shape_guard_and_relational_object_aliasing():
    def f(x, y):
        if x.size(0) >= 2:
            return torch.cat([x, y]) + x.size(0)
        return x

    def g(a, b):
        a.add_(1)
        return a + b

    t = torch.ones(2)
    try:
        with torch._dynamo.config.patch(enable_cpp_symbolic_shape_guards=True,
                                        use_lamba_guard_for_object_aliasing=False):
            torch.compile(f, backend="eager", dynamic=True)(torch.randn(4, 2), torch.randn(3, 2))
            torch.compile(g, backend="eager")(t, t)
    except (AttributeError, RuntimeError) as exc:  # config names differ in this torch
        pytest.skip("cannot switch Dynamo to C++ shape guards: %s" % exc)
    kinds = {c.kind for c in render_guard(_entries(f)[0].guard_manager, "g").checks}
    probes = [
        ("same", {"x": torch.randn(4, 2), "y": torch.randn(3, 2)}),
        ("x small", {"x": torch.randn(1, 2), "y": torch.randn(3, 2)}),
        ("columns differ", {"x": torch.randn(4, 3), "y": torch.randn(3, 2)}),
    ]
    assert _compare(f, probes) == (1, 2)
    assert _compare(g, [("aliased", {"a": t, "b": t}), ("distinct", {"a": t, "b": torch.ones(2)})]) == (1, 1)
    if "SYMBOLIC_SHAPE_GUARD" not in kinds:
        pytest.skip("no C++ compiler: Dynamo fell back to Python shape guards")


# ------------------------------------------------------------------------- coverage and errors

def _tree_leaf_ids(wrapper: Any) -> Tuple[set, int]:
    """ids of all leaf guards, walking torch's API directly (independent of guard_tree)."""
    ids = set()
    keep = []

    def walk(mgr: Any) -> None:
        for leaf in mgr.get_leaf_guards():
            keep.append(leaf)
            ids.add(id(leaf))
        kv = getattr(mgr, "get_key_value_managers", None)
        if kv is not None:
            for key_mgr, value_mgr in kv().values():
                for m in (key_mgr, value_mgr):
                    if m is not None:
                        walk(m)
        for child in mgr.get_child_managers():
            walk(child)

    walk(wrapper.root)
    for leaf in wrapper.root.get_epilogue_lambda_guards():
        keep.append(leaf)
        ids.add(id(leaf))
    return ids, len(keep)


def test_every_leaf_is_rendered():
    def f(x, y, d, n):
        return x * n + y + d["w"]

    cf = torch.compile(f, backend="eager")
    cf(torch.randn(3), torch.randn(3), {"w": torch.ones(3)}, 2)
    cf(torch.randn(5), torch.randn(5), {"w": torch.ones(5)}, 3)
    for entry in _entries(f):
        wrapper = entry.guard_manager
        rendered = render_guard(wrapper, "g")
        leaf_ids, count = _tree_leaf_ids(wrapper)
        assert count >= 10
        rendered_ids = {c.leaf_id for c in rendered.checks if c.leaf_id is not None}
        assert leaf_ids <= rendered_ids, "leaves not rendered"
        # each rendered line names a leaf of this tree or a DictGuardManager built-in
        assert all(c.leaf_id in leaf_ids or c.origin in ("dict", "accessor") for c in rendered.checks)


def test_unknown_guard_kind_is_delegated_not_dropped(monkeypatch):
    def f(x, n):
        return x + n

    cf = torch.compile(f, backend="eager")
    x = torch.randn(2)
    cf(x, 2)
    entry = _entries(f)[0]
    # pretend pellucid does not know EQUALS_MATCH: it must call Dynamo's leaf, and say so
    monkeypatch.delitem(guard_tree._PARSERS, "EQUALS_MATCH")
    rendered = render_guard(entry.guard_manager, "g")
    delegated = rendered.delegated
    assert [c.kind for c in delegated] == ["EQUALS_MATCH"]
    assert "DELEGATED" in delegated[0].text and "EQUALS_MATCH" in delegated[0].text
    for f_locals in ({"x": x, "n": 2}, {"x": x, "n": 5}):
        assert evaluate(rendered, f_locals) == entry.guard_manager.check(f_locals)


def test_unknown_accessor_raises_clear_error():
    class FakeAccessor(object):
        def repr(self) -> str:
            return "MysteryGuardAccessor(7)"

    class FakeChild(object):
        def get_source(self) -> str:
            return "L['x'].mystery"

    parent = guard_tree.SourceNode(expr="L['x']", dynamo_source="L['x']", accessor="",
                                   manager_kind="GuardManager")
    with pytest.raises(UnsupportedGuardError, match="MysteryGuardAccessor"):
        guard_tree._accessor_expr(FakeAccessor(), parent, FakeChild())


def test_unknown_relational_guard_raises():
    class WEIRD_RELATION(object):
        def verbose_code_parts(self) -> List[str]:
            return ["weird(L['a'], L['b'])"]

    node = guard_tree.SourceNode(expr="L['a']", dynamo_source="L['a']", accessor="",
                                 manager_kind="GuardManager")
    with pytest.raises(UnsupportedGuardError, match="WEIRD_RELATION"):
        guard_tree.parse_relational(WEIRD_RELATION(), [node], {})


def test_read_tree_model_and_comments():
    def f(x):
        y = x.cos()
        return y

    cf = torch.compile(f, backend="eager")
    cf(torch.randn(2))
    tree = read_guard_tree(_entries(f)[0].guard_manager)
    node = [n for n in guard_tree.iter_nodes(tree.root) if n.expr == "L['x']"][0]
    tm = [c for c in node.checks if c.kind == "TENSOR_MATCH"][0]
    assert tm.params["dtype"] is torch.float32 and tm.params["size"] == [2]
    assert tm.parts[0].user_line == "y = x.cos()"
    assert tm.parts[0].location.endswith("in f")
    src = render_guard(_entries(f)[0].guard_manager, "guard_0").source
    assert "# from: y = x.cos()" in src
    assert "from pellucid.dynamo.guard_helpers import" in src


def test_tally_saw_hits_and_misses():
    # runs last in this module: the comparisons above saw both answers many times
    print("guard comparisons: %d hits, %d misses" % (TALLY.hits, TALLY.misses))
    assert TALLY.hits >= 10 and TALLY.misses >= 20, (TALLY.hits, TALLY.misses)


def test_kept_trees_render_what_a_fresh_read_renders(monkeypatch):
    """A recompilation's diagnosis and the dump render the same guard manager: through
    ``render_guard``'s ``trees`` the tree is read once, and each name's rendering is what a
    fresh read renders (source, checks and bound objects), for every entry of a recompiled
    function."""
    def f(x, n):
        return x * n + 1

    cf = torch.compile(f, backend="eager")
    for n in (1, 2, 3):
        cf(torch.ones(2), n)
    entries = _entries(f)
    assert len(entries) >= 2
    trees: Dict[int, Any] = {}
    fresh = {}
    for i, e in enumerate(entries):
        for name in ("guard", "guard_f_%d" % i):
            fresh[(i, name)] = render_guard(e.guard_manager, name)
    reads: List[Any] = []
    original = guard_tree.read_guard_tree
    import pellucid.dynamo.guard_render as guard_render_module

    def counted(gm: Any) -> Any:
        reads.append(gm)
        return original(gm)
    monkeypatch.setattr(guard_render_module, "read_guard_tree", counted)
    for _ in range(2):
        for i, e in enumerate(entries):
            for name in ("guard", "guard_f_%d" % i):
                kept = render_guard(e.guard_manager, name, trees=trees)
                want = fresh[(i, name)]
                assert kept.source == want.source and kept.name == name
                assert [c.text for c in kept.checks] == [c.text for c in want.checks]
                assert kept.namespace.keys() == want.namespace.keys()
                probe = _locals(f, torch.ones(2), i + 1)
                assert evaluate(kept, probe) == e.guard_manager.check(probe)
    assert len(reads) == len(entries)  # one read per guard manager, however often rendered


def test_failing_check_from_the_first_lines_is_the_whole_guards():
    """failing_check runs a long guard's first lines first (compiling hundreds of checks was
    most of explaining a recompilation): the check it names, for calls failing early, late or
    not at all, is the one the whole guard function returns False on."""
    from pellucid.dynamo import guard_render as gr

    layers = torch.nn.ModuleList([torch.nn.Linear(3, 3) for _ in range(12)])

    def f(x, mods, k):
        for m in mods:
            x = m(x) * k
        return x

    cf = torch.compile(f, backend="eager")
    cf(torch.ones(2, 3), layers, 2)
    (entry,) = _entries(f)
    rendered = render_guard(entry.guard_manager, "guard_f_0")
    assert gr._prefix_function(rendered) is not None  # (long enough to be cut)
    other = torch.nn.ModuleList([torch.nn.Linear(3, 3) for _ in range(12)])
    probes = [("passes", (torch.ones(2, 3), layers, 2)), ("int", (torch.ones(2, 3), layers, 3)),
              ("shape", (torch.ones(4, 3), layers, 2)), ("dtype", (torch.ones(2, 3).double(), layers, 2)),
              ("modules", (torch.ones(2, 3), other, 2)), ("last layer", (torch.ones(2, 3), layers, 2))]
    cut_lines = gr._PREFIX_MIN + 1
    answers = set()
    for label, args in probes:
        probe = _locals(f, *args)
        # (the last layer's weight no longer requires grad: checked late)
        layers[-1].weight.requires_grad_(label != "last layer")
        whole = gr._run_traced(rendered, rendered.function(), probe, rendered.globals_dict or {})
        got = failing_check(rendered, probe)
        assert (got.lineno if got else None) == (whole.lineno if whole else None), label
        assert (whole is None) == entry.guard_manager.check(probe), label
        answers.add(whole.lineno if whole else None)
    first = min(c.lineno for c in rendered.checks)
    # (the probes fail within the first lines, past them, and not at all)
    assert None in answers and any(a and a < first + cut_lines for a in answers) \
        and any(a and a > first + len(rendered.source.split("\n")) // gr._PREFIX_SHARE for a in answers), answers


def test_guard_scope_is_the_guard_functions_globals():
    """explain reads a failed check's value in guard_scope (without compiling the whole guard):
    the same names bound to the same objects as the compiled guard function's globals."""
    from pellucid.dynamo.guard_render import RenderedGuard, guard_scope

    layers = torch.nn.ModuleList([torch.nn.Linear(3, 3) for _ in range(4)])

    def f(x, mods):
        for m in mods:
            x = m(x)
        return x

    torch.compile(f, backend="eager")(torch.ones(2, 3), layers)
    (entry,) = _entries(f)
    rendered = render_guard(entry.guard_manager, "guard_f_0")
    scope = guard_scope(rendered)
    assert rendered._function is None  # (nothing compiled the whole guard)
    whole = dict(RenderedGuard(rendered.source, rendered.namespace, rendered.name).function().__globals__)
    del whole[rendered.name]
    assert scope.keys() == whole.keys()
    assert all(scope[k] is whole[k] for k in scope if k != "__builtins__")
    probe = _locals(f, torch.ones(2, 3), layers)
    subject = "L['mods']"
    assert eval("lambda L, G: " + subject, scope)(probe, rendered.globals_dict or {}) is layers
