"""pellucid's listing of Dynamo's graph (``graph_listing.listing``) in place of torch's
``print_readable`` payload.

The listing must say what print_readable says (every node, every value's dtype, shape, stride
and device, SymInt sizes as expressions, the user's source lines, the subgraphs of higher-order
operators); with pellucid's trace handler alone, the ``dynamo_output_graph`` event carries it
and print_readable is not called; where the graph module cannot be found or listed, or
another handler listens, torch's own payload is built as before.
"""
import logging
import os
import re

import pytest

torch = pytest.importorskip("torch")

import pellucid  # noqa: E402
from pellucid.dynamo import graph_listing, trace_filter  # noqa: E402
from torch._logging import _internal  # noqa: E402
from torch.fx import GraphModule  # noqa: E402


def _simple(x, w):
    y = torch.sin(x) @ w
    y += 1
    return torch.relu(y).sum(0)


def _dynamic(x, n):
    return (x * n).reshape(-1, 2).sum(0) + x.shape[0]


def _with_cond(x):
    return torch.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos() * 2, (x,))


def _graph_modules(fn, args, **kwargs):
    """Dynamo's graph modules for ``fn(*args)``, listed by both printers as the backend gets them."""
    got = []

    def backend(gm, example_inputs):
        theirs = gm.print_readable(print_output=False, include_stride=True, include_device=True)
        got.append((gm, theirs, graph_listing.listing(gm)))
        return gm.forward
    torch._dynamo.reset()
    torch.compile(fn, backend=backend, **kwargs)(*args)
    assert got
    return got


def _stripped(text):
    # (print_readable indents its blank lines; pellucid's listing leaves them empty)
    return "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n") + "\n"


@pytest.mark.parametrize("fn, args, kwargs", [
    (_simple, (torch.ones(4, 3), torch.ones(3, 5)), {}),
    (_dynamic, (torch.ones(6, 4), 3), {"dynamic": True}),
    (_with_cond, (torch.ones(4, 3),), {}),
])
def test_listing_says_what_print_readable_says(fn, args, kwargs):
    for gm, theirs, ours in _graph_modules(fn, args, **kwargs):
        assert ours == _stripped(theirs)


def test_listing_describes_every_node():
    [(gm, _, ours)] = _graph_modules(_simple, (torch.ones(4, 3), torch.ones(3, 5)))
    compile(ours, "<listing>", "exec")
    assert ours.startswith("class GraphModule(torch.nn.Module):\n    def forward(self, ")
    # the inputs, with dtype, shape, stride and device
    assert 'L_x_: "f32[4, 3][3, 1]cpu"' in ours and 'L_w_: "f32[3, 5][5, 1]cpu"' in ours
    for node in gm.graph.nodes:
        if node.op in ("call_function", "call_method"):
            val = node.meta["example_value"]
            described = '%s: "f32[%s][%s]cpu"' % (node.name, ", ".join(map(str, val.shape)),
                                                 ", ".join(map(str, val.stride())))
            assert described in ours, described
    # the user's source lines, as print_readable's comments give them
    here = os.path.abspath(__file__)
    assert "# File: %s:%d in _simple, code: y = torch.sin(x) @ w" % (
        here, _simple.__code__.co_firstlineno + 1) in ours


def test_listing_gives_symbolic_sizes_as_expressions():
    [(gm, _, ours)] = _graph_modules(_dynamic, (torch.ones(6, 4), 3), dynamic=True)
    assert re.search(r'L_x_: "f32\[s\d+, s\d+\]\[s\d+, 1\]cpu"', ours)
    assert re.search(r'L_n_: "Sym\(s\d+\)"', ours)


def test_listing_lists_the_subgraphs_of_higher_order_operators():
    [(gm, _, ours)] = _graph_modules(_with_cond, (torch.ones(4, 3),))
    assert "\n    class cond_true_0(torch.nn.Module):\n        def forward(self, " in ours
    assert "\n    class cond_false_0(torch.nn.Module):\n" in ours
    assert 'mul: "f32[4, 3][3, 1]cpu" = cos * 2' in ours


