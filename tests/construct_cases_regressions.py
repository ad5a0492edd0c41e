"""Construct cases: reductions of swap-suite regressions (tests/swap).

Each case is a minimal, self-contained reduction of a stdlib function whose recompiled code made
one of CPython's own unit tests fail in the swap suite; the comment above it names the stdlib
function, the Python versions where the swap regression was seen and what goes wrong.

Format: see construct_cases.py.
"""

CASES = []


def case(id, src, calls, min_version=(3, 8), func="f", driver=None):
    CASES.append(dict(id=id, src=src, calls=calls, min_version=min_version, func=func,
                      driver=driver))


# ipaddress._BaseAddress.__eq__ / _BaseNetwork.__eq__ (3.8, 3.11, 3.13): a `return` of a
# short-circuit `and` expression inside a try body is hoisted after the try statement (the body
# becomes `pass`), so the AttributeError is no longer caught by the handler.
case("regr_try_return_boolop", r"""
def f(a, b):
    try:
        return a.real == b.real and a.imag == b.imag
    except AttributeError:
        return "not implemented"
""", [(1, 1), (1, 2), (1j, 1), (1, "s"), ("s", 1)])

# ContextDecorator.__call__.inner (contextlib, 3.8, 3.11, 3.13): `with cm: return call()` -- the
# return is moved after the with statement, so the call runs outside the context manager.
case("regr_with_return_call_inside", r"""
class CM:
    def __init__(self, log):
        self.log = log
    def __enter__(self):
        self.log.append("enter")
    def __exit__(self, *exc):
        self.log.append("exit")

def g(log):
    log.append("body")
    return len(log)

def f(log):
    with CM(log):
        return g(log)
""", [([],), (["x"],)])

# AsyncContextDecorator.__call__.inner (contextlib, 3.11, 3.13): the same with `async with` and
# `return await call()`.
case("regr_async_with_return_await_inside", r"""
class Ready:
    def __init__(self, value):
        self.value = value
    def __await__(self):
        received = yield ("suspend", self.value)
        return self.value if received is None else received

def run(coro):
    steps = []
    try:
        while True:
            steps.append(coro.send(None))
    except StopIteration as stop:
        return steps, stop.value

def drive(f, *args):
    return run(f(*args))

class ACM:
    def __init__(self, log):
        self.log = log
    async def __aenter__(self):
        self.log.append("aenter")
    async def __aexit__(self, *exc):
        self.log.append("aexit")

async def g(log):
    log.append("body")
    return await Ready(len(log))

async def f(log):
    async with ACM(log):
        return await g(log)
""", [([],), (["x"],)], driver="drive")

# urllib.parse.urlencode (3.8, 3.11): try/except/else as the last statement of an if/else branch
# inside a for loop -- the `else:` clause is lost (its body also runs after the handler ran),
# here iterating over a non-iterable.
case("regr_try_except_else_in_loop_branch", r"""
def f(items):
    out = []
    for v in items:
        if isinstance(v, str):
            out.append(v)
        else:
            try:
                len(v)
            except TypeError:
                out.append(("scalar", v))
            else:
                for e in v:
                    out.append(e)
    return out
""", [(["ab", [1, 2]],), (["ab", 5, (3,)],), ([7],)])

# argparse.HelpFormatter._get_actions_usage_parts (3.13 stdlib; the bug is on every version): a
# loop body starting with `if ...: continue` followed by try / except: continue / else: -- the
# handler's `continue` becomes `pass` and the else-clause runs after it (UnboundLocalError).
case("regr_guard_continue_then_try_except_continue_else", r"""
def f(groups, actions):
    out = {}
    for group in groups:
        if not group:
            continue
        try:
            start = actions.index(group[0])
        except ValueError:
            continue
        else:
            out[start] = group
    return sorted(out.items())
""", [([["b"], [], ["a", "c"]], ["a", "b", "c"]), ([["z"], ["a"]], ["a"])])

