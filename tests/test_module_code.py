"""Whole modules decompiled and run again: what only module (and class) bodies hold.

Each case is compiled as a module, its module code decompiled, and both sources run in fresh
namespaces; the names the case lists must hold equal values.  ``structured`` cases must also
decompile without the fallback.
"""
import sys
import textwrap
import time

import pytest

import pellucid
from pellucid.decompiler.fallback import MARKER

CASES = {
    # 3.12+ compiles ``import *`` to an intrinsic call whose result is popped
    "import_star": ("""
        from os.path import *
        from string import *
        joined = join("a", "b")
        letters = ascii_lowercase[:3]
    """, ["joined", "letters"]),
}


def _run(source):
    namespace = {"__name__": "pellucid_module_case"}
    exec(compile(source, "<module case>", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_module_round_trip(case_id):
    source, names = CASES[case_id]
    source = textwrap.dedent(source)
    code = compile(source, "<module case>", "exec")
    text = pellucid.decompile(code)
    assert MARKER not in text, text
    before, after = _run(source), _run(text)
    assert {n: before[n] for n in names} == {n: after[n] for n in names}, text
