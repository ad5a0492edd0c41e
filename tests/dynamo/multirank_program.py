"""A two-rank training program for the report tests: DDP over gloo on CPU, a graph break inside
a submodule, and a recompilation on rank 0 only (its last batch has another size).

    RANK=r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=p python multirank_program.py DUMP BACKEND
"""
import os, sys
import torch
import torch.distributed as dist
import pellucid


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.linear = torch.nn.Linear(width, width)

    def forward(self, x):
        h = self.linear(x).relu()
        if h.mean() > 0.5:  # data-dependent: a graph break
            h = h * 0.5
        return x + h


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(8, 16)
        self.block = Block(16)
        self.head = torch.nn.Linear(16, 1)

    def forward(self, x):
        return self.head(self.block(self.embed(x).tanh())).squeeze(-1)


def main(dump, backend):
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(Net())
    compiled = torch.compile(model, backend=backend)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = (4, 4, 6) if rank == 0 else (4, 4, 4)
    with pellucid.prepare_debug(dump):
        for batch in batches:
            x, y = torch.randn(batch, 8), torch.randn(batch)
            loss = (compiled(x) - y).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
