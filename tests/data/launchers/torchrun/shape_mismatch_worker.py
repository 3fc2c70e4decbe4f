"""A 4-process gloo job whose rank SHAPE_RANK builds its second layer wider than the others do
(a width read per rank): the same number of parameters, shaped differently. DDP's construction
compares each parameter's sizes with process 0's."""

import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    rank = dist.get_rank()
    width = 12 if rank == int(os.environ.get("SHAPE_RANK", "2")) else 8
    model = torch.nn.Sequential(torch.nn.Linear(8, width), torch.nn.Linear(width, 8))
    model = DistributedDataParallel(model)
    for step in range(5):
        model(torch.randn(4, 8)).sum().backward()
        print(f"rank {rank} step {step} done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
