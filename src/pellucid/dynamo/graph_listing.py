"""The listing of a Dynamo graph module, made from the code FX generates for it to run.

torch's ``dynamo_output_graph`` trace event carries ``gm.print_readable(include_stride=True,
include_device=True)``: FX generates the module's whole source in its verbose form, besides the
source the module runs (~3.5 ms for a 135-node GPT-2 graph).  The module's own source
(``gm.code``) holds the same statements; what the verbose form adds is, per node, its value's
description (``"f32[2, 16][16, 1]cpu"``, ``"Sym(s0)"``) and the user's source line as a
``# File: path:line in fn, code: ...`` comment, and a nested class for each graph submodule (the
subgraphs of higher-order operators).  :func:`listing` adds exactly those to ``gm.code``, in
``print_readable``'s layout, so the file pellucid writes still holds
``class GraphModule(torch.nn.Module): def forward(...)`` whose ``forward`` compiles to the
module's own code.

Dynamo makes a lazy graph module: its source is generated (and compiled) at its first call or
first ``gm.code``.  A backend that calls the module (eager) needs that source anyway, so reading
``gm.code`` here only does that work earlier; a backend that only traces the module with an
interpreter (AOT Autograd) pays it here instead of print_readable's (~0.6 ms more per GPT-2
compile with aot_eager, against ~2.6 ms less with eager).

Each line of ``gm.code`` is checked to be the statement of the node expected there; anything
this module does not know how to describe (another code generator, defaults, return
annotations, wrapped functions, distributed tensors, node annotations) raises
:class:`NotListed`, and the caller uses torch's own listing instead.
"""
import re
from typing import Any, Dict, List, Optional

_FILE_LINE = re.compile(r'^File "(.+)", line (\d+), in (.+)$')
_NO_TRACE = "# No stacktrace found for following nodes"


class NotListed(Exception):
    """The graph module is not one this module can list faithfully."""


def listing(gm: Any) -> str:
    """``gm.print_readable(print_output=False, include_stride=True, include_device=True)``'s
    information, from ``gm.code``; raises :class:`NotListed` (or any error) where it cannot."""
    import torch
    from torch.fx import GraphModule
    from torch.fx.graph import CodeGen

    abbrs = getattr(torch.fx.graph, "dtype_abbrs", None)
    if not isinstance(abbrs, dict):
        raise NotListed("this torch has no dtype abbreviations")
    from torch.fx.experimental.proxy_tensor import py_sym_types
    try:
        from torch.fx.passes.shape_prop import TensorMetadata
    except ImportError:  # (then no node can carry one)
        TensorMetadata = ()  # type: ignore[assignment,misc]
    try:
        from torch._subclasses.fake_tensor import FakeTensor
    except ImportError:
        FakeTensor = ()  # type: ignore[assignment,misc]
    ctx = _Context(torch, GraphModule, CodeGen, abbrs, py_sym_types, TensorMetadata, FakeTensor)
    lines: List[str] = []
    _class_lines(ctx, gm, gm._get_name(), "", lines)
    return "\n".join(lines) + "\n"


class _Context:
    """What one :func:`listing` call looks up once, and its stack-trace memo (this call only)."""

    def __init__(self, torch: Any, graph_module: Any, codegen: Any, abbrs: Dict[Any, str],
                 sym_types: Any, tensor_metadata: Any, fake_tensor: Any) -> None:
        self.tensor = torch.Tensor
        self.graph_module = graph_module
        self.codegen = codegen
        self.abbrs = abbrs
        self.sym_types = sym_types
        self.tensor_metadata = tensor_metadata
        self.fake_tensor = fake_tensor
        self.sparse_layouts = (torch.sparse_csc, torch.sparse_csr)
        self.summaries: Dict[str, str] = {}  # stack trace -> its comment


