"""Every PyTorch internal pellucid reads is found on the installed torch, and one that moved is
named in a warning rather than silently missing.

The first test is the version check: it runs on each torch the project supports (2.13.0, 2.14.1,
2.15.0; see README, "torch versions").  The others hide or rename one internal at a time and
check that the compiled program's results are unchanged and that one warning names it.
"""
import warnings

import pytest

torch = pytest.importorskip("torch")

import pellucid  # noqa: E402
from pellucid.dynamo import capture as capture_module  # noqa: E402
from pellucid.dynamo import torch_features  # noqa: E402
from pellucid.dynamo.torch_features import PellucidWarning  # noqa: E402


def two_frames(x, y):
    a = x.sin() + y
    print("graph break")
    return a.cos() * 2


def _ours(caught):
    return [str(w.message) for w in caught if issubclass(w.category, PellucidWarning)]


def test_every_internal_is_found_on_this_torch(monkeypatch):
    monkeypatch.setattr(torch_features, "_missing_reported", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        missing = torch_features.check_all()
    assert missing == [], "torch %s moved: %s" % (torch.__version__, missing)
    assert _ours(caught) == []


def test_compile_arguments_that_moved_are_named(monkeypatch):
    import torch._dynamo.convert_frame as convert_frame

    def _compile(code, globals_):  # (a torch whose _compile takes other arguments)
        pass
    monkeypatch.setattr(convert_frame, "_compile", _compile)
    monkeypatch.setattr(torch_features, "_missing_reported", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        missing = torch_features.check_all()
        again = torch_features.check_all()
    assert missing == again == ["torch._dynamo.convert_frame._compile(globals=...)",
                                "torch._dynamo.convert_frame._compile(closure=...)"]
    messages = _ours(caught)
    assert len(messages) == 2 and all("_compile" in m for m in messages), messages
    assert "'globals'" in messages[0] and "'closure'" in messages[1]


def _run_under_prepare_debug(tmp_path, fn, calls):
    torch._dynamo.reset()
    expected = [torch.compile(fn, backend="eager")(*args) for args in calls]
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pellucid.prepare_debug(str(tmp_path / "dump")) as capture:
            got = [compiled(*args) for args in calls]
    for a, b in zip(got, expected):
        assert torch.equal(a, b)
    return capture, _ours(caught)


def test_graph_event_that_moved_is_named(tmp_path, monkeypatch):
    events = dict(capture_module.GRAPH_EVENTS)
    del events["dynamo_output_graph"]  # (as if torch had renamed it)
    monkeypatch.setattr(capture_module, "GRAPH_EVENTS", events)
    capture, messages = _run_under_prepare_debug(tmp_path, two_frames, [(torch.ones(3), torch.ones(3))])
    named = [m for m in messages if "'dynamo_output_graph'" in m]
    assert len(named) == 1, messages
    assert named[0][len("pellucid: "):] in capture.warnings


def test_graph_break_artifact_that_moved_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(capture_module, "GRAPH_BREAK_ARTIFACT", "graph_break_reason_renamed")
    capture, messages = _run_under_prepare_debug(tmp_path, two_frames, [(torch.ones(3), torch.ones(3))])
    assert [m for m in messages if "'graph_break_reason_renamed'" in m], messages
    assert not any(f.graph_breaks for f in capture.frames.values())


def _shape_dependent(x):
    return x * x.shape[0]


def test_recompilation_reasons_that_moved_are_named(tmp_path, monkeypatch):
    real = capture_module.Capturer.on_trace

    def without_metrics(self, metadata, payload):
        if "compilation_metrics" not in metadata:
            real(self, metadata, payload)
    monkeypatch.setattr(capture_module.Capturer, "on_trace", without_metrics)
    calls = [(torch.ones(2),), (torch.ones(3),)]  # the second recompiles (a new static shape)
    with torch._dynamo.config.patch(automatic_dynamic_shapes=False):
        capture, messages = _run_under_prepare_debug(tmp_path, _shape_dependent, calls)
    assert any(t.compile_id.endswith("/1") for f in capture.frames.values() for t in f.transforms)
    assert [m for m in messages if "recompile_reason" in m], messages


def test_missing_compile_ids_are_named(tmp_path, monkeypatch):
    # (as if torch's CompileContext.current_compile_id() had no id inside the bytecode hook)
    monkeypatch.setattr(capture_module.Capturer, "_current_compile_id", staticmethod(lambda: None))
    capture, messages = _run_under_prepare_debug(tmp_path, two_frames, [(torch.ones(3), torch.ones(3))])
    assert [m for m in messages if "current_compile_id" in m], messages


def test_nothing_is_named_when_nothing_moved(tmp_path):
    with torch._dynamo.config.patch(automatic_dynamic_shapes=False):
        capture, messages = _run_under_prepare_debug(
            tmp_path, _shape_dependent, [(torch.ones(2),), (torch.ones(3),)])
    assert messages == [] and capture.warnings == []
    assert any(f.recompilations for f in capture.frames.values())
