"""Construct cases: try/except/else/finally, raise, except*, assert.

Format: see construct_cases.py.  Many functions take a ``log`` list argument: the harness
compares the arguments after every call, so the log is checked even when the call raises.
"""

CASES = []


def case(id, src, calls, min_version=(3, 8), func="f", driver=None):
    CASES.append(dict(id=id, src=src, calls=calls, min_version=min_version, func=func,
                      driver=driver))


case("try_except_basic", r"""
def f(s):
    try:
        n = int(s)
    except ValueError:
        n = -1
    return n
""", [("12",), ("x",), (None,)])

case("try_except_as_name", r"""
def f(d, k):
    try:
        return d[k]
    except KeyError as e:
        return ("missing", e.args, type(e).__name__)
""", [({"a": 1}, "a"), ({}, "b"), ([], 0)])

case("try_multiple_handlers", r"""
def f(mode):
    try:
        if mode == 1:
            {}["k"]
        elif mode == 2:
            [][0]
        elif mode == 3:
            1 / 0
        elif mode == 4:
            raise TypeError("t")
        result = "no error"
    except KeyError:
        result = "key"
    except IndexError as e:
        result = "index " + str(e)
    except ZeroDivisionError:
        result = "zero"
    return result
""", [(0,), (1,), (2,), (3,), (4,)])

case("try_except_tuple_of_types", r"""
def f(x):
    try:
        return 10 // x
    except (ZeroDivisionError, TypeError) as e:
        return type(e).__name__
""", [(3,), (0,), ("a",), ([],)])

case("try_except_types_from_expression", r"""
ERRORS = (KeyError, IndexError)

def f(container, key):
    handled = ERRORS + (AttributeError,)
    try:
        return container[key]
    except handled as e:
        return "handled " + type(e).__name__
    except Exception:
        return "other"
""", [({1: 2}, 1), ({}, 1), ([], 3), (None, 0)])

case("try_bare_except", r"""
def f(x):
    try:
        r = 100 / x
    except:
        r = "failed"
    return r
""", [(4,), (0,), ("s",)])

case("try_except_else", r"""
def f(x, log):
    try:
        v = int(x)
    except ValueError:
        log.append("except")
        return None
    else:
        log.append("else")
        v *= 2
    log.append("after")
    return v
""", [("3", []), ("z", []), (None, [])])

case("try_finally_order", r"""
def f(x, log):
    try:
        log.append("body")
        if x:
            raise RuntimeError("boom", x)
        log.append("body end")
    finally:
        log.append("finally")
    log.append("after")
    return len(log)
""", [(0, []), (1, [])])

case("try_except_else_finally_paths", r"""
def f(mode, log):
    try:
        log.append("try")
        if mode == "raise":
            raise KeyError(mode)
        if mode == "return":
            return "from try"
    except KeyError as e:
        log.append(("except", e.args))
        if mode == "raise":
            return "from except"
    else:
        log.append("else")
        return "from else"
    finally:
        log.append("finally")
    return "unreachable"
""", [("raise", []), ("return", []), ("plain", [])])

case("try_reraise_bare_raise", r"""
def f(x, log):
    try:
        return 10 // x
    except ZeroDivisionError:
        log.append("logging")
        raise
""", [(2, []), (0, [])])

case("try_conditional_reraise", r"""
def f(x, log):
    try:
        return int(x)
    except ValueError as e:
        if x.startswith("-"):
            log.append("negative-ish")
            raise
        return "bad: " + str(e.args[0])[:20]
""", [("5", []), ("x", []), ("-x", [])])

case("raise_from_cause", r"""
def f(d, k):
    try:
        return d[k]
    except KeyError as e:
        raise LookupError("no key", k) from e
""", [({"a": 1}, "a"), ({}, "z")])

case("raise_from_none", r"""
def f(x):
    try:
        return int(x)
    except ValueError:
        raise TypeError("not a number") from None
""", [("1",), ("q",)])

case("raise_implicit_context", r"""
def f(x):
    try:
        1 / x
    except ZeroDivisionError:
        raise ValueError("while handling")
    return "ok"
""", [(1,), (0,)])

case("raise_from_expression", r"""
def f(n):
    causes = [KeyError("k"), None, ValueError]
    raise RuntimeError(n) from causes[n]
""", [(0,), (1,), (2,), (3,)])

