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
    # 3.13: namedtuple (POP_EXCEPT without saved exception state).  No test regresses.
    "collections": {"3.13"},
    "dataclasses": {"3.13"},
    # 3.13: get_local_part, get_msg_id (POP_EXCEPT without saved exception state),
    # Message.get_payload (an except clause nested in a try's clause)
    "email": {"3.13"},
    # 3.13: EnumType._create_ (POP_EXCEPT without saved exception state), _simple_enum's
    # convert_class (branches leave different stack depths; a closure, so no fallback)
    "enum": {"3.13"},
}


def expected_to_fail(target: str, version: str) -> bool:
    """Whether ``target`` is listed as failing on Python ``version`` (``"3.11"``)."""
    entry = EXPECTED_FAILURES.get(target)
    if entry is None:
        return False
    return entry == "all" or version in entry
