"""A 3-process gloo job whose rank 1 blocks reading its step-4 batch while ranks 0 and 2 wait
for it in all_reduce; the hung job is then stopped with Ctrl-C (SIGINT to torchrun), and every
rank prints the traceback of where it stood."""

import time
from datetime import timedelta

import torch
import torch.distributed as dist


def load_batch(rank: int, step: int) -> torch.Tensor:
    if rank == 1 and step == 4:
        time.sleep(3600)  # a read that never returns
    return torch.randn(4, 8)


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=600))
    rank = dist.get_rank()
    for step in range(10):
        total = load_batch(rank, step).sum().reshape(1)
        dist.all_reduce(total)
        print(f"step {step} reduced {total.item():.3f}", flush=True)
        time.sleep(0.2)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
