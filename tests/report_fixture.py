"""A dump directory made from the capture model without torch: two ranks of a small training
program with a graph break, a recompilation and graphs of every stage, written by pellucid's own
writers (capture files, ``index.md``).  The report and index tests render it on every Python; the
torch tests render real dumps."""
import os
from typing import List

from pellucid.dynamo.capture_json import CodeInfo, dumps
from pellucid.dynamo.dump_files import write_file
from pellucid.dynamo.model import (CacheEntry, Capture, CompiledFrame, CompiledGraph, CompileMetrics,
                                   GraphBreak, GraphStage, Recompilation, SourceLine, Transform)

PROGRAM = '''\
import torch


class Block(torch.nn.Module):
    def forward(self, x):
        h = self.linear(x).relu()
        if h.mean() > 0.5:
            h = h * 0.5
        return x + h
'''

TRANSFORMED = '''\
# Dynamo's transformed code for forward (model.py:5), compile {cid}; decompiled by pellucid.
# This file is the code that runs (checked equivalent to Dynamo's bytecode).
#
def forward(self, x):
    graph_out_0 = __compiled_fn_{g}(self.linear.weight, self.linear.bias, x)
    h = graph_out_0[0]
    return __resume_at_30_{r}(graph_out_0[1], h, x)
'''

RESUME = '''\
# Dynamo's transformed code for torch_dynamo_resume_in_forward_at_7 (model.py:7), compile {cid}; decompiled by pellucid.
# This file is the code that runs (checked equivalent to Dynamo's bytecode).
#
def torch_dynamo_resume_in_forward_at_7(___stack0, h, x):
    if ___stack0:
        h = h * 0.5
    return __compiled_fn_{g}(x, h)[0]
'''

GUARD = '''\
def guard_forward_{n}(L, G):
    try:
        # L['x']  (Tensor, via FrameLocalsGuardAccessor(key='x', framelocals_idx=1))
        if not (check_tensor(L['x'], torch.Tensor, dispatch_keys_0, torch.float32, device_index=None, requires_grad=False, size=[{b}, 8], stride=[8, 1])): return False  # from: h = self.linear(x).relu()  (model.py:6 in forward)
        # L['self']  (Block, via FrameLocalsGuardAccessor(key='self', framelocals_idx=0))
        if not (type(L['self']) is Block): return False  # from: h = self.linear(x).relu()  (model.py:6 in forward)
        if not (check_obj_id(L['self'].training, obj_id_0)): return False  # from: h = self.linear(x).relu()  (model.py:6 in forward)
        return True
    except Exception:
        return False
'''

DYNAMO_GRAPH = '''\
# Dynamo FX graph of {g} (compile {cid}), written by pellucid.
import torch

class GraphModule(torch.nn.Module):
    def forward(self, L_weight_: "f32[8, 8]", L_bias_: "f32[8]", L_x_: "f32[{b}, 8]"):
        l_x_ = L_x_
        # File: {src}:6 in forward, code: h = self.linear(x).relu()
        linear: "f32[{b}, 8]" = torch._C._nn.linear(l_x_, L_weight_, L_bias_)
        h: "f32[{b}, 8]" = linear.relu();  linear = None
        # File: {src}:7 in forward, code: if h.mean() > 0.5:
        mean: "f32[]" = h.mean()
        gt: "b8[]" = mean > 0.5;  mean = None
        return (gt, h)
'''

AOT_FORWARD = '''\
# AOT Autograd forward graph of {g} (compile {cid}), written by pellucid.
import torch

class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[8, 8]", primals_2: "f32[8]", primals_3: "f32[{b}, 8]"):
        # File: {src}:6 in forward, code: h = self.linear(x).relu()
        permute: "f32[8, 8]" = torch.ops.aten.permute.default(primals_1, [1, 0])
        addmm: "f32[{b}, 8]" = torch.ops.aten.addmm.default(primals_2, primals_3, permute)
        relu: "f32[{b}, 8]" = torch.ops.aten.relu.default(addmm)
        # File: {src}:7 in forward, code: if h.mean() > 0.5:
        mean: "f32[]" = torch.ops.aten.mean.default(relu)
        gt: "b8[]" = torch.ops.aten.gt.Scalar(mean, 0.5)
        return (gt, relu, primals_3)
'''

