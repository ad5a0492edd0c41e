"""Text searches of the guard renderer: the one-pass forms find what the plain searches find."""
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pellucid.dynamo.guard_render import _WORD, _calls, _reversed_called_names

_NAMES = ["check_tensor", "dict_contains", "abcdefgh", "tensor_x", "_check_tensor", "check_tensors"]
_PIECES = _NAMES + ["a", "_", "x1", "é", "tensor", "check", "Check", "A", "abcdefg", "hasattr",
                    "(", ")", " ", ".", "_", "1", "é", "\u00b7", "\u00b2", "\n", "#", "'", "x",
                    "check_tensor(", "(check_tensor", "a(", "\u0660"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16).map("".join))
@example("if not (check_tensor(L['x'])): return False  # y = dict_contains(d, k)")
@example("xcheck_tensor(a) _check_tensor( check_tensor (")
@example("Check_tensor( check_tensor1( écheck_tensor( check_tensoré( abcdefg( abcdefgh(")
def test_reversed_call_names_agree_with_the_substring_search(text):
    called = _reversed_called_names(text)
    for name in _NAMES:
        assert _WORD.fullmatch(name)
        assert (name[::-1] in called) == _calls(text, name), (text, name)


def test_every_helper_name_is_one_the_one_pass_form_reports():
    # (assemble searches for any other name substring by substring: right, only slower)
    from pellucid.dynamo import guard_helpers
    assert all(_WORD.fullmatch(name) for name in guard_helpers.__all__)


def test_builtin_lookup_is_getattr():
    import builtins

    from pellucid.dynamo.guard_render import _MISSING, _builtin
    for name in ["len", "dict", "obj_id_5", "L", "__dict__", "__class__", "__doc__", "__name__",
                 "__import__", "__build_class__", "x", "print", "Ellipsis", "_", "__spec__"]:
        assert _builtin(name) is getattr(builtins, name, _MISSING), name
