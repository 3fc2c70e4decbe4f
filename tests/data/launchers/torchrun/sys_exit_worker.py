"""A 3-process gloo job whose rank 1 finds a corrupt shard at step 3, prints why and calls
`sys.exit(1)` (no exception, so no traceback), while ranks 0 and 2 go on into step 3's
all_reduce and lose their connection to it."""

import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=600))
    rank = dist.get_rank()
    for step in range(8):
        if rank == 1 and step == 3:
            print(f"rank {rank}: found corrupt shard data-00017.tar, exiting", flush=True)
            sys.exit(1)
        total = torch.ones(1) * step
        dist.all_reduce(total)
        print(f"[rank {rank}] step {step} loss {total.item():.2f}", flush=True)
        time.sleep(0.2)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