INDUCTOR = '''\
# Inductor output code of {g} (compile {cid}), written by pellucid from torch's structured trace.
# ---- Inductor's module follows, unchanged ----
from torch._inductor.select_algorithm import extern_kernels

cpp_fused_gt_mean_relu_0 = async_compile.cpp_pybinding(['float*', 'bool*'], r\'\'\'
extern "C" void kernel(float* in_out_ptr0, bool* out_ptr0) {{ }}
\'\'\')


class Runner:
    def call(self, args):
        primals_1, primals_2, primals_3 = args
        buf0 = empty_strided_cpu(({b}, 8), (8, 1), torch.float32)
        # Topologically Sorted Source Nodes: [linear], Original ATen: [aten.t, aten.addmm]
        extern_kernels.addmm(primals_2, primals_3, primals_1, alpha=1, beta=1, out=buf0)
        buf1 = empty_strided_cpu((), (), torch.bool)
        cpp_fused_gt_mean_relu_0(buf0, buf1)
        return (buf1, buf0, primals_3, )
'''

BREAK_TEXT = '''\
Graph break in user code at {src}:7
Graph Break Reason: Data-dependent branching
  Explanation: Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). Dynamo does not support tracing dynamic control flow.
  Hint: Use `torch.cond` to express dynamic control flow.
  Hint: Consider making the code branchless, e.g. with torch.where.

  Developer debug context: attempted to jump with TensorVariable()

 For more details about this graph break, please visit: https://example.invalid/gb0170.html

User code traceback:
  File "{train}", line 12, in <module>
    loss = model(x).sum()
  File "{src}", line 7, in forward
    if h.mean() > 0.5:
'''


