"""Construct cases: statement shapes written the way CPython's compiler came from them.

Each case here is a shape ``bench/fidelity.py`` found decompiled into another (equivalent) form;
``tests/test_fidelity_shapes.py`` checks that these recompile to the very same bytecode, these
cases that they still behave the same.  Format: see construct_cases.py.
"""

CASES = []


def case(id, src, calls, min_version=(3, 8), func="f", driver=None):
    CASES.append(dict(id=id, src=src, calls=calls, min_version=min_version, func=func,
                      driver=driver))


case("fidelity_method_call_on_import", r"""
import os.path as osp
import string
def f(x):
    return osp.join(string.ascii_lowercase[:x], "b"), osp.basename("a/b")
""", [(0,), (3,)])

case("fidelity_for_if_at_loop_end", r"""
def f(xs):
    out = []
    for x in xs:
        out.append(-x)
        if x % 3:
            out.append(x)
    return out
""", [([],), ([1, 2, 3, 4, 6],)])

case("fidelity_for_if_not_raise", r"""
def f(xs):
    for x in xs:
        if not isinstance(x, int):
            raise TypeError("not an int: %r" % (x,))
    return len(xs)
""", [([],), ([1, 2],), ([1, "a"],)])

case("fidelity_for_continue_then_more", r"""
def f(xs):
    out = []
    for x in xs:
        if x % 2:
            continue
        out.append(x)
    return out
""", [([],), ([1, 2, 3, 4],)])

case("fidelity_while_if_else_falls_off", r"""
def f(chunks):
    i = 0
    while i < len(chunks) - 1:
        if chunks[i + 1] == " " and chunks[i]:
            chunks[i + 1] = "  "
            i += 2
        else:
            i += 1
""", [([],), (["a", " ", "b", "c", " "],), (["", " ", "x"],)])

case("fidelity_if_else_arm_returns_then_joins", r"""
def f(a, b):
    if a:
        if b:
            return 1
    else:
        a = 2
    return a
""", [(0, 0), (0, 1), (1, 0), (1, 1), ("x", None)])

case("fidelity_if_arm_returns_then_joins", r"""
def f(a, b):
    if a:
        if b:
            return 1
        a = 3
    return a
""", [(0, 0), (0, 1), (1, 0), (1, 1)])

case("fidelity_elif_arms_return_then_join", r"""
def f(b):
    if len(b) >= 4:
        if not b[0]:
            return "x" if b[1] else "y"
        if not b[1]:
            return "z" if b[2] or b[3] else "w"
    elif len(b) == 2:
        if not b[0]:
            return "p"
        if not b[1]:
            return "q"
    return "default"
""", [(b"",), (b"\0\0\0\0",), (b"\0\1\0\0",), (b"\1\0\0\0",), (b"\1\0\0\1",), (b"\1\1\1\1",),
      (b"\0\1",), (b"\1\0",), (b"\1\1",)])

case("fidelity_if_raise_else_assign_then_tail", r"""
def f(s, kw=None):
    if isinstance(s, str):
        if s.startswith("!"):
            raise ValueError("bang", s)
    else:
        if not isinstance(s, (bytes, bytearray)):
            raise TypeError(type(s).__name__)
        s = s.decode("ascii")
    if kw is None and not s:
        return "empty"
    if kw is None:
        kw = {}
    kw["s"] = s
    return sorted(kw.items())
""", [("",), ("!a",), ("abc",), (b"xy",), (3,), ("a", {"k": 1})])

case("fidelity_while_and_condition", r"""
def f(text, limit):
    i = n = 0
    mark = ""
    while n < limit and i < len(text):
        if text[i] == "!":
            i += 1
            mark = text[i:i + 1]
            i += 1
        elif text[i] == "?":
            i += 1
            mark = ""
        else:
            i += 1
            n += 1
    return i, n, mark
""", [("", 3), ("ab!cde?fg", 3), ("abc", 0), ("a!", 5), ("??????", 2)])

