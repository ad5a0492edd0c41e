"""Small functions whose recompiled bytecode must equal the original's (``bench/fidelity.py``).

Each case is a shape the fidelity bench found decompiled into an equivalent but differently
compiled form; the behaviour of the same shapes is checked in ``construct_cases_fidelity.py``.
The comparison is the bench's own: instructions and exception table after normalisation, nested
code objects included.
"""
import importlib.util
import os
import sys
import textwrap

import pytest

import pellucid

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("_pellucid_fidelity",
                                               os.path.join(HERE, os.pardir, "bench", "fidelity.py"))
fidelity = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = fidelity  # its dataclasses look their module up there
_spec.loader.exec_module(fidelity)


# Shapes still decompiled into another form on some versions (strict: remove when they pass).
EXPECTED_DIFFERENT = {
    # An ``except`` clause that only passes, at the end of the function, comes back as
    # ``return`` inside the clause, which lays the ``else`` clause out elsewhere (3.11 copies
    # the final ``return`` into the clause).
    "fidelity_try_except_pass_else_raise": ((3, 11),),
}


def _cases():
    sys.path.insert(0, HERE)
    try:
        import construct_cases_fidelity as cases
    finally:
        sys.path.remove(HERE)
    out = []
    for c in cases.CASES:
        if sys.version_info[:2] < c["min_version"]:
            continue
        if sys.version_info[:2] in EXPECTED_DIFFERENT.get(c["id"], ()):
            c = pytest.param(c, marks=pytest.mark.xfail(strict=True, reason="known other shape"))
        out.append(c)
    return out


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["id"] if isinstance(c, dict) else None)
def test_same_bytecode(case):
    namespace = {"__name__": "fidelity_case"}
    exec(compile(textwrap.dedent(case["src"]), "<fidelity %s>" % case["id"], "exec"), namespace)
    fn = namespace[case["func"]]
    difference = fidelity.compare_codes(fn.__code__, pellucid.recompile(fn))
    if difference is not None:
        lines = fidelity.side_by_side(difference.original.ops, difference.recompiled.ops)
        pytest.fail("%s differ in %s:\n%s\n%s" % (difference.what, difference.path,
                                                  "\n".join(lines), pellucid.decompile(fn)))
