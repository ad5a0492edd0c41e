"""Small torch programs that make Dynamo (torch.compile) emit the bytecode pellucid must read.

Each entry of ``PROGRAMS`` maps a stable name to a builder.  A builder takes no arguments and
returns ``(fn, inputs)``: ``fn`` is the plain Python callable to hand to ``torch.compile`` and
``inputs`` a list of calls to make, in order: a tuple of positional arguments, or
``{"args": tuple, "kwargs": dict}``.  Builders make fresh state on
every call (modules, optimizers, lists), so a program can be run several times -- eagerly, with
Dynamo's bytecode, with pellucid's recompiled bytecode -- and the results compared.

They cover graph breaks (print, data-dependent ``if``, ``.item()``, explicit and unsupported
calls), breaks inside loops, ``with torch.no_grad()`` and ``try``, breaks in callees (nested
resume functions), values live on the stack across a break, containers returned, keyword
arguments, closures, methods and modules, dynamic shapes and a training step.  Tensors are tiny;
run them with ``backend="eager"``.

Importing this module needs torch.
"""
import torch
import torch.nn as nn

from pellucid.bytecode import features

PROGRAMS = {}

#: program -> why torch.compile compiles none of its frames on this Python (tests then assert
#: that nothing was compiled); only shrinks
COMPILES_NOTHING = {}
if not features.ROTATED_LOOP_TESTS:
    # A while loop's test is compiled only at the loop's top (3.14+), inside the loop: the
    # data-dependent test's graph break is a break in a loop, and Dynamo skips the frame whole
    # ("graph break in loop"); 3.10-3.13 test once before the loop, where the break is not.
    COMPILES_NOTHING["data_dependent_while"] = "the graph break is in a loop"


def program(fn):
    PROGRAMS[fn.__name__] = fn
    return fn


def _t(*values):
    return torch.tensor(values, dtype=torch.float32)


def _opaque(x):
    # Dynamo cannot trace into a C function it does not know: a graph break at the call.
    return x + len(repr(()))


@program
def print_break():
    def f(x, y):
        a = x.sin() + y
        if a.sum() > 0:
            b = a * 2
        else:
            b = a - 1
        print("hi")
        return b.cos()
    return f, [(_t(1, 2, 3), _t(1, 1, 1)), (_t(-1, -2, -3), _t(1, 1, 1))]


@program
def data_dependent_if():
    def f(x):
        y = x * 2
        if y.max() > 3:
            return y - 1, "big"
        return y + 1, "small"
    return f, [(_t(1, 2),), (_t(0, 1),)]


@program
def item_break():
    def f(x):
        n = x.sum().item()
        return x * n + 1
    return f, [(_t(1, 2, 3),), (_t(0.5, 0.25),)]


@program
def explicit_graph_break():
    def f(x):
        a = x + 1
        torch._dynamo.graph_break()
        b = a * a
        torch._dynamo.graph_break()
        return b - x
    return f, [(_t(1, 2),)]


@program
def unsupported_call_in_expression():
    def f(x, k):
        # The break happens with ``x * 2`` and the call's other arguments on the stack.
        return x * 2 + torch.full_like(x, float(len(repr(k)))) + x.sum() * len(str(k))
    return f, [(_t(1, 2), "ab"), (_t(3, 4), (1, 2, 3))]


@program
def break_in_loop():
    def step(acc, i):
        acc = acc * 2 + i
        print("step", i)
        return acc - 1

    def f(x, n):
        # A break inside a loop makes Dynamo give up on ``f``'s frame; ``step``'s frame is
        # compiled on its own, with its break.
        acc = x
        for i in range(n):
            acc = step(acc, i)
        return acc
    return f, [(_t(1, 2), 3)]


@program
def data_dependent_while():
    def f(x):
        steps = 0
        while x.sum() < 20:
            x = x * 2
            steps += 1
        return x, steps
    return f, [(_t(1, 2),), (_t(5, 6),)]


@program
def no_grad_break():
    def f(x, w):
        y = x @ w
        with torch.no_grad():
            z = y * 2
            print("inside no_grad")
            z = z + 1
        return y + z, z.requires_grad
    return f, [(_t(1, 2), torch.ones(2, 2, requires_grad=True))]


@program
def nested_call_break():
    def inner(x):
        x = x + 1
        print("inner")
        return x * 2

    def middle(x):
        y = inner(x) - 1
        return y.sum() + inner(y)

    def f(x):
        return middle(x * 3) / 2
    return f, [(_t(1, 2),)]


