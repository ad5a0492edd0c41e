"""Child process of the swap suite: swap one target's functions, then run its CPython tests.

Run as a script (the parent, :mod:`swap_harness`, does this in a fresh temporary directory)::

    python tests/swap/swap_runner.py json --mode swap --output RESULTS [--only IDS_FILE]

``--mode original`` runs the tests on the interpreter's own code; ``--mode swap`` first replaces
every function of the target with ``pellucid.recompile(fn)``.  (``--mode identity`` swaps each
function's code for itself: it exercises the harness without the decompiler.)

How swapped code reaches the tests
----------------------------------
1. The :class:`SwapOnExec` import hook goes first on ``sys.meta_path``.  It finds specs for the
   target's modules with the other finders and wraps that spec's loader's ``exec_module`` (on the
   loader *instance*; nothing else changes), so whenever one of them is executed -- first import,
   ``importlib.reload``, or ``test.support``'s ``import_fresh_module`` making a pure-Python copy
   with the C accelerator blocked -- every function in it is swapped right after its body ran,
   before anything can use it.
2. The target's modules are imported, and every function already in memory (those imported
   before the hook, e.g. ``functools`` or ``enum`` at interpreter start-up) is swapped.
   Function objects are changed in place (``fn.__code__ = new``), so references the tests or
   other modules already hold see the new code.  Runtime closures (see
   :mod:`swap_targets`) are swapped too.
3. Only then are the test modules imported and run, with a :class:`RecordingResult`.

Modules frozen into the interpreter (``_collections_abc`` from 3.11) are swapped in step 2; their
loader is a class shared by every frozen module, so re-executions are not hooked.

Output
------
``--output`` receives one Python literal per line, written and flushed as it happens (so a crash
or a kill leaves everything up to that point): ``("meta", {...})``, ``("swap", {...})``, then
``("outcome", test_id, outcome, detail)`` per test, and ``("done", {...})`` or
``("fatal", traceback)``.  The literals are made with ``repr`` only: ``json`` and ``ast`` are swap
targets themselves and may be broken in the child.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.abc
import os
import signal
import sys
import time
import traceback
import types
import unittest
from typing import Any, Callable, Dict, Iterable, List, Optional, Set, TextIO, Tuple

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
import swap_targets  # noqa: E402  (after the sys.path fix, which makes this work as a script)

OUTCOME_RANK = {"skip": 0, "xfail": 1, "pass": 2, "xpass": 3, "fail": 4, "error": 5}
"""How bad each recorded outcome is; a test with several (subtests) keeps the worst."""

MODES = ("original", "swap", "identity")
RESOURCES = ["cpu", "decimal", "subprocess", "tzdata", "walltime"]
"""``test.support`` resources the tests may use: all but network, GUI, audio and huge files."""

DETAIL_LIMIT = 2000
FUNCTION_TIMEOUT = float(os.environ.get("PELLUCID_SWAP_FUNCTION_TIMEOUT", "30"))


class Sink:
    """Append-only record file; every record is one ``repr``'d tuple on its own line."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, *record: Any) -> None:
        self._stream.write(repr(record) + "\n")
        self._stream.flush()


class _FunctionTimeout(Exception):
    """Raised by the alarm when one recompile takes longer than ``FUNCTION_TIMEOUT``."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _FunctionTimeout(f"recompile took more than {FUNCTION_TIMEOUT:g} s")


def _short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= DETAIL_LIMIT else text[: DETAIL_LIMIT - 3] + "..."


class Swapper:
    """Replaces functions' code with recompiled code, once per function object."""

    def __init__(self, recompile: Callable[[types.FunctionType], types.CodeType]) -> None:
        self._recompile = recompile
        self._cache: Dict[Tuple[types.CodeType, str], Any] = {}
        self._done: Dict[int, types.FunctionType] = {}  # kept alive so ids stay unique
        self.failures: List[Tuple[str, str]] = []

    def prepare(self, record: swap_targets.FunctionRecord) -> None:
        """Recompile the function's code (once per distinct code object) without swapping it."""
        fn = record.function
        if id(fn) in self._done:
            return
        code = fn.__code__
        key = (code, code.co_filename)
        if key not in self._cache:
            try:
                self._cache[key] = self._timed_recompile(fn)
            except Exception as exc:
                self._cache[key] = exc

    def swap(self, record: swap_targets.FunctionRecord) -> Optional[bool]:
        """Swap one function: True if swapped, False if it failed, None if done before."""
        fn = record.function
        if id(fn) in self._done:
            return None
        self.prepare(record)
        code = fn.__code__
        new = self._cache[(code, code.co_filename)]
        self._done[id(fn)] = fn
        try:
            if isinstance(new, Exception):
                raise new
            fn.__code__ = new
        except Exception as exc:
            self.failures.append((record.key, _short_error(exc)))
            return False
        return True

    def _timed_recompile(self, fn: types.FunctionType) -> types.CodeType:
        if FUNCTION_TIMEOUT <= 0 or not hasattr(signal, "setitimer"):
            return self._recompile(fn)
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, FUNCTION_TIMEOUT)
        try:
            return self._recompile(fn)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def swap_all(self, records: Iterable[swap_targets.FunctionRecord]) -> Tuple[int, int]:
        """Recompile every record first, then swap them all; return (newly swapped, failed).

        Recompiling everything before the first swap keeps the decompiler running on the
        original code of the modules it uses itself (``ast``, ``typing``, ``enum``...) for as
        long as possible, so a miscompiled function shows up in the tests, not as a cascade of
        decompiler failures.
        """
        records = list(records)
        for record in records:
            self.prepare(record)
        swapped = failed = 0
        for record in records:
            outcome = self.swap(record)
            if outcome is True:
                swapped += 1
            elif outcome is False:
                failed += 1
        return swapped, failed


