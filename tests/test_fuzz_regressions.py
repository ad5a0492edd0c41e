"""Regressions found by the fuzzed round trips (``tests/test_fuzz.py``, ``bench/fuzz.py``).

Each test is a hand-shrunk reproducer of one distinct failure.  Behaviour bugs of functions
live in ``construct_cases_regressions.py`` (ids ``regr_fuzz_*``); what does not fit that format
(module code, shape checks, decompiling a code object on its own) is here.  Tests of bugs not
fixed yet are ``xfail(strict=True)`` on the versions where they fail, so a fix makes them
pass loudly: then drop the mark (and the matching ``KNOWN`` entry in ``test_fuzz.py``).
"""
import importlib.util
import math
import os
import sys
import types
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


def _raw_recompile(code):
    """The decompiled module compiled, without the verifier's check: these tests run it (a class
    body the structurer leaves to the fallback is refused by the verifier -- its own names go
    through the class namespace, which may be anyone's mapping -- so ``pellucid.recompile``
    raises for it)."""
    from pellucid.decompiler.recompile import recompile_full

    return recompile_full(code, write=False).code


def _assert_module_round_trip(src):
    """Decompiled module code compiles, and the recompiled module keeps its names."""
    code = _module(src)
    out = pellucid.decompile(code, verify=False)
    assert fuzz.source_compiles(out, code) is None, "does not compile:\n" + out
    new = _raw_recompile(code)
    assert fuzz.names_used(new) == fuzz.names_used(code), out


# Module code (and a class body) ending in a compound statement: the implicit `return None` at
# the end was emitted as a `return` statement inside/after the block, which does not compile
# there ("'return' outside function").  Which statements were affected depended on the version
# (3.10+ duplicates the final return into more branches); seen at HEAD a872159+.  Fixed: such
# returns are dropped where execution reaches the end anyway, become `break` in a last loop,
# or the code takes the fallback (pellucid.decompiler.implicit_return).
RETURN_CASES = {
    "with": "with a:\n    pass\n",
    "try_finally": "try:\n    x = 1\nfinally:\n    y = 2\n",
    "while": "while a:\n    a -= 1\n",
    "if": "if a:\n    pass\n",
    "try_except": "try:\n    x\nexcept E:\n    pass\n",
    "class_body_with": "class C:\n    with a:\n        pass\n",
    "for_break": "for x in y:\n    if x:\n        break\n    n = x\n",
    "while_break_else": "while a:\n    a -= 1\n    if b:\n        break\n    x = 1\nelse:\n    y = 2\n",
    "nested_for_break": "for x in y:\n    for z in x:\n        if z:\n            break\n",
    "if_elif": "if a:\n    x = 1\nelif b:\n    y = 2\nelse:\n    z = 3\n",
    "try_except_else": "try:\n    x\nexcept E:\n    n = 1\nelse:\n    n = 2\n",
    "class_body_if": "class C:\n    if a:\n        v = 1\n    else:\n        v = 2\n",
}
# the names each program reads, and values to run it with
RETURN_INPUTS = [dict(a=0, b=0, x=0, y=[], E=KeyError),
                 dict(a=3, b=1, x=1, y=[[0, 1], [], [2]], E=NameError),
                 dict(a=2, b=0, y=[0, 0, 3], E=KeyError)]


@pytest.mark.parametrize("src", list(RETURN_CASES.values()), ids=list(RETURN_CASES))
def test_module_ending_in_block_has_no_return(src):
    _assert_module_round_trip(src)
    code = _module(src)
    new = _raw_recompile(code)
    for inputs in RETURN_INPUTS:
        assert _run_module(new, inputs) == _run_module(code, inputs), (inputs, pellucid.decompile(code))


def _run_module(code, inputs):
    ns = dict(inputs, __name__="m")
    try:
        exec(code, ns)
        error = None
    except Exception as exc:
        error = type(exc).__name__
    klass = ns.get("C")
    attrs = sorted(k for k in vars(klass) if not k.startswith("__")) if isinstance(klass, type) else None
    # the module fallback leaves its own __pellucid* globals behind (documented); a class body
    # must not keep them as attributes
    state = {k: v for k, v in ns.items() if not k.startswith("__") and k != "C"}
    return error, state, attrs, klass and {k: getattr(klass, k) for k in attrs or ()}