@program
def try_except_break():
    def helper(x):
        print("helper")
        if x.sum() > 100:
            raise ValueError("too big")
        return x * 2

    def f(x):
        # A break inside ``try`` makes Dynamo skip ``f``'s frame; the try statement is compiled
        # (with its handler) when the break comes after it, and the callee that breaks inside
        # the try is compiled on its own.
        try:
            y = x + len(str(x.shape))
        except ValueError as e:
            y = x - len(str(e))
        finally:
            x = x + 0.5
        print("after try")
        try:
            y = helper(y)
        except ValueError as e:
            y = y - len(str(e))
        return y + x
    return f, [(_t(1, 2),), (_t(100, 200),)]


@program
def returns_containers():
    def f(x):
        parts = [x * i for i in range(3)]
        print("built")
        table = {"sum": x.sum(), "parts": parts, "pair": (x, -x)}
        return parts, table, (len(parts), x.mean())
    return f, [(_t(1, 2, 3),)]


@program
def kwargs_call():
    def f(x, *args, scale=2.0, shift=None, **kw):
        y = x * scale
        if shift is not None:
            y = y + shift
        print("kw", sorted(kw))
        for a in args:
            y = y + a
        return y * kw.get("mult", 1)
    return f, [
        (_t(1, 2),),
        {"args": (_t(1, 2), _t(1, 1)), "kwargs": {"scale": 3.0, "mult": 2}},
        {"args": (_t(1, 2),), "kwargs": {"shift": _t(5, 5), "tag": "x"}},
    ]


@program
def kwargs_inner_call():
    def inner(x, *, scale, bias=0.0):
        y = x * scale
        print("inner scale", scale)
        return y + bias

    def f(x):
        return inner(x, scale=2.0) + inner(x, bias=1.0, scale=-1.0)
    return f, [(_t(1, 2),)]


@program
def closure_counter():
    count = [0]
    scale = torch.tensor(3.0)

    def f(x):
        count.append(len(count))
        y = x * scale
        print("count", len(count))
        return y + len(count)
    return f, [(_t(1, 2),), (_t(3, 4),)]


@program
def module_forward_break():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.lin = nn.Linear(3, 2)
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            h = self.lin(x).relu()
            if h.sum() > 0:
                print("positive")
                h = h * 2
            return h, self.calls
    m = M()
    return m, [(_t(1, 2, 3).reshape(1, 3),), (_t(-1, -2, -3).reshape(1, 3),)]


@program
def method_with_state():
    class Acc(object):
        def __init__(self):
            self.items = []

        def add(self, x):
            self.items.append(x.sum())
            print("items", len(self.items))
            return torch.stack(self.items).sum() + x
    acc = Acc()
    return acc.add, [(_t(1, 2),), (_t(3, 4),)]


@program
def dynamic_shapes():
    def f(x):
        y = x.cumsum(0) * x.shape[0]
        print("len", x.shape[0])
        return y[-1] + y.mean()
    xs = [torch.arange(float(n)) for n in (3, 5, 7, 9)]
    torch._dynamo.mark_dynamic(xs[0], 0)
    return f, [(x,) for x in xs]


@program
def growing_sizes():
    def f(x, ys):
        for y in ys:
            x = torch.cat([x, y])
        if x.numel() > 4:
            print("large")
        return x.sum(), x.numel()
    return f, [(_t(1), [_t(2)]), (_t(1), [_t(2), _t(3, 4)]), (_t(1, 2), [_t(3), _t(4), _t(5, 6)])]


@program
def training_step():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.arange(8.0).reshape(2, 4) / 8
    target = torch.tensor([[0.5], [-0.5]])

    def step(x, t):
        opt.zero_grad()
        loss = ((model(x) - t) ** 2).mean()
        loss.backward()
        print("loss computed")
        opt.step()
        return loss.detach(), [p.detach().clone() for p in model.parameters()]
    return step, [(data, target), (data, target)]


@program
def multiple_live_values():
    def f(a, b):
        # Several partial results are on the stack when the callee breaks.
        return [a + 1, b * 2, _opaque(a) - b, (a * b).sum()]
    return f, [(_t(1, 2), _t(3, 4))]


@program
def list_mutation_across_break():
    def f(xs):
        out = []
        for x in xs:
            out.append(x * 2)
        print("n", len(out))
        out[0:1] = [out[0] + 1]
        del out[-1]
        return out, {"n": len(out)}
    return f, [([_t(1), _t(2), _t(3)],)]