def make_recompile(mode: str) -> Callable[[types.FunctionType], types.CodeType]:
    """The code replacement for ``mode``: pellucid's, or the identity."""
    if mode == "identity":
        return lambda fn: fn.__code__
    import pellucid
    import pellucid.decompiler.fallback  # noqa: F401  # imported lazily, on the first fallback:
    # inside the import hook that could be during ``collections``' own import (circular import)

    def warm_up(x: int) -> int:  # import everything pellucid uses before any swap happens
        return x + 1

    try:
        pellucid.recompile(warm_up)
    except Exception:
        pass
    return pellucid.recompile


class SwapOnExec(importlib.abc.MetaPathFinder):
    """Meta-path finder that makes the loader of each target module swap it after executing it."""

    def __init__(self, wanted: Callable[[str], bool], on_exec: Callable[[types.ModuleType], None]) -> None:
        self._wanted = wanted
        self._on_exec = on_exec

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if not self._wanted(fullname):
            return None
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        loader = getattr(spec, "loader", None)
        if loader is not None and not isinstance(loader, type) and hasattr(loader, "exec_module"):
            self._wrap(loader)
        return spec

    def _wrap(self, loader: Any) -> None:
        inner = loader.exec_module
        on_exec = self._on_exec

        def exec_module(module: types.ModuleType) -> None:
            inner(module)
            on_exec(module)

        loader.exec_module = exec_module


