"""Construct cases: generators, coroutines, async generators, async for/with, await.

Format: see construct_cases.py.  Every case here has a ``driver`` defined in its source that
runs the generator/coroutine and returns plain data.  Coroutines are run without an event loop
(``coro.send(None)`` until StopIteration) unless the case says asyncio.
"""

CASES = []


def case(id, src, calls, min_version=(3, 8), func="f", driver="drive"):
    CASES.append(dict(id=id, src=src, calls=calls, min_version=min_version, func=func,
                      driver=driver))


# Drive a generator with next() to the end; record yields, the return value or the exception.
NEXT_DRIVER = r"""
def drive(f, *args):
    gen = f(*args)
    out = []
    while True:
        try:
            out.append(next(gen))
        except StopIteration as stop:
            out.append(("return", stop.value))
            return out
        except Exception as exc:
            out.append(("raised", type(exc).__name__, exc.args))
            return out
"""

# Start a generator, then send each value of ``sends`` into it.
SEND_DRIVER = r"""
def drive(f, sends, *args):
    gen = f(*args)
    out = [next(gen)]
    for value in sends:
        try:
            out.append(gen.send(value))
        except StopIteration as stop:
            out.append(("return", stop.value))
            break
        except Exception as exc:
            out.append(("raised", type(exc).__name__, exc.args))
            break
    return out
"""

# An awaitable that suspends once, and a loop-free coroutine runner.
RUNNER = r"""
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
"""

# ----------------------------------------------------------------------------- generators

case("gen_simple_yield", NEXT_DRIVER + r"""
def f(n):
    for i in range(n):
        yield i * i
    yield "end"
""", [(0,), (3,)])

case("gen_return_value", NEXT_DRIVER + r"""
def f(xs):
    total = 0
    for x in xs:
        if x is None:
            return "stopped early", total
        total += x
        yield total
    return total
""", [([],), ([1, 2, 3],), ([1, None, 3],)])

case("gen_send_values", SEND_DRIVER + r"""
def f():
    total = 0
    while True:
        value = yield total
        if value is None:
            return "done", total
        total += value
""", [([1, 2, 3],), ([5, None, 7],), ([],), (["s"],)])

case("gen_yield_expression_positions", SEND_DRIVER + r"""
def f(x):
    a = (yield x) + (yield x + 1)
    b = [(yield "item"), (yield)]
    yield a, b
""", [([10, 20, "p", "q", "end"], 1), ([1], 0), (["s", 1], 0)])

case("gen_yield_from_iterables", NEXT_DRIVER + r"""
def f(xs):
    yield from xs
    yield from range(2)
    yield from (x * 2 for x in xs)
""", [([],), ([1, "a"],), (None,)])

case("gen_yield_from_return_value", NEXT_DRIVER + r"""
def f(n):
    def sub(k):
        for i in range(k):
            yield ("sub", i)
        return k * 100
    results = []
    for k in range(n):
        r = yield from sub(k)
        results.append(r)
    return results
""", [(0,), (3,)])

case("gen_yield_from_send_passthrough", SEND_DRIVER + r"""
def f():
    def inner():
        got = []
        while len(got) < 2:
            got.append((yield len(got)))
        return got
    result = yield from inner()
    yield ("inner returned", result)
""", [(["a", "b", "c"],), (["x"],)])

case("gen_throw_handled", r"""
KINDS = {"V": ValueError, "K": KeyError, "T": TypeError}

def drive(f, kinds):
    gen = f()
    out = [next(gen)]
    for kind in kinds:
        try:
            out.append(gen.throw(KINDS[kind](kind)))
        except StopIteration as stop:
            out.append(("return", stop.value))
            break
    return out

def f():
    count = 0
    last = None
    while True:
        try:
            yield ("waiting", count, last)
        except ValueError as e:
            count += 1
            last = e.args
        except KeyError:
            return "key error ends"
""", [([],), (["V", "V"],), (["V", "K", "V"],), (["T"],)])

case("gen_close_runs_finally", r"""
def drive(f, n):
    log = []
    gen = f(log)
    for _ in range(n):
        log.append(next(gen))
    gen.close()
    log.append("closed")
    return log

def f(log):
    try:
        i = 0
        while True:
            yield i
            i += 1
    except GeneratorExit:
        log.append("GeneratorExit")
        raise
    finally:
        log.append("finally")
""", [(0,), (1,), (3,)])

