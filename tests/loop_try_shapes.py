"""Programs with loops inside ``try``/``with`` statements and ``try``/``with`` statements inside
loops, generated systematically: loop kind x enclosing statement x enclosed statement x where a
``break``/``continue``/``return`` sits.  Used by ``test_loop_try_shapes.py`` (a sample, on every
version) and ``bench/loop_try_shapes.py`` (all of them).

Each program is a function ``f(items, log)`` driven over a few item lists.  An item says what the
iteration does: ``"a"`` nothing special, ``"B"``/``"C"``/``"R"`` break/continue/return where the
shape put that statement outside a clause, ``"EB"``/``"EC"``/``"ER"`` raise ``KeyError`` (caught
by the enclosed statement's ``except`` clause) and break/continue/return there, ``"FB"``/``"FC"``/
``"FR"`` the same in its ``finally`` clause, ``"E"`` a caught ``KeyError``, ``"V"`` a
``ValueError`` nothing inside the loop catches.  Every path appends to ``log``.

This module imports nothing but the standard library (the bench loads it by path).
"""
import itertools
import textwrap
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

# How the loop takes its items (the ``while True`` one leaves by a break of its own).
LOOPS: Dict[str, Tuple[str, str]] = {
    "while_true": ("while True:\n    if not items:\n        break\n    x = items.pop(0)\n", ""),
    "while_cond": ("while items:\n    x = items.pop(0)\n", ""),
    "for": ("for x in items:\n", ""),
    "for_else": ("for x in items:\n", "else:\n    log.append('loop else')\n"),
    "while_else": ("while items:\n    x = items.pop(0)\n", "else:\n    log.append('loop else')\n"),
}

# Statements around the loop (``outer``) or inside its body (``inner``).  ``{body}`` is where the
# enclosed code goes; ``{handler}``/``{orelse}``/``{final}`` take the exits placed there.
STATEMENTS: Dict[str, str] = {
    "none": "{body}",
    "try_except": "try:\n{body}except KeyError:\n    log.append('caught')\n{handler}",
    "try_finally": "try:\n{body}finally:\n    log.append('finally')\n{final}",
    "try_except_finally": ("try:\n{body}except KeyError:\n    log.append('caught')\n{handler}"
                           "finally:\n    log.append('finally')\n{final}"),
    "try_except_else": ("try:\n{body}except KeyError:\n    log.append('caught')\n{handler}"
                        "else:\n    log.append('else')\n{orelse}"),
    "with": "with CM(log):\n{body}",
}
# Around the loop, an exception the loop lets out is caught (or cleaned up) there.
OUTER: Dict[str, str] = {
    "none": "{body}",
    "try_except": "try:\n{body}except ValueError:\n    log.append('outer caught')\n",
    "try_finally": "try:\n{body}finally:\n    log.append('outer finally')\n",
    "try_except_else": ("try:\n{body}except ValueError:\n    log.append('outer caught')\n"
                        "else:\n    log.append('outer else')\n"),
    "with": "with CM(log):\n{body}",
}

EXITS = {"break": "B", "continue": "C", "return": "R"}
# Where an exit can sit, and which enclosed statements have that place.
PLACES: Dict[str, Tuple[str, ...]] = {
    "loop": tuple(STATEMENTS),  # in the loop body, before the enclosed statement
    "body": tuple(s for s in STATEMENTS if s != "none"),  # in its try/with body
    "handler": ("try_except", "try_except_finally", "try_except_else"),
    "orelse": ("try_except_else",),
    "final": ("try_finally", "try_except_finally"),
    "after": tuple(STATEMENTS),  # in the loop body, after the enclosed statement
}

PRELUDE = '''
class CM:
    def __init__(self, log):
        self.log = log
    def __enter__(self):
        self.log.append("enter")
        return self
    def __exit__(self, tp, value, tb):
        self.log.append(("exit", None if tp is None else tp.__name__))
        return False
'''

INPUTS = [
    ["a", "B", "a"],
    ["a", "C", "a"],
    ["R", "a"],
    ["a", "E", "a"],
    ["EB", "a"],
    ["EC", "a"],
    ["ER", "a"],
    ["FB", "a"],
    ["FC", "a"],
    ["FR", "a"],
    ["a", "V", "a"],
    [],
]


class Shape(NamedTuple):
    id: str
    src: str


def _indent(text: str, n: int = 1) -> str:
    return textwrap.indent(text, "    " * n)


def _exit_code(kind: str, prefix: str) -> str:
    stmt = "return log" if kind == "return" else kind
    return "if x == %r:\n    log.append(%r)\n    %s\n" % (prefix + EXITS[kind], kind, stmt)


def _program(loop: str, outer: str, inner: str, exits: Tuple[Tuple[str, str], ...]) -> str:
    at: Dict[str, str] = {p: "" for p in PLACES}
    for kind, place in exits:
        prefix = {"handler": "E", "final": "F"}.get(place, "")
        at[place] += _exit_code(kind, prefix)
    body = "log.append(('item', x))\nif x[:1] == 'E':\n    raise KeyError(x)\nif x == 'V':\n" \
        "    raise ValueError(x)\n" + at["body"]
    stmt = STATEMENTS[inner]
    if inner == "none":
        inner_code = body
    else:
        inner_code = stmt.format(body=_indent(body), handler=_indent(at["handler"]),
                                 orelse=_indent(at["orelse"]), final=_indent(at["final"]))
    head, tail = LOOPS[loop]
    loop_body = at["loop"] + inner_code + at["after"] + "log.append('next')\n"
    loop_code = head + _indent(loop_body) + tail + "log.append('after loop')\n"
    outer_code = loop_code if outer == "none" else OUTER[outer].format(body=_indent(loop_code))
    return "def f(items, log):\n" + _indent(outer_code + "log.append('end')\nreturn log\n")


def shapes() -> Iterator[Shape]:
    """Every shape, in a fixed order."""
    single = [((k, p),) for k in EXITS for p in PLACES]
    pairs = [(("break", p), ("continue", q)) for p in PLACES for q in PLACES if p != q]
    for loop, outer, inner in itertools.product(LOOPS, OUTER, STATEMENTS):
        for exits in [()] + single + pairs:
            if any(inner not in PLACES[p] for _, p in exits):
                continue
            name = "%s__%s__%s__%s" % (loop, outer, inner,
                                       "_".join("%s_%s" % e for e in exits) or "no_exit")
            yield Shape(name, PRELUDE + _program(loop, outer, inner, exits))


def sample(every: int) -> List[Shape]:
    """Every ``every``-th shape (a deterministic spread over all loop/statement kinds)."""
    return [s for k, s in enumerate(shapes()) if k % every == 0]


def run(func, items: List[str]) -> Tuple[str, object, List[object]]:
    """What ``func`` does on ``items``: ("return", value, log) or ("raise", type, log)."""
    log: List[object] = []
    try:
        value = func(list(items), log)
    except Exception as exc:  # the program's own ValueError/KeyError
        return ("raise", type(exc).__name__, log)
    return ("return", value is log, log)


def find(name: str) -> Optional[Shape]:
    for s in shapes():
        if s.id == name:
            return s
    return None
