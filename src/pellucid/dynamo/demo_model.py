"""pellucid's demo program: a small model that torch.compile splits, recompiles and differentiates.

``Net`` calls ``Block``, whose ``forward`` branches on a tensor's value: Dynamo cannot trace
that ``if``, so it breaks the graph there and compiles the rest as resume functions.  Training
runs two steps with batches of 4 rows, then one with 6: the new shape fails a guard, and Dynamo
compiles again (now with a dynamic batch size).  Each step runs ``backward()``.
"""
import torch


class Block(torch.nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(width, width)
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(self.linear(x)).relu()
        if h.mean() > 0.5:  # decided by a tensor's value: Dynamo breaks the graph here
            h = h * 0.5
        return x + h


class Net(torch.nn.Module):
    def __init__(self, features: int = 8, width: int = 16) -> None:
        super().__init__()
        self.embed = torch.nn.Linear(features, width)
        self.block = Block(width)
        self.head = torch.nn.Linear(width, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x).tanh()
        h = self.block(h)
        return self.head(h).squeeze(-1)


def train(backend: str = "inductor", batches=(4, 4, 6)) -> list:
    """Train ``Net`` for one step per batch size, compiled with ``backend``; returns the losses."""
    torch.manual_seed(0)
    model = Net()
    compiled = torch.compile(model, backend=backend)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for batch in batches:
        x, y = torch.randn(batch, 8), torch.randn(batch)
        loss = (compiled(x) - y).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return losses