# argparse.ArgumentParser.parse_known_intermixed_args (3.13 only): a for loop whose body is an
# `if` statement, inside try/finally -- the whole loop body is dropped (`for x in items: pass`).
case("regr_for_if_body_in_try_finally", r"""
def f(items, log):
    try:
        for x in items:
            if x > 1 and x < 5:
                log.append(x)
    finally:
        log.append("fin")
    return log
""", [([0, 2, 3, 9], []), ([], [])])

case("regr_for_if_body_in_try_finally_simple_test", r"""
def f(items, log):
    try:
        for x in items:
            if x > 1:
                log.append(x)
    finally:
        log.append("fin")
    return len(log)
""", [([0, 2, 3, 9], []), ([], [])])

# typing.NamedTupleMeta.__new__ (3.13 stdlib: every NamedTuple class creation fails, the whole
# test_typing module fails to import; the bug is on 3.11/3.13, 3.8 decompiles it correctly):
# try / except: pass / else: inside an elif branch in a for loop -- the else-clause is lost and
# its body runs after the handler (UnboundLocalError).
case("regr_try_except_pass_else_in_loop_elif", r"""
def f(d, out):
    for key, val in d.items():
        if key == "bad":
            raise KeyError(key)
        elif key != "skip":
            try:
                m = val.bit_length
            except AttributeError:
                pass
            else:
                out.append((key, m()))
    return out
""", [({"a": 5, "skip": 1, "b": "s", "c": 8}, []), ({"x": "y"}, []), ({"bad": 1}, [])])

# 3.12+ copies a small ``return`` into both arms of a chained comparison; folding the arms back
# into ``return a < b() < c`` once evaluated b() a second time (found while fixing 3.13).
case("regr_return_chained_comparison_side_effect", r"""
def f(a, c, log):
    def b():
        log.append("b")
        return 2
    return a < b() < c, log
""", [(1, 3, []), (3, 1, []), (1, 1, [])])

# Found by the fuzzed round trips (tests/test_fuzz.py, bench/fuzz.py; all versions): float
# constants without a literal repr (inf, -inf, nan) are written as ``float('inf')``, a call of
# whatever ``float`` names where the code runs -- here a parameter, so the recompiled function
# returns strings.  (In module code the extra global name is also a shape difference.)
case("regr_fuzz_inf_constant_float_shadowed", r"""
def f(float):
    return 1e999, -1e999, 1e999 - 1e999 != 0
""", [(str,), (int,)])

# Found by the fuzzed round trips (all versions): an annotated assignment in a class body
# (`y: int = 2`) is decompiled as `__annotations__['y'] = int` without the class's own
# `__annotations__` dict (SETUP_ANNOTATIONS), so the recompiled class body looks the name up in
# the module and raises NameError (or writes into the module's annotations).
case("regr_fuzz_class_variable_annotation", r"""
def f(v):
    class C:
        y: int = v
        z: "later"
    return C.y, C.__annotations__
""", [(2,), ("s",)])

# Found by the fuzzed round trips (all versions): an assignment to an empty target list
# (`[] = x`, `() = x`) is an UNPACK_SEQUENCE 0 that raises for a non-empty or non-iterable x;
# it is decompiled as `pass`, so the recompiled function never raises.
case("regr_fuzz_empty_target_list_assignment", r"""
def f(x, y):
    [] = x
    () = y
    return "empty"
""", [([], ()), ([1], ()), ((), "ab"), (5, ())])

# Found by the fuzzed round trips (all versions): `for [] in x` (empty target list) has no
# structured form ("for loop without a target assignment") and takes the fallback; the
# fallback must still unpack every item.
case("regr_fuzz_for_empty_target_list", r"""
def f(x):
    n = 0
    for [] in x:
        n += 1
    return n
""", [([],), ([(), []],), ([(), [1]],), ([5],)])

