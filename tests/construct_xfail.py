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

EXPECTED_FAILURES = {}
