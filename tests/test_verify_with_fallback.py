"""The verifier accepts the fallback's ``with`` (its prologue, ``pellucid.verify.idioms``, and the
calls of the bound ``__exit__``) only as the interpreter runs it.

A ``with`` decompiled by the fallback is verified as it is; edited so that it runs differently --
the special methods checked in the other order (3.14+ looks ``__exit__`` up first), another
message, ``__enter__`` bound as the exit, the exit called with other arguments, its answer read
the other way round -- it is refused.  Each edit is first shown to change what the function does
on one of the inputs, so a refusal is needed, not just allowed.
"""
import builtins
import re
import sys

import pytest

import pellucid
from pellucid.decompiler.fallback import MARKER
from pellucid.verify import check_equivalent


class Quiet:
    """Suppresses what its body raises."""

    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return 7

    def __exit__(self, tp, value, tb):
        self.log.append(("exit", tp.__name__ if tp else None, value is not None, tb is not None))
        return True


class Loud(Quiet):
    def __exit__(self, tp, value, tb):
        Quiet.__exit__(self, tp, value, tb)
        return False


class OnlyExit:
    def __exit__(self, *exc):
        return False


class OnlyEnter:
    def __enter__(self):
        return 1


class Both(OnlyExit, OnlyEnter):
    pass


class Outer:
    class NoExit:  # (3.14+ names it by module and qualified name)
        def __enter__(self):
            return 2


SOURCE = """
def f(make, log, fail):
    with make(log) as v:
        log.append(v)
        if fail:
            raise ValueError(v)
        log.append("body")
    return log
"""

INPUTS = [
    (Quiet, False), (Quiet, True), (Loud, False), (Loud, True),
    (lambda log: 1, False), (lambda log: OnlyExit(), False), (lambda log: OnlyEnter(), False),
    (lambda log: Both(), False), (lambda log: Outer.NoExit(), False),
]


def _function(src):
    ns = {"__name__": "with_fallback", "__builtins__": builtins}
    exec(compile(src, "<with fallback>", "exec", dont_inherit=True), ns)
    return ns["f"]


def _outcome(fn, make, fail):
    log = []
    try:
        result = ("ok", fn(make, log, fail) is log)
    except BaseException as e:  # noqa: BLE001
        result = ("raised", type(e).__name__, str(e))
    return result, log


def _fallback_text(monkeypatch):
    monkeypatch.setenv("PELLUCID_FORCE_FALLBACK", "1")
    text = pellucid.decompile(_function(SOURCE))
    assert MARKER in text
    return text


def _swap_checks(text):
    """The two ``if not hasattr(type(m), ...): raise ...`` checks of the prologue swapped."""
    pattern = re.compile(r"( +if not __pellucid_builtins\.hasattr\(__pellucid_builtins\.type\("
                         r"__pellucid_m\), '__\w+__'\):\n +raise [^\n]*\n)")
    checks = pattern.findall(text)
    assert len(checks) == 2, text
    return text.replace(checks[0] + checks[1], checks[1] + checks[0], 1)


def _exit_bound_to_enter(text):
    return text.replace("__pellucid_m).__exit__.__get__(", "__pellucid_m).__enter__.__get__(", 1)


def _other_message(text):
    first = re.search(r"raise __pellucid_builtins\.(TypeError|AttributeError)\(", text)
    assert first, text
    if first.group(1) == "AttributeError":  # (up to 3.10: AttributeError(name))
        return re.sub(r"AttributeError\('(__\w+__)'\)", r"AttributeError('\1 ')", text, count=1)
    return text.replace(" protocol", " protocols", 1)


def _exit_without_type(text):
    """WITH_EXCEPT_START's call: the exception where its type goes."""
    return re.sub(r"\(\s*__pellucid_builtins\.type\((__pellucid_s\d+)\), ", r"(\1, \1, ", text,
                  count=1)


def _exit_answer_inverted(text):
    """The exit's answer read the other way round (suppress when it says no)."""
    return re.sub(r"if (__pellucid_s\d+):\n", r"if not \1:\n", text, count=1)


MUTATIONS = [_swap_checks, _exit_bound_to_enter, _other_message, _exit_without_type,
             _exit_answer_inverted]


def test_fallback_with_is_verified(monkeypatch):
    original = _function(SOURCE)
    new = _function(_fallback_text(monkeypatch))
    verdict = check_equivalent(original.__code__, new.__code__)
    assert verdict.ok, verdict.reason
    for make, fail in INPUTS:
        assert _outcome(new, make, fail) == _outcome(original, make, fail)


@pytest.mark.parametrize("mutate", MUTATIONS, ids=lambda m: m.__name__.strip("_"))
def test_fallback_with_edited_is_refused(monkeypatch, mutate):
    original = _function(SOURCE)
    text = _fallback_text(monkeypatch)
    edited = mutate(text)
    assert edited != text, "the edit found nothing to change"
    mutant = _function(edited)
    assert any(_outcome(mutant, make, fail) != _outcome(original, make, fail)
               for make, fail in INPUTS), "the edit changes nothing observable"
    verdict = check_equivalent(original.__code__, mutant.__code__)
    assert not verdict.ok, "Python %d.%d accepted:\n%s" % (sys.version_info[:2] + (edited,))
