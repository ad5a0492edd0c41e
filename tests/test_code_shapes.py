"""pellucid.dynamo.code_shapes: a code object decompiled from the template of its shape gets the
source, bindings and verdict a fresh decompile gives it.

Transformed code of a model's layers differs in Dynamo's generated names, the layer's index and
the objects without a literal form; these programs do too, in many statement forms.
"""
import itertools
import sys
import types
import uuid

import pytest

from pellucid.decompiler.recompile import CELLS, recompile_full
from pellucid.dynamo.code_shapes import ShapeCache, shape_key
from pellucid.verify import check_equivalent

HEAD = "# head\n# STATUS\n#\n"

# {fn}: a graph's function, {resume}: a resume function, {k}: the layer's index (from 300: 3.14+
# writes ints below 256 into the instruction, LOAD_SMALL_INT, not the constants)
PROGRAMS = [
    "def forward(self, x, cache):\n"
    "    out = {fn}(x, self.w)\n"
    "    cache.layers[{k}].keys = out[0]\n"
    "    return {resume}(out[1], cache)\n",

    "def forward(self, x):\n"
    "    t = x.layers[{k}]\n"
    "    if t is None:\n"
    "        return {fn}(x)\n"
    "    for i in range({k}):\n"
    "        t = t + {fn}(t, i)\n"
    "    return t, 'layers'\n",

    "def forward(self, x, *args, **kwargs):\n"
    "    a, b = {fn}(x, *args)\n"
    "    try:\n"
    "        y = a[{k}:]\n"
    "    except IndexError:\n"
    "        y = b\n"
    "    return {resume}(y, kwargs, (1, 0))\n",

    "def forward(self, x):\n"
    "    y = [v * {k} for v in x]\n"  # (a nested code object before 3.12: not kept by shape)
    "    return {fn}(y)\n",

    "def forward(self, x):\n"
    "    return {fn}(x, {k}, {k} + 1, -{k})\n",  # (-k's digits are k's: not kept by shape)

    "def forward(self, x):\n"
    "    return {fn}(x, (3, 4), 3)\n",  # (3: also inside another constant)
]


def _code(src: str, k: int, n: int) -> types.CodeType:
    text = src.format(fn="__compiled_fn_%d_%s" % (n, str(uuid.UUID(int=n * 7919)).replace("-", "_")),
                      resume="__resume_at_30_%d" % (n + 1), k=k)
    scope: dict = {}
    exec(compile(text, "model.py", "exec"), scope)
    return scope["forward"].__code__


def _with_objects(code: types.CodeType, objects: list) -> types.CodeType:
    """``code`` with its string constant 'layers' (if any) replaced by an object without a
    literal form, as Dynamo's code holds devices and dtypes."""
    consts = list(code.co_consts)
    for i, c in enumerate(consts):
        if c == "layers":
            consts[i] = objects[0]
    return code.replace(co_consts=tuple(consts))


class _Device:
    def __init__(self, n: int) -> None:
        self.n = n


@pytest.mark.parametrize("program", range(len(PROGRAMS)))
def test_template_source_is_the_fresh_source(program):
    cache = ShapeCache()
    tags = itertools.count(1)
    hits_before = 0
    for k, n in zip(range(300, 312), itertools.count(20, 4)):
        code = _code(PROGRAMS[program], k, n)
        code = _with_objects(code, [_Device(k)])
        tag = "t%d_" % next(tags)
        got, from_shape = cache.recompile(code, "/tmp/t.py", HEAD, tag, recompile_full,
                                          keep_locals=CELLS, write=False, imports=False)
        fresh = recompile_full(code, "/tmp/t.py", header=HEAD, const_tag=tag, keep_locals=CELLS,
                               write=False, imports=False)
        assert got.source == fresh.source
        assert list(got.bindings) == list(fresh.bindings)
        assert all(got.bindings[name] is fresh.bindings[name] for name in got.bindings)
        verdict = check_equivalent(code, got.code, got.bindings)
        assert verdict.ok, verdict.reason
        hits_before += from_shape
    if program in (4, 5) or (program == 3 and sys.version_info < (3, 12)) \
            or (program == 2 and sys.version_info >= (3, 14)):
        # (a slot int's digits in another constant; a nested function, the comprehension before
        # 3.12 inlines it; 3.14+ makes a[300:] a constant slice, written as a slice, not bound:
        # no slot for it)
        assert cache.hits == 0
    elif program == 1:
        assert cache.hits > 0
    else:
        assert cache.hits >= 9, cache.hits


def test_shapes_differ_where_the_code_does():
    a = _code(PROGRAMS[0], 305, 20)
    assert shape_key(a) == shape_key(_code(PROGRAMS[0], 309, 40))
    assert shape_key(a) != shape_key(_code(PROGRAMS[0], 1, 40))  # (1 is kept: a truth value)
    assert shape_key(a) != shape_key(_code(PROGRAMS[2], 305, 20))
    assert shape_key(a) != shape_key(a.replace(co_names=tuple(n + "_" for n in a.co_names)))
    assert (shape_key(_code(PROGRAMS[3], 5, 20)) is None) == (sys.version_info < (3, 12))


def test_a_template_the_verifier_refuses_is_decompiled_afresh():
    """The source made from a template is only a candidate: a wrong one (the template
    corrupted here) is refused by the verifier, and the transformed code is decompiled again."""
    from pellucid.dynamo import transformed_code

    cache = ShapeCache()
    first = _code(PROGRAMS[0], 305, 20)
    cache.recompile(first, "/tmp/t.py", "# h\n# STATUS\n#\n", "t1_", recompile_full,
                    keep_locals=CELLS, write=False, imports=False)
    (template,) = [t for t in cache.templates.values() if t is not None]
    template.pieces = [p.replace("out[0]", "out[1]") if isinstance(p, str) else p
                       for p in template.pieces]
    second = _code(PROGRAMS[0], 307, 24)
    written = {}

    def verify(original, candidate, bindings):
        verdict = check_equivalent(original, candidate, bindings)
        return bool(verdict.ok), str(verdict.reason)

    t = transformed_code.build("0/1", second, second, "/tmp/t.py",
                               lambda p, text: written.setdefault(p, text), {}, verify, cache)
    assert t.replacement is not None
    assert "out[0]" in t.source and "out[1]" not in t.source.replace("out[1], cache", "")
    assert check_equivalent(second, t.replacement, {}).ok
