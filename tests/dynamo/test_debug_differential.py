"""``debug()`` reproduces the compiled program: every program of ``tests/dynamo_programs.py``,
for the eager and aot_eager backends (see :mod:`debug_differential`)."""
import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import debug_differential  # noqa: E402
from dynamo_programs import PROGRAMS  # noqa: E402

#: program -> functions whose original code debug() runs in pass 2, because the compiled
#: program compiles them again there (debug() compiles nothing); only shrinks
MISSES = {
    # ``len(count)`` grows at every call: each call needs a new entry
    "closure_counter": ("closure_counter.f",),
    # ``self.calls`` / ``len(self.items)`` grow at every call
    "module_forward_break": ("module_forward_break.M.forward",),
    "method_with_state": ("method_with_state.Acc.add",),
}


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_debug_runs_what_the_compiled_program_runs(tmp_path, name, backend):
    debug_differential.check(PROGRAMS[name], backend, str(tmp_path / "dump"),
                             misses=MISSES.get(name, ()))