case("fidelity_while_or_condition", r"""
def f(a, b):
    out = []
    while a > 0 or b > 0:
        if a > b:
            a -= 2
        else:
            b -= 1
        out.append((a, b))
    return out
""", [(0, 0), (3, 1), (1, 4), (-1, 2)])

case("fidelity_if_is_none_else", r"""
def f(x, y=None):
    if y is None:
        fmt = "%s"
    else:
        fmt = "%s/" + str(y)
    if x is not None:
        fmt = fmt + "!"
    else:
        fmt = "?" + fmt
    return fmt % (x,)
""", [(1,), (None,), (2, 3), (None, None)])

case("fidelity_tuple_assignments", r"""
def f(ai, bj, size):
    i, j = ai + size, bj + size
    x, y, z = size, ai, bj
    x, y = y, x
    z, x, y = x, y, z
    return i, j, x, y, z
""", [(1, 2, 3), (0, 0, 0), ("a", "b", "c")])

case("fidelity_tuple_assignment_cells", r"""
def f(a, b):
    def get():
        return a, b
    a, b = b, a + 1
    first = get()
    b, a = a * 2, b
    return first, get()
""", [(1, 2), ("x", "y")])

case("fidelity_elif_chain_else_raises", r"""
def f(items):
    out = []
    for tag, n in items:
        if tag == "a":
            g = [n]
        elif tag == "b":
            g = [n, n]
        elif tag == "c":
            g = []
        else:
            raise ValueError("unknown tag %r" % (tag,))
        out.extend(g)
    return out
""", [([],), ([("a", 1), ("b", 2), ("c", 3)],), ([("a", 1), ("z", 0)],)])

case("fidelity_if_else_returns_in_else", r"""
def f(x):
    if x > 0:
        y = x * 2
    else:
        return -x
    return y + 1
""", [(3,), (0,), (-4,)])

case("fidelity_if_else_both_return_last", r"""
def f(n, d):
    if d == 1:
        return str(n)
    else:
        return "%s/%s" % (n, d)
""", [(1, 1), (3, 4)])

case("fidelity_elif_chain_returns_else_none", r"""
def f(x):
    if x is None:
        return None
    elif x.get("a"):
        return "/".join(x["a"])
    elif x.get("b") not in (None, "-"):
        return x["b"]
    else:
        return None
""", [(None,), ({"a": ["p", "q"]},), ({"b": "v"},), ({"b": "-"},), ({},)])

case("fidelity_try_except_pass_else_raise", r"""
def f(g):
    try:
        g()
    except (KeyError, StopIteration):
        pass
    else:
        raise RuntimeError("ignored")
""", [(dict,), (lambda: {}["k"],), (lambda: 1 / 0,)], driver=None)

case("fidelity_for_and_test_runs_to_loop_end", r"""
def f(items, seen):
    out = []
    for x in items:
        if x in seen and x > 1:
            out.append(x)
            out.append(-x)
    return out
""", [([], ()), ([1, 2, 3, 5], (2, 5, 1))])

case("fidelity_for_and_test_raise_at_loop_end", r"""
def f(pairs):
    for a, b in pairs:
        if a is None and b is None:
            raise ValueError("both missing")
    return len(pairs)
""", [([],), ([(1, None), (None, 2)],), ([(1, 2), (None, None)],)])

case("fidelity_for_written_continue_after_and", r"""
def f(items, seen):
    out = []
    for x in items:
        if not (x in seen and x > 1):
            continue
        out.append(x)
    return out
""", [([], ()), ([1, 2, 3, 5], (2, 5, 1))])

case("fidelity_while_true_return_at_loop_end", r"""
def f(xs):
    i = 0
    while True:
        i += 1
        if xs[i] < 0:
            raise ValueError(i)
        if xs[i] == 0:
            return i
""", [([5, 1, 0],), ([5, 2, -1],)])

