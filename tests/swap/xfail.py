"""Swap-suite targets that are expected to fail, per Python version.

Each entry maps a target name (see ``swap_targets.TARGETS``) to ``"all"`` or to a set of
``"3.X"`` version strings.  Matching tests are marked ``xfail(strict=True)``: they must fail, and
start failing the suite as soon as they pass, so the entry is removed then.  Example::

    EXPECTED_FAILURES = {
        "typing": {"3.12", "3.13"},
        "email": "all",
    }
"""
from typing import AbstractSet, Dict, Union

# Measured with bench/swap_report.py on every version (see the issue note for the figures): a
# target is listed where some function did not swap or some CPython test regressed.
EXPECTED_FAILURES: Dict[str, Union[str, AbstractSet[str]]] = {
}


def expected_to_fail(target: str, version: str) -> bool:
    """Whether ``target`` is listed as failing on Python ``version`` (``"3.11"``)."""
    entry = EXPECTED_FAILURES.get(target)
    if entry is None:
        return False
    return entry == "all" or version in entry