# Found by the fuzzed round trips: `assert <false constant>` compiles to an unconditional raise
# of the builtin AssertionError (LOAD_ASSERTION_ERROR), which is decompiled as
# `raise AssertionError` -- a lookup of whatever `AssertionError` names where the code runs
# (here a parameter); the original ignores such shadowing.  On 3.8 the output declares
# `global AssertionError`, which does not compile next to the parameter.
case("regr_fuzz_assert_false_constant_shadowed", r"""
def f(AssertionError):
    assert 0
""", [(KeyError,), (ValueError,)])

# Found by the fuzzed round trips: a try/finally whose finally block holds a `with`, as the last
# statement of the function ("finally body not repeated on the normal path").  3.8-3.10: no
# structured form and the fallback refuses legacy handlers, so decompile raises; 3.11+: the
# fallback's hand-written `with` protocol raises AttributeError ('__enter__') where the
# interpreter raises TypeError ("does not support the context manager protocol").
case("regr_fuzz_with_in_final_finally", r"""
class CM:
    def __init__(self, log):
        self.log = log
    def __enter__(self):
        self.log.append("enter")
    def __exit__(self, *exc):
        self.log.append("exit")

def f(cm, log):
    try:
        log.append(1)
    finally:
        with cm:
            log.append(2)

def drive(func, real, log):
    return func(CM(log) if real else None, log), log
""", [(True, []), (False, [])], driver="drive")

# Found by the fuzzed round trips (corpus sweep): a try/finally inside the `finally` block of a
# try/finally that ends the function had no structured form ("finally body not repeated on the
# normal path": the normal-path copy had absorbed the final return into the inner try's body),
# and the fallback failed, so decompile raised.  On 3.8-3.10 the structurer then took the inner
# try's handler for one around the outer try body too ("an except clause goes on where the try
# statement does not"): the finally body's first kept instruction is inside the inner try, its
# SETUP_FINALLY being dropped.  A handler's enclosing handler is now the one at its entry.
case("regr_fuzz_try_finally_inside_finally", r"""
def f(log, fail):
    try:
        log.append(1)
        if fail == 1:
            raise KeyError(1)
    finally:
        try:
            log.append(2)
            if fail == 2:
                raise ValueError(2)
        finally:
            log.append(3)

def drive(func, fail):
    log = []
    try:
        func(log, fail)
    except Exception as exc:
        return log, repr(exc), repr(exc.__context__)
    return log
""", [(0,), (1,), (2,)], driver="drive")

# (The corpus sweep's shape: a try/except and more code after a try/finally in a finally body.)
case("regr_fuzz_try_except_in_finally_in_finally", r"""
def f(log, fail):
    try:
        log.append(1)
        if fail == 1:
            raise KeyError(1)
    finally:
        try:
            log.append(2)
            if fail == 2:
                raise ValueError(2)
        finally:
            try:
                log.append(3)
                if fail == 3:
                    raise TypeError(3)
            except:
                log.append(4)
            log.append(5)

def drive(func, fail):
    log = []
    try:
        func(log, fail)
    except Exception as exc:
        return log, repr(exc), repr(exc.__context__)
    return log
""", [(0,), (1,), (2,), (3,)], driver="drive")

# Found by the fuzzed round trips (corpus sweep, 3.8): a subscript whose key is a tuple holding
# a slice (`del a[:, 1.]`, `a[1:2, n] = v`, `a[n:,]`) was written with the tuple in parentheses,
# `a[(:, 1.0)]`, which is a syntax error (3.8's writer, astunparse, parenthesises every tuple).
case("regr_fuzz_tuple_of_slices_key_store_del", r"""
class Key:
    def __init__(self):
        self.log = []
    def __getitem__(self, key):
        return repr(key)
    def __setitem__(self, key, value):
        self.log.append(("set", repr(key), value))
    def __delitem__(self, key):
        self.log.append(("del", repr(key)))

def f(n):
    k = Key()
    del k[:, 1.]
    k[1:2, n] = 3
    k[n:,] = 4
    del k[0j:, ::n]
    return k.log, k[n:,], k[:n, (1, 2)]
""", [(1,), (-1,)])

