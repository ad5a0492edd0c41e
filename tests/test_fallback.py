"""The documented fallback (pellucid.decompiler.fallback): state machine over basic blocks.

Functions are forced through the fallback with PELLUCID_FORCE_FALLBACK=1 and must behave exactly
like the originals after ``pellucid.recompile``; a structured-decompiler failure (StructureError)
must turn into a fallback body for that code object only, marked in the output.
"""
import os
import sys
import types

import pytest

import pellucid
from pellucid.decompiler import body as body_mod
from pellucid.decompiler.errors import StructureError
from pellucid.decompiler.fallback import MARKER


def _loops(n):
    t = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        try:
            t += 10 // (i - 4)
        except ZeroDivisionError as e:
            t += 100 + len(str(e)) * 0
        finally:
            t += 1
        if t > 50:
            break
    else:
        t -= 1
    return t, [i * i for i in range(n)], {k: v for k, v in zip("ab", (n, 2))}


class _CM:
    # Module level: the fallback refuses class bodies (its variables would become attributes).
    def __init__(self, x):
        self.x = x

    def __enter__(self):
        return "in"

    def __exit__(self, *a):
        return self.x == 2


def _with_and_raise(x):
    with _CM(x) as v:
        if x:
            raise KeyError(v)
    try:
        raise ValueError("a")
    except ValueError:
        if x == 3:
            raise TypeError("b")
    return v


def _gen(n):
    total = 0
    for i in range(n):
        got = yield i
        total += got or 0
    yield from range(2)
    return total


def _closure(a, *args, k=3, **kw):
    def inner(b, c=a):
        nonlocal a
        a += b
        return a + c
    return inner(1), inner(2), args, k, sorted(kw), (lambda y=k: y * 2)()


def _nested_except(a, b):
    # 3.12+ covers the inner clause's lone POP_EXCEPT with the outer clause's cleanup handler.
    try:
        t = int(a)
    except ValueError:
        try:
            t = int(b)
        except ValueError:
            if b == "raise":
                raise
            t = 0
    return t


