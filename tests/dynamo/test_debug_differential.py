"""``debug()`` reproduces the compiled program: every program of ``tests/dynamo_programs.py``,
for the eager and aot_eager backends (see :mod:`debug_differential`)."""
import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import debug_differential  # noqa: E402
from dynamo_programs import COMPILES_NOTHING, PROGRAMS  # noqa: E402

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
                             misses=MISSES.get(name, ()), compiles=name not in COMPILES_NOTHING)


def _other_programs():
    """The programs the other torch tests compile (graph listings, trace filter, reliability)."""
    from test_graph_listing import _dynamic, _simple, _with_cond
    from test_reliability import two_frames
    from test_trace_filter import _breaking_program, _program

    ones = torch.ones
    return {
        "graph_listing_simple": lambda: (_simple, [(ones(4, 3), ones(3, 5)), (ones(4, 3) * 2, ones(3, 5))]),
        "graph_listing_dynamic": lambda: (_dynamic, [(ones(6, 4), 3), (ones(8, 4), 3), (ones(4, 4), 5)]),
        "graph_listing_cond": lambda: (_with_cond, [(ones(4, 3),), (-ones(4, 3),)]),
        "trace_filter_program": lambda: (_program, [(ones(3),), (ones(3) * 2,)]),
        "trace_filter_breaking": lambda: (_breaking_program, [(ones(3),), (-ones(3),)]),
        "reliability_two_frames": lambda: (two_frames, [(ones(3), ones(3) * 2), (ones(2), ones(2))]),
    }


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("name", ["graph_listing_simple", "graph_listing_dynamic", "graph_listing_cond",
                                  "trace_filter_program", "trace_filter_breaking", "reliability_two_frames"])
def test_debug_runs_what_the_other_tests_programs_run(tmp_path, name, backend):
    # (_breaking_program bumps a global counter Dynamo guards on: every call compiles anew)
    misses = ("_breaking_program",) if name == "trace_filter_breaking" else ()
    debug_differential.check(_other_programs()[name], backend, str(tmp_path / "dump"), misses=misses)