case("gen_ignoring_generator_exit", r"""
def drive(f):
    gen = f()
    first = next(gen)
    try:
        gen.close()
    except RuntimeError as e:
        result = first, "runtime error", e.args
    gen.close()
    return result, "closed on second try"

def f():
    ignored = False
    while True:
        try:
            yield 1
        except GeneratorExit:
            if ignored:
                return
            ignored = True
""", [()])

case("gen_raises_midway", NEXT_DRIVER + r"""
def f(xs):
    for x in xs:
        yield 10 // x
""", [([5, 2],), ([5, 0, 1],)])

case("gen_stopiteration_becomes_runtime_error", NEXT_DRIVER + r"""
def f(xs):
    it = iter(xs)
    while True:
        yield next(it)
""", [([],), ([1, 2],)])

case("gen_try_finally_in_loop_with_return", NEXT_DRIVER + r"""
def f(n, log):
    for i in range(n):
        try:
            if i == 2:
                return "early"
            yield i
        finally:
            log.append(("finally", i))
    log.append("loop done")
""", [(0, []), (2, []), (5, [])])

case("gen_yield_inside_with", r"""
class CM:
    def __init__(self, log):
        self.log = log
    def __enter__(self):
        self.log.append("enter")
        return "res"
    def __exit__(self, exc_type, exc, tb):
        self.log.append(("exit", exc_type and exc_type.__name__))
        return False

def drive(f, n):
    log = []
    gen = f(log)
    out = [x for _, x in zip(range(n), gen)]
    gen.close()
    return out, log

def f(log):
    with CM(log) as r:
        yield r
        yield r + "2"
    yield "after"
""", [(0,), (1,), (2,), (5,)])

case("gen_infinite_consumer_break", r"""
def drive(f, limit):
    out = []
    for v in f():
        if v > limit:
            break
        out.append(v)
    return out

def f():
    a, b = 0, 1
    while True:
        yield a
        a, b = b, a + b
""", [(0,), (50,)])

case("gen_bare_yield_and_yield_none", NEXT_DRIVER + r"""
def f(n):
    yield
    x = yield None
    for _ in range(n):
        yield
    return x
""", [(0,), (2,)])

case("gen_yield_from_throw_delegation", r"""
def drive(f):
    log = []
    gen = f(log)
    log.append(next(gen))
    log.append(gen.throw(KeyError("k")))
    try:
        gen.throw(IndexError("i"))
    except StopIteration as s:
        log.append(("return", s.value))
    return log

def f(log):
    def inner():
        try:
            yield "inner-1"
        except KeyError as e:
            log.append(("inner caught", e.args))
            yield "inner-2"
        return "inner-done"
    try:
        result = yield from inner()
    except IndexError as e:
        return ("outer caught", e.args)
    return result
""", [()])

case("gen_method_in_nested_class", NEXT_DRIVER + r"""
def f(n):
    class Countdown:
        def __init__(self, start):
            self.start = start
        def __iter__(self):
            k = self.start
            while k > 0:
                yield k
                k -= 1
    c = Countdown(n)
    return list(c), sum(c), (yield from c)
""", [(0,), (3,)])

case("gen_send_before_start", r"""
def drive(f):
    gen = f()
    try:
        gen.send(1)
    except TypeError as e:
        first = e.args
    return first, next(gen), gen.send(5)

def f():
    x = yield "started"
    yield ("got", x)
""", [()])

case("genexp_driven_by_caller", NEXT_DRIVER + r"""
def f(xs):
    g = (x + 1 for x in xs if x)
    yield next(g, "empty")
    yield from g
""", [([],), ([0, 1, 2],)])

# ----------------------------------------------------------------------------- coroutines

case("coro_await_simple_awaitable", RUNNER + r"""
async def f(n):
    results = []
    for i in range(n):
        results.append(await Ready(i))
    return results
""", [(0,), (3,)])

case("coro_await_chain", RUNNER + r"""
async def f(x):
    async def double(v):
        await Ready("doubling")
        return v * 2
    async def add(a, b):
        return await double(a) + await double(b)
    total = await add(x, 1)
    return total, await double(total)
""", [(1,), ("s",)])

case("coro_exception_handling", RUNNER + r"""
async def f(x):
    async def risky(v):
        await Ready(v)
        if v < 0:
            raise ValueError("negative", v)
        return v
    try:
        r = await risky(x)
    except ValueError as e:
        r = ("handled", e.args)
    finally:
        await Ready("cleanup")
    return r
""", [(1,), (-1,)])

case("coro_uncaught_exception", RUNNER + r"""
async def f(x):
    await Ready(1)
    return 10 // x
""", [(2,), (0,)])

