"""Regressions found by the fuzzed round trips (``tests/test_fuzz.py``, ``bench/fuzz.py``).

Each test is a hand-shrunk reproducer of one distinct failure.  Behaviour bugs of functions
live in ``construct_cases_regressions.py`` (ids ``regr_fuzz_*``); what does not fit that format
(module code, shape checks, decompiling a code object on its own) is here.  Tests of bugs not
fixed yet are ``xfail(strict=True)`` on the versions where they fail, so a fix makes them
pass loudly: then drop the mark (and the matching ``KNOWN`` entry in ``test_fuzz.py``).
"""
import importlib.util
import os
import sys
import warnings

import pytest

import pellucid

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.version_info[:2]


def _support():
    spec = importlib.util.spec_from_file_location("_pellucid_fuzz_support",
                                                  os.path.join(HERE, "fuzz_support.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fuzz = _support()


def _module(src):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(src, "<fuzz-regression>", "exec", dont_inherit=True)


def _assert_module_round_trip(src):
    """Decompiled module code compiles, and the recompiled module keeps its names."""
    code = _module(src)
    out = pellucid.decompile(code)
    assert fuzz.source_compiles(out, code) is None, "does not compile:\n" + out
    new = pellucid.recompile(code)
    assert fuzz.names_used(new) == fuzz.names_used(code), out


# Module code (and a class body) ending in a compound statement: the implicit `return None` at
# the end is emitted as a `return` statement inside/after the block, which does not compile
# there ("'return' outside function").  Which statements are affected depends on the version
# (3.10+ duplicates the final return into more branches); seen at HEAD a872159+.
def _return_case(id, src, versions):
    fails = "%d.%d" % PY in versions
    marks = [pytest.mark.xfail(strict=True, reason="the final implicit return becomes a "
                                                   "`return` statement outside a function")] if fails else []
    return pytest.param(src, id=id, marks=marks)


ALL = {"3.8", "3.9", "3.10", "3.11", "3.12", "3.13"}
NEW = {"3.10", "3.11", "3.12", "3.13"}


@pytest.mark.parametrize("src", [
    _return_case("with", "with a:\n    pass\n", ALL),
    _return_case("try_finally", "try:\n    x = 1\nfinally:\n    y = 2\n", ALL),
    _return_case("while", "while a:\n    pass\n", NEW),
    _return_case("if", "if a:\n    pass\n", NEW),
    _return_case("try_except", "try:\n    x\nexcept E:\n    pass\n", NEW),
    _return_case("class_body_with", "class C:\n    with a:\n        pass\n", ALL - {"3.13"}),
])
def test_module_ending_in_block_has_no_return(src):
    _assert_module_round_trip(src)


# float constants without a literal (inf, -inf, nan) were written as `float('inf')`: the
# module's recompiled code loaded the global `float` the original never used (and a program
# that rebinds `float` changed meaning: construct case regr_fuzz_inf_constant_float_shadowed).
# Fixed in a872159 (folded literals such as 1e309).
def test_inf_constant_uses_no_global_name():
    _assert_module_round_trip("x = 1e999\ny = -1e999\nz = 1e999 - 1e999\n")


# Non-finite complex constants (`1e999j`) become names bound by recompile(); module code has no
# function globals to hold them, so recompiling module code raises DecompileError ("constants
# without a literal form") although `1e999j` is a literal.
@pytest.mark.xfail(strict=True, reason="1e999j is rendered as a bound name, not a literal")
def test_module_with_infinite_complex_constant_recompiles():
    _assert_module_round_trip("x = 1e999j\ny = -1e999j\n")


# Module-level variable annotations (`x: int = 1`) used to decompile to
# `__annotations__['x'] = int` without the module's SETUP_ANNOTATIONS, so the recompiled module
# raised NameError (the class-body case is construct case regr_fuzz_class_variable_annotation).
# They are annotation statements now.
def test_module_variable_annotation_behaviour():
    code = _module("x: int = 1\ny: 'later'\n")
    original = {"__name__": "m"}
    exec(code, original)
    recompiled = {"__name__": "m"}
    exec(pellucid.recompile(code), recompiled)
    assert recompiled.get("__annotations__") == original["__annotations__"] == {"x": int, "y": "later"}
    assert recompiled["x"] == 1


# Loops the structurer cannot handle everywhere: a chained comparison as a `while` condition
# (3.11 structures it, elsewhere an internal failure) falls back to the state machine.  Not
# wrong in a function, but unreadable for plain loops -- and in a class body it raises (second
# test).  A `for` whose body always breaks has no back edge; it is structured everywhere now,
# but in a class body 3.10+ copies the class body's implicit `return` into the `break`, which
# then reads as `return` outside a function (does not compile).
ALL_VERSIONS = {"3.8", "3.9", "3.10", "3.11", "3.12", "3.13"}
STRUCTURE_FAILURES = {  # id: (body, versions failing in a function, versions failing in a class)
    "while_chained_comparison": ("while a < b < c:\n    a += 1\n",
                                 ALL_VERSIONS - {"3.11"}, ALL_VERSIONS),
    "for_body_always_breaks": ("for x in a:\n    break\n",
                               set(), {"3.10", "3.11", "3.12", "3.13"}),
}
FIXED_LOOPS = {
    "for_empty_target_list": "for [] in a:\n    pass\n",  # UNPACK_SEQUENCE 0 is ``[] = item``
}
_VERSION = "%d.%d" % PY


def _loop_params(which, reason):
    return [pytest.param(entry[0], id=key, marks=pytest.mark.xfail(
        _VERSION in entry[which], strict=True, reason=reason))
        for key, entry in STRUCTURE_FAILURES.items()]


def _indented(header, body):
    return header + "\n" + "".join("    " + line + "\n" for line in body.splitlines())


@pytest.mark.parametrize("body", _loop_params(1, "the structurer fails on this loop; the fallback is used"))
def test_loop_is_structured(body):
    code = [c for _, c in fuzz.iter_codes(_module(_indented("def f(a, b, c):", body + "return a")))
            if c.co_name == "f"][0]
    out = pellucid.decompile(code)
    assert fuzz.FALLBACK_MARKER not in out, out


@pytest.mark.parametrize("body", list(FIXED_LOOPS.values()), ids=list(FIXED_LOOPS))
def test_fixed_loops_are_structured_and_round_trip(body):
    code = [c for _, c in fuzz.iter_codes(_module(_indented("def f(a, b, c):", body + "return a")))
            if c.co_name == "f"][0]
    out = pellucid.decompile(code)
    assert fuzz.FALLBACK_MARKER not in out, out
    _assert_module_round_trip(_indented("class C:", body))


# The same loops in a class body: the fallback does not do class bodies, so decompiling the
# module raises DecompileError ("no structured form (...) and the fallback failed (class bodies
# are not supported by the fallback)") -- a raise on valid bytecode.
@pytest.mark.parametrize("body", _loop_params(2, "the loop in a class body does not decompile"))
def test_class_body_loop_decompiles(body):
    _assert_module_round_trip(_indented("class C:", body))


# The code object of a generator expression (or, before 3.12, of a list/set/dict
# comprehension) decompiled on its own: its hidden parameter `.0` becomes
# `def __pellucid_function__(.0):`, which does not compile, and the loop over `.0` takes the
# fallback ("for loop over a value that is not an iterator").  Found with bench/fuzz.py
# --all-codes; such code objects are normally decompiled as part of their parent.
@pytest.mark.xfail(strict=True, reason="comprehension code decompiled alone has a `.0` parameter")
@pytest.mark.parametrize("src", ["g = (x for x in y)\n", "l = [x for x in y]\n"],
                         ids=["genexpr", "listcomp"])
def test_comprehension_code_object_decompiles_alone(src):
    codes = [c for _, c in fuzz.iter_codes(_module(src)) if c.co_name in fuzz.COMPREHENSIONS]
    if not codes:
        pytest.skip("comprehension inlined on this Python (3.12+): no code object of its own")
    code = codes[0]
    out = pellucid.decompile(code)
    assert fuzz.source_compiles(out, code) is None, out


# 3.12+ `type X = ...` (also construct case type_alias_statement, in a function): decompiling
# raises DecompileError -- in module code "function X used as a value ... unsupported opcode
# INTRINSIC_TYPEALIAS", in a class body "stack value <Marker locals> used as an expression".
@pytest.mark.skipif(PY < (3, 12), reason="type statements are 3.12+")
@pytest.mark.xfail(strict=True, reason="type alias statements raise DecompileError")
@pytest.mark.parametrize("src", ["type X = int\n", "class C:\n    type X = int\n"],
                         ids=["module", "class_body"])
def test_type_alias_statement_decompiles(src):
    _assert_module_round_trip(src)