@program
def global_and_builtins():
    def f(x):
        total = sum([x, x * 2])
        print("total", total.shape)
        return max(total.sum(), torch.tensor(0.0)), abs(-x), len(x)
    return f, [(_t(1, -2),)]


@program
def unrolled_loop_then_break():
    def f(x, n):
        # Dynamo unrolls the loop into the graph; the data-dependent ``if`` after it breaks.
        out = x
        for i in range(n):
            if i % 2:
                out = out + i
            else:
                out = out - i
        if out.sum() < 0:
            print("negative")
            out = -out
        return out
    return f, [(_t(1, 2), 4), (_t(-5, 2), 3)]


@program
def generator_consumer():
    def gen(x, n):
        for i in range(n):
            yield x + i

    def f(x):
        vals = list(gen(x, 3))
        print("got", len(vals))
        return tuple(vals), {i: v.sum() for i, v in enumerate(vals)}
    return f, [(_t(1, 2),)]


@program
def comprehension_cells():
    # Comprehensions are functions before 3.12: one that breaks the graph inside (``.item()``)
    # is handed to Dynamo's ``_create_nested_fn`` with its code and the cells it closes over.
    # ``scale`` is an argument cell that only a later comprehension reads, and is rebound
    # after a break: the transformed code keeps every cell, and the resume functions get
    # ``scale`` as a free variable that also keeps its (unused) local slot.
    def f(x, scale=2.0):
        sizes = [v.sum().item() for v in x]
        print("sizes", len(sizes))
        rows = [v * scale for v in x]
        scale = scale + 1.0
        return torch.stack(rows), sizes, scale
    return f, [(torch.arange(6, dtype=torch.float32).reshape(2, 3),)]


class _ArgumentCell(nn.Module):
    # ``self`` is a cell (a comprehension reads it: a function of its own before 3.12) but the
    # branch holding the comprehension is not taken, so Dynamo's transformed code never makes a
    # closure -- yet keeps ``self`` a cell (MAKE_CELL), as transformers' DebertaModel.forward.
    def __init__(self):
        super().__init__()
        self.z_steps = 1
        self.weight = nn.Parameter(torch.linspace(-1.0, 1.0, 3))

    def lin(self, x):
        return x * self.weight

    def forward(self, x, scale=None):
        scale = scale if scale is not None else 2.0
        y = self.lin(x) * scale
        if self.z_steps > 1:
            layers = [self.lin for _ in range(self.z_steps)]
            for layer in layers[1:]:
                y = layer(y)
        return y


@program
def argument_cell_unused():
    return _ArgumentCell(), [(_t(1, 2, 3),), (_t(-1, 0, 4), 0.5)]


class _AppendingFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, seen, doubled, n):
        seen.append(x)
        torch._dynamo.graph_break()
        doubled.append(x * 2)
        return x + n

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None, None


@program
def function_apply_break_with_fresh_lists():
    # A graph break in an autograd.Function's forward breaks at the ``apply`` call itself, whose
    # arguments include lists made in the frame: Dynamo builds each once, stores it in a
    # ``tmp_N`` that its stack rebuilding reads again (``[]; COPY 1; STORE_FAST tmp_1`` ...
    # ``LOAD_FAST tmp_1``), as in transformers' reformer encoder.
    def f(x, n):
        y = x.sin()
        seen = []
        doubled = []
        out = _AppendingFunction.apply(y, seen, doubled, n)
        seen.append(n)
        return out, seen, doubled
    return f, [(_t(1, 2), 3)]


# -- several frames of one name, and frames that call each other ------------------------------------
# Ten module classes whose ``forward`` graph-breaks: Dynamo compiles each ``forward`` as a frame of
# its own (the outer frame breaks at the call of the inner module), so ten frames named
# ``forward`` (and their resume functions) are compiled in one program.
class _Sin(nn.Module):
    def forward(self, x):
        h = x.sin()
        print("Sin")
        return self.inner(h) if self.inner is not None else h


class _Cos(nn.Module):
    def forward(self, x):
        h = x.cos() + 1
        print("Cos")
        return self.inner(h) if self.inner is not None else h


class _Tanh(nn.Module):
    def forward(self, x):
        h = x.tanh() * 2
        print("Tanh")
        return self.inner(h) if self.inner is not None else h


