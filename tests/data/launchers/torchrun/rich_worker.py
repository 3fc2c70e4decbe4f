"""A 3-process gloo DDP job that renders uncaught exceptions with rich's traceback handler (as
`accelerate launch` and typer command lines do when rich is installed); rank 1 raises a
ValueError at step 3, and ranks 0 and 2 then lose their connection to it."""

from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from rich.traceback import install
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

install(show_locals=False)


def decode(batch: torch.Tensor, rank: int, step: int) -> torch.Tensor:
    if rank == 1 and step == 3:
        raise ValueError(f"corrupt sample in batch {step}: expected 8 features")
    return batch


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    rank = dist.get_rank()
    g = torch.Generator().manual_seed(0)
    x = torch.randn(96, 8, generator=g)
    ds = TensorDataset(x, x.sum(1, keepdim=True))
    loader = DataLoader(ds, batch_size=4, sampler=DistributedSampler(ds))
    model = DistributedDataParallel(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for step, (xb, yb) in enumerate(loader):
        xb = decode(xb, rank, step)
        loss = nn.functional.mse_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"rank {rank} step {step} loss {loss.item():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