case("raise_class_and_instance", r"""
def f(mode):
    if mode == 0:
        raise ValueError
    if mode == 1:
        raise ValueError()
    if mode == 2:
        raise ValueError("msg", 2)
    if mode == 3:
        raise StopIteration(3)
    if mode == 4:
        raise 42
    return mode
""", [(0,), (1,), (2,), (3,), (4,), (5,)])

case("raise_custom_exception_classes", r"""
class AppError(Exception):
    def __init__(self, code, detail="none"):
        super().__init__(code, detail)
        self.code = code

class NotFound(AppError):
    pass

def f(mode):
    try:
        if mode:
            raise NotFound(404, detail=mode)
        raise AppError(500)
    except NotFound as e:
        return ("not found", e.code, e.args)
""", [("x",), ("",)])

case("return_in_finally_swallows", r"""
def f(x):
    try:
        if x:
            raise ValueError(x)
        return "try"
    finally:
        return "finally"
""", [(0,), (1,)])

case("finally_runs_after_return_value_evaluated", r"""
def f(log):
    try:
        log.append("try")
        return list(log)
    finally:
        log.append("finally")
""", [([],), (["pre"],)])

case("finally_conditionally_overrides_return", r"""
def f(x):
    try:
        return "try", x
    finally:
        if x > 1:
            return "finally", x
""", [(0,), (5,)])

case("break_in_try_finally", r"""
def f(xs, log):
    for x in xs:
        try:
            if x < 0:
                break
            log.append(x)
        finally:
            log.append("f")
    else:
        log.append("else")
    return len(log)
""", [([], []), ([1, 2], []), ([1, -1, 2], [])])

case("continue_in_try_finally", r"""
def f(xs, log):
    for x in xs:
        try:
            if x % 2:
                continue
            log.append(x)
        finally:
            log.append("f")
        log.append("end")
    return len(log)
""", [([], []), ([1, 2, 3, 4], [])])

case("continue_in_finally_swallows", r"""
def f(xs):
    out = []
    for x in xs:
        try:
            out.append(10 // x)
        finally:
            if x == 0:
                continue
        out.append("after")
    return out
""", [([],), ([1, 0, 5],), ([1, "s"],)])

case("break_in_finally_swallows", r"""
def f(xs):
    out = []
    for x in xs:
        try:
            out.append(1 // x)
        finally:
            break
    return out
""", [([],), ([0],), ([1, 2],)])

case("return_inside_nested_finally_in_loop", r"""
def f(n, log):
    for i in range(n):
        try:
            try:
                if i == 2:
                    return i
            finally:
                log.append(("inner", i))
        finally:
            log.append(("outer", i))
    return -1
""", [(0, []), (2, []), (5, [])])

case("try_nested_rethrow_different", r"""
def f(x, log):
    try:
        try:
            log.append("inner")
            return [10][x]
        except IndexError:
            log.append("inner handler")
            raise KeyError(x)
        finally:
            log.append("inner finally")
    except KeyError as e:
        log.append("outer handler")
        return ("outer", e.args)
    finally:
        log.append("outer finally")
""", [(0, []), (3, []), ("s", [])])

case("try_inside_except_handler", r"""
def f(a, b):
    try:
        return int(a)
    except ValueError:
        try:
            return int(b) * 10
        except ValueError as inner:
            return "both bad: " + type(inner).__name__
        finally:
            pass
""", [("1", "x"), ("x", "2"), ("x", "y"), ("x", None)])

case("exception_name_unbound_after_handler", r"""
def f(x):
    e = "before"
    try:
        if x:
            raise ValueError(x)
    except ValueError as e:
        pass
    return e
""", [(0,), (1,)])

case("exception_in_else_not_caught", r"""
def f(x):
    try:
        v = 10 // x
    except ZeroDivisionError:
        return "handled"
    else:
        return v, 10 // (x - 1)
""", [(0,), (1,), (2,)])

case("except_base_class_matches_first", r"""
def f(container, key):
    try:
        container[key]
        return "found"
    except LookupError as e:
        return "lookup", type(e).__name__
    except KeyError:
        return "never"
""", [({}, "a"), ([], 0), ({"a": 1}, "a"), (3, 0)])

case("raise_in_finally_replaces", r"""
def f(x):
    try:
        if x:
            raise KeyError("original")
    finally:
        raise ValueError("from finally")
""", [(0,), (1,)])