class _Exp(nn.Module):
    def forward(self, x):
        h = (x / 4).exp()
        print("Exp")
        return self.inner(h) if self.inner is not None else h


class _Square(nn.Module):
    def forward(self, x):
        h = x * x - 1
        print("Square")
        return self.inner(h) if self.inner is not None else h


class _Neg(nn.Module):
    def forward(self, x):
        h = -x + 0.5
        print("Neg")
        return self.inner(h) if self.inner is not None else h


class _Relu(nn.Module):
    def forward(self, x):
        h = x.relu() + x.abs()
        print("Relu")
        return self.inner(h) if self.inner is not None else h


class _Sigmoid(nn.Module):
    def forward(self, x):
        h = x.sigmoid() * 3
        print("Sigmoid")
        return self.inner(h) if self.inner is not None else h


class _Clamp(nn.Module):
    def forward(self, x):
        h = x.clamp(-1, 1) + 2
        print("Clamp")
        return self.inner(h) if self.inner is not None else h


class _Atan(nn.Module):
    def forward(self, x):
        h = x.atan() - 0.25
        print("Atan")
        return self.inner(h) if self.inner is not None else h


@program
def ten_forwards():
    chain = None
    for cls in (_Atan, _Clamp, _Sigmoid, _Relu, _Neg, _Square, _Exp, _Tanh, _Cos, _Sin):
        m = cls()
        m.inner = chain
        chain = m
    return chain, [(_t(0.5, -1, 2),), (_t(3, 0, -0.25),)]


class _Inner(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        y = self.lin(x)
        print("inner break")
        return y.relu() + x


class _Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _Inner()
        self.scale = nn.Parameter(torch.tensor(1.5))

    def forward(self, x):
        a = x * self.scale
        b = self.inner(a)
        return (b * a).sum(-1)


@program
def submodule_graph_break():
    # A graph break inside a submodule's ``forward``: ``_Outer.forward`` breaks at the call,
    # ``_Inner.forward`` is compiled on its own: two frames named ``forward``.
    return _Outer(), [(_t(1, 2, 3).reshape(1, 3),), (_t(-1, 0, 4).reshape(1, 3),)]


@program
def two_forwards_same_name():
    class A(nn.Module):
        def forward(self, x):
            y = x.sin()
            print("A")
            return y * 2

    class B(nn.Module):
        def forward(self, x):
            y = x.cos()
            print("B")
            return y * 3
    a, b = A(), B()

    def f(x):
        return a(x) - b(x)
    return f, [(_t(1, 2),), (_t(0.5, 0.25),)]


@program
def closures_made_in_a_loop():
    # One code object, three closures over different ``k``: three cache entries of one frame,
    # told apart by the closure (the frame's free variable).
    def make(k):
        def g(x):
            y = x * k
            print("k", k)
            return y + k
        return g
    gs = [make(k) for k in range(3)]

    def run(x):
        out = []
        for g in gs:
            out.append(g(x))
        return out
    return run, [(_t(1, 2),), (_t(3, 4),)]


@program
def recompiles():
    def f(x, n):
        y = x * n + x.sum()
        return y.to(torch.float32) if y.dtype != torch.float32 else y - 1
    return f, [(_t(1, 2), 2), (_t(1, 2), 3), (_t(1, 2).double(), 2), (_t(1, 2, 3), 4), (_t(5, 6), 2)]


@program
def functions_calling_each_other():
    # ``even`` and ``odd`` call each other; each breaks the graph, so each is a compiled frame
    # (with recompiles for the values of ``n``) that calls the other.
    def even(x, n):
        if n == 0:
            return x
        print("even", n)
        return odd(x + 1, n - 1)

    def odd(x, n):
        if n == 0:
            return -x
        print("odd", n)
        return even(x * 2, n - 1)
    return even, [(_t(1, 2), 3), (_t(0.5, 1), 4), (_t(1, 2), 3)]


@program
def training_loop():
    # An optimizer step beside the user's own ``step`` (two frames named ``step``), run in a loop.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def step(x, t):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), t)
        loss.backward()
        opt.step()
        return loss.detach()

    def train(batches, epochs):
        losses = []
        for _ in range(epochs):
            for x, t in batches:
                losses.append(step(x, t))
        return losses, [p.detach().clone() for p in model.parameters()]
    g = torch.Generator().manual_seed(3)
    batches = [(torch.randn(4, 3, generator=g), torch.randn(4, 1, generator=g)) for _ in range(2)]
    return train, [(batches, 2)]