case("coro_await_in_expressions", RUNNER + r"""
async def f(a, b):
    async def val(v):
        return v
    r = [await val(a) + await val(b), (await val(a)) * 2, await val(a) if await val(b) else "no", not await val(b)]
    d = {await val("k"): await val(a)}
    return r, d, await val(await val(b))
""", [(1, 2), (3, 0)])

case("coro_await_in_except_and_finally", RUNNER + r"""
async def f(x, log):
    try:
        try:
            if x:
                raise RuntimeError(x)
            log.append(await Ready("body"))
        except RuntimeError as e:
            log.append(await Ready(("except", e.args)))
            raise
        finally:
            log.append(await Ready("finally"))
    except RuntimeError:
        return "reraised"
    return "clean"
""", [(0, []), (1, [])])

case("coro_types_coroutine_send_values", r"""
import types

@types.coroutine
def suspend(value):
    received = yield value
    return received

def drive(f, sends):
    coro = f()
    out = [coro.send(None)]
    try:
        for s in sends:
            out.append(coro.send(s))
    except StopIteration as stop:
        out.append(("return", stop.value))
    return out

async def f():
    a = await suspend("first")
    b = await suspend(("second", a))
    return a, b
""", [(["x", "y"],), (["only"],)])

case("coro_throw_into_coroutine", RUNNER + r"""
def drive(f, kind):
    coro = f()
    first = coro.send(None)
    try:
        coro.throw({"K": KeyError, "V": ValueError}[kind]("thrown"))
    except StopIteration as stop:
        return first, ("return", stop.value)
    except ValueError as exc:
        return first, ("escaped", exc.args)

async def f():
    try:
        await Ready("waiting")
    except KeyError as e:
        return "caught " + repr(e.args)
    return "not thrown"
""", [("K",), ("V",)])

case("coro_asyncio_gather", r"""
import asyncio

def drive(f, *args):
    return asyncio.run(f(*args))

async def f(n):
    order = []
    async def worker(name, steps):
        for _ in range(steps):
            await asyncio.sleep(0)
        order.append(name)
        return name.upper()
    results = await asyncio.gather(worker("a", n), worker("b", 1), worker("c", 0))
    return results, order
""", [(0,), (3,)])

# ----------------------------------------------------------------------------- async with / async for

ASYNC_HELPERS = RUNNER + r"""
class ACM:
    def __init__(self, log, name="cm", suppress=False):
        self.log = log
        self.name = name
        self.suppress = suppress
    async def __aenter__(self):
        self.log.append(("aenter", self.name))
        await Ready("entering")
        return self.name
    async def __aexit__(self, exc_type, exc, tb):
        self.log.append(("aexit", self.name, exc_type and exc_type.__name__))
        await Ready("exiting")
        return self.suppress

class Ticker:
    def __init__(self, n):
        self.n = n
        self.i = 0
    def __aiter__(self):
        return self
    async def __anext__(self):
        if self.i >= self.n:
            raise StopAsyncIteration
        self.i += 1
        await Ready(("tick", self.i))
        return self.i
"""

case("async_with_multiple_items", ASYNC_HELPERS + r"""
async def f(log, fail, suppress):
    async with ACM(log, "a", suppress) as a, ACM(log, "b") as b:
        log.append((a, b))
        if fail:
            raise KeyError("inside")
    log.append("after")
    return len(log)
""", [([], 0, False), ([], 1, True), ([], 1, False)])

case("async_with_return_and_as_unpacking", ASYNC_HELPERS + r"""
class PairCM(ACM):
    async def __aenter__(self):
        await super().__aenter__()
        return (self.name, len(self.log))

async def f(log, early):
    async with PairCM(log, "p") as (name, count):
        if early:
            return name, count
        log.append("late")
    return "end", count
""", [([], 0), ([], 1)])

case("async_for_break_continue_else", ASYNC_HELPERS + r"""
async def f(n, stop):
    seen = []
    async for t in Ticker(n):
        if t == stop:
            break
        if t % 2:
            continue
        seen.append(t)
    else:
        seen.append("exhausted")
    return seen
""", [(0, -1), (5, -1), (5, 4)])

case("async_for_inside_async_with_return", ASYNC_HELPERS + r"""
async def f(log, target):
    async with ACM(log):
        async for t in Ticker(5):
            log.append(t)
            if t == target:
                return ("found", t)
    return "not found"
""", [([], 2), ([], 9)])

