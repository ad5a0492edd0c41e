"""Known failures of the construct round-trip tests (``test_constructs.py``).

``EXPECTED_FAILURES`` maps a key to the Python versions on which it is expected to fail:

* key ``"<case id>"``            -- both tests of the case (round trip and decompile-compiles);
  key ``"<case id>/roundtrip"``  -- only ``test_roundtrip``;
  key ``"<case id>/decompile"``  -- only ``test_decompile_compiles``.
* value ``"all"`` or a set of version strings, e.g. ``{"3.8", "3.9"}`` ("3.8" .. "3.15").

Entries become ``pytest.mark.xfail(strict=True)``: a listed test that passes fails the run, so
this dict can only shrink.  Remove an entry as soon as the decompiler handles the construct.
``test_expected_failures_are_valid`` rejects keys naming no case and stale entries.
"""

EXPECTED_FAILURES = {
    "async_for_inside_async_with_return": {"3.8"},
    "break_from_with_inside_try_finally": {"3.10"},
    "break_in_try_finally_with_branching_finally": {"3.9", "3.10"},
    "break_through_nested_finally": {"3.10"},
    "continue_in_finally_swallows": {"3.8", "3.9", "3.10"},
    "finally_conditionally_overrides_return": {"3.8", "3.9", "3.10"},
    "gen_yield_in_except_and_finally": {"3.8", "3.9", "3.10"},
    "match_in_loop_with_break_continue": {"3.11"},
    "try_except_else_finally_paths": {"3.8", "3.9", "3.10"},
    "try_in_loop_else_finally_break": {"3.8", "3.9", "3.10"},
    "try_nested_rethrow_different": {"3.8", "3.9", "3.10"},
    # (a loop that starts a try body and breaks to the code after the statement: the break is
    # lost; before the py314 branch the finally clause ran in every iteration instead)
    "try_finally_around_while_true_break/roundtrip": "all",
}
