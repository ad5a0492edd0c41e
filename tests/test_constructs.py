"""Round-trip every Python construct through pellucid.

For each case of the catalogue (``construct_cases*.py``):

* ``test_roundtrip``: execute the case source, record what the original function does on every
  input (return value or exception type/args/cause/context, plus the arguments' state after the
  call); execute the source again into a fresh namespace, replace the function's code with
  ``pellucid.recompile(func)`` and check it behaves identically and keeps the same argument
  layout, flags and free/cell variables.  Only the top-level function is recompiled: its nested
  functions, classes, lambdas and comprehensions are part of its decompiled source.
* ``test_decompile_compiles``: ``pellucid.decompile(func)`` is a string that compiles.

Expected failures are listed in ``construct_xfail.py`` (strict: an unexpected pass fails).
"""
import builtins
import contextlib
import copy
import faulthandler
import importlib.util
import os
import signal
import sys
import threading
import time
import types

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "%d.%d" % sys.version_info[:2]
MIN_CASES = 170
# A wrong decompilation can turn a loop with `break` into an endless one: bound every call.
CALL_TIMEOUT = float(os.environ.get("PELLUCID_CASE_TIMEOUT", "5"))
TOOL_TIMEOUT = float(os.environ.get("PELLUCID_TOOL_TIMEOUT", "60"))


def _load_sibling(filename):
    name = "_pellucid_" + os.path.splitext(filename)[0]
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, filename))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_catalogue = _load_sibling("construct_cases.py")
CASES = _catalogue.load_all()
CASES_BY_ID = {case.id: case for case in CASES}
EXPECTED_FAILURES = _load_sibling("construct_xfail.py").EXPECTED_FAILURES
KINDS = ("roundtrip", "decompile")


# --------------------------------------------------------------------------- parametrisation

def _xfail_versions(value):
    if value == "all":
        return set(_catalogue.VERSIONS)
    return set(value)


def _marks(case, kind):
    marks = []
    if sys.version_info[:2] < case.min_version:
        marks.append(pytest.mark.skip(reason="needs Python %s+" % case.min_version_str))
    for key in (case.id, case.id + "/" + kind):
        if os.environ.get("PELLUCID_IGNORE_XFAIL"):  # refresh_construct_xfail.py wants raw results
            break
        value = EXPECTED_FAILURES.get(key)
        if value is not None and PY in _xfail_versions(value):
            marks.append(pytest.mark.xfail(
                strict=True,
                reason="known pellucid failure, listed as %r in tests/construct_xfail.py" % key))
    return marks


def _params(kind):
    return [pytest.param(case, id=case.id, marks=_marks(case, kind)) for case in CASES]


# --------------------------------------------------------------------------- running a case

class CaseTimeout(BaseException):
    """Raised (repeatedly, so a bare ``except:`` cannot swallow it) when a call runs too long."""


_CONFIG = []


@pytest.fixture(autouse=True)
def _remember_config(pytestconfig):
    _CONFIG[:] = [pytestconfig]


def _abort(message):
    """Last resort against a hang: report past pytest's output capture, then exit."""
    capture = _CONFIG and _CONFIG[0].pluginmanager.getplugin("capturemanager")
    if capture:
        try:
            capture.suspend_global_capture(in_=True)
        except Exception:
            pass
    sys.stderr.write("\n\n%s\n" % message)
    sys.stderr.flush()
    faulthandler.dump_traceback(sys.stderr)
    sys.stderr.flush()
    os._exit(3)


@contextlib.contextmanager
def _watchdog(seconds, what):
    """Interrupt the block with CaseTimeout after ``seconds``.  If the code swallows that too
    (an endless loop around a bare ``except:``), abort the whole run with a message rather
    than hang forever."""
    if (seconds <= 0 or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()):
        yield
        return
    state = {"armed": True}
    deadline = time.monotonic() + 2 * seconds + 5

    def on_alarm(signum, frame):
        if not state["armed"]:
            return
        if time.monotonic() > deadline:
            _abort("test_constructs: %s is stuck and swallows CaseTimeout; aborting the test "
                   "run (a decompiled loop that never ends?)" % what)
        raise CaseTimeout("%s did not finish within %gs" % (what, seconds))

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)
    # Stuck inside C code, where no signal handler runs: faulthandler still ends the process.
    faulthandler.dump_traceback_later(3 * seconds + 10, exit=True)
    try:
        yield
    finally:
        for _ in range(100):
            try:
                state["armed"] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
                faulthandler.cancel_dump_traceback_later()
                signal.signal(signal.SIGALRM, previous)
                break
            except CaseTimeout:
                pass