# float constants without a literal (inf, -inf, nan) were written as `float('inf')`: the
# module's recompiled code loaded the global `float` the original never used (and a program
# that rebinds `float` changed meaning: construct case regr_fuzz_inf_constant_float_shadowed).
# Fixed in a872159 (folded literals such as 1e309).
def test_inf_constant_uses_no_global_name():
    _assert_module_round_trip("x = 1e999\ny = -1e999\nz = 1e999 - 1e999\n")


# `for x in {constants}` iterates a frozenset constant the compiler folded from the display; it
# was written back as `for x in frozenset({...})`, which loads the global `frozenset` the original
# never used (found by the corpus sweep: `for () in {0.J}: pass`).  The display is written now,
# as it already was for `in` tests and `{*{...}}`.
@pytest.mark.parametrize("src", [
    "for () in {0j}:\n    pass\n",
    "out = []\nfor a in {1, 2, 3}:\n    out.append(a)\n",
    "out = [a * 2 for a in {4, 5}]\n",
])
def test_loop_over_constant_set_writes_the_display(src):
    _assert_module_round_trip(src)
    code = _module(src)

    def run(c):
        ns = {}
        try:
            exec(c, ns)
        except Exception as exc:  # the fuzz program unpacks 0j into (): TypeError both times
            return type(exc), None
        return None, ns.get("out")
    assert run(code) == run(pellucid.recompile(code))
    assert "frozenset" not in pellucid.decompile(code)


# Non-finite complex constants (`1e999j`) and ones with a real part or a negative sign (`-1j`
# folds to complex(-0.0, -1.0)) became names bound by recompile(); module code has no function
# globals to hold them, so recompiling module code raised DecompileError ("constants without a
# literal form") although they are literals.  They are now written as expressions the compiler
# folds back to the same constant, signed zeros included.
def test_module_with_infinite_complex_constant_recompiles():
    src = ("x = 1e999j\ny = -1e999j\nz = -1j\nw = 2 - 3j\nv = -(2 + 0j)\nu = 1e999j - 1e999j\n"
           "t = -1e999 + 1e999j\n")
    _assert_module_round_trip(src)
    original, recompiled = {}, {}
    exec(_module(src), original)
    exec(pellucid.recompile(_module(src)), recompiled)
    for name in "xyzwvut":
        a, b = original[name], recompiled[name]
        assert repr(a) == repr(b) and all(
            math.copysign(1, p) == math.copysign(1, q) for p, q in
            [(a.real, b.real), (a.imag, b.imag)]), (name, a, b)


# Module-level variable annotations (`x: int = 1`) used to decompile to
# `__annotations__['x'] = int` without the module's SETUP_ANNOTATIONS, so the recompiled module
# raised NameError (the class-body case is construct case regr_fuzz_class_variable_annotation).
# They are annotation statements now.
# Found by the corpus sweep (3.13, all versions affected): an annotation that is a lambda
# (`x: lambda: 0`) was not turned into an annotation statement, so the module lost its
# SETUP_ANNOTATIONS and the store into __annotations__ raised NameError (swallowed here by the
# `except`): the recompiled module had no __annotations__.
def _annotations(ns):
    """A module namespace's annotations: its ``__annotations__`` up to 3.13, what its
    ``__annotate__`` gives from 3.14 (PEP 649: nothing is stored until asked for)."""
    if "__annotate__" in ns:
        return ns["__annotate__"](1)
    return ns.get("__annotations__", {})


def test_module_lambda_annotation_behaviour():
    code = _module("try:\n    x: lambda: 0\nexcept:\n    pass\n")
    original, recompiled = {"__name__": "m"}, {"__name__": "m"}
    exec(code, original)
    exec(pellucid.recompile(code), recompiled)
    assert list(_annotations(recompiled)) == list(_annotations(original)) == ["x"]
    assert _annotations(recompiled)["x"]() == 0


def test_module_variable_annotation_behaviour():
    code = _module("x: int = 1\ny: 'later'\n")
    original = {"__name__": "m"}
    exec(code, original)
    recompiled = {"__name__": "m"}
    exec(pellucid.recompile(code), recompiled)
    assert _annotations(recompiled) == _annotations(original) == {"x": int, "y": "later"}
    assert recompiled["x"] == 1