case("sys_exc_info_state", r"""
import sys

def f(x):
    states = [sys.exc_info()[0]]
    try:
        if x:
            raise IndexError(x)
    except IndexError:
        states.append(sys.exc_info()[0].__name__)
        try:
            raise KeyError
        except KeyError:
            states.append(sys.exc_info()[0].__name__)
        states.append(sys.exc_info()[0].__name__)
    states.append(sys.exc_info()[0])
    return states
""", [(0,), (1,)])

case("try_retry_loop", r"""
def f(failures):
    attempts = 0
    while True:
        attempts += 1
        try:
            if attempts <= failures:
                raise ConnectionError("attempt", attempts)
            return attempts
        except ConnectionError as e:
            if attempts >= 3:
                raise RuntimeError("giving up") from e
            continue
""", [(0,), (2,), (5,)])

case("try_in_loop_else_finally_break", r"""
def f(values):
    results = []
    for v in values:
        try:
            n = int(v)
        except (TypeError, ValueError):
            results.append("skip")
            continue
        else:
            if n < 0:
                break
            results.append(n)
        finally:
            results.append(".")
    return results
""", [([],), (["1", "x", None, "-2", "3"],)])

case("assert_without_message", r"""
def f(x):
    assert x > 0
    return x
""", [(1,), (0,)])

case("assert_with_message", r"""
def f(xs):
    assert isinstance(xs, list), "expected list, got " + type(xs).__name__
    assert xs, ("empty", len(xs))
    return xs[0]
""", [([1],), ((1,),), ([],)])

case("except_star_basic", r"""
KINDS = {"V": ValueError, "K": KeyError, "T": TypeError}

def f(kinds):
    caught = []
    try:
        raise ExceptionGroup("group", [KINDS[k](i) for i, k in enumerate(kinds)])
    except* ValueError as eg:
        caught.append(("value", [e.args for e in eg.exceptions]))
    except* KeyError as eg:
        caught.append(("key", len(eg.exceptions)))
    return caught
""", [(["V"],), (["V", "K", "V"],), (["K"],), (["T", "V"],), ([],)], min_version=(3, 11))

case("except_star_naked_exception_is_wrapped", r"""
def f(x):
    result = None
    try:
        if x:
            raise ValueError(x)
    except* ValueError as eg:
        result = (type(eg).__name__, [e.args for e in eg.exceptions])
    except* (KeyError, IndexError):
        result = "lookup"
    return result
""", [(0,), (1,)], min_version=(3, 11))

case("except_star_else_finally", r"""
def f(kinds, log):
    try:
        if kinds:
            raise ExceptionGroup("eg", [KeyError(k) if k.startswith("k") else OSError(k) for k in kinds])
        log.append("no error")
    except* KeyError as eg:
        log.append(("keys", [e.args[0] for e in eg.exceptions]))
    except* OSError:
        log.append("os")
    else:
        log.append("else")
    finally:
        log.append("finally")
    return len(log)
""", [([], []), (["k1", "o1", "k2"], []), (["o"], [])], min_version=(3, 11))

case("except_star_bare_raise_merges", r"""
def f(reraise):
    try:
        try:
            raise ExceptionGroup("outer", [ValueError(1), TypeError(2)])
        except* ValueError:
            if reraise:
                raise
    except ExceptionGroup as eg:
        return [type(e).__name__ for e in eg.exceptions], eg.message
    return "nothing left"
""", [(0,), (1,)], min_version=(3, 11))

case("except_star_unhandled_propagates", r"""
def f(n):
    try:
        raise ExceptionGroup("many", [ValueError(i) for i in range(n)] + [KeyError("k")])
    except* ValueError as eg:
        handled = len(eg.exceptions)
    return handled
""", [(1,), (2,)], min_version=(3, 11))

# -- leaving try/finally, with and except clauses from inside a loop (≤3.10 unwinds at the jump)

case("loop_except_pass_is_last", r"""
def f(maps, key):
    for m in maps:
        try:
            return m[key]
        except KeyError:
            pass
    return "missing"
""", [([], "a"), ([{}, {"a": 1}], "a"), ([{}, {}], "a"), ([{}, 5], "a")])

case("while_true_break_in_try_finally", r"""
def f(xs, log):
    i = 0
    while True:
        try:
            if i >= len(xs) or xs[i] is None:
                break
            log.append(10 // xs[i])
        finally:
            log.append("f")
        i += 1
    log.append("after")
    return i
""", [([], []), ([1, 2, None, 3], []), ([1, 0], [])])

