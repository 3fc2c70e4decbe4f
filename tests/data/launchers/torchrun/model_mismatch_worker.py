"""A 3-process gloo job whose rank 1 builds its model with one layer more than the others (a
configuration read per rank): DDP's construction checks the parameters across ranks and every
rank raises `DDP expects same model across all ranks`."""

from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    rank = dist.get_rank()
    layers = [torch.nn.Linear(8, 8) for _ in range(3 if rank == 1 else 2)]
    model = DistributedDataParallel(torch.nn.Sequential(*layers))
    for step in range(5):
        model(torch.randn(4, 8)).sum().backward()
        print(f"rank {rank} step {step} done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