# Loops the structurer once failed on (the fallback's state machine was used): a chained
# comparison as a `while` condition (all but 3.11), and a `for` whose body always breaks (no
# back edge).  Both are structured everywhere now; the lists stay for new entries.
STRUCTURE_FAILURES = {  # id: (body, versions failing in a function, versions failing in a class)
    "while_chained_comparison": ("while a < b < c:\n    a += 1\n",
                                 set(), set()),
    # (corpus sweep, 3.8: "IndexError: pop from empty list" fallbacks)
    "while_and_chained_comparison": ("while b and a is not b > c:\n    b -= 1\n",
                                     set(), set()),
    "for_body_always_breaks": ("for x in a:\n    break\n",
                               set(), set()),
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


# A comprehension over an empty target list inside a lambda (`lambda: {1 for [] in x}`): both
# used to fall back, and the lambda became a def that set __name__/__qualname__ and built its
# set with .add (a shape mismatch: extra names).  Structured since `for [] in x` is.
@pytest.mark.parametrize("src", ["f = lambda: {1 for [] in x}\n", "f = lambda: [a for () in x for a in b]\n"],
                         ids=["set", "list"])
def test_lambda_comprehension_over_empty_target_list(src):
    _assert_module_round_trip(src)
    out = pellucid.decompile(_module(src))
    assert fuzz.FALLBACK_MARKER not in out and "lambda" in out, out
    report = fuzz.check_program(src)
    assert report.forms == ["module", "function", "closure"]
    assert not report.failures, [str(f) for f in report.failures]


# The same loops in a class body: the fallback did not do class bodies, so decompiling the
# module raised DecompileError ("no structured form (...) and the fallback failed (class bodies
# are not supported by the fallback)") -- a raise on valid bytecode.  The fallback now runs in
# class bodies and unbinds its own names at the end, so the class gets no extra attributes.
@pytest.mark.parametrize("body", _loop_params(2, "the loop in a class body does not decompile"))
def test_class_body_loop_decompiles(body):
    src = _indented("class C:", body)
    _assert_module_round_trip(src)
    code = _module(src)
    new = _raw_recompile(code)
    for inputs in [dict(a=0, b=1, c=2), dict(a=5, b=1, c=0), dict(a=[], b=[0], c=[1, 1])]:
        assert _run_module(new, inputs) == _run_module(code, inputs), (inputs, pellucid.decompile(code))


def test_class_body_fallback_unbinds_its_names():
    """A class body forced through the fallback behaves the same, with no extra attributes."""
    from pellucid.decompiler.fallback import force_fallback

    src = ("class C:\n    n = 0\n    for v in a:\n        if v:\n            n += 1 / v\n"
           "        else:\n            k = [v for _ in a]\n")
    if PY >= (3, 11):  # the fallback does no exception handling before 3.11
        src += "    try:\n        n += 1 / a[0]\n    except ZeroDivisionError as e:\n        err = str(e)\n"
    code = _module(src)
    from pellucid.decompiler.recompile import recompile_full

    # (the fallback's own output, compiled without the verifier, which does not model its
    # class maker: this test runs it instead)
    with force_fallback("test"):
        out = pellucid.decompile(code, verify=False)
        new = recompile_full(code, write=False).code
    assert fuzz.FALLBACK_MARKER in out, out
    for inputs in [dict(a=[]), dict(a=[1, 0, 2]), dict(a=[0, 1]), dict(a=[1, "x"])]:
        assert _run_module(new, inputs) == _run_module(code, inputs), (inputs, out)


# The code object of a generator expression (or, before 3.12, of a list/set/dict
# comprehension) decompiled on its own: its hidden parameter `.0` becomes
# `def __pellucid_function__(.0):`, which does not compile, and the loop over `.0` takes the
# fallback ("for loop over a value that is not an iterator").  Found with bench/fuzz.py
# --all-codes; such code objects are normally decompiled as part of their parent.  The
# parameter is now spelled as the fallback spells the local (``__pellucid__0``).
@pytest.mark.parametrize("src", ["g = (x for x in y)\n", "l = [x for x in y if x]\n",
                                 "d = {k: v for k, v in y}\n"],
                         ids=["genexpr", "listcomp", "dictcomp"])
def test_comprehension_code_object_decompiles_alone(src):
    codes = [c for _, c in fuzz.iter_codes(_module(src)) if c.co_name in fuzz.COMPREHENSIONS]
    if not codes:
        pytest.skip("comprehension inlined on this Python (3.12+): no code object of its own")
    code = codes[0]
    out = pellucid.decompile(code)
    assert fuzz.source_compiles(out, code) is None, out
    # and the decompiled function computes what the code object does
    ns = {}
    exec(compile(out, "<decompiled>", "exec"), ns)
    items = [(1, 2), (0, 3), (4, 0)]
    original = types.FunctionType(code, {})(iter(items))
    again = ns[out.split("def ", 1)[1].split("(", 1)[0]](iter(items))
    assert list(again) == list(original) if code.co_name == "<genexpr>" else again == original


# 3.12+ `type X = ...` (also construct case type_alias_statement, in a function): decompiling
# raised DecompileError -- in module code "function X used as a value ... unsupported opcode
# INTRINSIC_TYPEALIAS", in a class body "stack value <Marker locals> used as an expression".
# Type alias statements without type parameters are decompiled now.
@pytest.mark.skipif(PY < (3, 12), reason="type statements are 3.12+")
@pytest.mark.parametrize("src", ["type X = int\n", "class C:\n    type X = int\n    type Y = list[X]\n",
                                 # (corpus sweep, 3.13: a chained comparison as the value raised,
                                 # see test_chained_comparison_with_copied_exit)
                                 "a, b, c = 1, 2, 3\ntype X = a < b < c\ntype Y = a == b >= c\n"],
                         ids=["module", "class_body", "chained_comparison_value"])
def test_type_alias_statement_decompiles(src):
    _assert_module_round_trip(src)
    original, recompiled = {}, {}
    exec(_module(src), original)
    exec(pellucid.recompile(_module(src)), recompiled)
    scope_a = vars(original["C"]) if "C" in original else original
    scope_b = vars(recompiled["C"]) if "C" in recompiled else recompiled
    for name in ("X", "Y"):
        if name in scope_a:
            assert type(scope_b[name]).__name__ == "TypeAliasType"
            assert repr(scope_b[name].__value__) == repr(scope_a[name].__value__)


# Found by the corpus sweep (bench/fuzz.py --corpus, 3.12 and 3.13): `with a, b: raise` had no
# structured form ("with-region without a context manager on the stack": the outer `with`'s
# protected range is split around the inner one and its body always raises), so it took the
# fallback -- correct, but unreadable.  The fuzz harness used to count the fallback's own
# attributes (`__enter__`, `__context__` ...) as names the program uses: a shape mismatch.
# Fixed: the inner with's "exception suppressed" path resumes mid-block, and that partial block
# is now seen to lie in the outer with's region (it was taken for code after the statement).
WITH_RAISE = "with a, b:\n    raise\n"


def test_with_two_items_raising_is_structured():
    out = pellucid.decompile(_module(WITH_RAISE))
    assert fuzz.FALLBACK_MARKER not in out, out


# (3.13's closure form raised DecompileError while the fallback refused closures there; the
# harness also missed the fallback's own names after 3.13's STORE_FAST_LOAD_FAST.)
def test_with_two_items_raising_round_trips():
    report = fuzz.check_program(WITH_RAISE)
    assert report.forms == ["module", "function", "closure"]
    assert not report.failures, [str(f) for f in report.failures]


# Found by the corpus sweep on 3.13: a with statement that is a try body, in a try with a bare
# except and an else clause, took the fallback after 10-30 s ("runaway walk"; see also
# tests/test_decompile_terminates.py), and the fallback's class statement in the clause got the
# qualname `__pellucid_class2.<locals>.A`.  The with's "exception suppressed" path resumes
# mid-block; that partial block was taken for code outside the try, so the walk built the same
# try statement at it over and over.  A with of several items ending in `raise` took the
# fallback for the same reason (its missing names and extra `__qualname__` were shape
# mismatches).
@pytest.mark.parametrize("src", [
    "try:\n    with 0j:\n        pass\nexcept:\n    class A:\n        pass\nelse:\n    pass\n",
    "try:\n    with a:\n        pass\nexcept:\n    x = 1\nelse:\n    y = 2\n",
    "with 6, 685, 0.3, 'Q':\n    raise\n",
    "with a, b, c:\n    import x.y, z\n    raise\n",
], ids=["class_in_clause", "else", "four_items_raise", "three_items_import_raise"])
def test_with_in_try_resumes_inside_the_region(src):
    report = fuzz.check_program(src)
    assert not report.failures, [str(f) for f in report.failures]
    assert not report.fallbacks, report.fallbacks


# Found by the corpus sweep on 3.13: `lambda: a > b not in c < d` took the fallback ("lambda body
# is not a single expression"; its `__qualname__` was a shape mismatch).  3.12+ gives each arm
# of a chained comparison its own copy of the code after it when that code is a short exit
# (`return v`, or `x = v` then the function's `return None`), so the arms never meet.  Since
# the merge of the <=3.10 structure work, the and/or builder stopped the walk of both arms at the
# short-circuit target, so `return a < b < c` fell back too; `x = a < b < c` at the end of a
# function or module always did on 3.12+.
CHAINED_TAILS = {
    "lambda": "a, b, c, d = 3, 2, [1], [2]\nf = lambda: a > b not in c < d\nr = f()\n",
    "return": "def f(a, b, c):\n    return a < b < c\nr = [f(1, 2, 3), f(3, 2, 1), f(1, 3, 2)]\n",
    "return_four": "def f(a, b, c, d):\n    return a < b < c <= d\nr = [f(1, 2, 3, 3), f(1, 2, 3, 0)]\n",
    "store_last": "def f(a, b, c):\n    global r\n    r = a < b < c\nf(1, 2, 3)\n",
    "module_store_last": "a, b, c = 1, 3, 2\nr = a < b < c\n",
    "or_attribute": "import types\nn = types.SimpleNamespace()\na, b = 0, ''\nn.r = a or b\nr = n.r\n",
    "class_body": "class C:\n    a, b, c = 1, 2, 3\n    r = a < b < c\nr = C.r\n",
}


@pytest.mark.parametrize("src", list(CHAINED_TAILS.values()), ids=list(CHAINED_TAILS))
def test_chained_comparison_with_copied_exit(src):
    report = fuzz.check_program(src)
    assert not report.failures, [str(f) for f in report.failures]
    assert not report.fallbacks, report.fallbacks
    code = _module(src)
    ns_a, ns_b = {}, {}
    exec(code, ns_a)
    exec(pellucid.recompile(code), ns_b)
    assert ns_a["r"] == ns_b["r"]


# Found by the corpus sweep on 3.13: a name that is local only through a binding that leaves no
# code -- an annotation without a value (`A: A`), or a class statement in an `except` clause
# 3.13 drops because its `try` body cannot raise -- was read as a global by the decompiled
# source (NameError instead of UnboundLocalError, and the global `A` an extra name).  Such
# locals are declared with `A: None`, which is not evaluated in a function.
UNBOUND_LOCALS = {
    "annotation_only": "+A\nA: A\n",
    "dropped_clause": "with A:\n    try:\n        pass\n    except:\n        class A:\n            pass\n",
    "read_then_annotated": "x = 1\nif x:\n    y = A\nA: int\n",
}


@pytest.mark.parametrize("src", list(UNBOUND_LOCALS.values()), ids=list(UNBOUND_LOCALS))
def test_local_bound_only_by_code_that_vanished(src):
    report = fuzz.check_program(src)
    assert not report.failures, [str(f) for f in report.failures]
    ns = {"A": 1}
    exec(_module(_indented("def f():", src)), ns)
    f = ns["f"]
    with pytest.raises(UnboundLocalError):
        f()
    f.__code__ = pellucid.recompile(f)
    with pytest.raises(UnboundLocalError):
        f()


# Found by the corpus sweep on 3.13: a `match` case whose body starts with `try` took the
# fallback ("match guard with statements"; on 3.10, which has no fallback for handlers, decompiling
# raised).  The pattern ends its block (the try's protected range starts a new one), which was
# read as a guard with no test.
MATCH_TRY = ("def f(x, g):\n    match x:\n        case 1:\n            pass\n        case {}:\n"
             "            try:\n                g()\n            except:\n                return 'caught'\n"
             "    return 'end'\n")


@pytest.mark.skipif(PY < (3, 10), reason="match is 3.10+")
def test_match_case_body_starting_with_try():
    report = fuzz.check_program(MATCH_TRY)
    assert not report.failures, [str(f) for f in report.failures]
    assert not report.fallbacks, report.fallbacks
    ns = {}
    exec(_module(MATCH_TRY), ns)
    f = ns["f"]

    def boom():
        raise ValueError
    cases = [({}, boom), ({}, list), (1, boom), (2, boom), ([], boom)]
    expected = [f(*c) for c in cases]
    f.__code__ = pellucid.recompile(f)
    assert [f(*c) for c in cases] == expected


# Found by the corpus sweep on 3.13: an `except*` clause whose body is `pass` raised
# DecompileError ("unexpected except* clause entry block"; the fallback has no CHECK_EG_MATCH).
# With no clean-up region for the body, 3.13 keeps the clause's exit (name clean-up, the final
# `LIST_APPEND 1`, the jump on) in the block that pops or stores the match.
STAR_PASS = {
    "last_clause": "try:\n    del A\nexcept* {}.A.A:\n    pass\n",
    "then_class": "try:\n    del A\nexcept* {}.A:\n    pass\nclass A:\n    class A:\n        pass\n",
    "named": "try:\n    del A\nexcept* NameError as e:\n    pass\n",
    "two_clauses": "try:\n    del A\nexcept* KeyError as e:\n    pass\nexcept* NameError:\n    pass\n",
}


@pytest.mark.skipif(PY < (3, 11), reason="except* is 3.11+")
@pytest.mark.parametrize("src", list(STAR_PASS.values()), ids=list(STAR_PASS))
def test_except_star_clause_with_empty_body(src):
    report = fuzz.check_program(src)
    assert not report.failures, [str(f) for f in report.failures]
    assert not report.fallbacks, report.fallbacks


@pytest.mark.skipif(PY < (3, 11), reason="except* is 3.11+")
def test_except_star_empty_last_clause_behaves():
    ns = {}
    exec(_module("def f(excs):\n    try:\n        raise ExceptionGroup('g', excs)\n"
                 "    except* KeyError:\n        pass\n    return 'done'\n"), ns)
    f = ns["f"]

    def run(fn, excs):
        try:
            return fn(excs)
        except BaseException as exc:  # the unmatched rest is re-raised as a group
            return type(exc).__name__, [type(e).__name__ for e in getattr(exc, "exceptions", [])]
    cases = [[KeyError()], [KeyError(), ValueError()], [ValueError()]]
    expected = [run(f, c) for c in cases]
    f.__code__ = pellucid.recompile(f)
    assert [run(f, c) for c in cases] == expected


# Found by the corpus sweep (3.13, also 3.8): `try: 'x'.a: int = 1` in module code lost
# `__annotations__`.  An annotated assignment to an attribute or subscript (or a parenthesised
# name) stores nothing in `__annotations__`, but it makes CPython start the body with
# SETUP_ANNOTATIONS; decompiled as a plain store and expression, the recompiled body had none.
# The store and its annotation are written as one annotated assignment again, or, where there
# is nothing to pair (`from __future__ import annotations`, annotation-only targets), a dead
# `if None: (__annotations__): None` keeps the set-up.
@pytest.mark.parametrize("src", [
    "try:\n    'x'.a: int = 1\nexcept:\n    pass\n",
    "class T:\n    pass\nT.a: int = 1\n",
    "import types\nn = types.SimpleNamespace()\nn.a: 'int'\n",
    "d = {}\nd[0]: int = 1\n",
    "(y): int\n",
    "from __future__ import annotations\nclass T:\n    pass\nT.a: int = 1\n",
    "class C:\n    try:\n        'x'.a: int = 1\n    except:\n        pass\n",
    "class C:\n    (y): int\n",
], ids=["module_try", "module_attribute", "annotation_only", "subscript", "parenthesised_name",
        "future", "class_try", "class_parenthesised_name"])
def test_annotations_set_up_without_a_name_annotation(src):
    _assert_module_round_trip(src)
    code = _module(src)

    def run(c):
        ns = {"__name__": "m"}
        exec(c, ns)
        klass = ns.get("C")
        return "__annotations__" in ns, klass is not None and "__annotations__" in vars(klass), \
            sorted(ns.get("__annotations__", {}))
    assert run(pellucid.recompile(code)) == run(code), pellucid.decompile(code)


# Found by the corpus sweep (3.8-3.10): a try/finally inside a `finally` block has no
# structured form (3.8 module code: "unsupported instruction BEGIN_FINALLY"; functions: "region
# entered from outside its try") and the fallback does no exception handling before 3.11, so
# decompiling raises DecompileError.  3.8's BEGIN_FINALLY came from the rewrite into 3.9's
# layout (bytecode/legacy_finally.py) giving up: the inner try/finally, already rewritten, was
# copied into the outer finally's inlined copies and the copies were taken for new, unrewritten
# blocks.  The function case then failed in the structurer ("an except clause goes on where
# the try statement does not"): the finally body's first kept instruction is inside the inner
# try (its SETUP_FINALLY is dropped), so the inner try's handler was taken for one enclosing the
# outer try body as well.  A handler's enclosing handler is now the one at its entry.
NESTED_FINALLY = {
    "module": "try:\n    pass\nfinally:\n    try:\n        pass\n    finally:\n        pass\n",
    "class_body": "class A:\n    try:\n        pass\n    finally:\n        try:\n            pass\n"
                  "        finally:\n            pass\n",
    "three_deep": "try:\n    pass\nfinally:\n    try:\n        pass\n    finally:\n"
                  "        try:\n            pass\n        finally:\n            pass\n"
                  "        class A:\n            pass\n",
    # 3.8: the inlined copy's back edge jumped out of the code ("conditional jump out of the
    # code"); with a body that does not always raise, the loop became an `if` (next test)
    "loop_in_finally": "try:\n    pass\nfinally:\n    while a:\n        assert ''\n",
    "try_except_inside": "try:\n    pass\nfinally:\n    try:\n        try:\n            pass\n"
                         "        except:\n            pass\n        finally:\n            pass\n"
                         "    except:\n        pass\n    finally:\n        pass\n",
    "function": "def f():\n    try:\n        a()\n    finally:\n        try:\n            b()\n"
                "        finally:\n            c()\n",
}


@pytest.mark.parametrize("src", list(NESTED_FINALLY.values()), ids=list(NESTED_FINALLY))
def test_try_finally_inside_finally_decompiles(src):
    _assert_module_round_trip(src)


# The corpus sweep's last failure on 3.8 (also 3.9, 3.10): the same, with the outer try body
# able to raise (a class statement), in module and function form.
FINALLY_IN_FINALLY_CORPUS = ("try:\n class A:\n  pass\nfinally:\n try:\n  pass\n finally:\n"
                             "  try:\n   class A:\n      pass\n  except  :\n   pass\n"
                             "  class A:\n   pass\n")


def test_try_finally_inside_finally_corpus_program():
    _assert_module_round_trip(FINALLY_IN_FINALLY_CORPUS)
    report = fuzz.check_program(FINALLY_IN_FINALLY_CORPUS)
    assert report.forms[:2] == ["module", "function"]
    assert not report.failures, [str(f) for f in report.failures]
    # structured, not the fallback (which does no exception handling before 3.11)
    for form, top in fuzz.compile_forms(FINALLY_IN_FINALLY_CORPUS):
        for _, code in fuzz.iter_codes(top):
            assert fuzz.FALLBACK_MARKER not in pellucid.decompile(code), form


# Found by the corpus sweep (3.10): a try/except ending a `with` body had no structured form
# ("an except clause goes on where the try statement does not"; no fallback before 3.11).
# 3.10 gives the with's exit (and the return after it) a copy on each path: the clause goes on
# into one, the try body into a jump (left alone by its dropped POP_BLOCK) to the other.  Such a
# jump now compares as the code it jumps to, so the clause's copy is seen as the same exit.
WITH_TRY_EXCEPT = {
    "module": "with A:\n    try:\n        y = 2\n    except:\n        pass\n",
    "dead_inner_try": "with A:\n    try:\n        try:\n            pass\n        except:\n"
                      "            x = 1\n        y = 2\n    except:\n        pass\n",
    "live_inner_try": "with A:\n    try:\n        try:\n            z()\n        except:\n"
                      "            x = 1\n        y = 2\n    except:\n        pass\n",
    "corpus": "with A:\n try:#\n  try: \n   pass\n  except :\n   class A: \n    pass\n"
              "   class A: \n    pass\n   class A\u00d1:\n    pass\n  class \u00cf:\n   pass\n"
              " except :\n   pass\n",
}


@pytest.mark.parametrize("src", list(WITH_TRY_EXCEPT.values()), ids=list(WITH_TRY_EXCEPT))
def test_try_except_ending_with_body(src):
    _assert_module_round_trip(src)
    report = fuzz.check_program(src)
    assert report.forms[:2] == ["module", "function"]
    assert not report.failures, [str(f) for f in report.failures]


def test_try_except_ending_with_body_behaviour():
    """The clause and the body both leave the ``with`` (its __exit__ runs once) and go on."""
    src = ("class CM:\n    def __enter__(self):\n        log.append('enter')\n"
           "    def __exit__(self, *a):\n        log.append(('exit', a[0]))\n"
           "with CM():\n    try:\n        log.append(1)\n        if fail:\n            raise KeyError\n"
           "        log.append(2)\n    except:\n        log.append(3)\n")
    for fail in (0, 1):
        original, recompiled = {"log": [], "fail": fail}, {"log": [], "fail": fail}
        exec(_module(src), original)
        exec(pellucid.recompile(_module(src)), recompiled)
        assert recompiled["log"] == original["log"], pellucid.decompile(_module(src))


# (3.10+: a loop ending the finally body at the end of the code had no structured form,
# "finally body not repeated on the normal path" -- each exit of the loop has its own copy of
# the RERAISE / of the final return, so neither copy has a `break`; 3.10 then raised, 3.11+
# took the fallback.  The copies inside such a loop are read as `break` now.)
def test_loop_in_finally_module_behaviour():
    src = "try:\n    n = 0\nfinally:\n    while a:\n        a -= 1\n        n += 1\n"
    _assert_module_round_trip(src)
    for a in (0, 3):
        original, recompiled = {"a": a}, {"a": a}
        exec(_module(src), original)
        exec(pellucid.recompile(_module(src)), recompiled)
        assert recompiled["n"] == original["n"] == a, pellucid.decompile(_module(src))


# Found by the corpus sweep (3.8): a subscript by a tuple holding slices (`x[1:2, ::3]`) was
# written by 3.8's unparser as `x[(1:2, ::3)]`, which does not compile (also construct cases
# slicing_extended_keys, regr_fuzz_tuple_of_slices_key_store_del).  Written bare now.
@pytest.mark.parametrize("src", ["y = x[1:2, ::3, 4]\n", "del x[:, 1.]\n", "x[0j:, n] = 1\n",
                                 "y = x[n:,]\n", "if x[:1:2, 3]:\n    pass\n"])
def test_subscript_by_tuple_of_slices_compiles(src):
    _assert_module_round_trip(src)


# Found by the corpus sweep (3.8-3.10): an exception handler nothing can reach -- its try body is
# a nested `try: pass finally: pass`, `try: pass except: pass` or `assert <true constant>` --
# stays in the original bytecode; the decompiled body is `pass`, so CPython drops the handler and
# the class (or function) it defines.  Equivalent, but the harness counted the dead handler's
# names as used: a shape mismatch.  The harness reaches a 3.8-3.10 handler only when something in
# its try body may raise now.
DEAD_HANDLERS = {
    "nested_finally": "try:\n    try:\n        pass\n    finally:\n        pass\n"
                      "except:\n    class A:\n        pass\n    def O():\n        pass\n",
    "nested_except_class_body": "class A0:\n    try:\n        try:\n            pass\n"
                                "        except:\n            pass\n    except:\n"
                                "        class AA:\n            pass\n",
    "assert_true_constant": "try:\n    assert 1, x\nexcept []:\n    class A:\n        pass\n",
    "except_as_name": "try:\n    try:\n        pass\n    finally:\n        pass\n"
                      "except () as A:\n    class A:\n        pass\n",
}


@pytest.mark.parametrize("src", list(DEAD_HANDLERS.values()), ids=list(DEAD_HANDLERS))
def test_dead_handler_round_trips(src):
    report = fuzz.check_program(src)
    assert not report.failures, [str(f) for f in report.failures]


def test_live_handler_names_are_counted():
    """The harness still counts what a handler uses when its try body may raise."""
    for body in ("x()", "try:\n        x()\n    finally:\n        pass", "assert x"):
        src = "try:\n    %s\nexcept:\n    class A:\n        pass\n" % body
        assert {"A", "__qualname__"} <= fuzz.names_used(_module(src)), src


# Found by the corpus sweep (all versions): a chained comparison returned directly (`return a <
# b < c`, a lambda's body) took the fallback ("and/or whose operands contain statements"); a
# lambda then became a def that sets __name__/__qualname__ (a shape mismatch).  Both arms of
# the chain's short-circuit return, so nothing post-dominates them; since a1b05d5 the
# short-circuit target was taken as the meeting point and the `return` case was never tried.
CHAIN_RETURNS = {
    "return": "def f(a, b, c):\n    return a < b < c\n",
    "return_three": "def f(a, b, c, d):\n    return a > b not in c < d\n",
    "lambda": "f = lambda: a > b not in c < d\n",
    "assert_lambda": "assert lambda: a > b < c\n",
}


@pytest.mark.parametrize("src", list(CHAIN_RETURNS.values()), ids=list(CHAIN_RETURNS))
def test_returned_chained_comparison_is_structured(src):
    for _, code in fuzz.iter_codes(_module(src)):
        out = pellucid.decompile(code)
        assert fuzz.FALLBACK_MARKER not in out, out
    report = fuzz.check_program(src)
    assert not report.failures, [str(f) for f in report.failures]
