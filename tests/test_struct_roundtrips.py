"""Round trips of shapes the verifier refused in the structured form (issue 15,
``bench/sweep_findings.md``): the structured form must now be verified, and behave like the
original on inputs that take the paths where they differed (a suppressing ``__exit__``, ...).

Each case: source, function name, inputs, and the versions whose structured form is verified
(measured; the others may fall back, and the round trip must still behave).
"""
import builtins
import copy
import sys
import types

import pytest

from pellucid.decompiler.api import checked_recompile
from pellucid.decompiler.fallback import MARKER
from pellucid.decompiler.recompile import recompile_full

PY = "%d.%d" % sys.version_info[:2]
ALL = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15")

QUIET = r"""
class Quiet:
    def __init__(self, log, suppress=True):
        self.log = log
        self.suppress = suppress
    def __enter__(self):
        self.log.append("enter")
        return self
    def __exit__(self, tp, value, tb):
        self.log.append("exit %s" % (tp.__name__ if tp else None))
        return self.suppress
"""

# (items popped from the end; None ends the loop)
INPUTS_NONE_LAST = [([], [None, 0, 3, 1, 0, 5]), ([], [None]), ([], [0, None, 2, 0]), ([], [None, 5, 0])]

CASES = {
    # S3: after a suppressed exception the with's end is the loop's next iteration; the break
    # out of the with goes to the code after the loop (3.10+ copy that code after __exit__).
    "while_true_with_break_or_raise": (QUIET + r"""
def f(log, n, suppress):
    count = 0
    while True:
        with Quiet(log, suppress):
            count += 1
            if count >= n:
                break
            raise ValueError(count)
    return count
""", "f", [([], 1, True), ([], 3, True), ([], 3, False)], ALL),
    "while_true_with_break_then_code_after_with": (QUIET + r"""
def f(log, n, suppress):
    count = 0
    while True:
        with Quiet(log, suppress):
            count += 1
            if count >= n:
                break
            if count % 2:
                raise ValueError(count)
        log.append("after with %d" % count)
    log.append("after loop")
    return count
""", "f", [([], 1, True), ([], 4, True), ([], 4, False)], ALL),
    "while_true_with_break_value_after_loop": (QUIET + r"""
def f(log, items):
    while True:
        with Quiet(log):
            x = items.pop()
            if x is None:
                break
            log.append(1 // x)
    return len(log) + 1
""", "f", [([], [None, 1, 0, 2]), ([], [None])], ALL),
    # S4: the returned value computed in several blocks (a chained comparison) was spilled
    # into a temporary returned after the with, unbound when __exit__ suppresses.
    "with_return_chained_comparison": (QUIET + r"""
class Q:
    def __init__(self, log, maxsize, suppress):
        self.mutex = Quiet(log, suppress)
        self.maxsize = maxsize
    def _qsize(self):
        return 1 // self.maxsize
    def full(self):
        with self.mutex:
            return 0 < self.maxsize <= self._qsize()

def f(log, maxsize, suppress):
    return Q(log, maxsize, suppress).full()
""", "Q.full", [], ALL),
    "with_return_conditional_expression": (QUIET + r"""
def f(log, x, suppress):
    with Quiet(log, suppress):
        return 10 // x if x > -5 else -x
""", "f", [([], 2, True), ([], 0, True), ([], 0, False), ([], -7, True)], ALL),
    # S10: a clause that falls into the code after the try, which 3.12+ copy after the
    # clause's POP_EXCEPT: returned from inside the clause, an unbound global's NameError got
    # the handled exception as its context (typing.overload).
    "except_pass_then_return_global": (r"""
_reg = {}

def g(func):
    try:
        _reg[func.__module__][func.__qualname__] = func
    except AttributeError:
        pass
    return _dummy
""", "g", [(1,), (len,)], ALL),
    # S5: ``f'%s.%s' % (a, b)`` (no constant to the compiler) builds the tuple, then applies
    # one ``%``; written ``'%s.%s' % (a, b)`` 3.11+ compile it as an f-string, which converts
    # each item before evaluating the next (unittest.loader.TestLoader.getTestCaseNames).
    "percent_format_tuple_not_an_fstring": (r"""
class Loud:
    def __init__(self, log, name):
        self.log, self.name = log, name
    def __str__(self):
        self.log.append("str " + self.name)
        return self.name
    def __repr__(self):
        self.log.append("repr " + self.name)
        return "<%s>" % self.name

def f(log, c):
    a, b = Loud(log, "a"), Loud(log, "b")
    return f'%s.%s.%r' % (a, (log.append("b evaluated"), b)[1], c), log
""", "f", [([], 1), ([], "x")], ALL),
    # Fallback shapes of the stdlib sweep (issue 18 item 3, ``bench/sweep_findings.md`` F-groups):
    # the structured form must be verified and hold no state-machine fallback anywhere.
    # G1: ``except E: pass`` / ``else: return ...`` / ``return ...``: 3.12+ copy the final return
    # into the clause; the body's way on (the else clause) returns something else
    # (asyncio.futures._get_loop, pty.master_open, _pyio.FileIO.seekable).
    "except_pass_else_return": (r"""
class Fut:
    def __init__(self, has):
        self._loop = "loop"
        if has:
            self.get_loop = lambda: "got"

def f(has):
    fut = Fut(has)
    try:
        get_loop = fut.get_loop
    except AttributeError:
        pass
    else:
        return get_loop()
    return fut._loop
""", "f", [(True,), (False,)], ALL),
    # G2: an ``if``/``else`` ending a ``try`` body inside a ``with``: 3.13+ put the jump that
    # ends the first arm outside the try's region, so the arms seemed to meet nowhere
    # (xmlrpc.client.gzip_decode, os.walk, posixpath.realpath, subprocess.Popen._wait).
    "if_else_ending_try_body_in_with": (QUIET + r"""
class Src:
    def __init__(self, fail):
        self.fail = fail
    def read(self, n=-1):
        if self.fail:
            raise OSError(n)
        return "data"[:n] if n >= 0 else "data"

def f(log, n, fail, suppress):
    with Quiet(log, suppress):
        try:
            if n < 0:
                d = Src(fail).read()
            else:
                d = Src(fail).read(n)
        except OSError:
            raise ValueError("bad")
    return d
""", "f", [([], -1, False, False), ([], 2, False, False), ([], 2, True, False),
           ([], 2, True, True), ([], -1, True, True)], ALL),
    # G3: ``except KeyError: break`` in a for loop whose following code is not copied into the
    # clause (``return tuple(args)``): the clause's walk stopped at the loop's exit instead of
    # ending in ``break`` (inspect.BoundArguments.args on 3.9, 3.11, 3.13, 3.14).
    "for_except_break_else_if": (r"""
def f(params, arguments):
    args = []
    for name, kind in params:
        if kind in ("kw", "varkw"):
            break
        try:
            arg = arguments[name]
        except KeyError:
            break
        else:
            if kind == "var":
                args.extend(arg)
            else:
                args.append(arg)
    return tuple(args)
""", "f", [([("a", "pos"), ("b", "var"), ("c", "kw")], {"a": 1, "b": [2, 3]}),
           ([("a", "pos"), ("b", "pos")], {"a": 1}), ([], {}),
           ([("a", "pos"), ("b", "var")], {"a": 1, "b": 5})], ALL),
    # G4: a ``while True`` whose ``break``s leave from an ``if`` that may return first and
    # from a plain ``break``: the first exit's code goes on where the other one jumps, so the
    # loop has one follow (idlelib.history.History.fetch, 3.9-3.13).
    "while_true_break_after_return_test": (r"""
def f(p, n, c, out):
    while True:
        p += 1
        if p >= n:
            out.append("end")
            if not c and p < 0:
                return "aborted"
            else:
                if out:
                    out.append(p)
                p = None
            break
        if p == 3:
            out.append(3)
            break
    out.append(p)
    return out
""", "f", [(0, 5, True, []), (-3, -2, False, []), (5, 2, True, []), (-9, -7, False, [])], ALL),
    # G5: a ``try`` whose every clause returns, inside a ``with`` or ``try/finally``: the
    # clauses leave through the ``__exit__`` call / ``finally`` copy, the body goes on out of
    # the enclosing statement (asyncio.unix_events.FastChildWatcher.add_child_handler,
    # lib2to3.refactor.RefactoringTool.refactor_string, 3.8-3.11; the finally one on 3.12+ too).
    "with_try_except_return": (QUIET + r"""
def f(log, zombies, pid, suppress):
    with Quiet(log, suppress):
        try:
            rc = zombies.pop(pid)
        except KeyError:
            log.append("running")
            return
    log.append(rc)
    return log
""", "f", [([], {1: 0}, 1, False), ([], {}, 1, False), ([], {1: 0}, 2, True)], ALL),
    "try_except_return_finally": (r"""
class Tool:
    def __init__(self, log):
        self.log = log
    def parse(self, data):
        if data is None:
            raise ValueError("no data")
        return data * 2

def f(log, data):
    tool = Tool(log)
    try:
        tree = tool.parse(data)
    except ValueError as err:
        log.append(str(err))
        return
    finally:
        log.append("finally")
    log.append(tree)
    return tree
""", "f", [([], 3), ([], None), ([], [1])], ALL),
    # G6: a 3.10+ rotated ``while c:`` whose ``continue`` jumps back to the guard test, from an
    # ``if`` arm that holds an ``if``/``else`` of its own: that code was read as the code after
    # an inner loop (posixpath._joinrealpath on 3.10-3.13).
    "while_continue_after_if_else_to_guard": (r"""
def f(rest, out):
    while rest:
        name = rest.pop()
        if name == "..":
            if out:
                out.pop()
            else:
                out.append("up")
            continue
        if name in ("a", "b"):
            if name == "a":
                continue
            if out:
                out.append("b")
            else:
                return "empty", out
        out.append(name)
    return "done", out
""", "f", [(["x", "..", "a", "b"], []), (["b", "..", ".."], ["y"]), (["a", "b", ".."], []),
           ([], [])], ALL),
    # G7: ``return`` in a ``try`` inside two ``with``s: the path runs the inner ``__exit__``
    # under the outer ``with``'s handler, and was read outside both (shutil.copyfile,
    # 3.8-3.15).
    "return_in_try_in_two_withs": (QUIET + r"""
def f(log, key, table, flag):
    with Quiet(log, False):
        with Quiet(log, flag):
            if key:
                try:
                    return table[key]
                except KeyError:
                    log.append("missing")
    return None
""", "f", [([], "a", {"a": 1}, False), ([], "b", {"a": 1}, False), ([], "", {}, True),
           ([], "b", None, True), ([], "b", None, False)], ALL),
    # G8: ``if a or b: return`` in a ``with``: the ``__exit__`` call and the return are entered
    # by both tests (_pyio.BufferedWriter.close, asyncio FastChildWatcher.__exit__, 3.8-3.15).
    "with_if_or_return": (QUIET + r"""
def f(log, a, b, suppress):
    with Quiet(log, suppress):
        log.append(1 // a if a is not None else 0)
        if a or b:
            return "early"
        value = str(log)
    log.append("after")
    return value
""", "f", [([], 1, 0, False), ([], 0, 1, True), ([], None, 0, False), ([], 0, 0, True),
           ([], 0, 0, False)], ALL),
    # G9: ``while not c:`` (the guard jumps to the exit when ``c`` is true) whose ``continue``
    # jumps back to the guard, in a ``with`` the loop returns from (telnetlib.Telnet.expect,
    # 3.11-3.13; 3.10 still falls back, on another region).
    "while_not_continue_to_guard_in_with": (QUIET + r"""
class Conn:
    def __init__(self, chunks):
        self.chunks = chunks
        self.eof = not chunks

def f(log, chunks, wanted, timeout):
    conn = Conn(list(chunks))
    with Quiet(log, False):
        while not conn.eof:
            for i, w in enumerate(wanted):
                if w in conn.chunks[0]:
                    return i, conn.chunks[0]
            if timeout is not None:
                conn.chunks.pop(0)
                conn.eof = not conn.chunks
                if timeout < 0:
                    log.append("expired")
                else:
                    continue
            log.append("read")
            conn.chunks.pop(0)
            conn.eof = not conn.chunks
    return -1, None
""", "f", [([], ["ab", "cd", "x"], ["x"], None), ([], ["ab", "cd"], ["d"], 1),
           ([], ["ab", "cd", "ef"], ["f"], -1), ([], [], ["a"], None)],
        tuple(v for v in ALL if v != "3.10")),  # (3.10: "loop body runs on out of its region")
    # ... and with a ``break`` beside that ``continue`` (the full telnetlib.Telnet.expect).
    "while_not_continue_or_break_in_with": (QUIET + r"""
def f(log, chunks, wanted, timeout):
    eof = not chunks
    with Quiet(log, False):
        while not eof:
            for i, w in enumerate(wanted):
                if w in chunks[0]:
                    return i, chunks[0]
            if timeout is not None:
                chunks.pop(0)
                eof = not chunks
                if timeout < 0:
                    log.append("expired")
                    break
                else:
                    continue
            log.append("read")
            chunks.pop(0)
            eof = not chunks
    return -1, log
""", "f", [([], ["ab", "cd", "x"], ["x"], None), ([], ["ab", "cd"], ["d"], 1),
           ([], ["ab", "cd", "ef"], ["f"], -1), ([], [], ["a"], None)],
        tuple(v for v in ALL if v not in ("3.9", "3.10"))),  # (3.9: "loop body runs on out of its region")
    # G10: a ``try/except/else`` nested in a ``try`` body, the code after the outer ``try`` a
    # short ``return``: the inner clause runs off the outer region into a copy of it (3.10,
    # 3.12+), the ``else`` clause into the original (mailbox.Maildir.add).
    "nested_try_else_then_return": (r"""
def f(log, link_fails, rm_fails):
    uniq = "u"
    try:
        try:
            if link_fails:
                raise PermissionError("link")
            log.append("linked")
        except (AttributeError, PermissionError):
            log.append("no link")
        else:
            if rm_fails:
                raise OSError("rm")
            log.append("removed")
    except OSError as e:
        log.append(str(e))
    return uniq, log
""", "f", [([], False, False), ([], True, False), ([], False, True)], ALL),
    # 3.10 copies the closing ``return`` into each arm of an ``if`` that ends a ``try``
    # body, after its copy of ``finally``; the arms' returns merged into one after the ``if``
    # left the copies at the arms' ends (logging.Handler.close, Logger.addHandler, ...).
    "try_finally_if_and_ends_body": (r"""
def f(log, table, name):
    log.append("acquire")
    try:
        log.append(1 // len(table))
        if name and name in table:
            del table[name]
    finally:
        log.append("release")
""", "f", [([], {"a": 1}, "a"), ([], {"a": 1}, "b"), ([], {"a": 1}, ""), ([], {}, "a"),
           ([], {"a": 1}, ["unhashable"])], ALL),
    "try_finally_nested_if_else_ends_body": (r"""
def f(log, x, y):
    try:
        if x:
            log.append("x")
            if y:
                log.append(1 // y)
            else:
                log.append("not y")
        elif y:
            log.append("y")
        else:
            log.append("neither")
    finally:
        log.append("finally")
""", "f", [([], 1, 1), ([], 1, 0), ([], 0, 1), ([], 0, 0), ([], 1, "s")], ALL),
    # 3.10+ copy a short ending after a clause's POP_EXCEPT; the ``else`` clause either leaves
    # (asyncio.futures._get_loop) or falls into the original of that copy (_pyio.FileIO.seekable).
    "except_pass_else_return_then_return_attr": (r"""
def f(obj):
    try:
        get = obj.get
    except AttributeError:
        pass
    else:
        return get()
    return obj.fallback
""", "f", [(types.SimpleNamespace(get=lambda: 1, fallback=2),),
           (types.SimpleNamespace(fallback=3),), (None,)], ALL),
    "except_else_falls_into_copied_return": (r"""
def f(obj, fail):
    if obj.state is None:
        try:
            obj.probe(fail)
        except OSError:
            obj.state = False
        else:
            obj.state = True
    return obj.state
""", "f", [(types.SimpleNamespace(state=None, probe=lambda x: 1 // x), 1),
           (types.SimpleNamespace(state=None, probe=lambda x: 1 // x), 0),
           (types.SimpleNamespace(state=None, probe=lambda x: open("/nonexistent/%s" % x)), 0),
           (types.SimpleNamespace(state=4), 0)], ALL),
    # 3.8-3.10: ``if a or b: return`` in a ``with``: the path that calls ``__exit__`` and
    # returns is entered by both tests (_pyio.BufferedWriter.close, FastChildWatcher.__exit__).
    "with_if_or_return_then_code_after": (QUIET + r"""
def f(log, items, suppress):
    with Quiet(log, suppress):
        log.append(1 // len(items))
        if items[0] or not items[1:]:
            return
        v = str(items[1:])
    log.append(v)
""", "f", [([], [1], True), ([], [0, 2], True), ([], [0], True), ([], [], True),
           ([], [], False), ([], [0, 3], False)], ALL),
    # A clause that returns out of an enclosing ``try/finally`` (the compiler pops the
    # exception, then runs the ``finally`` copy), and a body whose way on runs off that
    # statement's region (lib2to3 RefactoringTool.refactor_string, tabnanny.check, uuid).
    "try_except_return_finally_then_code": (r"""
def f(log, data):
    try:
        tree = 10 // data
    except ZeroDivisionError as err:
        log.append(type(err).__name__)
        return
    finally:
        log.append("finally")
    log.append(tree)
    return tree
""", "f", [([], 2), ([], 0), ([], "x")], ALL),
    "try_except_return_constant_in_outer_finally": (r"""
def f(log, data):
    try:
        log.append("start")
        try:
            tree = 10 // data
        except ZeroDivisionError:
            log.append("zero")
            return -1
        log.append(tree)
    finally:
        log.append("finally")
    return tree
""", "f", [([], 2), ([], 0), ([], "x")], ALL[:6]),  # (3.14+: "except clauses continue
                                                   # differently from the try", not measured)
    # 3.8/3.9: ``except E: break`` in a ``for`` loop, the try's ``else`` clause going on:
    # the clause's walk stopped at the loop's exit, in its stop set (inspect.BoundArguments.args,
    # http.cookiejar.CookieJar._normalized_cookie_tuples).
    "for_try_except_break_else_goes_on": (r"""
def f(params, arguments):
    args = []
    for name in params:
        if name is None:
            break
        try:
            arg = arguments[name]
        except KeyError:
            break
        else:
            if name == "v":
                args.extend(arg)
            else:
                args.append(arg)
    return tuple(args)
""", "f", [(["a", "v", "b"], {"a": 1, "v": [2, 3], "b": 4}), (["a", "x", "b"], {"a": 1, "b": 2}),
           (["a", None, "b"], {"a": 1, "b": 2}), (["v"], {"v": 5}), ([[]], {})], ALL),
    # A clause's ``return`` out of a ``try/finally`` whose ``finally`` holds a ``try/except``:
    # the copy on that path starts a ``try`` of its own, and 3.10+ copy the ``return`` into
    # its clause too (ctypes.util._findLib_gcc).
    "except_return_through_finally_holding_try": (r"""
def f(log, x):
    temp = log
    try:
        log.append(1)
        try:
            p = 10 // x
        except ZeroDivisionError:
            return None
        log.append(p)
    finally:
        try:
            temp.remove(1)
        except ValueError:
            log.append("no 1")
    return log
""", "f", [([], 2), ([], 0), ([], "s")], ALL),
    # 3.10: ``while ... else`` in a ``with``, the ``break`` given its own copy of the with's
    # exit and the ``return`` after it: the else clause ends at the other copy
    # (threading.Semaphore.acquire).
    "with_while_else_break_copies_exit": (QUIET + r"""
def f(log, state, blocking, suppress):
    rc = False
    with Quiet(log, suppress):
        while state[0] == 0:
            if not blocking:
                break
            log.append(1 // len(state))
            state[0] = state.pop()
        else:
            state[0] -= 1
            rc = True
    return rc
""", "f", [([], [0, 1], True, True), ([], [0, 1], False, True), ([], [3], True, True),
           ([], [0], True, True), ([], [0], True, False)], ALL),
    # ... and with two ``break`` statements, each given its own copy (the loop's follow).
    "with_while_else_two_breaks_copy_exit": (QUIET + r"""
def f(log, state, blocking, timeout, suppress):
    rc = False
    with Quiet(log, suppress):
        while state[0] == 0:
            if not blocking:
                break
            if timeout is not None:
                timeout -= 1
                if timeout <= 0:
                    break
            log.append(1 // len(state))
            state[0] = state.pop()
        else:
            state[0] -= 1
            rc = True
    return rc, timeout
""", "f", [([], [0, 1], True, None, True), ([], [0, 1], False, None, True),
           ([], [0, 0, 0], True, 2, True), ([], [0, 1], True, 5, True), ([], [0], True, None, True),
           ([], [0], True, None, False)], ALL),
    # Two breaks: one after an ``if`` whose arm returns (the break's own code ends where the
    # other break jumps), one in a plain ``if`` (idlelib.history.History.fetch, 3.8-3.11).
    "while_true_break_after_returning_if_and_plain_break": (r"""
def f(log, items, pointer, cyclic):
    while True:
        pointer += 1
        if pointer < 0 or pointer >= len(items):
            log.append("bell")
            if not cyclic and pointer < 0:
                return
            else:
                if log[-1] != "x":
                    log.append("x")
                pointer = None
            break
        item = items[pointer]
        if item == "hit":
            log.append(item)
            break
    log.append(pointer)
    return pointer
""", "f", [([], ["a", "hit", "b"], -1, True), ([], ["a", "b"], -1, True), ([], ["a"], -3, False),
           ([], ["a"], -3, True), ([], [], 5, True)], ALL),
    # 3.8: ``f(*(a, *b))`` builds a tuple display (BUILD_TUPLE_UNPACK), ``f(a, *b)`` call
    # arguments (BUILD_TUPLE_UNPACK_WITH_CALL, whose TypeError names the function) --
    # unittest.async_case.IsolatedAsyncioTestCase.addAsyncCleanup.
    "call_star_of_tuple_display": (r"""
def f(func, args, kwargs):
    return func(*(func, *args), **kwargs)
""", "f", [(lambda *a, **k: (len(a), k), [1, 2], {"x": 1}), (lambda *a, **k: a, 5, {}),
           (lambda *a, **k: a, [], 3)], ALL),
    # ``except: continue`` in a try in an ``if`` arm of a loop body: the body's way on reaches
    # the end of the arm before the loop's next iteration (pydoc.ModuleScanner.run).
    "for_if_try_except_continue_arm_goes_on": (r"""
def f(items, key, log):
    for name in items:
        if key:
            try:
                source = name.lower()
            except Exception:
                if key == 2:
                    log.append("skip")
                continue
            desc = source
        else:
            desc = ''
        log.append(desc)
    log.append("end")
""", "f", [(["A", 1, "B"], 1, []), (["A", 1], 2, []), (["A", 1], 0, [])], ALL),
    # 3.10: a ``break`` out of a ``with`` in a ``while`` loop runs ``__exit__`` and then a copy
    # of the code after the loop (subprocess.Popen._wait).
    "while_with_break_exit_then_copied_follow": (QUIET + r"""
class P:
    def __init__(self, log, codes, suppress):
        self.log, self.codes, self.returncode = log, codes, None
        self.lock = Quiet(log, suppress)
    def wait(self):
        while self.returncode is None:
            with self.lock:
                if self.returncode is not None:
                    break
                pid = self.codes.pop()
                if pid == 0:
                    self.returncode = 1 // len(self.codes)
                self.log.append(pid)
        return self.returncode

def f(log, codes, suppress):
    return P(log, codes, suppress).wait(), log
""", "P.wait", [], ALL),
    # 3.8: a ``try/finally`` at the end of a bare ``except:`` clause is followed by the
    # clause's POP_EXCEPT, which the 3.9-layout rewrite put before the finally copy as if it
    # were an ``except ... as name`` cleanup (xmlrpc.server's dispatchers).
    "finally_ending_bare_except_clause": (r"""
import sys

def f(items, log):
    for call in items:
        try:
            log.append(1 // call)
        except ZeroDivisionError as fault:
            log.append(type(fault).__name__)
        except:
            a, b, c = sys.exc_info()
            try:
                log.append(a.__name__)
            finally:
                a = b = c = None
    return log, sys.exc_info()
""", "f", [([1, 0, "s"], []), ([], [])], ALL),
    # ``try/except/else/finally`` whose clause goes on off the end of the ``finally``'s region
    # while the ``else`` clause returns (xml.etree.ElementTree.XMLParser.close on 3.8/3.9,
    # codeop._maybe_compile on 3.10).
    "except_pass_else_return_finally": (r"""
def f(obj, log):
    try:
        close = obj.close
    except AttributeError:
        pass
    else:
        return close()
    finally:
        log.append("finally")
""", "f", [(types.SimpleNamespace(close=lambda: 1), []), (None, []),
           (types.SimpleNamespace(close=lambda: 1 // 0), [])], ALL),
    # T4: 3.10+ rotated ``while c:`` whose ``continue`` back to the guard follows an ``if``
    # that returns (_markupbase.ParserBase._parse_doctype_subset; 3.10-3.13 "loop with
    # several break targets").
    "while_continue_to_guard_after_return_test": (r"""
def f(text, log):
    j, n = 0, len(text)
    while j < n:
        c = text[j]
        if c == '<':
            if text[j:j + 2] == '<!':
                if j > 5:
                    return j
                j += 2
                continue
            j += 1
        elif c == '%':
            log.append(j)
        j += 1
    return -1
""", "f", [("a<!b%c<d", []), ("", []), ("abcdef<!", []), ("%<%<!", [])], ALL),
    # T4: ``break`` after an ``if`` of its own, twice, where the loop ends the function:
    # 3.10+ copy the ``return None`` into each break's code (html.parser.HTMLParser.goahead;
    # "loop with several break targets").
    "breaks_after_ifs_into_return_copies": (r"""
def f(text, log, strict):
    i, n = 0, len(text)
    while i < n:
        if text[i] == '<':
            log.append('tag')
        elif text[i] == '#':
            if strict:
                log.append('ref')
            else:
                if ';' in text[i:]:
                    log.append('semi')
                break
        elif text[i] == '&':
            if strict:
                if text[i:] == '&':
                    log.append('last')
                break
        i += 1
""", "f", [("<a#b;", [], False), ("<a#b", [], False), ("<#&", [], True), ("<&x", [], True),
           ("&", [], True), ("", [], True), ("<<&", [], False)], ALL),
    # T4: a rotated ``while c:`` whose ``continue`` jumps back to the guard, beside a
    # ``break`` after an ``if`` of its own and a ``return`` (html.parser.HTMLParser.goahead,
    # 3.10-3.13: the guard's test was read as a loop with several break targets).
    "while_continue_to_guard_break_after_if": (r"""
def f(text, log, strict):
    i, n = 0, len(text)
    while i < n:
        if text[i] == '<':
            log.append('tag')
        elif text[i] == '#':
            if strict:
                i += 2
                continue
            else:
                if ';' in text[i:]:
                    log.append('semi')
                break
        elif text[i] == '&':
            if strict:
                i += 1
                continue
            return i
        else:
            assert text[i] != '!', 'bang'
        i += 1
    log.append(text[i:])
    return log
""", "f", [("<a#b;", [], False), ("<a#b", [], False), ("<#&", [], True), ("<&x", [], True),
           ("&", [], False), ("", [], True), ("<<!", [], False), ("#x#", [], True)], ALL),
    # T4: the same with a ``break`` that skips the inner loop's ``else`` clause
    # (idlelib.pyparse.Parser._study1, 3.10-3.13).
    "while_continue_to_guard_break_past_else": (r"""
def f(text, log):
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        i += 1
        if ch == '"' or ch == "'":
            while i < n:
                ch = text[i]
                i += 1
                if ch == '\n':
                    if not log:
                        break
                    log.append('nl')
                    continue
                if ch == '\\':
                    i += 1
                    continue
            else:
                if i > 3:
                    log.append('unclosed')
    return i, log
""", "f", [('a"b\\"c', []), ('"x\ny', []), ('"x\ny', ["l"]), ("'ab", []), ("", []),
           ("'\\", [])], ALL),
    # T4: ``while True:`` left by breaks after code of their own, one of them after a store
    # that shares its block with the copy of ``return line`` (codecs.StreamReader.readline,
    # 3.10-3.15: "loop with several break targets").
    "while_true_breaks_into_cut_return_copies": (r"""
def f(lines, keepends, log):
    line = None
    while True:
        log.append(len(lines))
        if lines:
            if len(lines) > 1:
                line = lines[0]
                if not keepends:
                    line = line.strip()
                break
            if lines[0] != lines[0].strip():
                if keepends:
                    log.append('keep')
                else:
                    line = lines[0].strip()
                break
        lines.append(' x ')
    return line
""", "f", [(["a", "b"], True, []), (["a", "b"], False, []), ([" a "], True, []),
           ([" a "], False, []), (["a"], True, []), ([], False, [])], ALL),
    # T8: ``while True:`` whose only way out is a ``return`` from a ``for`` in it: the return
    # path pops the for's iterator, so it is no code after the loop (the structurer popped
    # an empty stack: lib2to3.pgen2.parse.Parser.addtoken, IndexError, 3.9-3.15).
    "while_true_left_by_return_from_for": (r"""
def f(rows, states, log):
    while True:
        for row in rows:
            if row == states[0]:
                while states and states[-1] == row:
                    log.append(states.pop())
                return False
        states.insert(0, rows[0])
        log.append('round')
""", "f", [([1, 2], [2, 2], []), ([1, 2], [3], []), ([1], [1, 0, 1], [])], ALL),
    # Two ``return`` statements in a ``while True`` inside a ``try/finally``: each leaves
    # through its own ``finally`` copy (3.8: CALL_FINALLY), outside the body's handler, so both
    # were taken for ``break`` targets (asyncio's _sendfile_fallback, distutils.spawn).
    "while_true_two_returns_in_try_finally": (r"""
def f(log, count, reads):
    total = 0
    try:
        while True:
            if count:
                log.append(count)
                if total >= count:
                    return total
            read = reads.pop()
            if not read:
                return total
            total += read
    finally:
        if total > 0 and log:
            log.append(total)
        log.append("end")
""", "f", [([], 0, [0, 2, 3]), ([], 4, [0, 2, 3]), ([], 9, [0, 2, 3]), ([], 0, []),
           ([], 0, [0])], ALL),
    # A ``break`` after a statement whose expression branches (``x = g(a or b); break``) in a
    # loop nested in another: its block ends in the ``or``'s jump, not the ``break``'s, so it
    # was read as a break target of its own, then as the loop's follow, and the walk went round
    # the outer loop forever (RecursionError: tokenize._tokenize and lib2to3's generate_tokens,
    # 3.8-3.10).
    "nested_while_break_after_or_expression": (r"""
def f(log, items):
    while True:
        if not items:
            return log
        if items[-1] == 0:
            items.pop()
            continue
        while items:
            v = items.pop()
            if v > 0:
                if v == 1:
                    break
                elif v == 2:
                    log.append(len(log) or v or 3)
                    break
        log.append("end")
""", "f", [([], [0, 2, 1, 5, 2, 0]), ([], [1, 2, 2, 3]), ([], [])], ALL),
    "nested_while_two_breaks_one_after_or": (r"""
def f(log, items):
    while items:
        while items:
            v = items.pop()
            if v == 1:
                break
            elif v == 2:
                log.append(len(log) or v)
                break
    return log
""", "f", [([], [0, 2, 1, 5, 2, 0]), ([], [1, 2, 2, 3]), ([], [])], ALL),
    # A ``return`` after a ``while`` loop in a ``for`` body in a ``while True``: the while loop
    # and the return only leave, entered from inside the for loop, and were read as the code
    # after the outer loop (IndexError popping the for's iterator: lib2to3's Parser.addtoken).
    "while_true_for_while_then_return": (r"""
def f(log, arcs):
    while True:
        for i in arcs:
            if i:
                while len(log) < i:
                    log.append(i)
                return len(log)
        log.append(0)
        arcs = [0, 3]
""", "f", [([], []), ([], [0, 2]), ([1, 1], [1]), ([], [0, 0])], ALL),
    # ``try/except/else`` in an ``if`` arm of an ``except`` clause, its ``else`` clause
    # returning and its clause going on where the ``if`` ends (linecache.updatecache): "an
    # except clause goes on where the try statement does not".  (3.13+ still fall back:
    # "except clauses continue differently from the try".)
    "except_if_try_except_pass_else_return": (r"""
def f(log, a, b):
    try:
        log.append(1 // a)
    except ZeroDivisionError:
        if b:
            try:
                log.append(1 // (b - 1))
            except ZeroDivisionError:
                pass
            else:
                return log
    log.append("end")
    return None
""", "f", [([], 1, 0), ([], 0, 0), ([], 0, 1), ([], 0, 2)], ALL[:5]),
    # ``return`` in an ``if`` of a ``finally`` clause: its exceptional copy drops the exception
    # (POP_EXCEPT, 3.8: POP_FINALLY) before returning, which read as an ``except`` clause
    # ("exception handler with an unrecognised shape"); with nothing after the statement,
    # ≤3.10 share that return with the function's own, so the normal path's copy reads
    # ``if c: ... else: <rest of finally>`` (subprocess.Popen.__exit__).  (3.11+ still fall
    # back.)
    "return_in_if_of_finally": (r"""
def f(log, a, b):
    try:
        if a:
            log.append(1 // (a - 1))
    finally:
        if b:
            return "b"
    return log
""", "f", [([], 0, 0), ([], 1, 0), ([], 1, 1), ([], 2, 1), ([], 2, 0)], ALL),
    "bare_return_in_if_of_finally_ending_function": (r"""
def f(log, a, b):
    try:
        if a:
            log.append(1 // (a - 1))
    finally:
        if b:
            log.append("b")
            return
        log.append("wait")
""", "f", [([], 0, 0), ([], 1, 0), ([], 1, 1), ([], 2, 1), ([], 2, 0)], ALL),
    # ``return`` in a ``try/except`` inside a ``try/finally`` whose body ends in an ``if``:
    # 3.10+ copy the return into each arm of that ``if`` in the return path's finally copy,
    # which hid the copy ("branches of an if meet nowhere", 3.12+ "an except clause goes on
    # where the try statement does not"; asyncio.proactor_events' ``_loop_reading``).
    "return_in_try_except_in_finally_ending_with_if": (r"""
def f(log, fut, closing, n):
    length = -1
    try:
        if fut is not None:
            length = fut
            if length == 0:
                return
            log.append("data %d" % length)
        if closing:
            return
        log.append(10 // n)
    except ZeroDivisionError as exc:
        log.append(type(exc).__name__)
    finally:
        if length > -1:
            log.append(length)
""", "f", [([], None, False, 1), ([], None, True, 1), ([], 0, False, 1), ([], 3, False, 0),
           ([], 3, True, 0), ([], 2, False, 5)], ALL),
    # ``for ... else: continue`` then ``break`` in a ``for`` loop with an ``else`` clause:
    # the inner loop's ``break`` path pops its iterator and jumps to the outer loop's, which
    # pops the outer iterator: that jump's target, not the inner ``break`` path, is the outer
    # loop's follow (IndexError popping the iterator: multiprocessing.pool's _handle_tasks).
    "for_else_continue_then_break_in_for_else": (r"""
def f(log, seqs):
    for seq in seqs:
        for t in seq:
            if t < 0:
                break
            log.append(t)
        else:
            log.append("else")
            continue
        break
    else:
        log.append("sentinel")
    log.append("end")
""", "f", [([], []), ([], [[1, 2], [3]]), ([], [[1, -1, 2], [3]]), ([], [[], [-2]])], ALL),
    # ... the same in a ``try/finally``, the ``else`` clause's ``continue`` after an ``if``:
    # its path (the ``finally`` copy, then the jump back) is where the ``if``'s arms meet,
    # entered from both ("loop else-clause does not rejoin the loop's follow").
    "for_else_if_continue_in_try_finally_then_break": (r"""
def f(log, seqs, set_length):
    for seq in seqs:
        task = None
        try:
            for task in seq:
                if task < 0:
                    break
                try:
                    log.append(10 // task)
                except ZeroDivisionError as e:
                    log.append(type(e).__name__)
            else:
                if set_length:
                    log.append(("len", task))
                continue
            break
        finally:
            log.append(("fin", task))
            task = seq = None
    else:
        log.append("sentinel")
    log.append("end")
""", "f", [([], [], True), ([], [[1, 0], [3]], True), ([], [[1, 0], [3]], False),
           ([], [[1, -1, 2], [3]], True), ([], [[], [-2]], False)], ALL),
    # ``return v`` in a ``try/finally`` whose ``finally`` body ends in an ``if``: 3.10+ copy
    # the return into each arm of that ``if`` in the path's finally copy, so the path did
    # not read as the copy and the return; the ``if`` holding it met a nested try's return
    # with its value spilled ("branches leave different values on the stack":
    # unittest.case.TestCase.run).
    "return_value_in_try_finally_ending_with_if": (r"""
def f(log, skip, stop):
    try:
        if skip:
            log.append("skip")
            return log
        log.append("start")
        try:
            log.append(10 // len(log))
            return log
        finally:
            log.append("clear")
    finally:
        log.append("stop")
        if stop is not None:
            stop(log)
""", "f", [([], True, None), ([], False, None), ([], True, list.reverse), ([1], False, list.reverse)],
           ALL),
    # ``break`` out of a ``try/finally`` in a ``while True`` that has no other way out: 3.10+
    # copy the code after the loop (``return <value>``, computed after the ``finally``
    # copy) into each ``break`` path, so the loop had no follow and the path read as neither
    # a ``break`` nor a ``return`` ("branches of an if meet nowhere": subprocess.Popen._wait).
    "while_true_break_in_try_finally_return_after_loop": (r"""
def f(log, states):
    while True:
        if states.pop():
            try:
                if len(log) > 3:
                    break
                log.append(10 // len(states))
                if states[-1] == 2:
                    break
            finally:
                log.append("release")
        log.append("sleep")
    return len(log)
""", "f", [([], [2, 0, 1]), ([], [0, 1, 1]), ([], [5, 1, 1, 1, 1, 1, 1]), ([], [1, 0, 1])], ALL),
    # S3 in a ``for`` loop: the ``break`` out of the ``with`` runs ``__exit__``, pops the
    # iterator and then a copy of the code after the loop (3.10, 3.12); read as a ``return``
    # after the ``with``, a suppressed exception ended the function instead of going on with
    # the next item.
    "for_with_suppressing_exit_break_return_after_loop": (QUIET + r"""
def f(log, xs, suppress):
    for x in xs:
        with Quiet(log, suppress):
            if x == "stop":
                break
            log.append(10 // x)
    return len(log)
""", "f", [([], [1, 0, 2], True), ([], [1, "stop", 2], True), ([], [1, 0], False), ([], [], True)],
           ALL),
    # ... with an ``else`` clause: the loop seemed to have no ``break`` (the copies end the
    # function), so the clause's code and the code after it were one follow; the code after
    # the clause is the copy's (construct cases with_inside_loop_break_continue,
    # with_suppressing_exit_in_for_loop).
    "for_else_with_suppressing_exit_break_return_after_loop": (QUIET + r"""
def f(log, xs, suppress):
    for x in xs:
        with Quiet(log, suppress):
            if x == "skip":
                continue
            if x == "stop":
                break
            log.append(10 // x)
    else:
        log.append("loop else")
    return len(log)
""", "f", [([], [1, 0, 2], True), ([], [1, "stop", 2], True), ([], ["skip", 0], True),
           ([], [1, 0], False), ([], [], True)], ALL),
    # ``break`` out of a ``try/finally`` in a ``for`` loop with code after the ``try``: the
    # ``break`` path is the ``finally`` copy, the iterator's pop, then a copy of the code
    # after the loop (3.10, 3.12+), which only a path in the loop's own try level was
    # taken for ("branches of an if meet nowhere").
    "for_break_in_try_finally_copied_follow": (r"""
def f(log, items):
    for x in items:
        try:
            if x is None:
                break
            log.append(10 // x)
        finally:
            log.append("release")
        log.append("next")
    return len(log)
""", "f", [([], [1, 2]), ([], [1, None, 2]), ([], [1, 0, 2]), ([], [])], ALL),
    # ... and in a ``while c:`` loop: the break path is the ``finally`` copy, then a copy
    # of the code after the loop, which here also ends normally.
    "while_break_in_try_finally_copied_follow": (r"""
def f(log, items):
    while items:
        try:
            x = items.pop()
            if x is None:
                break
            log.append(10 // x)
        finally:
            log.append("release")
        log.append("next")
    return len(log)
""", "f", [([], [1, 2]), ([], [1, None, 2]), ([], [1, 0, 2]), ([], [])], ALL),
    # 3.11+: the exceptional copy's POP_EXCEPT before that return lies outside the handler's
    # cleanup, so the handler's probe stopped there with the ``if`` read inverted (``if not
    # c: ...; RERAISE``): "exception handler with an unrecognised shape"; 3.12+ also copy the
    # short ``x = 0; return`` into the inner ``if``'s arms and the ``except`` clause of the
    # normal path's copy: "finally body not repeated on the normal path"
    # (subprocess.Popen.__exit__).
    "return_in_nested_if_of_finally_after_try": (r"""
def f(log, a, b, c):
    try:
        if a:
            log.append(1 // (a - 1))
    finally:
        if b == "stop":
            if c > 0:
                try:
                    log.append(1 // (c - 1))
                except ZeroDivisionError:
                    pass
            log.append("stopped")
            return
        log.append("wait")
""", "f", [([], a, b, c) for a in (0, 1, 2) for b in ("stop", "go") for c in (0, 1, 2)], ALL),
    # An ``if``/``else`` ending a ``finally`` body nested in another ``finally``: 3.11+ copy the
    # RERAISE into the first arm, which then reads as an ``if`` without ``else`` followed by
    # the second arm and the RERAISE; the normal path's copy is an ``if``/``else``: "finally
    # body not repeated on the normal path" (asyncio.tasks' _PyTask.__eager_start, 3.12+).
    "if_else_ending_nested_finally": (r"""
class T:
    def __init__(self, log, a, done):
        self.log, self.a, self._done = log, a, done
    def done(self):
        self.log.append("done?")
        return self._done
    def f(self, log):
        try:
            log.append(1)
            try:
                log.append(1 // self.a)
            finally:
                log.append(2)
        finally:
            try:
                log.append(3)
            finally:
                if self.done():
                    self.x = None
                    self = None
                else:
                    log.append(4)
        return log

def f(log, a, done):
    return T(log, a, done).f(log)
""", "T.f", [], ALL),
    # A ``break`` from a ``try`` body in a ``for`` loop that ends an ``except`` clause: 3.13
    # pops the iterator in a block of its own (the exception table cuts it) and copies the
    # clause's ``POP_EXCEPT; JUMP`` after it.  That ``break`` path runs no unwinding code; it
    # matches the loop's normal exit ("exception handler with an unrecognised shape": the
    # copy's POP_EXCEPT was read inside the loop).
    "break_from_try_in_loop_ending_except_clause": (r"""
def f(items, log, first):
    try:
        log.append(items[first])
    except IndexError:
        for p in items:
            try:
                x = 10 // p
                break
            except ZeroDivisionError:
                log.append("skip")
    try:
        log.append(x)
    except NameError:
        log.append("unbound")
    return log
""", "f", [([0, 0, 5], [], 9), ([0, 0], [], 9), ([2], [], 0), ([], [], 0), (["a"], [], 5)], ALL),
    # ... and with an ``else`` clause that returns, the ``break`` path is the only way to the
    # clause's end, which is the loop's follow (not an unwinding past the code after the
    # loop: linecache.updatecache, 3.13).
    "for_else_return_in_except_clause_break_from_try": (r"""
def f(items, log, first):
    x = None
    try:
        x = items[first]
    except IndexError:
        for p in items:
            try:
                q = 10 // p
            except (ZeroDivisionError, TypeError):
                continue
            try:
                x = 100 // q
                break
            except (ZeroDivisionError, ValueError):
                log.append("zero")
        else:
            return []
    log.append(x)
    return log
""", "f", [([0, 20, 5], [], 9), ([0], [], 9), ([3], [], 0), (["a", 2], [], 9), ([], [], 1)], ALL),
    # An ``if`` ending a ``try`` body inside an ``except`` clause that ends a loop's body:
    # 3.13 copies the clause's end (``POP_EXCEPT; JUMP`` back to the loop) into both arms, so
    # the arms read as ``POP_EXCEPT`` each and one ``continue`` after the ``if``
    # ("exception handler with an unrecognised shape"; os._fwalk 3.13+).
    "if_ending_try_in_except_clause_ending_loop": (r"""
def f(items, log):
    for x in items:
        try:
            if 10 // x:
                log.append("big")
        except ZeroDivisionError:
            try:
                if log.pop():
                    log.append("popped")
            except IndexError:
                log.append("empty")
    return log
""", "f", [([0, 1, 0, 0], []), ([0], [0]), ([0], [1]), ([20], []), (["a"], [])], ALL),
    # T3: a ``try/except`` whose clauses all go on, in the body of ``try/except/finally``:
    # 3.13+ put each clause's jump to the ``finally`` copy in a block of its own covered by
    # the ``finally`` only ("an except clause goes on where the try statement does not";
    # logging.Handler.handleError).
    "try_except_in_try_except_finally_clauses_go_on": (r"""
def f(r, log):
    try:
        try:
            raising(r)
        except RecursionError:
            pass
        except ValueError:
            log.append("value")
    except OSError:
        log.append("os")
    finally:
        log.append("fin")
    return log

def raising(r):
    if r is not None:
        raise r
""", "f", [(None, []), (RecursionError, []), (ValueError, []), (OSError, []), (KeyError, [])],
        ALL),
    # A ``try`` whose body is a ``try/except`` in an ``if`` arm: 3.12 counts the body's jump
    # past the ``else`` arm in the inner statement's region, and the inner clause jumps back
    # to it; walked from the clause, it started the same ``try`` again, without end
    # (RecursionError; unittest.main.TestProgram.runTests).
    "nested_try_except_in_if_arm_clause_jumps_back": (r"""
class O:
    def __init__(self, a, kind):
        self.a, self.kind, self.c = a, kind, "c"
    def b(self):
        if self.kind is not None:
            raise self.kind
        return "b"

def f(a, kind, log):
    obj = O(a, kind)
    if obj.a:
        try:
            try:
                r = obj.b()
            except TypeError:
                log.append("inner")
        except ValueError:
            log.append("outer")
    else:
        r = obj.c
    if log:
        return log
    return r
""", "f", [(a, k, []) for a in (0, 1) for k in (None, TypeError, ValueError, KeyError)], ALL),
    # S4 (runpy.run_path): ``return <expr>`` in two withs inside a try/finally whose finally
    # holds a try/except: the copy after the __exit__ calls returns the value at the end of
    # its body and its clause, and it was spilled into a temporary read after the withs,
    # unbound when an __exit__ suppresses.
    "return_in_withs_in_try_finally_holding_try_except": (QUIET + r"""
def f(log, x, suppress, c):
    log.append(c)
    try:
        with Quiet(log, suppress) as t, Quiet(log):
            log.append(t.suppress)
            return [10 // x].copy()
    finally:
        try:
            log.remove(c)
        except ValueError:
            pass
""", "f", [([], 2, True, 1), ([], 0, True, 1), ([], 0, False, 1), ([], 2, True, "enter"),
           ([], 0, False, "enter")], ALL),
    "return_in_with_in_try_finally_holding_try_except": (QUIET + r"""
def f(log, x, suppress, c):
    try:
        with Quiet(log, suppress):
            return 10 // x
    finally:
        try:
            log.remove(c)
        except ValueError:
            log.append("missing")
""", "f", [([], 2, True, 1), ([], 0, True, 1), ([], 0, False, 1), ([], 2, True, "enter")], ALL),
    # idlelib.run.Executive.runcode (3.10+): a clause with a named exception whose arms each
    # end in a copy of ``POP_EXCEPT; e = None; del e; return None`` (the function's end) read
    # as the code after the handler's tests: the clause fell out of one arm into the code
    # after the try (its else clause, written after it).
    "named_clause_arms_end_in_return_none_copies": (r"""
def f(log, x):
    try:
        if x is not None:
            raise ZeroDivisionError(*x)
        log.append('body')
    except ZeroDivisionError as e:
        if e.args:
            ob = e.args[0]
            if not isinstance(ob, int):
                log.append('ob ' + str(ob))
    except:
        log.append('other')
    else:
        log.append('else')
""", "f", [([], None), ([], ()), ([], (3,)), ([], ("s",)), ([], 5)], ALL),
    # idlelib.pyparse.Parser._study2: ``self.a, self.b = p, q`` evaluates both values before
    # the first store; written as two assignments, an unbound ``q`` raised after ``self.a``
    # was set.
    "parallel_assignment_to_attribute_and_subscript": (r"""
class Box:
    pass

G = []

def f(log, i):
    box = Box()
    if i > 0:
        q = i * 2
    if i > 1:
        r = -i
    p = len(log)
    try:
        box.a, box.b = p, q
        log.append(1)
        log[0], box.c = q, r
        log.append(2)
        box.d, G[:] = r, [p]
    finally:
        log.append(sorted(vars(box).items()))
    return log
""", "f", [([], 0), ([], 1), ([], 2)], ALL),
    # _pyio.FileIO.readall (3.10, 3.12): a while True that no jump leaves, 3.10/3.12 copying
    # the code after it into each break, one in an except clause after its POP_EXCEPT: read
    # as the clause's return, that code ran with the exception still handled (its own
    # exception got the handled one as context).
    "while_true_break_in_clause_copied_return": (r"""
def g(result):
    return 10 // (len(result) - 2)

def f(src):
    result = []
    while True:
        try:
            chunk = src.pop()
        except IndexError:
            if result:
                break
            return None
        if not chunk:
            break
        result.append(chunk)
    return g(result)
""", "f", [([],), ([0],), ([1, 2],), ([0, 1, 2],), ([3],), ([0, 1],)], ALL),
    # (the same reading must leave alone the re-raise of an unmatched exception after a clause
    # whose try statement returns everywhere: email._encoded_words.decode_b)
    "clause_holding_try_that_returns_everywhere": (r"""
def f(a, b, c):
    n = len(a)
    try:
        return (10 // a[0], [b] if n else [])
    except ZeroDivisionError:
        try:
            return (10 // b, [c])
        except ZeroDivisionError:
            try:
                return (10 // c, [b, c])
            except ZeroDivisionError:
                return (a, [n])
""", "f", [([1], 1, 1), ([0], 1, 1), ([0], 0, 1), ([0], 0, 0), ([], 0, 0)], ALL),
    # inspect.isawaitable (3.10): ``a or b and c or d`` over several lines.  3.10 threads the
    # ``and``'s jump into the ``or``'s only where their lines agree (else ``b.__bool__`` runs
    # twice); with lines but no end lines, the recompiled ``and`` took the ``or``'s line.
    "and_inside_or_over_several_lines": (r"""
class B:
    def __init__(self, log, v):
        self.log, self.v = log, v
    def __bool__(self):
        self.log.append(self.v)
        return bool(self.v)

def f(log, a, b, c, d):
    r = (B(log, a) or
         B(log, b) and
            B(log, c) or
         B(log, d))
    return r.v
""", "f", [([], 1, 0, 0, 0), ([], 0, 0, 1, 1), ([], 0, 1, 0, 2), ([], 0, 2, 3, 0)], ALL),
    # Found by the third-party sweep (jinja2's Parser.subparse shape): in a while loop inside a
    # try/finally, an ``elif`` whose code returns (through the finally's copy) beside an ``else``
    # that raises.  The test is no break: it only leaves, so it is written inline -- it was read
    # as the code after a ``break`` and the loop's normal exit did not rejoin it (fallback).
    "while_in_try_finally_elif_return_else_raise": (r"""
def f(stream, out):
    try:
        while stream:
            tok = stream.pop()
            if tok == 'a':
                out.append(1)
            elif tok == 'b':
                return 1
            else:
                raise AssertionError(tok)
        out.append(3)
    finally:
        out.append(4)
    return 2
""", "f", [([], []), (['a'], []), (['b', 'a'], []), (['c', 'a'], []), (['a', 'b'], [])], ALL),
    # ... and where the finally branches, the same reading cannot hold the return's copy in the
    # body (so it is read as a break and a while-else, as before): still verified and structured.
    "while_in_try_finally_elif_if_return_branching_finally": (r"""
def f(stream, end, out):
    try:
        while stream:
            tok = stream.pop()
            if tok == 'a':
                out.append(1)
            elif tok == 'b':
                if end:
                    return 1
                out.append(5)
            else:
                raise AssertionError(tok)
        out.append(3)
    finally:
        if end:
            out.append(4)
    return 2
""", "f", [([], 0, []), (['b', 'a'], 0, []), (['b', 'a'], 1, []), (['c'], 1, []),
           (['a', 'b'], 1, [])], ALL),
    # A class with annotations in a function of a module under ``from __future__ import
    # annotations`` (_pyrepl._threading_handler.install_threading_hook): its body stores the
    # annotations' text, so recompiled on its own (no future import) they are string literals,
    # and on 3.14+ (which defers annotations otherwise) the recompiled source imports the future.
    "future_annotations_class_in_function": (r"""
from __future__ import annotations
import dataclasses

def f(log, factory):
    @dataclasses.dataclass
    class H:
        lock: list[int] = dataclasses.field(default_factory=factory)
        n: int = 0

        def show(self, k: int = 1) -> tuple[int, ...]:
            log.append(k)
            return (self.n, len(self.lock), k)
    h = H()
    return (H.__annotations__, [(x.name, x.type) for x in dataclasses.fields(H)],
            H.show.__annotations__, h.show(), h.show(2))
""", "f", [([], list), ([], tuple)], ALL),
    # The with body's values are saved before its statements run: on 3.11+ ``q, k = a(), b()``
    # in a ``with`` became ``k = b()`` then ``q = a()`` (refused; the fallback was used), the
    # floor counting the entered value the body's first instruction pops.
    "with_body_two_name_assignment_in_order": (QUIET + r"""
def f(log, n, suppress):
    def a():
        log.append("a")
        return n
    def b():
        log.append("b")
        return 10 // n
    with Quiet(log, suppress):
        q, k = a(), b()
        log.append((q, k))
    return log
""", "f", [([], 2, False), ([], 0, True), ([], 0, False)], ALL),
    # 3.12/3.13 share one jump back among a loop body's ends (the with's, its suppression
    # path's, the except clause's) and give it the try's handler (a jump that cannot raise takes
    # the handler of the code falling into it): the try seemed to hold the loop, and went on
    # where it started ("a statement that goes on where it started";
    # ``multiprocessing.resource_sharer:_ResourceSharer._serve``, ``pdb:main``,
    # ``_pyrepl.simple_interact:run_multiline_interactive_console``).
    "while_true_try_with_break_except_if": (QUIET + r"""
def f(log, items):
    while 1:
        try:
            with Quiet(log, len(items) % 2) as q:
                x = items.pop()
                if x is None:
                    break
                log.append(10 // x)
        except:
            if log:
                log.append("caught")
    return len(log)
""", "f", [([], [None, 0, 1, 0, 5]), ([], [None]), ([], [None, 0]), ([], [None, 2, 0, 0])], ALL),
    "while_true_try_with_break_two_excepts": (QUIET + r"""
def f(log, items):
    while 1:
        try:
            with Quiet(log, len(items) % 3 == 1):
                x = items.pop()
                if x is None:
                    break
                log.append({1: 1}[10 // x])
        except ZeroDivisionError:
            if log:
                log.append("zero")
        except KeyError:
            pass
    return log
""", "f", [([], [None, 0, 10, 2, 0, 5]), ([], [None]), ([], [None, 0, 0, 0, 10])], ALL),
    # ``_ResourceSharer._serve``'s shape: the break ends the function (``return None``).
    "while_true_try_with_break_try_finally_serve": (QUIET + r"""
def f(log, items):
    while 1:
        try:
            with Quiet(log, len(items) % 2) as conn:
                msg = items.pop()
                if msg is None:
                    break
                key, n = msg
                try:
                    log.append(key // n)
                finally:
                    log.append("close")
        except:
            if len(log) % 3:
                log.append("hook")
""", "f", [([], [None, (1, 0), (4, 2), (3, 0)]), ([], [None]), ([], [None, 5, (1, 1)])], ALL),
    # A break out of a with whose suppression path and normal end go on to code after the
    # with, inside the loop: 3.10+ copy the code after the loop (a return) after the break's
    # __exit__ call (3.13+ jump there when the break is in a try).  Read as a return in the
    # with ("branches of an if meet nowhere" on 3.12 without the try, on 3.8-3.15 with it).
    "while_true_with_break_code_after_with": (QUIET + r"""
def f(log, items):
    while 1:
        with Quiet(log, len(items) % 2) as q:
            x = items.pop()
            if x is None:
                break
        log.append("end")
    return len(log)
""", "f", INPUTS_NONE_LAST, ALL),
    "while_true_try_with_break_code_after_try": (QUIET + r"""
def f(log, items):
    while 1:
        try:
            with Quiet(log, len(items) % 2) as q:
                x = items.pop()
                if x is None:
                    break
                if x == 3:
                    continue
                log.append(10 // x)
        except:
            log.append("caught")
        log.append("end")
    return len(log)
""", "f", INPUTS_NONE_LAST, ALL),
    "while_true_nested_with_break": (QUIET + r"""
def f(log, items):
    while 1:
        with Quiet(log, len(items) % 2) as q:
            with Quiet(log, len(items) % 3 == 0):
                x = items.pop()
                if x is None:
                    break
                log.append(10 // x)
    return len(log)
""", "f", INPUTS_NONE_LAST, ALL),
    # ... the break in a try inside the with: its path leaves the try, then the with (read at
    # the with's level; before, as a return computed after __exit__: refused, 3.10, 3.12).
    "while_true_with_try_break_code_after_loop": (QUIET + r"""
def f(log, items):
    while 1:
        with Quiet(log, len(items) % 2) as q:
            try:
                x = items.pop()
                if x is None:
                    break
                log.append(10 // x)
            except KeyError:
                log.append("caught")
    return len(log)
""", "f", INPUTS_NONE_LAST, ALL),
    # An assert in a try in a while True that only an exception leaves: the assert's raise
    # post-dominates the whole loop, so it was taken for where the assert's arms meet
    # ("branches of an if meet nowhere", 3.8-3.15;
    # ``_pyrepl.simple_interact:run_multiline_interactive_console`` on 3.14/3.15).
    "while_true_try_assert_except_if_after": (r"""
def f(log, flags):
    while True:
        try:
            assert not flags.pop()
        except:
            log.append("caught")
        if flags is not None:
            log.append(1 // len(flags))
""", "f", [([], [0, 1, 0]), ([], []), ([], [1]), ([], [0])], ALL),
    # ``except E: raise`` then ``except: if not c: raise`` (asyncore:close_all, 3.11+): the
    # first clause's ``POP_TOP; RAISE`` (dropping the matched exception) was read as the
    # chained-comparison cleanup before a copy of the second's ``RAISE``, and the two clauses
    # as one ``if match or not c: raise`` no handler parse reads (fallback).
    "except_reraise_then_bare_except_conditional_raise": (r"""
def f(log, exc, ignore_all):
    try:
        log.append("try")
        if exc is not None:
            raise exc(len(log))
    except KeyError:
        raise
    except:
        if not ignore_all:
            raise
    return log
""", "f", [([], None, False), ([], KeyError, True), ([], ValueError, True),
           ([], ValueError, False)], ALL),
    "loop_except_clauses_reraise_or_pass": (r"""
def f(log, items, ignore_all):
    for x in items:
        try:
            log.append(int(10 / x))
        except ZeroDivisionError as e:
            if type(x) is int and e.args:
                pass
            elif not ignore_all:
                raise
        except TypeError:
            raise
        except:
            if not ignore_all:
                raise
    log.clear()
    return log
""", "f", [([], [1, 2], False), ([], [1, 0, 2], False), ([], [1, 0.0], False),
           ([], [0.0, 2], True), ([], [1, "a"], True), ([], [1e-320, 2], True),
           ([], [1e-320, 2], False)], ALL),
    # A ``break`` after a call with an and/or argument in a nested ``for`` (3.11,
    # enum:EnumType._find_data_type_): the call's block starts at ``PRECALL``, which the
    # neutral list drops; its stack depth was read after ``PRECALL`` popped the arguments, so
    # the iterator's ``POP_TOP`` was not found, the break's block was taken for the loop's
    # follow and the walk ran into the enclosing loop's ``FOR_ITER`` (fallback).
    "nested_for_break_after_call_with_or_argument": (r"""
def f(rows, out, c):
    seen = []
    for chain in rows:
        for base in chain:
            if base is None:
                break
            if base > 1:
                out.append(c or base)
                break
            seen.append(base)
    return out, seen
""", "f", [([[0, 1, 2, 3], [None, 5], [1, 0]], [], 0), ([[0, 4], []], [], 7),
           ([], [], None)], ALL),
    # A ``for`` ending an ``except`` clause whose body's test only returns or raises (3.12+,
    # enum:Enum._add_value_alias_ on 3.13-3.15): its return path pops the iterator and the
    # exception outside the clause's region, so the natural loop lists the test as an exit;
    # read as the loop's follow, the normal exit became an ``else`` clause that never
    # rejoined it (fallback).
    "for_in_except_clause_test_only_returns": (r"""
def f(log, value, items):
    try:
        log.append(10 // value)
    except (TypeError, ZeroDivisionError):
        for m in items:
            if m == value:
                if m is not None:
                    log.append(("found", m))
                return log
    log.append("after")
    return log
""", "f", [([], 2, [0]), ([], 0, [1, 0, 2]), ([], 0, [1]), ([], None, [None]),
           ([], "a", ["a"])], ALL),
    # A clause's ``try/except/else`` whose ``else`` is an if-chain of ``break``s beside an
    # ``else: raise E`` (inspect:Signature._bind, 3.11-3.15): each break's ``POP_EXCEPT``
    # was left in its arm, the raise's arm having none to drop with them (fallback).
    "clause_try_else_breaks_beside_raise": (r"""
def f(log, args, params, kwargs):
    args, params = iter(args), iter(params)
    while True:
        try:
            a = next(args)
        except StopIteration:
            try:
                p = next(params)
            except StopIteration:
                break
            else:
                if p == 1:
                    break
                elif p in kwargs:
                    if p == 2:
                        log.append(("pos-only", p))
                        continue
                    break
                elif p == 3 or p is None:
                    break
                else:
                    raise TypeError(p) from None
        else:
            log.append(a)
            if a == 4:
                break
    if kwargs:
        log.append("kwargs")
    return log
""", "f", [([], [0, 4, 5], [], ()), ([], [], [2, 2, 1], (2,)), ([], [], [2, 5], (2, 5)),
           ([], [], [3], ()), ([], [7], [None], ()), ([], [], [6], ()), ([], [], [], ())], ALL),
    # ``if (a(x) if c else b(x)): break`` in a ``for`` (_py_warnings:warn_explicit, 3.15; the
    # shape fails on 3.8, 3.11-3.15): the first arm's test falls into a lone ``JUMP`` to the
    # break's block (iterator pop, jump), which the natural loop leaves out, so that block was
    # taken for the loop's follow and the normal exit for an ``else`` clause (fallback).
    "for_break_on_conditional_expression_test": (QUIET + r"""
def f(log, items, flag, suppress):
    found = None
    with Quiet(log, suppress):
        for item in items:
            if item and (item.startswith("a") if flag else item.endswith("z")):
                found = item
                break
            log.append(1 // len(item))
    return found, log
""", "f", [([], ["", "b", "az", "x"], True, True), ([], ["x", "yz", "q"], False, True),
           ([], ["b", "c"], True, False), ([], ["b", ""], False, True),
           ([], [None], True, False)], ALL),
    # ``lambda x: a if c else b`` (profiling.sampling.pstats_collector, 3.15): 3.14+ gives
    # each arm its own return, and the lambda's body read as ``if c: return a`` then
    # ``return b`` was no single expression (the enclosing function fell back).
    "lambda_conditional_expression_body": (r"""
def f(rows, k):
    by_ratio = sorted(rows, key=lambda x: (x[1] / x[2]) if x[2] > 0 else 0)
    nested = sorted(rows, key=lambda x: x[1] if x[2] else (x[0] if k and x else -x[0]))
    return by_ratio, nested, list(map(lambda x: None if x[0] else x, rows))
""", "f", [([(1, 2, 0), (2, 3, 4), (0, 5, 1)], True), ([(3, 1, 1), (0, 0, 0)], False),
           ([(1, 1, "a"), (2, 2, 0)], True)], ALL),
    # 3.12 (http.cookies:_unquote): a rotated ``while 0 <= i < n:`` whose body holds an ``if``,
    # then ``return len(res)``, copied after the guard and after the latch.  The two copies
    # (``LOAD_GLOBAL`` pushing a NULL: five neutral instructions, four of the compiler's) were
    # not seen as one exit; read as ``while True:``, the walk went on at the chain's cleanup
    # ``POP_TOP`` with nothing to pop (IndexError in the structurer, fallback).
    "rotated_chained_comparison_while_copied_call_return": (r"""
def f(i, n, step):
    res = []
    while 0 <= i < n:
        if step:
            res.append(i)
        i += 1 + abs(step)
    return len(res)
""", "f", [(0, 5, 0), (0, 5, 1), (-1, 5, 1), (3, 2, 1), (0, 9, -2)], ALL),
    # 3.12/3.13 (code:InteractiveConsole.interact on 3.12): ``while 1:`` whose body is a ``try``
    # holding a ``try`` whose clause breaks; the outer clause goes on at the loop's closing
    # jump, which 3.12+ leaves out of the exception table (normalize gives it the try's
    # handler).  The loop was taken for one the ``try`` encloses, and each reading of the
    # ``try`` began the loop again (RecursionError in the structurer, fallback).
    "while_try_in_try_inner_clause_breaks_outer_goes_on": (r"""
def f(log, events, c):
    while 1:
        try:
            try:
                ev = events.pop()
                if ev < 0:
                    raise ValueError(ev)
                log.append(10 // ev)
            except LookupError:
                break
        except ZeroDivisionError:
            log.append("zero")
    if c is None:
        log.append("none")
    return log
""", "f", [([], [], None), ([], [1, 0, 2], 1), ([], [5, 0, 0], None), ([], [1, -1, 2], None)],
        ALL),
    # 3.12 (shutil:_rmtree_safe_fd): a ``finally`` body ``if not c: A`` ending a loop body.
    # 3.12 inverts the normal path's test so that it falls into the jump back: the copy reads
    # ``if c: continue`` then ``A; continue`` (3.9, 3.13+: ``if not c: A else: continue`` where the
    # walk stops at the loop's next iteration): "finally body not repeated on the normal path".
    "if_not_ending_finally_ending_for_body": (r"""
def f(log, xs, flags):
    for x in xs:
        try:
            log.append(10 // x)
        finally:
            if not flags.get(x):
                log.append(("fin", x))
    return log
""", "f", [([], [1, 2, 5], {}), ([], [1, 2, 5], {2: 1}), ([], [3, 0, 2], {3: 1})], ALL),
    "if_not_ending_finally_in_try_else_ending_for_body": (r"""
def f(log, xs, flags):
    for x in xs:
        try:
            log.append(10 // x)
        except ZeroDivisionError:
            log.append("zero")
        else:
            try:
                log.append(20 // (x - 1))
            finally:
                if not flags.get(x):
                    log.append(("fin", x))
    return log
""", "f", [([], [2, 0, 5], {}), ([], [2, 0, 5], {2: 1}), ([], [3, 1, 2], {3: 1}),
           ([], [2, 1, 3], {1: 1})], ALL),
    # 3.10+ (code:InteractiveConsole.interact on 3.13-3.15): ``if a: A elif b: B`` ending a
    # ``finally`` body; the handler reads ``if a: A; RERAISE`` then ``if b: B; RERAISE`` and
    # RERAISE.  The last ``if``'s copy was factored out and the first left as an ``if`` of its
    # own (``if a: A`` then ``if b: B``: not the normal path's ``if``/``elif``).
    "if_elif_ending_finally": (r"""
def f(log, n, m):
    try:
        log.append(10 // n)
    finally:
        if m is None:
            log.append("none")
        elif m != "":
            log.append(m)
    return log
""", "f", [([], n, m) for n in (0, 2) for m in (None, "", "x")], ALL),
    # 3.13+ (linecache:updatecache on 3.14/3.15): ``try/except/else`` in an ``except`` clause;
    # the inner clause and the ``else`` clause each end in a copy of the outer clause's
    # ``POP_EXCEPT`` and jump: the ``else`` clause was not seen to end in that copy when it has
    # statements of its own ("except clauses continue differently from the try").
    "try_except_else_in_except_clause": (r"""
def f(log, a, b):
    try:
        log.append(10 // a)
    except ZeroDivisionError:
        try:
            log.append(10 // b)
        except (ZeroDivisionError, TypeError):
            log.append("inner")
        else:
            log.append("else")
    log.append("after")
    return log
""", "f", [([], a, b) for a in (0, 2) for b in (0, 5, None, "x")], ALL),
    # 3.8-3.15 (multiprocessing.forkserver:main on 3.14/3.15): ``except E: continue`` in a
    # ``with`` in a loop, then an ``if``/``else``: the clause leaves through the with's exit and
    # the loop's ``continue``, and was taken for the statement's way on ("try-else does not
    # rejoin").
    "with_try_except_continue_then_if_else_in_loop": (QUIET + r"""
def f(log, xs, suppress):
    for x in xs:
        with Quiet(log, suppress):
            try:
                log.append(10 // x)
            except ZeroDivisionError:
                continue
            if x > 2:
                log.append("big")
            else:
                log.append(x // (x - 1))
    return log
""", "f", [([], [1, 0, 3], True), ([], [3, 0, 2], False), ([], [5, 1, 0], True),
           ([], [1, 0, 3], False)], ALL),
    # 3.12/3.13 (multiprocessing.resource_sharer:_ResourceSharer._serve, pdb:main on 3.12):
    # ``while 1: try: with ...`` whose clause goes on at the loop's closing jump (a lone jump
    # normalize gives the try's handler): the loop was read inside the ``try`` ("loop body
    # runs on out of its region"; the real functions: "a statement that goes on where it
    # started").  Fixed with ``while_try_in_try_inner_clause_breaks_outer_goes_on``.  (With
    # code after the loop, or on 3.8/3.9, the structured form is refused -- a suppressed
    # exception ends the ``with`` into the code after the loop -- and the fallback is used:
    # see bench/sweep_findings.md, fb12.)
    "while_one_try_with_break_clause_goes_on": (QUIET + r"""
def f(log, xs, suppress):
    while 1:
        try:
            with Quiet(log, suppress):
                x = xs.pop()
                if x is None:
                    break
                log.append(10 // x)
        except ZeroDivisionError:
            log.append("zero")
""", "f", [([], [None, 2, 0, 5], True), ([], [None, 2, 0, 5], False), ([], [None], False)],
        ALL[2:]),
    # 3.10-3.13 drop the NOP of a ``while True:`` that starts a ``while c:`` body: the outer
    # loop's jump back and the inner loop's ``continue`` and closing jump share one head, and
    # the structurer went round the inner loop until RecursionError (networkx's
    # DegreeSequenceRandomGraph.phase2; fallback on 3.10-3.13).
    "while_cond_body_starts_with_while_true": (r"""
def f(n, skip, stop):
    out = []
    i = 0
    while i < n:
        while True:
            i += 1
            if i in skip:
                continue
            if i % stop == 0 or i >= n:
                break
        if i % 2:
            out.append(i)
    return out
""", "f", [(10, (2, 5), 3), (0, (), 2), (7, (1, 2, 3), 4), (12, (6,), 1)], ALL),
    "while_cond_body_starts_with_while_true_tuple_unpack": (r"""
def f(pairs, limit):
    seen = []
    total = 0
    while len(seen) < limit:
        while True:
            u, v = pairs.pop()
            if u == v:
                continue
            if u < v:
                break
        if u + v > 3:
            seen.append((u, v))
        total += 1
    return seen, total
""", "f", [([(1, 2), (3, 3), (5, 1), (2, 4), (0, 9)], 2), ([(1, 2)], 1)], ALL),
    "while_cond_body_starts_with_while_true_else_break": (r"""
def f(n, stop):
    out = []
    i = 0
    while i < n:
        while True:
            i += 1
            if i % 3 == 0:
                continue
            if i % stop == 0:
                break
        out.append(i)
        if i > 2 * n:
            break
    else:
        out.append("else")
    return out
""", "f", [(10, 2), (4, 5), (0, 1), (9, 7)], ALL),
    # A ``return`` in a ``for`` body that two arms share (``if a: pass`` / ``elif b: continue``
    # then ``return k``): 3.8-3.11 and 3.15 jump to it with the iterator still on the stack, and it
    # was read as the code after the loop (IndexError popping the iterator; fallback --
    # networkx's backends._get_from_cache).
    "for_return_after_if_pass_elif_continue": (r"""
def f(items, a, b):
    for k in items:
        if k in a:
            pass
        elif k in b:
            continue
        return k
    return None
""", "f", [([1, 2, 3], {2}, {1}), ([1, 2, 3], set(), {1, 2, 3}), ([], {1}, {1}),
          ([4, 5], set(), set())], ALL),
    "for_return_after_nested_if_elif_continue": (r"""
def f(cache, edge, fail):
    seen = []
    for (ekey, nkey), graph in list(cache.items()):
        if graph == fail:
            if ekey is False or edge is True:
                pass
            elif ekey is True or edge is False or not ekey <= edge:
                continue
            seen.append(nkey)
        elif edge is False or ekey is True:
            pass
        elif edge is True or ekey is False or not edge <= ekey:
            continue
        return (ekey, nkey), graph, seen
    return None, seen
""", "f", [({(False, 1): "g"}, {1}, "x"), ({(frozenset({1, 2}), 2): "x"}, frozenset({1}), "x"),
          ({(frozenset({1}), 3): "g", (True, 4): "h"}, frozenset({1, 2}), "x"), ({}, True, "x"),
          ({(frozenset({3}), 5): "x", (False, 6): "y"}, frozenset({1}), "x")], ALL),
    # A walrus inside the second chained comparison of an ``or`` (networkx's non_randomness):
    # read through the first chain's cleanup jump as one operand, the shared middle operand
    # was used conditionally (fallback on 3.10-3.15 after the chained-comparison fold; the
    # nested tests are kept there).  The ``while`` form falls back on 3.10-3.13 (left).
    "if_not_chain_or_not_chain_with_walrus": (r"""
def f(k, n, m):
    if not 1 <= k < n or not 0 < (p := (2 * k * m) / (n * (n - k))) < 1:
        raise ValueError(k)
    return p
""", "f", [(1, 4, 1), (2, 4, 1), (0, 4, 1), (3, 4, 0), (5, 4, 1), (1, 3, 0.5)], ALL),
    "if_chain_or_chain_with_walrus": (r"""
def f(k, n, m):
    if 1 <= k < n or 0 < (p := m * k) < 1:
        return 1, k
    return p
""", "f", [(1, 4, 1), (0, 4, 1), (-1, 4, -0.5), (5, 4, 0.1), (6, 4, 0)], ALL),
    "while_chain_or_chain_with_walrus": (r"""
def f(k, n, m):
    while 1 <= k < n or 0 < (p := m * k) < 1:
        k += 1
        if k > 5:
            return p
    return k
""", "f", [(1, 4, 0.1), (0, 4, 1), (-1, 4, -0.5), (5, 4, 0.1), (6, 4, 0)],
       ("3.8", "3.9", "3.14", "3.15")),
    # An and/or value that is one argument of a call spread over lines (webbrowser's
    # UnixBrowser._invoke, 3.10/3.11): read once as ``a and b or c`` (andor), the ``or`` took
    # the position of the next argument's line, so 3.11's optimiser did not thread the ``and``
    # jump into it and bool(a) ran twice when false -- refused, fallback.
    "and_or_value_argument_of_multiline_call": (r"""
def f(log, background, redirect, remote):
    if remote or background:
        inout = remote
    else:
        inout = None
    p = log.append(dict(
        a=1, stdin=inout,
        stdout=(redirect and inout or None),
        stderr=inout, z=True))
    return p, log
""", "f", [([], 0, 1, 0), ([], 1, 1, 0), ([], 1, 0, 5), ([], 0, 1, 3), ([], 0, [], 3)], ALL),
    "while_true_body_starts_with_while_true": (r"""
def f(n, stop):
    out = []
    i = 0
    while True:
        while True:
            i += 1
            if i % 3 == 0:
                continue
            if i % stop == 0:
                break
        out.append(i)
        if i > n:
            break
    return out
""", "f", [(10, 2), (4, 5), (0, 1)], ALL),
}

METHOD_INPUTS_MORE = {
    "if_else_ending_nested_finally": [([], a, d) for a in (0, 1) for d in (False, True)],
    "while_with_break_exit_then_copied_follow": [([], [0, 0, 3], True), ([], [2, 0, 3], True),
                                                 ([], [4, 0], True), ([], [0], False)],
}


def _run(func, args):
    args = copy.deepcopy(args)
    try:
        out = ("ok", func(*args))
    except Exception as exc:  # (compared by type, arguments and context)
        out = ("raise", type(exc).__name__, exc.args, type(exc.__context__).__name__)
    return out, args


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_structured_roundtrip(case_id):
    src, name, inputs, versions = CASES[case_id]
    ns = {"__name__": "struct_case_" + case_id, "__builtins__": builtins}
    exec(compile(src, "<%s>" % case_id, "exec", dont_inherit=True), ns)
    func = ns
    for part in name.split("."):
        func = func[part] if isinstance(func, dict) else getattr(func, part)
    checked = checked_recompile(func.__code__, lambda: recompile_full(
        func.__code__, None, func.__qualname__, write=False))
    first = checked.attempts[0]
    assert first.form == "structured"
    if PY in versions:
        assert first.ok, "structured form not verified: %s" % first.reason
        assert MARKER not in checked.result.source, "a region fell back:\n" + checked.result.source
    assert checked.result is not None, [a.reason for a in checked.attempts]
    glob = dict(ns)
    glob.update(checked.result.bindings)
    new = types.FunctionType(checked.result.code, glob, func.__name__, func.__defaults__,
                             func.__closure__)
    for args in inputs:
        assert _run(new, args) == _run(func, args), args
    if "." in name:  # a method: run it through the module's function ``f``
        owner = ns[name.split(".")[0]]
        for args in METHOD_INPUTS.get(case_id, []):
            expected = _run(ns["f"], args)
            setattr(owner, func.__name__, new)
            try:
                assert _run(ns["f"], args) == expected, args
            finally:
                setattr(owner, func.__name__, func)


METHOD_INPUTS = {
    **METHOD_INPUTS_MORE,
    "with_return_chained_comparison": [([], 1, True), ([], 0, True), ([], 0, False),
                                       ([], 5, True)],
}


def test_fallback_frozenset_constant_is_the_constant():
    """S8: the fallback wrote a frozenset constant as ``frozenset({...})``, a call of whatever
    the module's global ``frozenset`` is (here a shadowing one)."""
    from pellucid.decompiler.fallback import force_fallback
    from pellucid.verify import check_equivalent

    src = r"""
def frozenset(*args):
    return ("shadowed",)

def f(name, n):
    out = []
    for k in range(n):
        out.append(name in {"attlist", "element", "entity"})
        out.append((k, name) in {(1, "element"), (2, "x")})
    return out
"""
    ns = {"__name__": "struct_case_frozenset", "__builtins__": builtins}
    exec(compile(src, "<frozenset>", "exec", dont_inherit=True), ns)
    func = ns["f"]
    with force_fallback("test"):
        result = recompile_full(func.__code__, None, func.__qualname__, write=False)
    assert "__pellucid_fallback__" in result.source
    verdict = check_equivalent(func.__code__, result.code, result.bindings)
    assert verdict.ok, verdict.reason
    glob = dict(ns)
    glob.update(result.bindings)
    new = types.FunctionType(result.code, glob, "f")
    for args in [("element", 3), ("x", 3), ("entity", 0)]:
        assert _run(new, args) == _run(func, args)


# Loop/try shapes (tests/loop_try_shapes.py) whose except clause's tail ran with the exception
# still handled: the clause's ``continue`` and the else clause's ``break`` made the loop's head
# look like where the statement goes on, so the code after the try was copied into both.
LOOP_TRY_SHAPES = (
    "while_true__none__try_except_else__break_orelse_continue_handler",
    "while_cond__try_finally__try_except_else__break_handler_continue_orelse",
)


@pytest.mark.parametrize("shape_id", LOOP_TRY_SHAPES)
def test_loop_try_shape_structured(shape_id):
    import importlib.util
    import os

    spec = importlib.util.spec_from_file_location(
        "_pellucid_loop_try_shapes", os.path.join(os.path.dirname(__file__), "loop_try_shapes.py"))
    shapes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shapes)
    shape = shapes.find(shape_id)
    ns = {"__name__": "shape", "__builtins__": builtins}
    exec(compile(shape.src, "<%s>" % shape_id, "exec"), ns)
    func = ns["f"]
    checked = checked_recompile(func.__code__, lambda: recompile_full(
        func.__code__, None, func.__qualname__, write=False))
    assert checked.attempts[0].ok, checked.attempts[0].reason
    new = types.FunctionType(checked.result.code, dict(ns, **checked.result.bindings), "f")
    for items in shapes.INPUTS:
        assert shapes.run(new, items) == shapes.run(func, items), items


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match statements are 3.10+")
@pytest.mark.parametrize("case_id", ["match_or_pattern_last_in_sequence",
                                     "match_or_pattern_last_in_sequence_values"])
def test_match_or_pattern_last_in_sequence_is_structured(case_id):
    """An or-pattern as a sequence pattern's last item (``_pyrepl.utils:is_soft_keyword_used``,
    3.15): its last alternative fails to the compiler's copy of the exit the earlier tests fail
    to (the ``return`` after the match); both are the next case, and the match is structured."""
    import construct_cases_match as cases  # (tests/ is on sys.path under pytest)

    case = next(c for c in cases.CASES if c["id"] == case_id)
    ns = {"__name__": "struct_case_" + case_id, "__builtins__": builtins}
    exec(compile(case["src"], "<%s>" % case_id, "exec", dont_inherit=True), ns)
    func = ns["f"]
    checked = checked_recompile(func.__code__, lambda: recompile_full(
        func.__code__, None, func.__qualname__, write=False))
    first = checked.attempts[0]
    assert first.ok, "structured form not verified: %s" % first.reason
    assert MARKER not in checked.result.source, checked.result.source
    assert "match " in checked.result.source
    new = types.FunctionType(checked.result.code, ns, func.__name__)
    for args in case["calls"]:
        assert _run(new, args) == _run(func, args), args


# The last case before ``case _`` (or the match's end) has no ``COPY``: its pattern takes the
# subject.  A value or literal pattern there starts with loads, which were read as ordinary
# code -- ``case _: if subject == A.V:`` -- loading the subject again: for a global or a cell
# not what the code does (dataclasses:make_dataclass 3.14/3.15, refused; the fallback was used).
LAST_VALUE_CASES = {
    "match_global_subject_last_value_case_then_default": (r"""
class Fmt:
    STRING, FORWARDREF, VALUE = 1, 2, 3

FMT = None
BLOCKED = False

def f(log, value):
    global FMT
    FMT = value
    match FMT:
        case Fmt.STRING:
            return "s"
        case Fmt.FORWARDREF:
            log.append("ref")
            return "r"
        case Fmt.VALUE:
            if BLOCKED:
                raise NotImplementedError
            return "v"
        case _:
            log.append(value)
            raise NotImplementedError(value)
""", [([], 1), ([], 2), ([], 3), ([], 4), ([], None)]),
    "match_cell_subject_last_literal_case_no_default": (r"""
def f(log, value):
    def get():
        match value:
            case 1:
                log.append("one")
            case "two":
                log.append(2)
        return log
    return get()
""", [([], 1), ([], "two"), ([], 3)]),
}


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match statements are 3.10+")
@pytest.mark.parametrize("case_id", sorted(LAST_VALUE_CASES))
def test_match_last_value_case_is_a_case(case_id):
    src, inputs = LAST_VALUE_CASES[case_id]
    ns = {"__name__": "struct_case_" + case_id, "__builtins__": builtins}
    exec(compile(src, "<%s>" % case_id, "exec", dont_inherit=True), ns)
    func = ns["f"]
    checked = checked_recompile(func.__code__, lambda: recompile_full(
        func.__code__, None, func.__qualname__, write=False))
    first = checked.attempts[0]
    assert first.ok, "structured form not verified: %s" % first.reason
    assert MARKER not in checked.result.source, checked.result.source
    assert " == " not in checked.result.source, checked.result.source  # (patterns, not tests)
    new = types.FunctionType(checked.result.code, dict(ns, **checked.result.bindings), "f")
    for args in inputs:
        expected = _run(func, args)
        assert _run(new, args) == expected, args