class TargetSwap:
    """Swaps a target's modules, at start and whenever the import hook sees one executed."""

    def __init__(self, target: swap_targets.Target, swapper: Swapper) -> None:
        self.target = target
        self.swapper = swapper
        self.names = set(swap_targets.module_names(target))
        self.hooked_modules: List[str] = []
        self.hook_swapped = 0
        self.hook_failed = 0
        self._busy = False
        self._pending: List[types.ModuleType] = []
        self._originals: Dict[str, types.ModuleType] = {}

    def wanted(self, fullname: str) -> bool:
        """Whether ``fullname`` is one of the target's modules."""
        if fullname in self.names:
            return True
        return self.target.submodules and fullname.startswith(self.target.name + ".")

    def on_exec(self, module: types.ModuleType) -> None:
        """Hook callback: swap a module that was just executed (queued while a swap is running)."""
        self._pending.append(module)
        if not self._busy:
            self._drain()

    def _drain(self) -> None:
        self._busy = True
        replaced = self._put_back_originals()
        try:
            while self._pending:
                current = self._pending.pop(0)
                self.hooked_modules.append(swap_targets.module_name(current))
                for found in swap_targets.collect_functions([current]):
                    swapped, failed = self.swapper.swap_all(found.functions + found.closures)
                    self.hook_swapped += swapped
                    self.hook_failed += failed
        finally:
            self._restore_modules(replaced)
            self._busy = False

    def _put_back_originals(self) -> Dict[str, Optional[types.ModuleType]]:
        """Put the target's first-imported modules back in ``sys.modules`` while swapping.

        A re-execution is hooked while its fresh copy is in ``sys.modules`` (``import_fresh_module``
        puts the old one back only when it returns), and the decompiler's own imports must not
        see that copy: ``ast.walk`` runs ``from collections import deque``, and the pure-Python
        ``collections`` that ``test_ordered_dict`` makes with ``_collections`` blocked has no
        ``deque``.  The swapped functions keep their own globals; only lookups by name change.
        Returns what was replaced, for :meth:`_restore_modules`.
        """
        replaced: Dict[str, Optional[types.ModuleType]] = {}
        for name, module in self._originals.items():
            current = sys.modules.get(name)
            if current is not module:
                replaced[name] = current
                sys.modules[name] = module
        return replaced

    @staticmethod
    def _restore_modules(replaced: Dict[str, Optional[types.ModuleType]]) -> None:
        for name, previous in replaced.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous

    def initial(self) -> Dict[str, Any]:
        """Import the target, swap everything of it in memory, and return the counts.

        Modules the hook saw executed meanwhile (first imports) are then drained; the hook's
        counters restart afterwards, so they tell only of later re-executions.
        """
        self._busy = True
        try:
            stats = self._swap_found(swap_targets.collect_target(self.target))
            self._originals = {name: module for name, module in list(sys.modules.items())
                               if self.wanted(name) and isinstance(module, types.ModuleType)}
        finally:
            self._busy = False
        self._drain()
        self.hooked_modules.clear()
        self.hook_swapped = self.hook_failed = 0
        return stats

    def _swap_found(self, found: List[swap_targets.ModuleFunctions]) -> Dict[str, Any]:
        stats: Dict[str, Any] = {"modules": {}, "no_bytecode": []}
        total = failed = closures = closures_failed = 0
        for module in found:  # recompile everything of the target before swapping anything
            for record in module.functions + module.closures:
                self.swapper.prepare(record)
        for module in found:
            done, bad = self.swapper.swap_all(module.functions)
            c_done, c_bad = self.swapper.swap_all(module.closures)
            stats["modules"][module.module] = {
                "functions": len(module.functions), "swapped": done, "failed": bad,
                "closures": len(module.closures), "closures_failed": c_bad,
            }
            total += len(module.functions)
            failed += bad
            closures += len(module.closures)
            closures_failed += c_bad
            stats["no_bytecode"].extend(
                (entry.module, entry.name, entry.reason) for entry in module.no_bytecode
            )
        stats.update(functions=total, failed=failed, closures=closures,
                     closures_failed=closures_failed)
        return stats

    def hook_stats(self) -> Dict[str, Any]:
        """What the import hook did after the initial swap."""
        return {"hooked_modules": list(self.hooked_modules), "hook_swapped": self.hook_swapped,
                "hook_failed": self.hook_failed}


class RecordingResult(unittest.TestResult):
    """A test result that records every test id's outcome and streams it to a :class:`Sink`."""

    def __init__(self, sink: Optional[Sink] = None) -> None:
        super().__init__()
        self.outcomes: Dict[str, str] = {}
        self.details: Dict[str, str] = {}
        self._sink = sink
        self._keys: Dict[int, str] = {}
        self._counts: Dict[str, int] = {}

    def _key(self, test: Any) -> str:
        key = self._keys.get(id(test))
        if key is None:
            key = test.id() if hasattr(test, "id") else str(test)
        return key

    def startTest(self, test: Any) -> None:
        super().startTest(test)
        base = test.id()
        count = self._counts.get(base, 0) + 1
        self._counts[base] = count
        self._keys[id(test)] = base if count == 1 else f"{base}#{count}"
        if self._sink is not None:
            self._sink.write("start", self._keys[id(test)])

    def stopTest(self, test: Any) -> None:
        super().stopTest(test)
        key = self._keys.pop(id(test), None)
        if key is not None and self._sink is not None and key in self.outcomes:
            self._sink.write("outcome", key, self.outcomes[key], self.details.get(key))

    def _record(self, test: Any, outcome: str, err: Any = None) -> None:
        key = self._key(test)
        previous = self.outcomes.get(key)
        if previous is None or OUTCOME_RANK[outcome] > OUTCOME_RANK[previous]:
            self.outcomes[key] = outcome
        if err is not None and key not in self.details:
            text = "".join(traceback.format_exception(*err)) if isinstance(err, tuple) else str(err)
            self.details[key] = text[-DETAIL_LIMIT:]
        if id(test) not in self._keys and self._sink is not None:  # class/module fixture errors
            self._sink.write("outcome", key, self.outcomes[key], self.details.get(key))

    def addSuccess(self, test: Any) -> None:
        super().addSuccess(test)
        self._record(test, "pass")

    def addFailure(self, test: Any, err: Any) -> None:
        super().addFailure(test, err)
        self._record(test, "fail", err)

    def addError(self, test: Any, err: Any) -> None:
        super().addError(test, err)
        self._record(test, "error", err)

    def addSkip(self, test: Any, reason: str) -> None:
        super().addSkip(test, reason)
        self._record(test, "skip")

    def addExpectedFailure(self, test: Any, err: Any) -> None:
        super().addExpectedFailure(test, err)
        self._record(test, "xfail")

    def addUnexpectedSuccess(self, test: Any) -> None:
        super().addUnexpectedSuccess(test)
        self._record(test, "xpass")

    def addSubTest(self, test: Any, subtest: Any, err: Any) -> None:
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self._record(test, "fail" if failed else "error", err)