case("fidelity_genexpr_filter_on_its_own_line", r"""
def f(xs, other):
    return list(x for x in xs
                if x not in other)
""", [([], ()), ([1, 2, 3], (2,))])

case("fidelity_return_constant_or_expression", r"""
def f(d):
    c = d.get("k")
    return False if c is None else c == "v"
""", [({},), ({"k": "v"},), ({"k": 1},)])

case("fidelity_return_constants_on_compound_test", r"""
def f(x, y):
    return "a" if x and y else "b"
""", [(0, 1), (1, 1), (1, 0)])

case("fidelity_with_body_falls_off_function_end", r"""
import contextlib
def f(log, n):
    with contextlib.suppress(ZeroDivisionError):
        log.append(1 / n)
        log.append(n)
""", [([], 1), ([], 0)])

case("fidelity_with_in_if_arm_then_function_end", r"""
import contextlib
def f(log, n):
    if n:
        with contextlib.suppress(ZeroDivisionError):
            log.append(1 / (n - 1))
    else:
        log.append(n)
""", [([], 1), ([], 0), ([], 3)])

case("fidelity_try_finally_falls_off_function_end", r"""
def f(log, n):
    log.append("start")
    try:
        log.append(10 // n)
    finally:
        log.append("end")
""", [([], 2), ([], 0)])

case("fidelity_try_except_raise_falls_off_function_end", r"""
def f(d, key):
    try:
        del d[key]
    except KeyError:
        raise LookupError("missing: %r" % (key,))
""", [({"a": 1}, "a"), ({}, "b")])

case("fidelity_for_in_test_runs_to_loop_end", r"""
def f(lines, prefixes):
    out = []
    for line in lines:
        if line[:2] in prefixes:
            out.append(line[2:])
    return out
""", [([], ()), (["- a", "+ b", "  c"], ("  ", "+ "))])

case("fidelity_for_not_in_test_runs_to_loop_end", r"""
def f(items, seen):
    for x in items:
        if x not in seen:
            seen.append(x)
    return seen
""", [([], []), ([1, 2, 1, 3], [2])])

case("fidelity_for_written_continue_on_in_test", r"""
def f(items, skip):
    out = []
    for x in items:
        if x in skip:
            continue
        out.append(x)
    return out
""", [([], ()), ([1, 2, 3], (2,))])

case("fidelity_for_test_then_break_at_loop_end", r"""
def f(seqs):
    for s1 in seqs:
        cand = s1[0]
        for s2 in seqs:
            if cand in s2[1:]:
                cand = None
                break
        else:
            break
    return cand
""", [([[1, 2], [2, 3]],), ([[1], [2]],), ([[1, 2], [2, 1]],)])

case("fidelity_or_test_ending_in_membership", r"""
def f(names):
    seen = set()
    out = []
    for i, name in enumerate(names):
        if (not name.isidentifier()
                or name.startswith("_")
                or name in seen):
            name = "_%d" % i
        out.append(name)
        seen.add(name)
    return out
""", [([],), (["a", "b", "a", "_c", "1x"],)])

# ``a if not c else b``: the false arm of the test laid out first (textwrap.dedent, 3.14).
case("fidelity_conditional_expression_on_negated_test", r"""
def f(lines, margin):
    return [l[margin:] if not l.isspace() else '' for l in lines], \
        (margin if not lines else -margin)
""", [([], 0), (["  a", "   ", " b"], 1), (["x"], 0)])

# A guard whose body returns, before the rest of the function: both arms end in the closing
# ``return None`` that 3.10+ copy into each; the arm laid out first is the ``if``'s body.
case("fidelity_guard_returns_before_rest", r"""
def f(obj, out):
    if not len(obj):
        out.append(repr(obj))
        return
    cls = obj.__class__
    out.append(cls.__name__ + '(')
    out.extend(sorted(obj))
    out.append(')')
""", [([], []), ([3, 1], []), ({'a': 1}, [])])

