"""Catalogue of small Python programs, one per language construct, for the round-trip tests.

The cases themselves live in the themed sibling modules ``construct_cases_<theme>.py``; this
module finds them, checks them and turns them into :class:`Case` objects.  The harness is
``test_constructs.py``; known failures are listed in ``construct_xfail.py``.

Format of a themed module: a list ``CASES`` of dicts with these keys

``id``           stable unique name, ``[a-z][a-z0-9_]*`` (becomes the pytest id; never rename).
``src``          Python *source text* executed as a module.  It defines the function under test
                 and any module-level helpers (classes with ``__matmul__``, context managers,
                 drivers...).  Sources are strings so that syntax newer than the running
                 interpreter (``match``, ``except*``, type parameters) is never compiled there:
                 every themed module must import cleanly on Python 3.8.
``calls``        list of calls: a tuple of positional arguments, or ``{"args": (...),
                 "kwargs": {...}}``.  Arguments are deep-copied before every call and compared
                 after it, so a function may record side effects into a list argument.
``min_version``  ``(3, minor)``: oldest Python the case runs on (default ``(3, 8)``).
``func``         name of the function under test in the executed source (default ``"f"``);
                 ``"Class.method"`` reaches into a class.
``driver``       ``None`` (call the function with the arguments), or the name of a function in
                 the source called as ``driver(func, *args, **kwargs)``; it drives generators,
                 coroutines and async generators and returns a comparable result.

Results must be comparable across two separate executions of the source: plain data (numbers,
strings, bytes, tuples, lists, dicts, sets, None...), no object identities or addresses, no
ordering of sets of strings turned into lists.
"""
import glob
import importlib.util
import os
import re
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
THEME_PATTERN = "construct_cases_*.py"
VERSIONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15")

_ID_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_KEYS = {"id", "src", "calls", "min_version", "func", "driver"}


class Case(object):
    """One construct case, normalised: ``calls`` is a list of ``(args_tuple, kwargs_dict)``."""

    __slots__ = ("id", "src", "calls", "min_version", "func", "driver", "theme")

    def __init__(self, id, src, calls, min_version, func, driver, theme):
        self.id = id
        self.src = src
        self.calls = calls
        self.min_version = min_version
        self.func = func
        self.driver = driver
        self.theme = theme

    @property
    def min_version_str(self):
        return "%d.%d" % self.min_version

    def __repr__(self):
        return "Case(%r)" % (self.id,)


def _fail(where, message):
    raise ValueError("%s: %s" % (where, message))


def _normalise_call(where, call):
    if isinstance(call, tuple):
        return (call, {})
    if isinstance(call, dict) and set(call) <= {"args", "kwargs"}:
        args = call.get("args", ())
        kwargs = call.get("kwargs", {})
        if isinstance(args, tuple) and isinstance(kwargs, dict):
            return (args, dict(kwargs))
    _fail(where, "a call must be a tuple of arguments or {'args': tuple, 'kwargs': dict}, "
                 "got %r" % (call,))


def _make_case(raw, theme):
    where = "%s case %r" % (theme, raw.get("id"))
    unknown = set(raw) - _KEYS
    if unknown:
        _fail(where, "unknown keys %s" % sorted(unknown))
    case_id = raw.get("id")
    if not isinstance(case_id, str) or not _ID_RE.match(case_id):
        _fail(where, "id must match %s" % _ID_RE.pattern)
    src = raw.get("src")
    if not isinstance(src, str) or not src.strip():
        _fail(where, "src must be non-empty source text")
    src = textwrap.dedent(src).strip("\n") + "\n"
    calls = raw.get("calls")
    if not isinstance(calls, list) or not calls:
        _fail(where, "calls must be a non-empty list")
    calls = [_normalise_call(where, call) for call in calls]
    min_version = tuple(raw.get("min_version") or (3, 8))
    if "%d.%d" % min_version not in VERSIONS:
        _fail(where, "min_version %r is not one of %s" % (min_version, VERSIONS))
    func = raw.get("func") or "f"
    if not all(part.isidentifier() for part in func.split(".")):
        _fail(where, "func must be a (dotted) name, got %r" % (func,))
    driver = raw.get("driver")
    if driver is not None and not (isinstance(driver, str) and driver.isidentifier()):
        _fail(where, "driver must be None or a name, got %r" % (driver,))
    return Case(case_id, src, calls, min_version, func, driver, theme)


def _load_module(path):
    name = "_pellucid_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def theme_paths():
    return sorted(glob.glob(os.path.join(HERE, THEME_PATTERN)))


def load_all():
    """Return every case of every themed module, in a stable order; ids are checked unique."""
    cases = []
    seen = {}
    for path in theme_paths():
        theme = os.path.basename(path)[len("construct_cases_"):-len(".py")]
        module = _load_module(path)
        raw_cases = getattr(module, "CASES", None)
        if not isinstance(raw_cases, list):
            _fail(path, "module must define a list CASES")
        for raw in raw_cases:
            case = _make_case(raw, theme)
            if case.id in seen:
                _fail(path, "duplicate case id %r (also in theme %r)" % (case.id, seen[case.id]))
            seen[case.id] = theme
            cases.append(case)
    return cases
