"""A walk's stop set that holds some big, fixed groups of blocks without copying them.

The structuring walks carry the blocks where they must stop as a frozenset and extend it with
``stop | {merge}`` at every ``if``; inside an ``except`` clause's probe it also holds every
block after the ``try`` statement (:meth:`~pellucid.decompiler.protected.Protected._beyond_handler`),
so each ``if`` copied a set as big as the function: quadratic in functions of many ``try``
statements.  :class:`StopSet` keeps such groups by reference and copies only the small part.
"""
from typing import AbstractSet, Any, FrozenSet, Iterator, Optional, Tuple


class StopSet:
    """``small`` plus each group of ``groups`` (a frozenset and one block it leaves out).

    It answers ``in``, ``|`` (either side, with sets or other stop sets), ``len`` and iteration
    as the frozenset of all its blocks would.

    >>> s = StopSet(frozenset(), ((frozenset({1, 2, 3}), 2),))
    >>> [2 in s, 3 in s, 4 in s | {4}, sorted(frozenset({5}) | s)]
    [False, True, True, [1, 3, 5]]
    """

    __slots__ = ("small", "groups")

    def __init__(self, small: FrozenSet[Any],
                 groups: Tuple[Tuple[FrozenSet[Any], Optional[Any]], ...]) -> None:
        self.small = small
        self.groups = groups

    def __contains__(self, item: Any) -> bool:
        if item in self.small:
            return True
        for members, left_out in self.groups:
            if item in members and item is not left_out:
                return True
        return False

    def _union(self, other: Any) -> "StopSet":
        if isinstance(other, StopSet):
            groups = self.groups + tuple(g for g in other.groups if not any(
                g[0] is h[0] and g[1] is h[1] for h in self.groups))
            return StopSet(self.small | other.small, groups)
        if isinstance(other, (set, frozenset)):
            return StopSet(self.small | other, self.groups)
        return NotImplemented  # type: ignore[return-value]

    __or__ = _union
    __ror__ = _union

    def _all(self) -> FrozenSet[Any]:
        out = set(self.small)
        for members, left_out in self.groups:
            out.update(b for b in members if b is not left_out)
        return frozenset(out)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __bool__(self) -> bool:
        return bool(self.small) or any(len(m) > (left_out in m) for m, left_out in self.groups)


def group_stop(members: FrozenSet[Any], left_out: Optional[Any] = None) -> AbstractSet[Any]:
    """The stop set of ``members`` except ``left_out``, sharing ``members``."""
    return StopSet(frozenset(), ((members, left_out),))  # type: ignore[return-value]