# Found by the fuzzed round trips (corpus sweep, 3.8): a loop inside a `finally` block.  3.8's
# rewrite into 3.9's layout (bytecode/legacy_finally.py) inlines the finally body on the normal
# path; the back edge of the inlined copy pointed at a record that never entered the instruction
# list, so the jump left the code ("conditional jump out of the code") and decompile raised.
case("regr_fuzz_loop_in_finally", r"""
def f(n, log):
    try:
        log.append(-1)
        if n < 0:
            raise KeyError(n)
    finally:
        while n > 0:
            n -= 1
            log.append(n)
        for k in range(2):
            log.append(k)
    return log
""", [(0, []), (3, []), (-1, [])])

# Found by the fuzzed round trips (corpus sweep, 3.8; all versions): a local that the code reads
# but never assigns -- made local by an annotation (`A: int`, which compiles to nothing in a
# function) or by an assignment the compiler removed as dead -- was written as a plain name, so
# the recompiled function read the global: NameError (or a global's value) where the original
# raises UnboundLocalError.  Likewise a cell variable read only by a nested function, and a
# local bound only in an exception handler that cannot run (not written in the source).
case("regr_fuzz_unassigned_local", r"""
A = "global"

def f(n):
    def inner():
        return B
    if n == 0:
        return +A
    if n == 1:
        return x
    if n == 2:
        return inner()
    if n == 3:
        try:
            try:
                pass
            except:
                class C:  # never runs: the only binding of C
                    pass
        except:
            pass
        return C
    return n
    A: int
    B: int
    if 0:
        x = 1
""", [(0,), (1,), (2,), (3,), (4,)])

# Found with the 3.8 fix above, on 3.10+: a while loop that ends a `finally` body which ends
# the function had no structured form ("finally body not repeated on the normal path": each
# exit of the loop has its own copy of the RERAISE, or of the final return on the normal path,
# so no copy has a `break`); 3.10 raised DecompileError, 3.11+ took the fallback.
case("regr_fuzz_loop_ends_final_finally", r"""
def f(n, log):
    try:
        log.append(-1)
        if n < 0:
            raise KeyError(n)
    finally:
        while n > 0:
            n -= 1
            log.append(n)

def drive(func, n):
    log = []
    try:
        func(n, log)
    except KeyError as exc:
        return log, repr(exc)
    return log
""", [(0,), (3,), (-1,)], driver="drive")

# Issue 15 (xml.etree.ElementTree.iterparse on 3.13; every version): a `try/finally` around a
# `while True` loop with `break` -- the loop was built first, so the `finally` moved inside it
# and ran on every iteration (3.8 also lost the `break`: the loop never ended).
case("regr_try_finally_around_while_true_break", r"""
def f(src, out):
    try:
        while True:
            data = src.pop() if src else None
            if not data:
                break
            out.append(data)
        out.append("after")
    finally:
        out.append("closed")
    return out
""", [([1, 2, 3], []), ([], []), ([0, 5], [])])

# The same loop in a `try/except`, and in a `with`, with code after the statement.
case("regr_try_except_around_while_true_break", r"""
def f(src, out):
    try:
        while True:
            data = src.pop()
            if data is None:
                break
            out.append(10 // data)
        out.append("after")
    except ZeroDivisionError:
        out.append("zero")
    out.append("end")
    return out
""", [([None, 1, 2], []), ([None, 0, 2], []), ([5], [])])

