"""Run by test_kill: compile under prepare_debug, report what was captured, then SIGKILL self.

The report goes to stdout (flushed) before the kill; nothing else runs between the end of the
``with`` block and the kill, so any work pellucid had left for later (a thread, an ``atexit``
handler, a finaliser) never runs.
"""
import json
import os
import signal
import sys

import torch

import pellucid

DUMP, BACKEND = sys.argv[1], sys.argv[2]


def breaks(x, n):
    y = x.sin() + n
    print("graph break")
    return (y * 2).cos()


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = self.a(x).relu()
        torch._dynamo.graph_break()
        return self.b(h) + x


if __name__ == "__main__":
    torch.manual_seed(0)
    block = Block()
    with pellucid.prepare_debug(DUMP) as capture:
        f = torch.compile(breaks, backend=BACKEND)
        f(torch.ones(3), 1)
        f(torch.ones(5), 2)           # a recompile (shape, then the constant)
        f(torch.ones(5, 2), 3)
        torch.compile(block, backend=BACKEND)(torch.ones(2, 8))
    report = {
        "pid": os.getpid(),
        "files": list(capture.files),
        "frames": [[f.name, [t.path for t in f.transforms], f.full_code_path]
                   for f in capture.frames.values()],
        "graph_files": [s.path for g in capture.graphs.values() for s in g.stages],
        "warnings": list(capture.warnings),
    }
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)
    print("not reached")
