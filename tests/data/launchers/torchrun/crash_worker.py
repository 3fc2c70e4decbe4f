"""A 3-process gloo DDP job whose rank 1 raises at step 3 of its first attempt (and of every
attempt): the console of `torchrun --max-restarts=1` shows the first failure, then the
restarted workers' own failure to form their group."""

from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    rank = dist.get_rank()
    g = torch.Generator().manual_seed(0)
    x = torch.randn(96, 8, generator=g)
    ds = TensorDataset(x, x.sum(1, keepdim=True))
    loader = DataLoader(ds, batch_size=4, sampler=DistributedSampler(ds))
    model = DistributedDataParallel(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for step, (xb, yb) in enumerate(loader):
            if rank == 1 and epoch == 0 and step == 3:
                raise RuntimeError("CUDA error: an illegal memory access was encountered")
            loss = nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
