"""The swap suite: decompile every function of ~30 stdlib modules, swap the recompiled code into
the live functions, and run CPython's own tests for those modules against it.

Modules here:

* ``swap_targets`` -- which modules, which of their functions, which CPython tests (shared with
  ``bench/fidelity.py`` and ``bench/speed.py``);
* ``swap_runner`` -- the child process that swaps and runs one module's tests;
* ``swap_harness`` -- the parent side: runs children, compares per-test outcomes;
* ``xfail`` -- targets expected to fail, per Python version;
* ``test_swap_stdlib`` -- one pytest test per target, skipped unless asked for (``--swap`` or
  ``PELLUCID_SWAP=1``, see ``conftest.py``);
* ``test_swap_harness`` -- fast unit tests of the harness itself, always run.

The modules import each other as top-level modules (``conftest.py``, the runner and the benches
put this folder on ``sys.path``), so that the child runner can be started as a plain script.
"""
