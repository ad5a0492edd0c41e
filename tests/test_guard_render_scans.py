"""Text searches of the guard renderer: the one-pass forms find what the plain searches find."""
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pellucid.dynamo.guard_render import _WORD, _calls, _reversed_called_names

_NAMES = ["check_tensor", "dict_contains", "a", "_", "x1", "é", "tensor", "check"]
_PIECES = _NAMES + ["(", ")", " ", ".", "_", "1", "é", "\u00b7", "\u00b2", "\n", "#", "'", "x",
                    "check_tensor(", "(check_tensor", "a(", "\u0660"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16).map("".join))
@example("if not (check_tensor(L['x'])): return False  # y = dict_contains(d, k)")
@example("xcheck_tensor(a) _check_tensor( check_tensor (")
def test_reversed_call_names_agree_with_the_substring_search(text):
    called = _reversed_called_names(text)
    for name in _NAMES:
        assert _WORD.fullmatch(name)
        assert (name[::-1] in called) == _calls(text, name), (text, name)