# tarfile.TarFile.__init__ in append mode (3.8, 3.9): a `break` in an `except` clause of a
# `while True` inside a `try` was lost and the code after the loop copied into it: opening a
# tar file hung.
case("regr_break_in_except_of_while_true_in_try", r"""
def f(mode, items, out):
    try:
        if mode == "a":
            while True:
                out.append("seek")
                try:
                    out.append(items.pop())
                except IndexError:
                    out.append("eof")
                    break
                except KeyError as e:
                    raise ValueError(str(e))
        if mode in ("a", "w"):
            out.append("loaded")
    except:
        out.append("closed")
        raise
    return out
""", [("a", [1, 2], []), ("w", [], []), ("r", [1], []), ("a", [], [])])

# Issue 15: raised DecompileError on 3.8-3.10 (and fell back on 3.11+): a `return` in an
# `except` clause that also leaves an enclosing `with`.
case("regr_return_in_except_clause_inside_with", r"""
class Lock:
    def __init__(self, log):
        self.log = log
    def __enter__(self):
        self.log.append("enter")
    def __exit__(self, *exc):
        self.log.append("exit")

def f(d, key, log):
    with Lock(log):
        try:
            v = d[key]
        except KeyError:
            return 0
        return v
""", [({"a": 1}, "a", []), ({}, "a", []), ([], 0, [])])

# Issue 15: raised DecompileError on 3.8-3.10: `return <call>` in both arms of an `if` in a
# `try/finally` (each return's value is computed before its copy of the `finally` body).
case("regr_try_finally_return_calls_in_if_arms", r"""
def f(a, g, log):
    try:
        if a:
            return g(1)
        return g(2)
    finally:
        log.append(3)
""", [(True, abs, []), (False, abs, []), (True, len, [])])

# Issue 15: `async with` inside an `async def` got an extra `return` inside the block (3.10+).
case("regr_async_with_no_extra_return", r"""
import asyncio

class ACM:
    def __init__(self, log):
        self.log = log
    async def __aenter__(self):
        self.log.append("enter")
        return len(self.log)
    async def __aexit__(self, *exc):
        self.log.append(("exit", exc[0] is not None))
        return exc[0] is KeyError

async def f(log, fail):
    async with ACM(log) as x:
        log.append(x)
        if fail:
            raise fail("boom")

def drive(func, log, fail):
    try:
        asyncio.run(func(log, fail))
    except Exception as e:
        return log, type(e).__name__
    return log
""", [([], None), ([], KeyError), ([], ValueError)], driver="drive")

# quopri.main (issue 15; raised DecompileError on 3.8-3.10, fell back on 3.11+): a try/except
# in an `else` arm whose clause ends in `continue`, then a try/finally whose `finally` body is
# an `if` (3.11+ copies it into the normal path, each arm going back to the loop).
case("regr_for_try_except_continue_then_try_finally_if", r"""
def f(args, log):
    for name in args:
        if name == "-":
            fp = 1
        else:
            try:
                fp = int(name)
            except ValueError as msg:
                log.append(str(msg)[:10])
                continue
        try:
            log.append(10 // fp)
        finally:
            if name != "-":
                log.append("closed")
    return log
""", [(["-", "2", "x", "0"], []), ([], []), (["5", "-"], [])])

# netrc.netrc._parse (issue 15; raised on 3.8-3.10): in the inner `while 1`, an `if` arm that
# holds a try/except and then raises (its clause leaves too) is body code, not a second break
# target; the inner loop's `break` goes on around the outer loop.
case("regr_nested_while_break_and_raising_try_arm", r"""
def f(toks, log, d):
    while 1:
        tt = toks.pop() if toks else ""
        if not tt:
            break
        elif tt == "m":
            name = toks.pop()
        else:
            raise ValueError(tt)
        while 1:
            tt = toks.pop() if toks else ""
            if tt in {"", "m"}:
                if d:
                    log.append((name, tt))
                    if tt:
                        toks.append(tt)
                    break
                else:
                    raise ValueError(tt)
            elif tt == "p":
                if not d:
                    try:
                        x = d[tt]
                    except KeyError:
                        x = "uid"
                    raise ValueError(x)
                log.append(3)
            else:
                raise ValueError(tt)
    return log
""", [(["p", "x", "m"], [], {}), (["p", "x", "m"], [], {"a": 1}), (["", "p", "n", "m"], [], {"a": 1}),
      (["m", "n", "m"], [], {"a": 1}), ([], [], {})])