def _capture(dump: str, src: str, train: str, rank: int, pid: int) -> Capture:
    cap = Capture(dump)
    cap.process = {"pid": pid, "host": "node0", "rank": rank, "argv": ["train.py", "--steps", "3"],
                   "python": "3.11.7", "torch": "2.13.0+cpu", "run": "id:fixture"}
    written: List[str] = []
    tag = "" if rank == 0 else ".%d" % rank

    def put(name: str, text: str) -> str:
        path = os.path.join(dump, name)
        write_file(path, text)
        written.append(name)
        return path

    root = CompiledFrame("forward", "Block.forward", src, 5, label="Block.forward", ident="Block_forward",
                         module="model")
    resume = CompiledFrame("torch_dynamo_resume_in_forward_at_7", "Block.torch_dynamo_resume_in_forward_at_7",
                           src, 7, label="Block.forward.resume_at_7", ident="Block_forward_resume_at_7",
                           module="model", is_resume=True)
    root.root = root
    resume.root = resume.parent = root
    root.source, root.source_start = "".join(PROGRAM.splitlines(True)[4:9]), 5
    graph_no = 1
    for k, batch in enumerate((4, 6)):
        cid, rcid = "0/%d" % k, "1/%d" % k
        g1, g2 = "__compiled_fn_%d" % graph_no, "__compiled_fn_%d" % (graph_no + 1)
        graph_no += 2
        t = Transform(cid, None, None, path=put("__transformed_code_%d_for_forward%s.py" % (k, tag),  # type: ignore[arg-type]
                                                TRANSFORMED.format(cid=cid, g=g1, r=k)),
                      graphs=[g1], resumes=["__resume_at_30_%d" % k])
        t.replacement = CodeInfo("forward", "Block.forward", t.path, 4)  # pellucid's code runs
        rt = Transform(rcid, None, None, path=put("__transformed_code_%d_for_torch_dynamo_resume_in_forward_at_7%s.py" % (k, tag),  # type: ignore[arg-type]
                                                  RESUME.format(cid=rcid, g=g2)), graphs=[g2])
        rt.rejected = "not verified equivalent: the verifier's budget ran out"
        root.transforms.append(t)
        resume.transforms.append(rt)
        root.entries.insert(0, CacheEntry(k, cid, t, guard_source=GUARD.format(n=k, b=batch), guard_name="guard_forward_%d" % k))
        resume.entries.insert(0, CacheEntry(k, rcid, rt, guard_source=GUARD.format(n=k, b=batch).replace("forward_", "resume_"),
                                            guard_name="guard_resume_%d" % k))
        root.graph_breaks.append(_break(cid, src, train))
        for g, gcid in ((g1, cid), (g2, rcid)):
            graph = CompiledGraph(g, gcid)
            for stage, text in (("dynamo", DYNAMO_GRAPH), ("aot_forward", AOT_FORWARD), ("inductor", INDUCTOR)):
                path = put("%s.%s%s.py" % (g, stage, tag), text.format(g=g, cid=gcid, b=batch, src=src))
                graph.stages.append(GraphStage(stage, text, path=path))
            cap.graphs[g] = graph
        cap.metrics += [CompileMetrics(cid, "forward", 1.25 + k, 0.75, 0.5, None, 9, 4),
                        CompileMetrics(rcid, "torch_dynamo_resume_in_forward_at_7", 0.5, 0.25, 0.125, None, 7, 2)]
    line6 = SourceLine(src, 6, "forward", "h = self.linear(x).relu()")
    root.recompilations.append(Recompilation(
        "0/1", "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6", "0/0",
        "if not (check_tensor(L['x'], torch.Tensor, dispatch_keys_0, torch.float32, device_index=None, "
        "requires_grad=False, size=[4, 8], stride=[8, 1])): return False",
        "TENSOR_MATCH", "L['x']", "Tensor f32[4, 8] stride (8, 1)", "Tensor f32[6, 8] stride (8, 1)",
        line6, [line6]))
    resume.recompilations.append(Recompilation(
        "1/1", "1/0: tensor 'h' size mismatch at index 0. expected 4, actual 6", "1/0",
        "if not (check_tensor(L['h'], ...)): return False", "TENSOR_MATCH", "L['h']",
        "Tensor f32[4, 8] stride (8, 1)", "Tensor f32[6, 8] stride (8, 1)",
        SourceLine(src, 9, "forward", "return x + h")))
    root.full_code_path = resume.full_code_path = put("full_code_for_forward%s.py" % tag, "# Dynamo's cache lookup\n")
    cap.frames = {1: root, 2: resume}
    cap.warnings = ["Dynamo's own code runs for Block.torch_dynamo_resume_in_forward_at_7 (compile 1/0): "
                    "not verified equivalent: the verifier's budget ran out"]
    cap.files = [os.path.join(dump, n) for n in written]
    name = "capture_%d.json" % rank
    cap.capture_file = os.path.join(dump, name)
    cap.process["written"] = written + [name, "index.md"]
    write_file(cap.capture_file, dumps(cap))
    return cap


def _break(cid: str, src: str, train: str) -> GraphBreak:
    from pellucid.dynamo.explain import parse_graph_break

    return parse_graph_break(cid, BREAK_TEXT.format(src=src, train=train))


def make_dump(base: str, ranks: int = 2) -> str:
    """Write the program and a dump of ``ranks`` processes under ``base``; returns the dump dir."""
    from pellucid.dynamo.index import rebuild

    os.makedirs(base, exist_ok=True)
    src = os.path.join(base, "model.py")
    train = os.path.join(base, "train.py")
    with open(src, "w") as fh:
        fh.write(PROGRAM)
    with open(train, "w") as fh:
        fh.write("\n" * 11 + "loss = model(x).sum()\n")
    dump = os.path.join(base, "dump")
    os.makedirs(dump, exist_ok=True)
    for rank in range(ranks):
        _capture(dump, src, train, rank, 4100 + rank)
    rebuild(dump)
    return dump