case("async_for_tuple_target_over_async_generator", RUNNER + r"""
async def f(pairs):
    async def agen():
        for i, p in enumerate(pairs):
            await Ready(i)
            yield i, p
    out = []
    async for i, (a, *b) in agen():
        out.append((i, a, b))
    return out
""", [([],), ([(1, 2, 3), "xy"],), ([5],)])

# ----------------------------------------------------------------------------- async generators

case("asyncgen_collected_without_loop", RUNNER + r"""
def collect(agen):
    items = []
    while True:
        try:
            items.append(run(agen.__anext__()))
        except StopAsyncIteration:
            return items
        except Exception as exc:
            items.append(("raised", type(exc).__name__, exc.args))
            return items

def drive2(f, *args):
    return collect(f(*args))

async def f(n):
    for i in range(n):
        got = await Ready(i)
        yield ("item", got)
    if n > 2:
        raise ValueError("too many")
""", [(0,), (2,), (3,)], driver="drive2")

case("asyncgen_asyncio_run", r"""
import asyncio

def drive(f, *args):
    async def main():
        return [v async for v in f(*args)]
    return asyncio.run(main())

async def f(n):
    for i in range(n):
        await asyncio.sleep(0)
        if i == 3:
            return
        yield i * 10
""", [(0,), (2,), (6,)])

case("asyncgen_asend_athrow_aclose", r"""
import asyncio

def drive(f, sends):
    async def main():
        g = f()
        out = [await g.asend(None)]
        for s in sends:
            try:
                if s == "throw":
                    out.append(await g.athrow(KeyError("k")))
                else:
                    out.append(await g.asend(s))
            except StopAsyncIteration:
                out.append("stopped")
                break
        await g.aclose()
        return out
    return asyncio.run(main())

async def f():
    received = []
    while True:
        try:
            value = yield len(received)
        except KeyError:
            yield "caught"
            continue
        if value is None:
            return
        received.append(value)
""", [([1, 2],), (["throw", 3, 4],), ([None, 5],)])

case("asyncgen_with_async_with_and_finally", ASYNC_HELPERS + r"""
def drive2(f, n, log):
    agen = f(log)
    items = []
    for _ in range(n):
        try:
            items.append(run(agen.__anext__()))
        except StopAsyncIteration:
            items.append("stop")
            break
    run(agen.aclose())
    return items, log

async def f(log):
    try:
        async with ACM(log, "gen"):
            yield "one"
            yield "two"
    finally:
        log.append("finally")
""", [(0, []), (1, []), (3, [])], driver="drive2")

case("async_comprehensions", RUNNER + r"""
async def f(n):
    async def agen():
        for i in range(n):
            yield await Ready(i)
    async def square(v):
        return v * v
    evens = [x async for x in agen() if x % 2 == 0]
    squares = [await square(x) for x in range(n)]
    mapping = {x: await square(x) async for x in agen()}
    total = 0
    async for v in (x + 1 async for x in agen()):
        total += v
    return evens, squares, mapping, total
""", [(0,), (4,)])

case("gen_yield_in_except_and_finally", NEXT_DRIVER + r"""
def f(xs):
    for x in xs:
        try:
            yield 10 // x
        except ZeroDivisionError:
            yield "div by zero"
            return "stopped at zero"
        finally:
            yield ("finally", x)
""", [([],), ([5, 2],), ([5, 0, 1],)])

case("gen_conditional_yield_and_loop_else", NEXT_DRIVER + r"""
def f(n, skip):
    for i in range(n):
        if i == skip:
            continue
        elif i > 3:
            break
        yield i if i % 2 else -i
    else:
        yield "no break"
""", [(0, -1), (3, 1), (10, 0)])

# ``while True`` around ``while a or b: try/except: return`` and a yield of ``x or y``: the
# loops share a header (≤3.9) or the inner one is rotated with ``or`` tests (3.10); nothing
# post-dominates inside a loop that only returns from its middle (difflib._mdiff).
case("gen_pair_collector_nested_loops_or_value", NEXT_DRIVER + r"""
def f(pairs):
    it = iter(pairs)
    fromlines, tolines = [], []
    while True:
        while len(fromlines) == 0 or len(tolines) == 0:
            try:
                a, b, d = next(it)
            except StopIteration:
                return
            if a is not None:
                fromlines.append((a, d))
            if b is not None:
                tolines.append((b, d))
        a, ad = fromlines.pop(0)
        b, bd = tolines.pop(0)
        yield (a, b, ad or bd)
""", [([],), ([(1, 2, False)],), ([(1, None, 0), (None, 2, 5), (3, 4, 0)],), ([(1, 2, 0), 7],)],
     driver="drive")
