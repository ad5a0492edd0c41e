"""prepare_debug does not make torch build structured-trace events nobody reads.

With pellucid's handler the only one on torch's ``trace_log``, the events in
``trace_filter.UNREAD_EVENTS`` and the artifacts not in ``trace_filter.READ_ARTIFACTS`` are
dropped before their payloads are built; with another
handler attached every event still reaches it; the functions wrapped are restored afterwards;
and what pellucid reads (the graph) is still captured.
"""
import logging

import pytest

torch = pytest.importorskip("torch")

import pellucid  # noqa: E402
from pellucid.dynamo import trace_filter  # noqa: E402
from torch._logging import _internal  # noqa: E402


def _program(x):
    y = torch.sin(x) + 1
    return (y * x).sum()


class _Names(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.names = []

    def emit(self, record):
        metadata = getattr(record, "metadata", None)
        if isinstance(metadata, dict):
            self.names.extend(metadata)


def _spy(monkeypatch):
    """Record every event name that reaches torch's own ``trace_structured`` (payloads built)."""
    built = []
    original = _internal.trace_structured

    def spy(name, *args, **kwargs):
        if _internal.trace_log.handlers:  # torch builds the event only when someone listens
            label = name
            if name == "artifact":
                label += ":" + (args[0] if args else kwargs["metadata_fn"])()["name"]
            built.append(label)
        return original(name, *args, **kwargs)
    for module_name, attr in trace_filter._CALL_SITES:
        monkeypatch.setattr("%s.%s" % (module_name, attr), spy)
    return built, spy


def _compile_and_run():
    torch._dynamo.reset()
    return torch.compile(_program, backend="eager")(torch.ones(3))


def test_unread_events_are_not_built_when_pellucid_alone_listens(tmp_path, monkeypatch):
    built, spy = _spy(monkeypatch)
    # Nobody else listens: in a full test run a handler of pytest's live logging can sit on
    # torch's trace_log (and then every event is rightly built, as the next test checks).
    monkeypatch.setattr(_internal.trace_log, "handlers", [])
    plain = _compile_and_run()
    # (torch's LazyTraceHandler, present until the first event of the process, has removed
    # itself by now: it only writes when TORCH_TRACE is set)
    assert _internal.trace_log.handlers == []
    del built[:]
    with pellucid.prepare_debug(str(tmp_path / "dump")) as capture:
        out = _compile_and_run()
    assert torch.equal(plain, out)
    assert "dynamo_output_graph" in built  # what pellucid reads still arrives
    assert not trace_filter.UNREAD_EVENTS & set(built), sorted(set(built))
    assert capture.graphs and all(g.stages for g in capture.graphs.values())
    # restored: the function in place before the block (here the spy) is back
    assert _call_sites() == [spy, spy]


class _Counter:
    n = 0


_COUNTER = _Counter()


def _breaking_program(x):
    _COUNTER.n = _COUNTER.n + 1  # a side effect: Dynamo reports it as an artifact
    y = torch.sin(x)
    if y.sum() > 0:  # a graph break: a resume function, whose bytecode is an artifact too
        return y + 1
    return y - 1


def test_unread_artifacts_are_not_built_when_pellucid_alone_listens(tmp_path, monkeypatch):
    built, _ = _spy(monkeypatch)
    monkeypatch.setattr(_internal.trace_log, "handlers", [])
    torch._dynamo.reset()
    plain = torch.compile(_breaking_program, backend="eager")(torch.ones(3))
    del built[:]
    torch._dynamo.reset()
    with pellucid.prepare_debug(str(tmp_path / "dump")) as capture:
        out = torch.compile(_breaking_program, backend="eager")(torch.ones(3))
    assert torch.equal(plain, out)
    artifacts = sorted(set(n for n in built if n.startswith("artifact:")))
    assert artifacts == ["artifact:dynamo_graph_break_reason"]  # the one pellucid reads
    breaks = [gb for f in capture.frames.values() for gb in f.graph_breaks]
    assert breaks and all(gb.reason for gb in breaks)
    # and with another listener, the others are built as before
    other = _Names()
    _internal.trace_log.addHandler(other)
    try:
        del built[:]
        torch._dynamo.reset()
        with pellucid.prepare_debug(str(tmp_path / "dump2")):
            torch.compile(_breaking_program, backend="eager")(torch.ones(3))
    finally:
        _internal.trace_log.removeHandler(other)
    assert "artifact:dynamo_side_effects" in built
    assert any(n.endswith("_ORIGINAL_BYTECODE") for n in built)


def test_every_event_is_built_when_another_handler_listens(tmp_path, monkeypatch):
    built, _ = _spy(monkeypatch)
    other = _Names()
    _internal.trace_log.addHandler(other)
    try:
        with pellucid.prepare_debug(str(tmp_path / "dump")):
            _compile_and_run()
    finally:
        _internal.trace_log.removeHandler(other)
    assert "dynamo_cpp_guards_str" in built
    assert "dynamo_cpp_guards_str" in other.names
    assert "describe_tensor" in other.names


def _call_sites():
    return [getattr(__import__(m, fromlist=[a]), a) for m, a in trace_filter._CALL_SITES]


def test_torch_functions_are_restored(tmp_path):
    before = _call_sites()
    with pellucid.prepare_debug(str(tmp_path / "dump")):
        assert _call_sites() != before  # wrapped inside the block
        _compile_and_run()
    assert _call_sites() == before
