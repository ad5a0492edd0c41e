"""3.8's finally/with subroutine opcodes are rewritten into 3.9's duplicated layout (3.8 only)."""
import dis
import sys

import pytest

pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 8), reason="3.8 bytecode only")

LEGACY = {"BEGIN_FINALLY", "CALL_FINALLY", "POP_FINALLY", "END_FINALLY",
          "WITH_CLEANUP_START", "WITH_CLEANUP_FINISH"}
LOG = []


class CM:
    def __enter__(self):
        LOG.append("enter")
        return self

    def __exit__(self, *exc):
        LOG.append(("exit", exc[0]))
        return False


def try_finally_return(x):
    try:
        if x:
            return x + 1
    finally:
        LOG.append("fin")
    return 0


def loop_with(xs):
    for x in xs:
        with CM():
            if x == 2:
                break
            if x == 1:
                continue
            LOG.append(x)
    return len(LOG)


def except_as(x):
    try:
        1 / x
    except ZeroDivisionError as e:
        return str(e)
    return "ok"


FUNCS = [try_finally_return, loop_with, except_as]
ROUND_TRIP = [try_finally_return, loop_with, except_as]


@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.__name__)
def test_no_subroutine_opcodes_left(func):
    from pellucid.bytecode.legacy_finally import rewrite
    ops = {i.opname for i in rewrite(list(dis.get_instructions(func)))}
    assert not ops & LEGACY


@pytest.mark.parametrize("func", ROUND_TRIP, ids=lambda f: f.__name__)
@pytest.mark.parametrize("arg", [0, 1, [0, 1, 2, 3]])
def test_round_trip(func, arg):
    import pellucid

    def run(f):
        del LOG[:]
        try:
            result = ("ret", f(arg))
        except Exception as ex:  # noqa: BLE001
            result = ("exc", type(ex))
        return result, list(LOG)

    expected = run(func)
    clone = type(func)(pellucid.recompile(func), func.__globals__, func.__name__)
    assert run(clone) == expected