case("break_through_nested_finally", r"""
def f(xs, log):
    for x in xs:
        try:
            try:
                if x < 0:
                    break
                if x == 0:
                    continue
                log.append(x)
            finally:
                log.append("inner")
        finally:
            log.append("outer")
        log.append("end")
    else:
        log.append("else")
    return len(log)
""", [([], []), ([1, 0, 2], []), ([1, -1, 2], [])])

case("break_from_with_inside_try_finally", r"""
import contextlib

def f(xs, log):
    @contextlib.contextmanager
    def cm(x):
        log.append(("enter", x))
        yield x
        log.append(("exit", x))
    for x in xs:
        try:
            with cm(x):
                if x == "stop":
                    break
                if x == "skip":
                    continue
                log.append(x)
        finally:
            log.append("finally")
    return len(log)
""", [([], []), (["a", "skip", "b", "stop", "c"], [])])

case("break_in_try_finally_with_branching_finally", r"""
def f(xs, log):
    for x in xs:
        try:
            if x == "stop":
                break
            log.append(x)
        finally:
            if x:
                log.append("nonempty")
            else:
                log.append("empty")
    return log
""", [([], []), (["a", "", "stop", "b"], [])])

case("break_from_except_clause_with_code", r"""
def f(xs):
    out = []
    while xs:
        x = xs.pop()
        try:
            out.append(10 // x)
        except ZeroDivisionError:
            out.append("zero")
            break
        except TypeError:
            continue
        out.append("ok")
    return out, xs
""", [([],), ([1, 2],), ([3, 0, 5],), ([1, "s", 2],)])

# A ``while a or b:`` header (two test blocks) around a try whose ``if x or y: return``
# shares one return block between both tests and whose handler breaks (Sequence.index).
case("while_or_header_try_shared_return_break_in_handler", r"""
def f(seq, value, stop=None):
    i = 0
    while stop is None or i < stop:
        try:
            v = seq[i]
            if v is value or v == value:
                return i
        except IndexError:
            break
        i += 1
    raise ValueError(value)
""", [([1, 2, 3], 2), ([1, 2, 3], 4), ([1, 2, 3], 3, 2), ([None], None), ([1], 1, 0)])

# A ``for`` whose body always leaves (break from a try, raise from the handler) has no back
# edge: the loop is found from the iterator still being on the stack (enum.Flag).
case("for_never_loops_break_in_try_raise_in_handler", r"""
def f(xs):
    for x in reversed(xs):
        try:
            top = 10 // x
            break
        except Exception:
            raise TypeError("bad %r" % (x,)) from None
    return top * 2
""", [([1, 2],), ([0, 5],), ([5, 0],), ([],), (["a"],)])

case("for_never_loops_else_and_return", r"""
def f(xs, log):
    for x in xs:
        if x:
            log.append(x)
            break
        return "first falsy"
    else:
        log.append("empty")
    log.append("end")
    return log
""", [([], []), ([0], []), ([3, 0], [])])

# ``if a or b: return`` in a try body: both tests share the return block, which the POP_BLOCK
# puts outside the try region (ast.get_source_segment, 3.9).
case("try_or_condition_shared_return_then_more", r"""
def f(node):
    try:
        if node.get("a") is None or node.get("b") is None:
            return
        first = node["a"] - 1
        last = node["b"] - 1
    except AttributeError:
        return "no get"
    if first == last:
        return [first]
    return [first, last]
""", [({},), ({"a": 1},), ({"a": 3, "b": 3},), ({"a": 1, "b": 5},), (None,), ({"a": "x", "b": 1},)])

# ``while c: try: ...; break / except: ...`` with ``else: break`` inside ``while True`` inside a
# ``for``: 3.10's guard of the rotated loop has the outer ``break`` as its false arm, and the
# inner break target is the outer loop's ``continue`` (graphlib._find_cycle).
case("while_else_break_inside_while_true_with_try_break", r"""
def f(graph, starts):
    out = []
    for node in starts:
        if node in out:
            continue
        stack = [node]
        its = [iter(graph.get(node, ()))]
        while True:
            out.append(node)
            while stack:
                try:
                    node = next(its[-1])
                    break
                except StopIteration:
                    stack.pop()
                    its.pop()
            else:
                break
            if node in out:
                return out, "cycle", node
            stack.append(node)
            its.append(iter(graph.get(node, ())))
    return out
""", [({}, []), ({1: [2], 2: [3]}, [1]), ({1: [2], 2: [1]}, [1]), ({1: [2, 3], 3: []}, [1, 2]),
      ({1: None}, [1])])

