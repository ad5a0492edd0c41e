"""The swap suite proper: one test per stdlib target (see ``swap_targets.TARGETS``).

Each test runs the target's CPython tests in two child processes, on the original code and on
``pellucid.recompile``'d code (see ``swap_runner`` for how the swapped code reaches every copy
of the module, ``swap_harness`` for the comparison), and asserts

(a) every function of the target was swapped (100 %), and
(b) every test that passed on the original code passes on the swapped code (compared by test
    id; a test that regresses but passes when re-run alone is reported as flaky, not failed).

Skipped unless asked for: ``pytest tests/swap --swap`` or ``PELLUCID_SWAP=1`` (``conftest.py``).
Targets listed in ``xfail.py`` for this Python version are strict xfails.
"""
import importlib.util
import sys
from typing import Any, List

import pytest

import swap_harness
import swap_targets
import xfail

VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"
HAS_TEST_PACKAGE = importlib.util.find_spec("test.support") is not None


def _param(target: swap_targets.Target) -> Any:
    marks = [pytest.mark.swap]
    if xfail.expected_to_fail(target.name, VERSION):
        marks.append(pytest.mark.xfail(strict=True, reason=f"tests/swap/xfail.py lists it for {VERSION}"))
    return pytest.param(target.name, marks=marks, id=target.name)


@pytest.mark.parametrize("target", [_param(t) for t in swap_targets.available_targets()])
@pytest.mark.skipif(not HAS_TEST_PACKAGE, reason="this Python has no CPython `test` package")
def test_swap(target: str, swap_reports: List[Any]) -> None:
    report = swap_harness.run_target(target)
    swap_reports.append(report)
    problems = report.problems()
    assert not problems, report.summary() + "\n\n" + "\n\n".join(problems)