# ``while True: ...; if not s: break; ...`` where 3.10+ copy the closing ``return`` into the loop
# for the ``break``: a guard returning from the loop, not ``if s: <rest>; continue``.
case("fidelity_loop_break_to_copied_return", r"""
def f(chunks, out):
    while True:
        s = chunks.pop() if chunks else b''
        if not s:
            break
        while len(s) < 4 and chunks:
            s += chunks.pop()
        out.append(s)
""", [([], []), ([b'a', b'bcdef', b'gh'], [])])

# A method whose ``__class__`` cell only ``super()`` reads, ending in an ``if``: the declaration
# of the free variable must not give the implicit ``return None`` a line of its own (3.11+ copy a
# return without a line into each arm).
case("fidelity_super_method_ending_in_if", r"""
class D(dict):
    def discard(self, key):
        'Remove key if present.'
        if key in self:
            super().__delitem__(key)
f = D.discard
def run(func, key):
    d = D(a=1, b=2)
    func(d, key)
    return sorted(d)
""", [("a",), ("z",)], driver="run")

# ``if``/``else`` whose body is the arm the (compound or negated) test falls into: written in the
# order the compiler laid the arms out, ``if not a or b: <first> else: <second>``.
case("fidelity_if_else_arm_laid_out_first", r"""
def f(section, default, sections):
    if not section or section == default:
        found = 'defaults'
    else:
        try:
            found = sections[section]
        except KeyError:
            raise ValueError(section) from None
    return found
""", [("", "d", {}), ("d", "d", {}), ("s", "d", {"s": 1}), ("t", "d", {"s": 1})])

case("fidelity_if_not_else_in_loop", r"""
def f(items, allow):
    out = []
    for key, value in items:
        if value is not None or not allow:
            value = '=' + str(value).replace('\n', '\n\t')
        else:
            value = ''
        if not key:
            key = '?'
        else:
            key = key.upper()
        out.append(key + value)
    return out
""", [([], True), ([("a", None), ("", 1), ("b", "x\ny")], True), ([("a", None)], False)])

# ``if c: raise ... elif d: ...``: 3.8/3.9 keep the unreachable jump that closed the body over
# the ``elif``/``else``, so the clause is written as one (not as a guard and a new ``if``).
case("fidelity_elif_after_raise", r"""
def f(n, data):
    if n < 1:
        raise ValueError('empty')
    elif n == 1:
        x = data[0]
        if x < 0:
            raise ValueError(x)
        return x
    m = n + 1
    return m
""", [(0, []), (1, [5]), (1, [-5]), (3, [1, 2, 3])])

case("fidelity_else_after_return_both_leave", r"""
def f(a, b):
    if isinstance(b, int):
        if b == 1:
            return a
        else:
            return float(a) ** float(b)
    else:
        return float(a) ** b
""", [(2, 1), (2, 3), (2, 0.5)])

# ``except E: pass`` and ``return x`` after the statement: 3.11+ copy the ``return x`` behind the
# clause's POP_EXCEPT.  Written inside the clause it would load ``x`` before the POP_EXCEPT.
case("fidelity_return_after_try_copied_into_clause", r"""
def f(obj, flag):
    try:
        obj.__final__ = flag
    except (AttributeError, TypeError):
        pass
    return obj
""", [({}, True), (type("T", (), {"__repr__": lambda s: "T"})(), False)])

case("fidelity_try_returns_clause_falls_to_return", r"""
def f(d, key, default=None):
    try:
        return d[key]
    except KeyError:
        d[key] = default
    return default
""", [({}, "a", 1), ({"a": 2}, "a", 3)])

# A ``return x`` written in the clause stays there (loaded before the POP_EXCEPT).
case("fidelity_return_in_clause_stays", r"""
def f(obj):
    try:
        obj.x = 1
    except AttributeError:
        return obj
    return 2
""", [(1,), (type("T", (), {"__repr__": lambda s: "T"})(),)])
