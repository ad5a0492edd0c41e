"""``MatchBuilder._may_start_case``: the shortcut that skips decoding a pattern at a ``COPY 1``
must only skip where the decoding would have found none."""
import os
import sys
import textwrap
import types

import pytest

from op_comparisons import ops_compared  # (tests/ is on sys.path under pytest)

from pellucid.decompiler import match

HERE = os.path.dirname(os.path.abspath(__file__))


def test_decoded_ops_are_exactly_the_ops_decode_has_a_case_for():
    # An op _decode learns to handle but _DECODED_OPS does not name would be taken for one that
    # fails every pattern, and the shortcut would skip patterns using it.
    assert ops_compared(match.MatchBuilder._decode, match, "_DECODED_OPS") == set(match._DECODED_OPS)
    assert match._INERT_OPS <= match._DECODED_OPS
    assert not set(match._MATCH_OPS) & match._INERT_OPS
    assert not {op for op in match._INERT_OPS if "JUMP" in op}


def _codes(c):
    yield c
    for k in c.co_consts:
        if isinstance(k, types.CodeType):
            yield from _codes(k)


def _corpus():
    sys.path.insert(0, HERE)
    try:
        import construct_cases_match as cases
    finally:
        sys.path.remove(HERE)
    srcs = [c["src"] for c in cases.CASES if sys.version_info[:2] >= c["min_version"]]
    srcs.append(textwrap.dedent("""
        def g(self, a):
            x = (t1 := self._m)['a']._p['w']
            y = t1['b']
            (t2 := f)(x, y)
            del t1
            match a:
                case [b, c] if (d := b):
                    return d
                case {'k': e, **r}:
                    return r
                case P(q, z=w) | Q(q, w):
                    return q
            return (y, x)

        def h(o, n, k):
            a = b = o.f(n)
            o.x += (m := n[k])
            o[k] += 1
            if (v := o.get(k)) is not None and 0 < v < m:
                return a, b, v
            while (w := n.pop()):
                o.y = z = w[0]['k'].q
            return z
    """))
    return srcs


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match statements are 3.10+")
def test_skipped_copies_are_never_case_starts(monkeypatch):
    from pellucid.decompiler.body import BodyDecompiler
    from pellucid.decompiler.fallback import body_or_fallback
    from pellucid.decompiler.constants import ConstantPool
    from pellucid.errors import DecompileError

    original = BodyDecompiler.try_match
    checked = {"skipped": 0, "decoded": 0}

    def try_match(self, block, k, stack, ctx, stop, out):
        ins = block.instrs[k]
        if stack and ins.op == "COPY" and ins.arg == 1 and not self._may_start_case(block, k):
            # what the decoding says without the shortcut (it changes nothing when it declines)
            self._may_start_case = lambda b, i: True
            try:
                assert original(self, block, k, stack, ctx, stop, out) is False
            finally:
                del self._may_start_case
            checked["skipped"] += 1
        elif stack and ins.op == "COPY" and ins.arg == 1:
            checked["decoded"] += 1
        return original(self, block, k, stack, ctx, stop, out)

    monkeypatch.setattr(BodyDecompiler, "try_match", try_match)
    for src in _corpus():
        module = compile(src, "<case>", "exec")
        for code in _codes(module):
            try:
                body_or_fallback(code, ConstantPool())
            except DecompileError:
                pass  # (a case the decompiler cannot do, as without the shortcut)
    assert checked["skipped"] >= 8 and checked["decoded"] > 20, checked