def _pellucid():
    import pellucid  # imported lazily: an unfinished core must not break collection
    return pellucid


def _exec_case(case):
    """Execute the case source as a fresh module; return its namespace."""
    code = compile(case.src, "<%s>" % case.id, "exec", dont_inherit=True)
    namespace = {"__name__": "construct_case_" + case.id, "__builtins__": builtins}
    exec(code, namespace)
    return namespace


def _resolve(namespace, dotted):
    """Fetch ``name`` or ``Class.method`` from the namespace, unwrapping static/classmethods."""
    parts = dotted.split(".")
    obj = namespace[parts[0]]
    for part in parts[1:]:
        obj = obj.__dict__[part] if isinstance(obj, type) else getattr(obj, part)
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    assert isinstance(obj, types.FunctionType), "%s is not a Python function" % dotted
    return obj


def _type_name(tp):
    module = getattr(tp, "__module__", "")
    qualname = getattr(tp, "__qualname__", tp.__name__)
    if module in ("builtins", "") or module.startswith("construct_case_"):
        return qualname
    return module + "." + qualname


def _exc_summary(exc, depth=0):
    """Type, args, and (a few levels of) explicit cause and implicit context."""
    summary = (_type_name(type(exc)), repr(exc.args))
    if depth >= 3:
        return summary
    cause = exc.__cause__
    context = exc.__context__
    return summary + (
        None if cause is None else _exc_summary(cause, depth + 1),
        None if context is None else _exc_summary(context, depth + 1),
        bool(exc.__suppress_context__),
    )


def canon(value):
    """A hashable, exactly comparable image of a result: 1, 1.0 and True stay distinct,
    dict order matters, set order does not, floats compare by repr (so -0.0 != 0.0, nan == nan)."""
    tp = type(value)
    if value is None or value is Ellipsis or value is NotImplemented:
        return (repr(value),)
    if tp in (bool, int, str, bytes):
        return (tp.__name__, value)
    if tp in (float, complex):
        return (tp.__name__, repr(value))
    if tp is bytearray:
        return ("bytearray", bytes(value))
    if tp in (list, tuple):
        return (tp.__name__,) + tuple(canon(item) for item in value)
    if tp is dict:
        return ("dict",) + tuple((canon(k), canon(v)) for k, v in value.items())
    if tp in (set, frozenset):
        return (tp.__name__, frozenset(canon(item) for item in value))
    if tp in (range, slice):
        return (tp.__name__, repr(value))
    if isinstance(value, BaseException):
        return ("exception",) + _exc_summary(value)
    if isinstance(value, type):
        return ("type", _type_name(value))
    return ("object", _type_name(tp), repr(value))


_LAZY = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)


def _call(case, namespace, func, call):
    """Run one call; return a comparable outcome including the arguments' state afterwards."""
    args, kwargs = copy.deepcopy(call)
    try:
        what = "case %s: call %s%s" % (case.id, case.func, _describe_call(call))
        with _watchdog(CALL_TIMEOUT, what):
            if case.driver is None:
                result = func(*args, **kwargs)
            else:
                result = namespace[case.driver](func, *args, **kwargs)
    except (KeyboardInterrupt, CaseTimeout):
        raise
    except BaseException as exc:  # SystemExit, GeneratorExit... are results like any other
        outcome = ("raised",) + _exc_summary(exc)
    else:
        if isinstance(result, _LAZY):
            getattr(result, "close", lambda: None)()
            raise AssertionError("case %s returned a %s: give it a driver"
                                 % (case.id, type(result).__name__))
        outcome = ("returned", canon(result))
    return outcome + (("args after call", canon(args), canon(kwargs)),)


