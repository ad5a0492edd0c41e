"""Run by test_prepare_debug: ranks started with torch.multiprocessing.spawn share one dump dir."""
import sys

import torch
import torch.multiprocessing as mp

import pellucid

DUMP = sys.argv[1]
RANKS = int(sys.argv[2])


def f(x):
    y = x.sin()
    print("graph break in rank code")
    return y * 2


def worker(rank):
    with pellucid.prepare_debug(DUMP):
        out = torch.compile(f, backend="eager")(torch.ones(3) * rank)
    assert torch.equal(out, f(torch.ones(3) * rank))


if __name__ == "__main__":
    mp.spawn(worker, nprocs=RANKS)