def test_listing_refuses_what_it_does_not_read():
    def with_default(x, y=2):
        return x + y
    with pytest.raises(graph_listing.NotListed):
        graph_listing.listing(torch.fx.symbolic_trace(with_default))

    def with_dict(d):
        return d["a"] + 1
    pytree = torch.fx.symbolic_trace(with_dict, concrete_args={"d": {"a": torch.fx._symbolic_trace.PH}})
    with pytest.raises(graph_listing.NotListed):
        graph_listing.listing(pytree)


def test_payload_graph_module_is_found_only_in_torchs_payload():
    gm = torch.fx.symbolic_trace(lambda x: x + 1)
    assert trace_filter.graph_module_printed(
        lambda: gm.print_readable(print_output=False, include_stride=True, include_device=True)) is gm
    other = gm
    assert trace_filter.graph_module_printed(lambda: str(other)) is None  # not print_readable
    assert trace_filter.graph_module_printed(lambda: "text") is None
    assert trace_filter.graph_module_printed(None) is None
    gm = "not a graph module"
    assert trace_filter.graph_module_printed(lambda: gm.print_readable()) is None


class _Payloads(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.graphs = []

    def emit(self, record):
        metadata = getattr(record, "metadata", None)
        if isinstance(metadata, dict) and "dynamo_output_graph" in metadata:
            self.graphs.append((metadata["dynamo_output_graph"], record.payload))


def _count_print_readable(monkeypatch):
    calls = []
    original = GraphModule.print_readable

    def counting(self, *args, **kwargs):
        calls.append(self)
        return original(self, *args, **kwargs)
    monkeypatch.setattr(GraphModule, "print_readable", counting)
    return calls


def _dump(tmp_path, name):
    torch._dynamo.reset()
    compiled = torch.compile(_simple, backend="eager")
    args = (torch.ones(4, 3), torch.ones(3, 5))
    with pellucid.prepare_debug(str(tmp_path / name)):
        out = compiled(*args)
    with pellucid.debug(pause=False) as session:
        again = compiled(*args)
    assert torch.equal(out, again) and torch.equal(out, _simple(*args))
    [path] = [os.path.join(str(tmp_path / name), f) for f in os.listdir(str(tmp_path / name))
              if f.endswith(".dynamo.py")]
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    compile(text, path, "exec")
    return text, session.graph_files.get(path)


def test_dump_uses_pellucids_listing_when_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(_internal.trace_log, "handlers", [])
    calls = _count_print_readable(monkeypatch)
    text, outcome = _dump(tmp_path, "dump")
    assert calls == []  # torch's payload was not built
    assert 'L_x_: "f32[4, 3][3, 1]cpu"' in text and "# File: " in text
    assert outcome == "installed"  # debug() runs the file's forward


@pytest.mark.parametrize("breakage", ["module not found", "module not listed"])
def test_dump_falls_back_to_torchs_payload(tmp_path, monkeypatch, breakage):
    monkeypatch.setattr(_internal.trace_log, "handlers", [])
    if breakage == "module not found":
        monkeypatch.setattr(trace_filter, "graph_module_printed", lambda payload_fn: None)
    else:
        def refuse(gm):
            raise graph_listing.NotListed("test")
        monkeypatch.setattr(graph_listing, "listing", refuse)
    calls = _count_print_readable(monkeypatch)
    text, outcome = _dump(tmp_path, "dump")
    assert len(calls) == 1  # torch's payload, as without pellucid's listing
    assert 'L_x_: "f32[4, 3][3, 1]cpu"' in text and "# File: " in text
    assert outcome == "installed"


def test_another_handler_gets_torchs_payload(tmp_path, monkeypatch):
    calls = _count_print_readable(monkeypatch)
    other = _Payloads()
    _internal.trace_log.addHandler(other)
    try:
        text, outcome = _dump(tmp_path, "dump")
    finally:
        _internal.trace_log.removeHandler(other)
    [(metadata, payload)] = other.graphs
    assert "sizes" in metadata  # torch's metadata, untouched
    assert len(calls) == 1 and payload == calls[0].print_readable(
        print_output=False, include_stride=True, include_device=True)
    assert outcome == "installed"