def _prepare_test_support() -> None:
    """Configure ``test.support`` the way regrtest would, minus the resources we never use."""
    from test import support

    support.use_resources = list(RESOURCES)


def _legacy_setup(test_module: types.ModuleType) -> None:
    """What an old ``test_main()`` did before running (``load_tests``-less 3.8-3.10 modules)."""
    if test_module.__name__ == "test.test_difflib":
        import difflib

        setattr(difflib.HtmlDiff, "_default_prefix", 0)


def load_suite(target: swap_targets.Target) -> unittest.TestSuite:
    """All tests of the target's test modules, as regrtest would collect them."""
    import doctest

    loader = unittest.TestLoader()
    suite = unittest.TestSuite()
    for name in target.tests:
        module = importlib.import_module(name)
        suite.addTests(loader.loadTestsFromModule(module))
        if not hasattr(module, "load_tests") and hasattr(module, "test_main"):
            _legacy_setup(module)
            for doc_module in target.legacy_doctests:
                suite.addTest(doctest.DocTestSuite(importlib.import_module(doc_module)))
    return suite


def _iter_tests(suite: Any) -> Iterable[Any]:
    if isinstance(suite, unittest.TestSuite):
        for item in suite:
            yield from _iter_tests(item)
    else:
        yield suite


def filter_suite(suite: unittest.TestSuite, wanted: Set[str]) -> unittest.TestSuite:
    """Only the tests whose id is in ``wanted`` (``#N`` repeat suffixes are ignored)."""
    bases = {item.split("#", 1)[0] for item in wanted}
    return unittest.TestSuite(test for test in _iter_tests(suite) if test.id() in bases)


def run(args: argparse.Namespace, sink: Sink) -> None:
    """Swap (unless ``--mode original``), load, and run; everything is written to ``sink``."""
    target = swap_targets.target_by_name(args.target)
    sink.write("meta", {"target": target.name, "mode": args.mode, "python": sys.version.split()[0],
                        "pid": os.getpid()})
    _prepare_test_support()
    started = time.perf_counter()
    swap: Optional[TargetSwap] = None
    if args.mode != "original":
        swap = TargetSwap(target, Swapper(make_recompile(args.mode)))
        sys.meta_path.insert(0, SwapOnExec(swap.wanted, swap.on_exec))
        stats = swap.initial()
        stats["failures"] = list(swap.swapper.failures)
        stats["seconds"] = time.perf_counter() - started
        sink.write("swap", stats)
    suite = load_suite(target)
    if args.only:
        with open(args.only, encoding="utf-8") as handle:
            suite = filter_suite(suite, {line.rstrip("\n") for line in handle if line.strip()})
    result = RecordingResult(sink)
    tests_started = time.perf_counter()
    suite.run(result)
    done: Dict[str, Any] = {"tests_run": result.testsRun,
                            "test_seconds": time.perf_counter() - tests_started,
                            "seconds": time.perf_counter() - started}
    if swap is not None:
        done.update(swap.hook_stats())
        done["failures"] = list(swap.swapper.failures)
    sink.write("done", done)


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    """Command line of the child runner."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("target", help="swap target, e.g. json or urllib.parse")
    parser.add_argument("--mode", choices=MODES, default="original")
    parser.add_argument("--swap", dest="mode", action="store_const", const="swap",
                        help="same as --mode swap")
    parser.add_argument("--identity", dest="mode", action="store_const", const="identity",
                        help=argparse.SUPPRESS)
    parser.add_argument("--output", help="record file (default: standard output)")
    parser.add_argument("--only", help="file with the test ids to run, one a line")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point; exit status 0 unless the runner itself failed (test failures are data)."""
    args = parse_args(argv)
    if sys.path and os.path.abspath(sys.path[0] or ".") == _HERE:
        del sys.path[0]  # nothing of ours may shadow what the tests import
    stream = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    sink = Sink(stream)
    try:
        run(args, sink)
    except BaseException:
        sink.write("fatal", traceback.format_exc()[-DETAIL_LIMIT * 4:])
        return 2
    finally:
        if stream is not sys.stdout:
            stream.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
