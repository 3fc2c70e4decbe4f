"""A 3-process gloo job whose rank 1 leaves its loop at step 4 (an early `return`, as on a
rank whose data ran out) and exits cleanly, while ranks 0 and 2 go on into step 4's
all_reduce and lose their connection to it."""

import time
from datetime import timedelta

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=600))
    rank = dist.get_rank()
    for step in range(10):
        if rank == 1 and step == 4:
            print("no more data on this rank, stopping", flush=True)
            return
        total = torch.randn(4, 8).sum().reshape(1)
        dist.all_reduce(total)
        print(f"step {step} reduced {total.item():.3f}", flush=True)
        time.sleep(0.2)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