# Issue 18 (3.10+): `continue` in a `while c:` jumps back to the test before the loop, which
# the structurer read as a loop of its own ("while c: while True: ... break; break", or a
# fallback: "loop with several break targets").
case("regr_while_cond_continue_break", r"""
def f(s):
    out = []
    while s:
        n = s.pop()
        if n is None:
            continue
        if n < 0:
            break
        out.append(n)
    return out, s
""", [([],), ([1, None, 2],), ([3, -1, None, 4],)])

case("regr_while_and_condition_continue_else", r"""
def f(s, t):
    while s and t:
        n = s.pop()
        if n is None:
            continue
        t.append(n)
    else:
        t.append("else")
    return s, t
""", [([], [0]), ([1, None, 2], [0]), ([1, 2], [])])

# An enclosing `while True` whose back edge comes from after an inner `while c:` (reached by
# the inner loop's `break`) is no `continue` of the inner loop.
case("regr_while_true_around_while_cond_with_break", r"""
def f(items, log):
    while True:
        log.append("round")
        while items:
            x = items.pop()
            if x == 0:
                break
            log.append(x)
        else:
            break
        log.append("after inner")
    return log
""", [([1, 0, 2], []), ([], []), ([0, 0], [])])

# Issue 15 (3.8): the 3.8 writer put f-string literal parts in the source unescaped: rf"\b{s}\b"
# came back as backspaces, "\r\n" as a newline, "\t\\x" did not compile, "\0" was a null byte.
case("regr_fstring_escapes_in_literal_parts", r'''
def f(s, w):
    return (rf"\b{s}\b", f"{s}\r\n", f"{s}\t\\x", f"{s}\0", f"{s!r:>{w}}'\"{{}}",
            f"\N{BULLET} {s}\x7f", f"{s:{w}.3}|{s!a:\t>5}|{'q' + s}|{ {1: 2}[1]}", f"{s}\\",
            f"""{s}
"'{w}'" """)
''', [("x", 4), ("a\\b", 7), ("", 1)])

# Issue 18 (3.10, 3.12, 3.13): the tail after a conditional expression is copied into both arms,
# so `lambda a: (a if a else 2) + 1` read as two returns ("lambda body is not a single
# expression": fallback on 3.13; on 3.10 'return 2 + 1', which compiles to the constant 3).
case("regr_conditional_expression_then_copied_tail", r"""
def f(a, b):
    g = lambda a: (a if a else 2) + 1
    h = lambda s: (s if s else b).upper()
    return g(a), h(a if isinstance(a, str) else ""), g.__code__.co_consts[1:]
""", [(0, "x"), (5, "y"), ("", "z")])

case("regr_return_conditional_expression_then_call", r"""
def f(a, b):
    return (a if a else b).count(1)
""", [([1, 1], [2]), ([], [1, 1, 1])])

# configparser._Line._strip_inline (3.13): the copied tail's slice has a None bound where the
# other arm has a value: merging the two returns made an IfExp with a missing operand (internal
# error, fallback).
case("regr_conditional_expression_as_slice_bound", r"""
import re

def f(s, pat):
    m = re.search(pat, s)
    return s[:m.start() if m else None].strip(), s[1:m.end() if m else 3:2]
""", [(" ab ; c ", ";"), ("xyz", "q"), ("", "")])