def _class_lines(ctx: _Context, gm: Any, name: str, indent: str, out: List[str]) -> None:
    """``class name(torch.nn.Module):`` with the annotated forward, then the graph submodules."""
    if not isinstance(gm, ctx.graph_module):
        raise NotListed("not a graph module")
    graph = gm.graph
    if type(getattr(graph, "_codegen", None)) is not ctx.codegen:
        # (a pytree or boxed code generator writes a prologue this module does not read)
        raise NotListed("graph with its own code generator")
    code_lines = _code_of(gm).split("\n")
    k = 0
    while k < len(code_lines) and not code_lines[k].strip():
        k += 1
    def_line = code_lines[k] if k < len(code_lines) else ""
    # (anything before the def, e.g. ``wrap("f")`` statements, and a return annotation are
    # not in this layout)
    if not def_line.startswith("def forward(self") or not def_line.endswith("):"):
        raise NotListed("unexpected function definition: %.80s" % def_line)
    body = code_lines[k + 1:]
    inner = indent + "        "
    out.append("%sclass %s(torch.nn.Module):" % (indent, name))
    params: List[str] = []
    listed: List[str] = []
    previous_summary: Optional[str] = None
    pos = 0  # next line of ``body``
    sig_pos = len("def forward(self")
    for node in graph.nodes:
        op = node.op
        if op == "placeholder":
            target = node.target
            if not isinstance(target, str) or node.args or target == "self":
                raise NotListed("placeholder with a default or unusual name")
            sig_pos = def_line.find(target, sig_pos)  # (the parameters are in node order)
            if sig_pos < 0:
                raise NotListed("parameter %s not in the definition" % target)
            sig_pos += len(target)
            annotation = _annotation(ctx, node)
            params.append(target + (annotation or ""))
            raw = target.replace("*", "")
            if raw != node.name:
                line = body[pos] if pos < len(body) else ""
                if line.strip() != "%s = %s" % (node.name, raw):
                    raise NotListed("line %r is not placeholder %s" % (line, node.name))
                listed.append(inner + line[4:])
                pos += 1
            continue
        line = body[pos] if pos < len(body) else ""
        pos += 1
        if not line.startswith("    "):
            raise NotListed("line %r is not in the function body" % line)
        stmt = line[4:]
        if op == "output":
            if not stmt.startswith("return"):
                raise NotListed("line %r is not the graph's return" % line)
            listed.append(inner + stmt)
            continue
        meta = node.meta
        if meta.get("custom") or meta.get("recompute") is not None or meta.get("ac_graph_id") is not None:
            raise NotListed("node %s carries annotations" % node.name)
        summary = _summary(ctx, node.stack_trace)
        if summary != previous_summary:
            previous_summary = summary
            if listed:  # (print_readable strips the body's leading blank lines)
                listed.append("")
            listed.append(inner + summary)
        listed.append(inner + _annotated(ctx, node, stmt))
    if any(line.strip() for line in body[pos:]):
        raise NotListed("lines of gm.code left over after the last node")
    out.append("%s    def forward(self%s):" % (indent, "".join(", " + p for p in params)))
    out.extend(line if line.strip() else "" for line in listed)
    for child_name, child in gm.named_children():
        if isinstance(child, ctx.graph_module):
            out.append("")
            _class_lines(ctx, child, child_name, indent + "    ", out)


def _code_of(gm: Any) -> str:
    """The module's source (``gm.code``; a lazy module generates it now, as its first call
    would: see the module docstring)."""
    return gm.code


def _annotated(ctx: _Context, node: Any, stmt: str) -> str:
    """A node's statement with its value's description after the name it assigns."""
    name = node.name
    annotation = _annotation(ctx, node)
    if stmt.startswith(name + " = ") or stmt.startswith(name + " : "):
        start = 0
    elif getattr(node.target, "__module__", "") == "_operator" and ";  %s " % name in stmt:
        # an in-place operator: ``a += b;  name = a``
        start = stmt.rindex(";  %s " % name) + 3
    else:
        raise NotListed("line %r is not the statement of node %s" % (stmt, name))
    if annotation is None:
        return stmt  # (nothing to describe: the line stays as FX wrote it, as print_readable does)
    after = start + len(name)
    if stmt.startswith(" : ", after):
        eq = stmt.find(" = ", after)
        if eq < 0:
            raise NotListed("annotated line %r has no assignment" % stmt)
        after = eq
    elif not stmt.startswith(" = ", after):
        raise NotListed("line %r does not assign node %s" % (stmt, name))
    return stmt[:start] + name + annotation + stmt[after:]


def _annotation(ctx: _Context, node: Any) -> Optional[str]:
    """``: "f32[2, 16][16, 1]cpu"``-style description of a node's value (as print_readable
    describes it with strides and devices), or None where it gives none."""
    meta = node.meta
    # (the same precedence as print_readable's)
    val = meta.get("val", meta.get("tensor_meta", meta.get("example_value", None)))
    if isinstance(val, ctx.tensor) and val.layout not in ctx.sparse_layouts:
        core = "%s[%s][%s]%s" % (ctx.abbrs[val.dtype], ", ".join(map(str, val.shape)),
                                 ", ".join(map(str, val.stride())), val.device)
        if type(val) is ctx.tensor or isinstance(val, ctx.fake_tensor):
            return ': "%s"' % core
        if type(val).__name__ == "DTensor":
            raise NotListed("distributed tensor")  # (print_readable adds its placements)
        return ': "%s(%s)"' % (type(val).__name__, core)
    if isinstance(val, ctx.sym_types):
        return ': "Sym(%r)"' % (val,)
    if ctx.tensor_metadata and isinstance(val, ctx.tensor_metadata):
        return ': "%s[%s]"' % (ctx.abbrs[val.dtype], ", ".join(map(str, val.shape)))
    return None


def _summary(ctx: _Context, stack_trace: Optional[str]) -> str:
    """print_readable's comment for a node: the innermost ``File "...", line N, in fn`` of its
    stack trace with the code line after it."""
    if not stack_trace:
        return _NO_TRACE
    summary = ctx.summaries.get(stack_trace)
    if summary is None:
        summary = ctx.summaries[stack_trace] = _innermost_frame(stack_trace)
    return summary


def _innermost_frame(stack_trace: str) -> str:
    """The comment for one stack trace: from its last line up, the first ``File`` line, with
    the line after it as the code.  (The lines are found from the end with ``rfind``: a trace
    holds every frame from the program's top, and the innermost is nearly always the last.)"""
    text = stack_trace.strip()
    pos = text.rfind("\n")  # the newline before the current candidate's code line
    code_start, code_end = pos + 1, len(text)
    while pos >= 0:
        prev = text.rfind("\n", 0, pos)
        m = _FILE_LINE.match(text[prev + 1:pos].strip())
        if m:
            return "# File: %s:%s in %s, code: %s" % (m.group(1), m.group(2), m.group(3),
                                                     text[code_start:code_end].strip())
        code_start, code_end, pos = prev + 1, pos, prev
    return _NO_TRACE