# ``return`` from a try nested in except clauses: the return pops every enclosing clause's
# exception state (and clears its ``as`` name) first (email._encoded_words.decode_b, Enum.__new__).
case("return_from_try_nested_in_two_except_clauses", r"""
def f(s):
    try:
        return int(s), "int"
    except ValueError:
        try:
            return float(s), "float"
        except ValueError:
            try:
                return complex(s).real, "complex"
            except ValueError:
                return s, "text"
""", [("1",), ("1.5",), ("2j",), ("x",), (None,)])

case("return_from_try_nested_in_named_except_clause", r"""
def f(x, log):
    try:
        return 10 // x
    except ZeroDivisionError as e:
        log.append(type(e).__name__)
        try:
            return int("z" if x == 0 else x)
        except ValueError as e2:
            return "bad", str(e2)[:10], len(log)
""", [(2, []), (0, []), (0.0, ["a"]), ("s", [])])

# A try inside an except clause inside a try: its clauses fall off the end of the outer try
# (≤3.10 pops that block first) or return through both (statistics._exact_ratio).
case("try_in_clause_in_try_falls_off_outer_try", r"""
def f(x):
    try:
        if type(x) is float or type(x) is bool:
            return x.as_integer_ratio()
        try:
            return (x.numerator, x.denominator)
        except AttributeError:
            try:
                return x.as_integer_ratio()
            except AttributeError:
                pass
    except (OverflowError, ValueError):
        return (x, None)
    msg = "can't convert {}"
    raise TypeError(msg.format(type(x).__name__))
""", [(1,), (0.25,), (float("inf"),), ("s",), (True,)])

case("return_constant_from_clause_in_clause_in_try", r"""
def f(x):
    try:
        try:
            return 1 / x
        except ZeroDivisionError:
            try:
                return x.real + x.foo
            except AttributeError:
                pass
    except TypeError:
        return -1
    return "end"
""", [(2,), (0,), ("s",), (0.0,)])

# try/except/else in an ``if`` in a loop: the ``else`` clause ends in ``continue`` while the
# clauses go on after the try (email._header_value_parser.get_unstructured).
case("try_else_continue_clauses_fall_through_in_loop", r"""
def f(values, log):
    out = []
    while values:
        value = values.pop()
        ok = True
        if value.startswith("="):
            try:
                token = int(value[1:])
            except ValueError:
                ok = False
            except TypeError:
                pass
            else:
                if token > 5:
                    log.append("big")
                out.append(token)
                continue
        out.append((value, ok))
    return out
""", [([], []), (["=3", "x", "=9", "=z"], []), (["=", "a"], ["s"]), ([None], [])])

# A ``finally`` ending in an ``if``, at the end of an outer try: 3.10 copies the RERAISE and the
# function's ``return`` into the ``if``'s arms, on both the exception and the normal path
# (glob._iterdir).
case("finally_ending_in_if_inside_try_at_function_end", r"""
def f(items, fd, log):
    try:
        try:
            for entry in items:
                log.append(10 // entry)
        finally:
            if fd is not None:
                log.append(("close", fd))
    except ZeroDivisionError:
        return
""", [([], None, []), ([1, 2], 3, []), ([1, 0], 3, []), ([0], None, []), (["x"], 1, [])])

# email._header_value_parser.get_local_part/get_msg_id, dataclasses.make_dataclass: a try
# statement inside an except clause.  3.12+ copies the outer clause's end (``POP_EXCEPT`` and
# the return, 3.13 also the jump after it) into the inner try's body and into its clause.
case("try_in_except_clause_shared_return", r"""
def f(a, b):
    try:
        t = int(a)
    except ValueError:
        try:
            t = int(b)
        except ValueError:
            if b == "raise":
                raise
            t = 0
    return t
""", [("1", "x"), ("x", "2"), ("x", "y"), ("x", "raise"), ("x", None)])

case("try_in_except_clause_then_more_code", r"""
def f(a, b, log):
    t = None
    try:
        t = int(a)
    except ValueError:
        try:
            t = int(b)
            log.append("second")
        except ValueError:
            if b == "raise":
                raise
            t = -1
    log.append(t)
    if t:
        log.append("nonzero")
    return t
""", [("1", "x", []), ("x", "2", []), ("x", "y", []), ("x", "raise", []), ("0", None, []),
      ("x", None, [])])