# os.get_exec_path (3.11+: fallback, "an except clause goes on where the try statement does
# not"): a try/except/else whose else clause may raise meets its clauses at no post-dominator.
case("regr_try_except_else_that_may_raise_in_with", r"""
class CM:
    def __init__(self, log):
        self.log = log
    def __enter__(self):
        self.log.append("enter")
    def __exit__(self, *exc):
        self.log.append("exit")

def f(env, sb, log):
    with CM(log):
        try:
            p = env.get("PATH")
        except TypeError:
            p = None
        if sb:
            try:
                pb = env[b"PATH"]
            except (KeyError, TypeError):
                pass
            else:
                if p is not None:
                    raise ValueError("both")
                p = pb
            if p is not None and isinstance(p, bytes):
                p = p.decode()
    if p is None:
        p = "x"
    return p.split(":")
""", [({"PATH": "a:b"}, True, []), ({b"PATH": b"c:d"}, True, []), ({"PATH": "a", b"PATH": b"c"}, True, []),
      ({}, False, []), ([], True, [])])

# codeop._maybe_compile (3.11+: fallback): `return None` in a try nested in an except clause
# inside a `with` leaves both clauses and the with.
case("regr_return_from_try_in_clause_in_with", r"""
class CM:
    def __init__(self, log):
        self.log = log
    def __enter__(self):
        self.log.append("enter")
    def __exit__(self, *exc):
        self.log.append(("exit", exc[0] is not None))

class Compiler:
    def __init__(self, mode, log):
        self.mode, self.log = mode, log
    def __call__(self, m, k=0):
        self.log.append((m, k))
        if m == self.mode:
            raise (SyntaxError if m < 2 else KeyError)(m)
        return "compiled"

def f(mode, log):
    compiler = Compiler(mode, log)
    with CM(log):
        try:
            compiler(0)
        except SyntaxError:
            try:
                compiler(1)
                return None
            except KeyError as e:
                return None
            except SyntaxError as e:
                pass
    return compiler(5, 1)
""", [(0, []), (1, []), (9, [])])

# unittest.suite._call_if_exists, asyncio.runners.Runner._on_sigint... (3.13 fallback, "lambda
# body is not a single expression"): `lambda: None` read as a function body lost its return.
case("regr_lambda_returning_none_or_constant", r"""
def f(p, a):
    g = getattr(p, a, lambda: None)
    h = lambda: "doc"
    return g(), h(), h.__doc__, (lambda *x: None)(1, 2)
""", [(1, "real"), (1, "nope")])

# tempfile._TemporaryFileCloser.close, cmd.Cmd.cmdloop, socket.socket._sendfile_use_send,
# asyncio.runners.Runner.run (3.11+ fallback, "finally body not repeated on the normal path"):
# a `finally` body that is an `if` (an `and` test, each failing arm with its own copy of the
# re-raise, and of the return on the normal path).
case("regr_finally_body_is_if_with_and_test", r"""
def f(self, log):
    if not self["called"]:
        self["called"] = True
        try:
            log.append(10 // self["n"])
        finally:
            if self["delete"] and self["on_close"]:
                log.append("cleanup")
""", [({"called": False, "n": 2, "delete": True, "on_close": True}, []),
      ({"called": False, "n": 0, "delete": True, "on_close": False}, []),
      ({"called": False, "n": 0, "delete": True, "on_close": True}, []),
      ({"called": True, "n": 1, "delete": True, "on_close": True}, [])])

# pty._open_terminal (3.11: internal error, fallback): the jump that ends a try body over its
# clauses, to a `return` after the statement, is no `break` of the enclosing loops.
case("regr_return_after_try_in_nested_for", r"""
def f(xs, ys, table):
    for x in xs:
        for y in ys:
            name = x + y
            try:
                fd = table[name]
            except KeyError:
                continue
            return (fd, "t" + x + y)
    raise OSError("out")
""", [("ab", "cd", {"bd": 4}), ("ab", "cd", {}), ("", "x", {})])
