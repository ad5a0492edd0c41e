"""Which user line each graph node came from, and which graph nodes each Inductor kernel computes.

Read from the graph texts of the capture model (no torch): FX listings carry
``# File: <file>:<line> in <fn>, code: <text>`` above the nodes a user line produced, and
Inductor's output code carries ``# Topologically Sorted Source Nodes: [...], Original ATen:
[...]`` above a kernel call, naming the FX nodes the kernel computes.  Kernels without that
comment are described by the ops their name lists (``cpp_fused_add_relu_0``: add, relu) and,
when the user turned on Inductor's provenance tracking (``INDUCTOR_PROVENANCE=1``), by torch's
own kernel-to-node mapping.

>>> nodes = fx_nodes('''class GraphModule(torch.nn.Module):
...     def forward(self, x):
...         # File: t.py:3 in f, code: y = x.sin()
...         sin: "f32[3]" = torch.sin(x);  x = None
...         return (sin,)''')
>>> [(n.name, n.lineno, n.source.lineno) for n in nodes]
[('sin', 4, 3)]
"""
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from pellucid.dynamo.model import SourceLine

_FILE = re.compile(r"^\s*# File: (?P<file>.+?):(?P<line>\d+) in (?P<fn>[^,]+), code: (?P<code>.*)$")
_NO_TRACE = re.compile(r"^\s*# No stacktrace found")
_NODE = re.compile(r"^\s+(?P<name>[A-Za-z_]\w*)(?:\s*:\s*\"[^\"]*\")?\s*=\s")
_SOURCE_NODES = re.compile(r"^\s*# Topologically Sorted Source Nodes: \[(?P<nodes>[^\]]*)\]"
                           r"(?:, Original ATen: \[(?P<aten>[^\]]*)\])?")
_KERNEL_DEF = re.compile(r"^(?P<name>[A-Za-z_]\w*) = async_compile\.\w+\(")
_CALL = re.compile(r"^\s+(?P<callee>[A-Za-z_][\w.]*)\(")
_FUSED = re.compile(r"^(?:cpp|triton)_(?:\w+?_)?fused_(?P<ops>.*?)(?:_\d+)?$")


@dataclass
class FxNode:
    """A node of an FX listing: its name, its line in the listing, and the user's line."""

    name: str
    lineno: int
    source: Optional[SourceLine] = None


@dataclass
class KernelCall:
    """A kernel call in Inductor's ``call()``: the kernel, the FX nodes it computes, the ATen
    ops, and how that was learnt (``comment``, ``torch`` provenance, or the kernel ``name``)."""

    kernel: str
    lineno: int
    nodes: List[str] = field(default_factory=list)
    aten: List[str] = field(default_factory=list)
    how: str = ""
    #: line of the kernel's definition in the same file (0: defined elsewhere, e.g. extern)
    defined_at: int = 0


def _names(text: Optional[str]) -> List[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def fx_nodes(listing: str) -> List[FxNode]:
    """The nodes of an FX graph listing (lines assigning a node), each with the user's line of
    the ``# File:`` comment above it."""
    out: List[FxNode] = []
    current: Optional[SourceLine] = None
    in_forward = False
    for lineno, line in enumerate(listing.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("def forward("):
            in_forward, current = True, None
            continue
        if not in_forward:
            continue
        m = _FILE.match(line)
        if m:
            current = SourceLine(m.group("file"), int(m.group("line")), m.group("fn"), m.group("code"))
            continue
        if _NO_TRACE.match(line):
            current = None
            continue
        if stripped.startswith("return "):
            continue
        n = _NODE.match(line)
        if n and not stripped.startswith("#"):
            out.append(FxNode(n.group("name"), lineno, current))
    return out


def fused_ops(kernel: str) -> List[str]:
    """The ops a fused kernel's name lists, as one text (``cpp_fused_add_relu_0`` -> add_relu:
    op names have underscores of their own, so the name cannot be split reliably)."""
    m = _FUSED.match(kernel.split(".")[0])
    return [m.group("ops")] if m and m.group("ops") else []


def inductor_kernels(code: str, provenance: Optional[Dict[str, Any]] = None) -> List[KernelCall]:
    """The kernel calls of Inductor's ``call()``, with the FX nodes each computes."""
    lines = code.splitlines()
    defined = {}
    for lineno, line in enumerate(lines, 1):
        m = _KERNEL_DEF.match(line)
        if m:
            defined[m.group("name")] = lineno
    torch_map: Dict[str, List[str]] = {}
    if isinstance(provenance, dict):
        for key, nodes in (provenance.get("cppCodeToPost") or provenance.get("tritonCodeToPost") or {}).items():
            torch_map[str(key).rsplit(":", 1)[0]] = [str(n) for n in nodes]
    out: List[KernelCall] = []
    in_call = False
    pending: Optional[KernelCall] = None
    for lineno, line in enumerate(lines, 1):
        if re.match(r"^\s*def call\(", line):
            in_call, pending = True, None
            continue
        if in_call and line and not line.startswith(" " * 8) and line.strip() and not line.strip().startswith("#"):
            if not line.startswith("    ") or line.strip().startswith("def "):
                in_call = False
        if not in_call:
            continue
        m = _SOURCE_NODES.match(line)
        if m:
            pending = KernelCall("", 0, _names(m.group("nodes")), _names(m.group("aten")), "comment")
            continue
        c = _CALL.match(line)
        if c is None:
            continue
        callee = c.group("callee")
        base = callee.split(".")[0]
        is_kernel = base in defined or callee.startswith("extern_kernels.") or base.startswith(("triton_", "cpp_"))
        if not is_kernel:
            continue
        call = pending or KernelCall("", 0)
        pending = None
        call.kernel = callee if callee.startswith("extern_kernels.") else base
        call.lineno = lineno
        call.defined_at = defined.get(base, 0)
        if not call.nodes and call.kernel in torch_map:
            call.nodes, call.how = torch_map[call.kernel], "torch"
        if not call.nodes and not call.aten:
            ops = fused_ops(call.kernel)
            if ops:
                call.aten, call.how = ops, "name"
        out.append(call)
    return out
