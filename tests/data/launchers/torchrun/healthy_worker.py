"""A healthy 3-process gloo DDP job that trains until it is stopped: stopped with Ctrl-C, its
ranks print where each stood, computing or in DDP's gradient all-reduce, and no hang."""

from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=600))
    model = DistributedDataParallel(
        nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1))
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    for step in range(100000):
        loss = model(torch.randn(512, 256)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 50 == 0:
            print(f"step {step} loss {loss.item():.4f}", flush=True)


if __name__ == "__main__":
    main()