def _describe_call(call):
    args, kwargs = call
    parts = [repr(a) for a in args] + ["%s=%r" % item for item in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


_FLAG_MASK = 0x3FF  # OPTIMIZED NEWLOCALS VARARGS VARKEYWORDS NESTED GENERATOR NOFREE COROUTINE
#                     ITERABLE_COROUTINE ASYNC_GENERATOR


def _layout(code):
    flags = code.co_flags
    nargs = (code.co_argcount + code.co_kwonlyargcount
             + bool(flags & 0x04) + bool(flags & 0x08))
    return {
        "co_name": code.co_name,
        "co_argcount": code.co_argcount,
        "co_posonlyargcount": code.co_posonlyargcount,
        "co_kwonlyargcount": code.co_kwonlyargcount,
        "argument names": code.co_varnames[:nargs],
        "co_flags & 0x3ff": hex(flags & _FLAG_MASK),
        "co_freevars": code.co_freevars,
        "co_cellvars (sorted)": tuple(sorted(code.co_cellvars)),
    }


# --------------------------------------------------------------------------- the tests

@pytest.mark.parametrize("case", _params("roundtrip"))
def test_roundtrip(case):
    pellucid = _pellucid()

    original_ns = _exec_case(case)
    original = _resolve(original_ns, case.func)
    expected = [_call(case, original_ns, original, call) for call in case.calls]

    fresh_ns = _exec_case(case)
    func = _resolve(fresh_ns, case.func)
    with _watchdog(TOOL_TIMEOUT, "pellucid.recompile"):
        new_code = pellucid.recompile(func)
    assert isinstance(new_code, types.CodeType), \
        "recompile returned %r, not a code object" % (type(new_code),)
    assert _layout(new_code) == _layout(func.__code__)
    func.__code__ = new_code

    for call, want in zip(case.calls, expected):
        got = _call(case, fresh_ns, func, call)
        assert got == want, "call %s%s behaves differently after recompile%s" % (
            case.func, _describe_call(call), _decompiled_for_message(pellucid, original))


def _decompiled_for_message(pellucid, func):
    try:
        return "; pellucid.decompile gives:\n" + pellucid.decompile(func)
    except Exception as exc:
        return "; pellucid.decompile raises %s: %s" % (type(exc).__name__, exc)


@pytest.mark.parametrize("case", _params("decompile"))
def test_decompile_compiles(case):
    pellucid = _pellucid()
    func = _resolve(_exec_case(case), case.func)
    with _watchdog(TOOL_TIMEOUT, "pellucid.decompile"):
        source = pellucid.decompile(func)
    assert isinstance(source, str) and source.strip(), "decompile returned %r" % (source,)
    try:
        compile(source, "<decompiled %s>" % case.id, "exec", dont_inherit=True)
    except SyntaxError as exc:
        pytest.fail("decompiled source does not compile: %s\n%s" % (exc, source))


def test_catalogue_is_large_enough():
    assert len(CASES) >= MIN_CASES
    assert len(CASES_BY_ID) == len(CASES)


def test_expected_failures_are_valid():
    problems = []
    for key, value in sorted(EXPECTED_FAILURES.items()):
        case_id, _, kind = key.partition("/")
        case = CASES_BY_ID.get(case_id)
        if case is None:
            problems.append("%s: no case with id %r" % (key, case_id))
            continue
        if kind and kind not in KINDS:
            problems.append("%s: test kind must be one of %s" % (key, KINDS))
        if value != "all":
            if not isinstance(value, (set, frozenset, list, tuple)) or not value:
                problems.append("%s: value must be 'all' or a non-empty set of versions" % key)
                continue
            bad = sorted(set(value) - set(_catalogue.VERSIONS))
            if bad:
                problems.append("%s: unknown versions %s" % (key, bad))
            stale = sorted(v for v in value if v in _catalogue.VERSIONS
                           and tuple(map(int, v.split("."))) < case.min_version)
            if stale:
                problems.append("%s: case needs %s+, drop %s" % (key, case.min_version_str, stale))
    assert not problems, "\n".join(problems)
