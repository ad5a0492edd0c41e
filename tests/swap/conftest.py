"""pytest glue for the swap suite: the ``--swap`` option, the ``swap`` marker, a summary.

The swap suite (``test_swap_stdlib.py``) runs CPython's own tests for about thirty stdlib
modules twice each -- once on the original code, once with every function's code replaced by
``pellucid.recompile(fn)`` -- which takes a minute or more per interpreter.  A plain ``pytest``
therefore skips it.  Ask for it with either::

    pytest tests/swap --swap          # the option lives in this conftest: name tests/swap
    PELLUCID_SWAP=1 pytest            # works from anywhere
    nox -s swap                       # every interpreter (passes --swap)

The harness's own unit tests (``test_swap_harness.py``) always run.  Other knobs, all
environment variables: ``PELLUCID_SWAP_TIMEOUT`` (seconds per child run, default 300),
``PELLUCID_SWAP_FUNCTION_TIMEOUT`` (seconds per recompile, default 30),
``PELLUCID_SWAP_REPORT_DIR`` (write one JSON report per target there).
"""
import json
import os
import sys
from typing import Any, Dict, List

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

_REPORTS = pytest.StashKey[List[Any]]()
SKIP_REASON = "swap suite: run `pytest tests/swap --swap` or set PELLUCID_SWAP=1"


def pytest_addoption(parser: Any) -> None:
    try:
        parser.addoption("--swap", action="store_true", default=False,
                         help="run the stdlib swap suite (tests/swap), which is slow")
    except ValueError:  # another conftest registered it already
        pass


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers", "swap: stdlib swap-suite test; runs only with --swap or PELLUCID_SWAP=1")
    config.stash[_REPORTS] = []


def swap_enabled(config: Any) -> bool:
    """Whether the swap suite was asked for."""
    return bool(config.getoption("--swap", default=False)) or os.environ.get("PELLUCID_SWAP") == "1"


def pytest_collection_modifyitems(config: Any, items: List[Any]) -> None:
    if swap_enabled(config):
        return
    skip = pytest.mark.skip(reason=SKIP_REASON)
    for item in items:
        if item.get_closest_marker("swap") is not None:
            item.add_marker(skip)


@pytest.fixture
def swap_reports(request: Any) -> List[Any]:
    """Where swap tests leave their reports for the terminal summary."""
    return request.config.stash[_REPORTS]


def _write_report(report: Any) -> None:
    folder = os.environ.get("PELLUCID_SWAP_REPORT_DIR")
    if not folder:
        return
    folder = os.path.join(folder, report.python)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{report.target}.json"), "w", encoding="utf-8") as handle:
        json.dump(report.as_dict(), handle, indent=1)


def _group_names(entries: List[Any]) -> str:
    """``module.name`` per top-level name, with a count where several definitions share it."""
    counts: Dict[str, int] = {}
    for module, name, _reason in entries:
        key = f"{module}.{name.split(' ')[0].split('.')[0]}"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(k if n == 1 else f"{k} (x{n})" for k, n in counts.items())


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    reports = config.stash.get(_REPORTS, [])
    if not reports:
        return
    terminalreporter.section(f"pellucid swap suite, Python {sys.version.split()[0]}")
    for report in reports:
        _write_report(report)
        terminalreporter.write_line(report.summary())
        missing = (report.swapped.swap or {}).get("no_bytecode", [])
        if missing:
            terminalreporter.write_line(f"    no bytecode: {_group_names(missing)}")
        if report.flaky:
            terminalreporter.write_line(f"    flaky (passed when re-run): {', '.join(report.flaky)}")
    functions = sum(r.counts()["functions"] for r in reports)
    swapped = sum(r.counts()["swapped"] for r in reports)
    terminalreporter.write_line(f"total: {swapped}/{functions} functions swapped")
