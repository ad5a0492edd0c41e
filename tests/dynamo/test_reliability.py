"""The user's program never breaks: pellucid's failures become one warning each.

Failures are injected: the decompiler raising, the dump directory vanishing mid-run, and a
PyTorch internal pellucid uses being hidden.  In every case the compiled program's results
are those of the plain ``torch.compile`` run.
"""
import os
import shutil
import warnings

import pytest

torch = pytest.importorskip("torch")

import pellucid  # noqa: E402
from pellucid.dynamo import torch_features  # noqa: E402
from pellucid.dynamo.torch_features import PellucidWarning  # noqa: E402


def two_frames(x, y):
    a = x.sin() + y
    print("graph break")
    return a.cos() * 2


def _plain(x, y):
    torch._dynamo.reset()
    return torch.compile(two_frames, backend="eager")(x, y)


def _ours(caught):
    return [str(w.message) for w in caught if issubclass(w.category, PellucidWarning)]


def test_decompiler_failure_is_one_warning_per_frame_and_dynamo_code_runs(tmp_path, monkeypatch, capsys):
    from pellucid.decompiler import recompile as recompile_module

    def broken(*args, **kwargs):
        raise RuntimeError("injected decompiler failure")
    monkeypatch.setattr(recompile_module, "recompile_full", broken)
    x, y = torch.ones(3), torch.full((3,), 2.0)
    expected = _plain(x, y)
    torch._dynamo.reset()
    compiled = torch.compile(two_frames, backend="eager")
    dump = str(tmp_path / "dump")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pellucid.prepare_debug(dump) as capture:
            out1 = compiled(x, y)
        with pellucid.debug(pause=False):
            out2 = compiled(x, y)
    assert torch.equal(out1, expected) and torch.equal(out2, expected)
    messages = _ours(caught)
    frames = [f for f in capture.frames.values()]
    assert len(frames) == 2 and len(messages) == 2, messages
    for frame in frames:
        (t,) = frame.transforms
        assert t.replacement is None and "injected decompiler failure" in t.rejected
        (message,) = [m for m in messages if "for %s (compile" % frame.label in m]
        assert t.path in message and "disassembly" in message
        with open(t.path, encoding="utf-8") as fh:
            text = fh.read()
        assert "RESUME" in text or "LOAD_GLOBAL" in text  # the disassembly is in the file
        compile(text, t.path, "exec")


def test_callbacks_run_with_the_collector_paused_and_restore_it(tmp_path, monkeypatch):
    import gc

    from pellucid.decompiler import recompile as recompile_module

    real = recompile_module.recompile_full
    seen = []

    def recording(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)
    monkeypatch.setattr(recompile_module, "recompile_full", recording)
    x, y = torch.ones(3), torch.full((3,), 2.0)
    expected = _plain(x, y)
    torch._dynamo.reset()
    with pellucid.prepare_debug(str(tmp_path / "dump")) as capture:
        out = torch.compile(two_frames, backend="eager")(x, y)
    assert torch.equal(out, expected)
    assert seen and not any(seen), seen  # every decompile ran with gc paused
    assert gc.isenabled()
    assert all(t.replacement is not None for f in capture.frames.values() for t in f.transforms)


def test_dump_dir_disappearing_mid_run(tmp_path):
    x, y = torch.ones(3), torch.full((3,), 2.0)
    expected = _plain(x, y)
    torch._dynamo.reset()
    dump = str(tmp_path / "dump")
    calls = []

    def vanish_then_call(a, b):
        return two_frames(a, b)
    compiled = torch.compile(two_frames, backend="eager")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pellucid.prepare_debug(dump):
            shutil.rmtree(dump)  # gone before anything was compiled into it
            out = compiled(x, y)
            calls.append(out)
    assert torch.equal(out, expected)
    messages = _ours(caught)
    assert len(messages) == 1 and dump in messages[0] and "cannot be written" in messages[0], messages


@pytest.mark.parametrize("internal", [
    "torch._dynamo.convert_frame.register_bytecode_hook",
    "torch._dynamo.eval_frame._debug_get_cache_entry_list",
])
def test_missing_torch_internal_is_named_once(tmp_path, monkeypatch, internal):
    module_name, attr = internal.rsplit(".", 1)
    import importlib

    monkeypatch.delattr(importlib.import_module(module_name), attr)
    monkeypatch.setattr(torch_features, "_missing_reported", set())
    x, y = torch.ones(3), torch.full((3,), 2.0)
    expected = _plain(x, y)
    torch._dynamo.reset()
    compiled = torch.compile(two_frames, backend="eager")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            with pellucid.prepare_debug(str(tmp_path / "dump")):
                out = compiled(x, y)
    assert torch.equal(out, expected)
    messages = [m for m in _ours(caught) if internal in m]
    assert len(messages) == 1, _ours(caught)
