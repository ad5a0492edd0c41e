"""Annotated assignments in class bodies come back as written: ``x: T = v``, not ``x = v`` then
``x: T`` (the same code before 3.14, which evaluates annotations as the body runs; 3.14 defers
them), and the recompiled class has the original's annotations and values."""
import dataclasses
import sys
import textwrap

import pytest

import pellucid

SOURCES = {
    "dataclass_fields": """
        def make(factory):
            @dataclasses.dataclass
            class H:
                lock: list = dataclasses.field(default_factory=factory)
                x: int = 0
                name: 'str' = 'n'
            return H
    """,
    "plain_class_with_bare_and_valued": """
        def make(factory):
            class C:
                a: int
                b: dict = {'k': factory}
                c = 3
                d: float = c * 2.0
            return C
    """,
    "annotation_inside_if": """
        def make(factory):
            class C:
                if factory is not None:
                    y: 'list[int]' = [1]
                else:
                    y: int = 0
            return C
    """,
}


def _load(source):
    namespace = {"dataclasses": dataclasses}
    exec(compile(textwrap.dedent(source), "<case>", "exec"), namespace)
    return namespace["make"]


def _facts(cls):
    ns = {k: v for k, v in vars(cls).items()
          if k in ("__annotations__", "a", "b", "c", "d", "x", "y", "name")}
    fields = [(f.name, f.type, f.default) for f in dataclasses.fields(cls)] \
        if dataclasses.is_dataclass(cls) else None
    return ns, fields


@pytest.mark.parametrize("case", sorted(SOURCES))
def test_annotated_assignment_in_class_body_comes_back_whole(case):
    make = _load(SOURCES[case])
    text = pellucid.decompile(make)
    # no store followed by a bare annotation of the same name
    lines = [ln.strip() for ln in text.splitlines()]
    for first, second in zip(lines, lines[1:]):
        if " = " in first and ":" in second and not second.endswith(":"):
            assert second.split(":")[0] != first.split(" = ")[0], text
    if case == "dataclass_fields":
        assert "lock: list = dataclasses.field(default_factory=factory)" in text, text
        assert "x: int = 0" in text, text
    make2 = _load(SOURCES[case])
    make2.__code__ = pellucid.recompile(make)
    assert _facts(make2(list)) == _facts(make(list))
    if case == "plain_class_with_bare_and_valued":
        assert "a: int" in text and "b: dict = {'k': factory}" in text, text
        assert _facts(make2(None)) == _facts(make(None))


FUTURE_MODULE = """
from __future__ import annotations

class K:
    x: list[int] = [3]

    def g(self, a: list[int], *, b: K | None = None) -> str:
        return a

def f(c: dict[str, int]) -> K:
    def g(a: int) -> tuple[int, ...]:
        return a
    return g
"""


def test_module_under_annotations_future_spells_its_annotations():
    """A module that imports the annotations future: its source keeps the import, so every
    annotation (stored as text) is written as the expression it spells, not as a string
    literal, which the future would store quoted."""
    code = compile(FUTURE_MODULE, "<future>", "exec", dont_inherit=True)
    text = pellucid.decompile(code)
    assert not text.startswith("# pellucid: NOT verified"), text
    assert "def g(self, a: list[int], *, b: K | None=None) -> str:" in text.replace(
        "b: K | None = None", "b: K | None=None"), text
    assert "def g(a: int) -> tuple[int, ...]:" in text, text
    assert "x: list[int] = [3]" in text, text
    original, recompiled = {}, {}
    exec(code, original)
    exec(pellucid.recompile(code), recompiled)
    for ns in (original, recompiled):
        ns["inner"] = ns["f"](None)
    assert recompiled["K"].__annotations__ == original["K"].__annotations__
    for new, old in ((recompiled["K"].g, original["K"].g), (recompiled["f"], original["f"]),
                     (recompiled["inner"], original["inner"])):
        assert new.__annotations__ == old.__annotations__, old