def _finally_loop_except(items):
    # shutil.rmtree (3.13): a try/except inside a loop inside a ``finally`` clause; the fallback
    # entered the inner cleanup handler with the state from before PUSH_EXC_INFO
    log, items = [], list(items)
    try:
        log.append(len(items))
    finally:
        while items:
            k, v = items.pop()
            if not k:
                continue
            try:
                log.append(10 // (v - 5))
            except ZeroDivisionError as err:
                log.append(str(err))
    return log


class _BadExit:
    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.mode == 1:
            raise ValueError("exit")
        return self.mode == 2


def _exit_raises_in_handler(mode):
    # <=3.10: ``__exit__`` raising inside the with's handler goes to the outer handler with the
    # with's exception unwound (the handler's level is that of its setup, not of the raise)
    try:
        with _BadExit(mode):
            raise KeyError(mode)
    except (KeyError, ValueError) as e:
        return type(e).__name__, type(e.__context__).__name__
    return "suppressed"


# 3.8 loads the global AssertionError for ``assert``, whatever the function calls it.  (Compiled
# from text: pytest rewrites the asserts of a test module.)
_assert_shadowed = {}
exec(compile("def f(AssertionError):\n    assert AssertionError, 'message'\n    return AssertionError\n",
             "<assert>", "exec"), _assert_shadowed)
_assert_shadowed = _assert_shadowed["f"]


class _ACM:
    def __init__(self, log):
        self.log = log

    async def __aenter__(self):
        self.log.append("enter")

    async def __aexit__(self, *exc):
        self.log.append("exit")


class _Ticker:
    def __init__(self, n):
        self.i, self.n = 0, n

    def __aiter__(self):
        return self

    async def __anext__(self):
        if self.i >= self.n:
            raise StopAsyncIteration
        self.i += 1
        return self.i


async def _async_with_for(log, target):
    async with _ACM(log):
        async for t in _Ticker(5):
            log.append(t)
            if t == target:
                return "found", t, log
    return "not found", log


def _unbound_cell(x):
    # The closure is made while ``value`` is still unbound: 3.13 loads the cell itself with
    # LOAD_FAST, which never fails, where reading the variable would.
    def get():
        return value
    if x:
        value = x
    return get()  # NameError when x is falsy, in both


def _outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except BaseException as e:  # noqa: BLE001
        return ("raised", type(e).__name__, e.args, type(e.__context__).__name__)


def _raw_recompile(obj):
    """The fallback's own output compiled, as ``pellucid.recompile`` builds it but without the
    verifier's check (which refuses the fallback's ``match`` and class-maker forms, not modelled):
    these tests check the fallback itself, by running it."""
    from pellucid.decompiler.inputs import code_of
    from pellucid.decompiler.recompile import recompile_full

    code = code_of(obj)
    result = recompile_full(code, None, getattr(obj, "__qualname__", None), write=False)
    if result.bindings:
        obj.__globals__.update(result.bindings)
    return result.code


def _recompiled(fn):
    code = _raw_recompile(fn)
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


@pytest.fixture
def forced(monkeypatch):
    monkeypatch.setenv("PELLUCID_FORCE_FALLBACK", "1")


@pytest.mark.parametrize("fn,inputs", [
    pytest.param(_loops, [(0,), (3,), (9,), (30,)]),
    pytest.param(_with_and_raise, [(0,), (1,), (2,), (3,)]),
    pytest.param(_nested_except, [("1", "2"), ("x", "2"), ("x", "y"), ("x", "raise")]),
    pytest.param(_finally_loop_except, [([],), ([(1, 5)],), ([(0, 5), (1, 99)],)]),
    pytest.param(_exit_raises_in_handler, [(0,), (1,), (2,)]),
    pytest.param(_assert_shadowed, [(0,), (1,)]),
    pytest.param(_closure, [(1,), (2, 3, 4)]),
    pytest.param(_unbound_cell, [(0,), (1,)]),
])
def test_forced_fallback_behaves_the_same(forced, fn, inputs):
    assert MARKER in pellucid.decompile(fn)
    new = _recompiled(fn)
    for args in inputs:
        assert _outcome(new, *args) == _outcome(fn, *args)


def test_forced_fallback_generator(forced):
    new = _recompiled(_gen)

    def drive(f):
        g = f(4)
        out = [next(g)]
        try:
            while True:
                out.append(g.send(len(out)))
        except StopIteration as stop:
            out.append(("return", stop.value))
        except AttributeError as e:  # sending into ``yield from range(...)`` fails in both
            out.append(("raised", str(e)))
        return out
    assert drive(new) == drive(_gen)


def test_structure_error_uses_fallback_for_that_code_only(monkeypatch):
    """A code object the structured path rejects gets a fallback body; its parent stays structured."""
    real = body_mod.BodyDecompiler.statements

    def picky(self):
        if self.code.co_name == "inner":
            raise StructureError("simulated irregular flow")
        return real(self)
    monkeypatch.setattr(body_mod.BodyDecompiler, "statements", picky)

    def outer(x):
        def inner(y):
            while y > 0:
                y -= 3
                if y == 1:
                    break
            return y
        return inner(x) * 2

    src = pellucid.decompile(outer)
    assert "simulated irregular flow" in src
    assert src.count(MARKER) == 1
    assert src.index("def inner") < src.index(MARKER)
    new = _recompiled(outer)
    for x in (0, 4, 7, 10):
        assert new(x) == outer(x)


def test_forced_fallback_async_with_and_for(forced):
    # (3.8: the await of ``__aexit__``'s result on the normal exit was lost in normalisation)
    import asyncio

    async def run(fn, *args):
        return await fn(*args)

    for args in [([], 2), ([], 9), ([], -1)]:
        new = _recompiled(_async_with_for)
        assert asyncio.run(run(new, *args)) == asyncio.run(run(_async_with_for, *args))


# Found by the corpus sweep (3.12): the fallback's class-pattern checks reached
# ``collections.abc.Mapping`` through attribute names (``.abc.Mapping``) and loaded ``str``/``bytes``
# as globals -- names the original never uses, so the fuzz shape check failed.  Everything the
# fallback needs now goes through its own ``__pellucid_builtins`` and constants.
@pytest.mark.skipif(sys.version_info < (3, 10), reason="match statements are 3.10+")
def test_fallback_match_uses_no_names_of_its_own(monkeypatch):
    import os
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        from fuzz_support import names_used
    finally:
        sys.path.pop(0)
    src = ("def f(x):\n    match x:\n        case {'a': 1}:\n            return 1\n"
           "        case [a, b]:\n            return a + b\n        case 'ab':\n            return 3\n"
           "    return 0\n")
    namespace = {}
    exec(src, namespace)
    f = namespace["f"]
    args = [{"a": 1}, {"a": 2}, [1, 2], (3, 4), "ab", b"ab", [1], 5]
    expected = [f(a) for a in args]
    monkeypatch.setenv("PELLUCID_FORCE_FALLBACK", "1")
    code = _raw_recompile(f)
    assert MARKER in pellucid.decompile(f, verify=False)
    assert names_used(code) == names_used(f.__code__)
    f.__code__ = code
    assert [f(a) for a in args] == expected


def _module_only_fallback(monkeypatch):
    """Module code takes the fallback; the code objects it makes stay structured."""
    real = body_mod.BodyDecompiler.statements

    def picky(self):
        if self.code.co_name == "<module>":
            raise StructureError("simulated irregular flow")
        return real(self)
    monkeypatch.setattr(body_mod.BodyDecompiler, "statements", picky)


def _names(code):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import fuzz_support
    finally:
        sys.path.pop(0)
    return fuzz_support.names_used(code) - fuzz_support.FALLBACK_ATTRIBUTES


# Found by the corpus sweep (3.13): a class the fallback makes is a class statement inside a
# maker function; with its body structured (no `__qualname__` store), the class was named
# `__pellucid_class2.<locals>.A`.  `import a.b` went through `__import__`, so the recompiled code
# never named the module (the names check saw `a.b` missing) and bypassed the frame's own
# `__import__`.
def test_module_fallback_keeps_class_qualname_and_import_names(monkeypatch):
    _module_only_fallback(monkeypatch)
    src = "import os.path\nclass A:\n    class B:\n        pass\nimport sys as s\nx = os.path.sep\n"
    code = compile(src, "<m>", "exec")
    assert MARKER in pellucid.decompile(code, verify=False)
    new = _raw_recompile(code)
    a, b = {"__name__": "m"}, {"__name__": "m"}
    exec(code, a)
    exec(new, b)
    assert b["A"].__qualname__ == "A" and b["A"].__module__ == "m"
    assert (b["os"], b["s"], b["x"]) == (a["os"], a["s"], a["x"])
    assert _names(new) == _names(code)


# PEP 695 (3.12+): a generic definition in a body the structured decompiler rejects is written
# as a maker function holding the definition; a generic class body in the fallback leaves its
# ``__type_params__`` store to the class statement.
_GENERIC_FUNCTIONS = '''
def outer(x, extra):
    def first[T: int, *Ts](a: T = x, *rest: *Ts, k: T = 2) -> T:
        return (a, rest, k)
    type Pair[K] = tuple[K, K]
    return (first(), first(1, 2, k=3), first.__defaults__, first.__kwdefaults__,
            [type(p).__name__ for p in first.__type_params__], first.__qualname__,
            Pair.__name__, Pair.__type_params__[0].__name__, repr(Pair.__value__))
'''
_GENERIC_CLASS = '''
def outer(x, extra):
    class Box[T](dict, **extra):
        "doc"
        size: T = 3
        def get(self, u):
            return (self.size, u)
    return (Box.__qualname__, Box.__doc__, Box().get(x), [p.__name__ for p in Box.__type_params__],
            Box.__annotations__["size"] is Box.__type_params__[0], Box.__mro__[1:])
'''


@pytest.mark.skipif(sys.version_info < (3, 12), reason="PEP 695 needs Python 3.12+")
@pytest.mark.parametrize("source,rejected,header", [
    (_GENERIC_FUNCTIONS, "outer", "def first[T: int, *Ts](a: T, *rest: *Ts, k: T) -> T:"),
    # (3.12 miscompiles the fallback's private names after a generic class: refused there)
    pytest.param(_GENERIC_CLASS, "outer", "class Box[T](dict, **extra):", marks=pytest.mark.skipif(
        sys.version_info < (3, 13), reason="3.12 refuses a generic class in a fallback body")),
    # (3.14+: the annotation gives the class body a ``__classdict__`` cell for its
    # ``__annotate__``; the fallback refuses class bodies with cells)
    pytest.param(_GENERIC_CLASS, "Box", "class Box[T](dict, **extra):", marks=pytest.mark.xfail(
        sys.version_info >= (3, 14), strict=True, reason="the fallback refuses class bodies with cells")),
], ids=["functions_in_fallback", "class_in_fallback", "class_body_fallback"])
def test_fallback_generic_definitions(monkeypatch, source, rejected, header):
    real = body_mod.BodyDecompiler.statements

    def picky(self):
        if self.code.co_name == rejected:
            raise StructureError("simulated irregular flow")
        return real(self)
    monkeypatch.setattr(body_mod.BodyDecompiler, "statements", picky)
    namespace = {}
    exec(compile(source, "<generic>", "exec"), namespace)
    outer = namespace["outer"]
    src = pellucid.decompile(outer)
    assert src.count("simulated irregular flow") == 1, src
    assert header in src, src
    new = _recompiled(outer)
    for args in [(1, {}), (5, {})]:
        assert _outcome(new, *args) == _outcome(outer, *args)


@pytest.mark.skipif(sys.version_info[:2] != (3, 12), reason="the refusal is for 3.12")
def test_fallback_refuses_generic_class_on_312(monkeypatch):
    real = body_mod.BodyDecompiler.statements

    def picky(self):
        if self.code.co_name == "outer":
            raise StructureError("simulated irregular flow")
        return real(self)
    monkeypatch.setattr(body_mod.BodyDecompiler, "statements", picky)
    namespace = {}
    exec(compile(_GENERIC_CLASS, "<generic>", "exec"), namespace)
    with pytest.raises(pellucid.DecompileError, match="generic class in a fallback body on 3.12"):
        pellucid.decompile(namespace["outer"])


# MATCH_CLASS had no fallback (decompiling raised once the structurer gave up on a function with
# a class pattern); MATCH_KEYS and MATCH_CLASS push two values on 3.10.
_MATCH_CLASSES = '''
class P:
    __match_args__ = ("a", "b")
    def __init__(self):
        self.a, self.b = 1, 2

class Q:
    __match_args__ = ["a"]

class R:
    pass

class Pt:
    __match_args__ = ("x", "y")
    def __init__(self, x, y):
        self.x, self.y = x, y

class NS:
    notype = 5

def f(subj, k):
    if k == 0:
        match subj:
            case NS.notype():
                return "m"
    if k == 1:
        match subj:
            case P(x, y, z):
                return "m"
    if k == 2:
        match subj:
            case Q(x):
                return "m"
    if k == 3:
        match subj:
            case R(x):
                return "m"
    if k == 4:
        match subj:
            case P(x, a=y):
                return "m"
    if k == 5:
        match subj:
            case int(x, y):
                return "m"
    match subj:
        case Pt(0, y=5):
            return "origin-ish"
        case Pt(x, y) if x > y:
            return ("gt", x, y)
        case int(n) | str(n):
            return ("scalar", n)
        case {"k": v, **rest}:
            return ("map", v, rest)
        case [a, *b]:
            return ("seq", a, b)
    return "nomatch"
'''


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match statements are 3.10+")
def test_forced_fallback_class_and_mapping_patterns(forced):
    namespace = {}
    exec(compile(_MATCH_CLASSES, "<match>", "exec"), namespace)
    f = namespace["f"]
    P, Q, R, Pt = (namespace[n] for n in ("P", "Q", "R", "Pt"))
    inputs = [(1, 0), (P(), 1), (Q(), 2), (R(), 3), (P(), 4), (3, 5), (Pt(0, 5), 6), (Pt(3, 1), 6),
              (Pt(1, 3), 6), (7, 6), ("s", 6), ({"k": 1, "z": 2}, 6), ([1, 2, 3], 6), (2.5, 6)]
    expected = [_outcome(f, *args) for args in inputs]
    assert MARKER in pellucid.decompile(f)
    new = _recompiled(f)
    assert [_outcome(new, *args) for args in inputs] == expected


def _star_call(cb, a, args, more):
    return cb(a, *args, *more)


def _star_call_kw(cb, a, args):
    return cb(a, *args, key=1)


def _collect(*a, **k):
    return a, k


@pytest.mark.parametrize("fn,inputs,proven", [
    pytest.param(_star_call, [(1, (2,), [3]), (1, 5, ()), (1, (), 7)], True),
    # (keyword arguments are evaluated after the star arguments are iterated: the fallback
    # keeps its tuple display there, which the verifier refuses on 3.8)
    pytest.param(_star_call_kw, [(1, (2,)), (1, [])], False),
])
def test_forced_fallback_star_arguments(forced, fn, inputs, proven):
    """3.8's BUILD_TUPLE_UNPACK_WITH_CALL right before its call stays star arguments of the
    call: a non-iterable's TypeError names the function (``cb() argument after * must be an
    iterable, not int``) as the original's does; the verifier proves it (asyncio's
    ``FastChildWatcher._do_waitpid_all`` on 3.8: ``callback(pid, returncode, *args)``)."""
    from pellucid.decompiler.recompile import recompile_full
    from pellucid.verify import check_equivalent

    assert MARKER in pellucid.decompile(fn, verify=False)
    new = _recompiled(fn)
    for args in inputs:
        assert _outcome(new, _collect, *args) == _outcome(fn, _collect, *args)
    if sys.version_info < (3, 9):  # (the instruction is 3.8's: 3.9+ builds a list instead)
        result = recompile_full(fn.__code__, None, fn.__qualname__, write=False)
        assert check_equivalent(fn.__code__, result.code, result.bindings).ok == proven


def test_forced_fallback_annotations_use_builtin_dict(forced):
    """A nested function's annotations are set up with the builtin ``dict``, whatever the module
    binds to that name (``_pyrepl.simple_interact`` on 3.13 read the module's global ``dict``)."""
    ns = {"__name__": "fb_dict", "dict": None}
    exec(compile("def outer():\n    def inner(x: int) -> str:\n        return str(x)\n"
                 "    return inner\n", "<fb_dict>", "exec"), ns)
    outer = ns["outer"]
    assert MARKER in pellucid.decompile(outer, verify=False)
    new = _recompiled(outer)
    assert new().__annotations__ == outer().__annotations__ == {"x": int, "return": str}


NESTED = """
def outer(console):
    def inner(statement: str, /, n: %s, *rest: int, k: 'x', **kw: %s) -> bool:
        return (statement, console, n, rest, k, kw)
    return inner
"""
FUTURE_NESTED = "from __future__ import annotations\n" + NESTED % ("list[int]", "K | None")
PLAIN_NESTED = "K = int\n" + NESTED % ("list", "K")


@pytest.mark.parametrize("source,proven_from", [
    # (3.8/3.9 build the annotations as a dict, which the fallback assigns after the ``def``:
    # the verifier does not model that assignment; 3.10-3.13 without the future build a tuple
    # of values, assigned the same way)
    pytest.param(FUTURE_NESTED, (3, 10), id="future"),
    pytest.param(PLAIN_NESTED, (3, 14), id="plain"),
])
def test_forced_fallback_writes_nested_annotations_in_the_def(forced, source, proven_from):
    """The fallback writes a nested function's annotations in its ``def`` where MAKE_FUNCTION
    got them as one constant tuple (3.10-3.13) or an ``__annotate__`` function (3.14+): the same
    code, which the verifier proves (``_pyrepl.simple_interact:run_multiline_interactive_console``,
    3.13-3.15: the annotations were assigned after the ``def``, which it did not model, and 3.14+
    dropped the ``__annotate__``)."""
    from pellucid.decompiler.recompile import recompile_full
    from pellucid.verify import check_equivalent

    ns = {"__name__": "fb_nested_annotations"}
    exec(compile(source, "<fb_nested_annotations>", "exec", dont_inherit=True), ns)
    outer = ns["outer"]
    text = pellucid.decompile(outer, verify=False)
    assert MARKER in text
    new = _recompiled(outer)
    assert new(1).__annotations__ == outer(1).__annotations__
    assert new(1).__qualname__ == outer(1).__qualname__ == "outer.<locals>.inner"
    assert new(1)("s", [2], 3, k=4, z=5) == outer(1)("s", [2], 3, k=4, z=5)
    assert new(1).__kwdefaults__ is None
    result = recompile_full(outer.__code__, None, outer.__qualname__, write=False)
    verdict = check_equivalent(outer.__code__, result.code, result.bindings)
    assert verdict.ok == (sys.version_info >= proven_from), verdict.reason
    if verdict.ok:
        assert "__annotations__ =" not in result.source, result.source