# enum._simple_enum's convert_class: a ``for`` loop with ``break`` inside an except clause;
# 3.12+ copies the clause's end into the break path (``POP_TOP; POP_EXCEPT; JUMP after`` or
# ``...; RETURN_VALUE``) next to the loop's normal exit.
case("for_break_in_except_clause_copies_clause_end", r"""
def f(member, unh):
    try:
        contained = unh[member]
    except TypeError:
        contained = None
        for m in unh:
            if m == member:
                contained = m
                break
    return contained
""", [(0, [5]), ([1], [[1], 2]), ([1], [3, 4]), ([1], None), ("k", {"k": 1})])

case("for_break_in_except_clause_inside_loop", r"""
def f(items, vm, unh):
    out = []
    for name, member in items:
        try:
            contained = vm.get(member)
        except TypeError:
            contained = None
            if member in unh:
                for m in unh:
                    if m == member:
                        contained = m
                        break
        if contained is not None:
            out.append((name, contained))
        else:
            out.append(name)
    return out
""", [([], {}, []), ([("a", 1), ("b", [2]), ("c", [3])], {1: "x"}, [[2]]), ([("a", [1])], {}, None),
      ([("a", 1)], None, [])])

# email.message.Message.get_payload: a try statement inside a try body; 3.10+ gives the inner
# clause and the inner body each a copy of the ``return`` after both statements.
case("try_in_try_body_shared_return", r"""
def f(payload, cs):
    if isinstance(payload, str):
        try:
            b = payload.encode("ascii")
            try:
                payload = b.decode(cs)
            except LookupError:
                payload = b.decode("ascii", "replace")
        except UnicodeEncodeError:
            pass
    return payload
""", [("x", "ascii"), ("\u00e9", "ascii"), ("x", "no-such-codec"), (1, "ascii"), ("x", None)])

# threading.Condition.wait: a try body that returns, with a finally body that branches (the
# compiler copies the return into each arm of the finally's ending ``if`` on the normal path)
# or holds a try/except of its own (the return is copied into its body and its clause).
case("try_return_finally_ends_with_if", r"""
def f(t, log):
    got = False
    try:
        got = t > 0
        return got
    finally:
        log.append(1)
        if not got:
            log.append(2)
""", [(1, []), (0, []), (None, [])])

case("try_return_finally_holds_try_except", r"""
def f(w, t):
    try:
        return t > 0
    finally:
        try:
            w.remove(1)
        except ValueError:
            pass
""", [([1, 2], 1), ([2], 0), ([], None), (None, 3)])

case("try_return_finally_if_then_try_except", r"""
def f(w, t, log):
    got = False
    try:
        if t is None:
            got = True
        else:
            got = t > 0
        return got
    finally:
        log.append(1)
        if not got:
            try:
                w.remove(1)
            except ValueError:
                pass
""", [([1], None, []), ([1], 0, []), ([], 0, []), ([1], 2, []), (None, 0, []), ([1], "x", [])])

# A try statement whose body starts with a while loop: the loop's first block is the try
# body's (always for ``while True:``; from 3.14 for ``while cond:`` too, which no longer
# repeats its test at the end), and the finally clause must run once, after the loop
# (os.fwalk, shutil._rmtree_safe_fd on 3.14 were decompiled with the loop outside).
case("try_finally_around_while_loop", r"""
def f(stack, stop_at):
    seen = []
    try:
        while stack:
            x = stack.pop()
            seen.append(x)
            if x == stop_at:
                break
    finally:
        seen.append("finally")
        while stack:
            seen.append(("left", stack.pop()))
    return seen
""", [([1, 2, 3], 2), ([], 0), ([5], 9), ([1, 2], 1)])

case("try_finally_around_while_true_break", r"""
def f(seen):
    try:
        while True:
            seen.append("again")
            if len(seen) > 3:
                break
    finally:
        seen.append("done")
    return seen
""", [([],), ([1, 2, 3, 4],)])

case("try_except_around_while_loop_raising", r"""
def f(n):
    out = []
    try:
        while n:
            n -= 1
            out.append(10 // n)
    except ZeroDivisionError:
        out.append("zero")
    finally:
        out.append("end")
    return out
""", [(3,), (0,), (1,)])
