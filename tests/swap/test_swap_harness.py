"""Fast unit tests of the swap suite's harness and of the fidelity bench's normaliser.

These always run (no ``--swap`` needed) and need no working decompiler: the one end-to-end
test swaps every function for its own code (``identity`` mode).
"""
import dis
import importlib
import importlib.util
import os
import sys
import textwrap
import types
import unittest
from typing import Any, Iterator, List, cast

import pytest

import swap_harness
import swap_runner
import swap_targets
import xfail

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load_fidelity() -> types.ModuleType:
    path = os.path.join(ROOT, "bench", "fidelity.py")
    spec = importlib.util.spec_from_file_location("pellucid_bench_fidelity", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses looks its module up there
    spec.loader.exec_module(module)
    return module


fidelity = _load_fidelity()


# --- outcome comparison ---------------------------------------------------------------------

def test_compare_outcomes_flags_only_tests_that_passed_before() -> None:
    original = {"a": "pass", "b": "pass", "c": "fail", "d": "skip", "e": "pass", "f": "error"}
    swapped = {"a": "pass", "b": "fail", "c": "pass", "d": "error", "f": "error", "g": "error"}
    result = swap_harness.compare_outcomes(original, swapped)
    assert result.regressed == {"b": ("pass", "fail"), "e": ("pass", swap_harness.MISSING)}
    assert result.fixed == ["c"]
    assert result.only_swapped == ["g"]
    assert result.passed == 3


def test_compare_outcomes_identical_runs_have_no_regression() -> None:
    outcomes = {"t1": "pass", "t2": "skip", "t3": "xfail"}
    assert not swap_harness.compare_outcomes(outcomes, dict(outcomes)).regressed


def test_parse_records_reads_stream_and_ignores_torn_last_line() -> None:
    lines = [
        repr(("meta", {"target": "x", "mode": "swap"})) + "\n",
        repr(("swap", {"functions": 3, "failed": 0})) + "\n",
        repr(("outcome", "t.A.test_1", "pass", None)) + "\n",
        repr(("outcome", "t.A.test_2", "fail", "Traceback ...")) + "\n",
        "('outcome', 't.A.te",  # the child died while writing
    ]
    run = swap_harness.parse_records(lines, swap_harness.ChildRun("swap"))
    assert run.outcomes == {"t.A.test_1": "pass", "t.A.test_2": "fail"}
    assert run.details["t.A.test_2"] == "Traceback ..."
    assert run.swap == {"functions": 3, "failed": 0}
    problem = run.problem()
    assert not run.complete and problem is not None and "died" in problem


# --- the child's result object ---------------------------------------------------------------

def _run_cases(*cases: Any) -> swap_runner.RecordingResult:
    loader = unittest.TestLoader()
    suite = unittest.TestSuite(loader.loadTestsFromTestCase(case) for case in cases)
    result = swap_runner.RecordingResult()
    suite.run(result)
    return result


def test_recording_result_outcomes_subtests_and_fixture_errors() -> None:
    class Sample(unittest.TestCase):
        def test_pass(self) -> None:
            pass

        def test_fail(self) -> None:
            self.assertEqual(1, 2)

        def test_subtest_fails(self) -> None:
            for i in range(3):
                with self.subTest(i=i):
                    self.assertLess(i, 2)

        @unittest.skip("because")
        def test_skip(self) -> None:
            pass

        @unittest.expectedFailure
        def test_xfail(self) -> None:
            raise ValueError

    class BrokenFixture(unittest.TestCase):
        @classmethod
        def setUpClass(cls) -> None:
            raise RuntimeError("fixture")

        def test_never_runs(self) -> None:
            pass

    result = _run_cases(Sample, BrokenFixture)
    by_name = {key.rsplit(".", 1)[-1]: value for key, value in result.outcomes.items()}
    assert by_name["test_pass"] == "pass"
    assert by_name["test_fail"] == "fail"
    assert by_name["test_subtest_fails"] == "fail"
    assert by_name["test_skip"] == "skip"
    assert by_name["test_xfail"] == "xfail"
    assert not any("test_never_runs" in key for key in result.outcomes)
    assert any("setUpClass" in key and value == "error" for key, value in result.outcomes.items())


def test_recording_result_keeps_repeated_ids_apart() -> None:
    class Twice(unittest.TestCase):
        def test_it(self) -> None:
            pass

    suite = unittest.TestSuite([Twice("test_it"), Twice("test_it")])
    result = swap_runner.RecordingResult()
    suite.run(result)
    assert sorted(k.rsplit(".", 1)[-1] for k in result.outcomes) == ["test_it", "test_it#2"]


# --- swapping ------------------------------------------------------------------------------------

def test_swapper_records_failures_and_swaps_each_function_once() -> None:
    calls: List[str] = []

    def fake_recompile(fn: types.FunctionType) -> types.CodeType:
        calls.append(fn.__name__)
        if fn.__name__ == "bad":
            raise ValueError("cannot")
        return (lambda: 42).__code__

    def good() -> int:
        return 1

    def bad() -> int:
        return 2

    swapper = swap_runner.Swapper(fake_recompile)
    records = [swap_targets.FunctionRecord("m", name, cast(types.FunctionType, fn)) for name, fn in
               (("good", good), ("bad", bad), ("again", good))]
    assert swapper.swap_all(records) == (1, 1)
    assert good() == 42 and bad() == 2
    assert calls == ["good", "bad"]
    assert swapper.failures == [("m:bad", "ValueError: cannot")]


SAMPLE_MODULE = '''
import functools

def plain():
    return 1

def _deco(f):
    @functools.wraps(f)
    def inner(*args):
        return f(*args)
    return inner

@_deco
def decorated(x):
    return x

@functools.lru_cache(maxsize=None)
def cached(x):
    return x

class Outer:
    def method(self):
        return 1

    @staticmethod
    def static():
        return 2

    @classmethod
    def klass(cls):
        return 3

    @property
    def prop(self):
        return 4

    @prop.setter
    def prop(self, value):
        pass

    class Inner:
        def deep(self):
            return 5

    spare = lambda self: 6

def shadowed():
    return 7

shadowed = len
'''


@pytest.fixture
def sample_module(tmp_path: Any, monkeypatch: Any) -> Iterator[types.ModuleType]:
    name = "pellucid_swap_sample_mod"
    (tmp_path / f"{name}.py").write_text(SAMPLE_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    yield module
    sys.modules.pop(name, None)


def test_collect_functions_finds_every_kind_of_member(sample_module: types.ModuleType) -> None:
    (found,) = swap_targets.collect_functions([sample_module])
    names = {record.name for record in found.functions}
    assert names == {
        "plain", "_deco", "decorated", "decorated.__wrapped__", "cached.__wrapped__",
        "Outer.method", "Outer.static.__func__", "Outer.klass.__func__", "Outer.prop.fget",
        "Outer.prop.fset", "Outer.Inner.deep", "Outer.spare",
    }
    assert [(entry.name, entry.reason) for entry in found.no_bytecode] == [
        ("shadowed (line 47)", "replaced by C accelerator builtins.len")]


def test_collect_functions_on_a_real_target_matches_static_definitions() -> None:
    (found,) = swap_targets.collect_target(swap_targets.target_by_name("colorsys"))
    import colorsys

    expected = {name for name, value in vars(colorsys).items() if isinstance(value, types.FunctionType)}
    assert {record.name for record in found.functions} == expected
    assert not found.no_bytecode


def test_import_hook_sees_first_import_and_reload(sample_module: types.ModuleType) -> None:
    name = sample_module.__name__
    sys.modules.pop(name, None)
    executed: List[types.ModuleType] = []
    finder = swap_runner.SwapOnExec(lambda fullname: fullname == name, executed.append)
    sys.meta_path.insert(0, finder)
    try:
        fresh = importlib.import_module(name)
        assert executed == [fresh] and fresh is not sample_module
        importlib.reload(fresh)
        assert executed == [fresh, fresh]
        importlib.import_module("colorsys")  # not wanted: untouched
        assert len(executed) == 2
    finally:
        sys.meta_path.remove(finder)


def test_hook_swaps_a_fresh_copy_while_the_first_import_is_in_sys_modules(monkeypatch: Any) -> None:
    """``import_fresh_module`` leaves its copy in ``sys.modules`` while the hook swaps it; the
    decompiler's own imports (``ast.walk`` imports ``collections.deque``) must not see it."""
    import colorsys

    seen: List[Any] = []

    def recompile(fn: types.FunctionType) -> types.CodeType:
        seen.append(sys.modules.get("colorsys"))
        return fn.__code__

    swap = swap_runner.TargetSwap(swap_targets.target_by_name("colorsys"), swap_runner.Swapper(recompile))
    swap.initial()
    fresh = types.ModuleType("colorsys")
    fresh.__file__ = colorsys.__file__
    exec(compile("def hls(x):\n    return x\n", colorsys.__file__, "exec"), fresh.__dict__)
    monkeypatch.setitem(sys.modules, "colorsys", fresh)
    seen.clear()
    swap.on_exec(fresh)
    assert seen == [colorsys]
    assert sys.modules["colorsys"] is fresh
    assert swap.hook_stats()["hook_swapped"] == 1


def test_identity_swap_end_to_end() -> None:
    pytest.importorskip("test.test_colorsys", reason="this Python has no CPython `test` package")
    report = swap_harness.run_target("colorsys", mode="identity", timeout=120)
    assert report.problems() == []
    counts = report.counts()
    assert counts["functions"] == counts["swapped"] == 7
    assert counts["passed"] > 0 and counts["regressed"] == 0


def test_xfail_table_names_known_targets_and_versions() -> None:
    known = {target.name for target in swap_targets.TARGETS}
    for target, versions in xfail.EXPECTED_FAILURES.items():
        assert target in known, f"xfail.py: unknown target {target!r}"
        assert versions == "all" or all(
            isinstance(v, str) and v.startswith("3.") for v in versions
        ), f"xfail.py: {target!r} needs 'all' or a set of '3.X' strings"


# --- fidelity normaliser -------------------------------------------------------------------------

def _code(source: str, name: str = "f") -> types.CodeType:
    module = compile(textwrap.dedent(source), "<test>", "exec")
    return next(c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == name)


LOOP = """
def f(x, items):
    total = 0
    while x > 0:
        if x in items:
            total += 1
        x -= 1
    try:
        total = total / x
    except ZeroDivisionError:
        total = -1
    return total
"""


def test_normaliser_ignores_line_numbers() -> None:
    assert fidelity.compare_codes(_code(LOOP), _code("\n\n\n# moved\n" + LOOP)) is None


def test_normaliser_maps_jumps_to_instruction_indices() -> None:
    instructions = list(dis.get_instructions(_code(LOOP)))
    at = 3  # insert a NOP before the fourth instruction, shifting every later offset by 2
    inserted = instructions[at].offset
    nop = instructions[0]._replace(opname="NOP", opcode=dis.opmap["NOP"], arg=None, argval=None,
                                   argrepr="", offset=inserted)
    shifted = [nop]
    for ins in instructions[at:]:
        moved = ins._replace(offset=ins.offset + 2)
        if ins.opcode in fidelity.JUMP_OPS and ins.argval >= inserted:
            moved = moved._replace(argval=ins.argval + 2)
        shifted.append(moved)
    edited = instructions[:at] + shifted
    assert any(ins.opcode in fidelity.JUMP_OPS for ins in instructions)
    assert fidelity.normalise_instructions(edited) == fidelity.normalise_instructions(instructions)
    broken = [ins._replace(argval=ins.argval + 2) if ins.opcode in fidelity.JUMP_OPS else ins
              for ins in instructions]
    assert fidelity.normalise_instructions(broken) != fidelity.normalise_instructions(instructions)


def test_normaliser_tells_constants_apart() -> None:
    ones = [_code(f"def f():\n    return {value}\n") for value in ("1", "1.0", "True")]
    assert fidelity.compare_codes(ones[0], ones[1]) is not None
    assert fidelity.compare_codes(ones[0], ones[2]) is not None
    sets = (_code("def f(x):\n    return x in {'a', 'b', 'c'}\n"),
            _code("def f(x):\n    return x in {'c', 'b', 'a'}\n"))
    assert fidelity.compare_codes(*sets) is None


def test_normaliser_compares_nested_code() -> None:
    outer = "def f(x):\n    def g(y):\n        return y + {}\n    return g\n"
    difference = fidelity.compare_codes(_code(outer.format(1)), _code(outer.format(2)))
    assert difference is not None and difference.path.endswith("g")
    lines = fidelity.side_by_side(difference.original.ops, difference.recompiled.ops)
    assert any(line.startswith("!") for line in lines)
