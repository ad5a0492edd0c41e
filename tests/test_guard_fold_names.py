"""Names ``guard_fold`` gives to values read several times are Python names: the folded guard
still compiles (a value read through ``.__class__`` was once bound to ``class``)."""
import keyword

import pytest

from pellucid.dynamo.guard_fold import fold

GUARD = '''def g(L, G):
    try:
        # L['self']  (FuyuModel, via FrameLocalsGuardAccessor(key='self', framelocals_idx=0))
        if not (L['self'] is not None): return False
        # L['self'].__class__  (type, via GetAttrGuardAccessor(__class__))
        if not (check_obj_id(L['self'].__class__, 7)): return False
        # L['self'].__class__.__name__  (str, via GetAttrGuardAccessor(__name__))
        if not (type(L['self'].__class__.__name__) is str and L['self'].__class__.__name__ == 'M'): return False
        # L['self'].__class__.__{word}__  (str, via GetAttrGuardAccessor(__{word}__))
        if not (L['self'].__class__.__{word}__ == 'x' and L['self'].__class__.__{word}__ != 'y'): return False
        return True
    except Exception:
        return False
'''


@pytest.mark.parametrize("word", ["class", "if", "import", "lambda", "None", "async"])
def test_folded_names_are_not_keywords(word):
    source = GUARD.replace("{word}", word)
    folded = fold(source)[0]
    compile(folded, "<guard>", "exec")  # raised SyntaxError for ``class = ...``
    assigned = [line.split("=", 1)[0].strip() for line in folded.splitlines()
                if " = " in line and not line.lstrip().startswith(("#", "if "))]
    assert assigned, folded  # (something was named: the test exercises the naming)
    assert not any(keyword.iskeyword(name) for name in assigned), folded
