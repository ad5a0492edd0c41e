"""Loops inside try/except/finally/with and those statements inside loops, generated
(``loop_try_shapes.py``): every 25th shape, round-tripped on this Python.

Each recompiled function must behave as the original on every input (results, exceptions and
logs), and come out structured unless listed in ``loop_try_shapes_fallbacks.py`` for this
version.  That list is strict: a listed shape that comes out structured fails, so it only
shrinks.  ``bench/loop_try_shapes.py`` runs all of them (and asks the verifier).
"""
import builtins
import importlib.util
import os
import sys

import pytest

import pellucid
from pellucid.decompiler.fallback import MARKER

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "%d.%d" % sys.version_info[:2]
EVERY = 25


def _load(name):
    spec = importlib.util.spec_from_file_location("_pellucid_" + name, os.path.join(HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shapes = _load("loop_try_shapes")
FALLBACKS = _load("loop_try_shapes_fallbacks").FALLBACKS
NOT_RECOMPILED = _load("loop_try_shapes_fallbacks").NOT_RECOMPILED


def _function(shape):
    namespace = {"__name__": "shape", "__builtins__": builtins}
    exec(compile(shape.src, "<%s>" % shape.id, "exec"), namespace)
    return namespace["f"]


@pytest.mark.parametrize("shape", shapes.sample(EVERY), ids=lambda s: s.id)
def test_shape_round_trips(shape):
    original = _function(shape)
    if shape.id in NOT_RECOMPILED.get(PY, ()):
        try:
            pellucid.recompile(original)
        except pellucid.DecompileError as e:
            assert "no recompiled form was verified" in str(e), e
        else:
            pytest.fail("recompiled now: remove it from NOT_RECOMPILED in "
                        "tests/loop_try_shapes_fallbacks.py")
        return
    text = pellucid.decompile(original)
    swapped = _function(shape)
    swapped.__code__ = pellucid.recompile(original)
    for items in shapes.INPUTS:
        assert shapes.run(swapped, items) == shapes.run(original, items), (items, text)
    expected_fallback = shape.id in FALLBACKS.get(PY, ())
    assert (MARKER in text) == expected_fallback, (
        "listed as falling back on %s, now structured: remove it from "
        "tests/loop_try_shapes_fallbacks.py" % PY if expected_fallback else text)
