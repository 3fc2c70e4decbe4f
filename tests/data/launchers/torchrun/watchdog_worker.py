"""A 3-process gloo job with faulthandler's watchdog armed (`dump_traceback_later`): with
HANG=1, rank 1 blocks reading its step-4 batch while ranks 0 and 2 wait for it in all_reduce;
the watchdog dumps every process's stacks after 8 s, then the gloo timeout (20 s) ends the
job. Without HANG the job runs its 25 steps healthy and the watchdog fires mid-run."""

import faulthandler
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist

HANG = os.environ.get("HANG") == "1"


def load_batch(rank: int, step: int) -> torch.Tensor:
    if HANG and rank == 1 and step == 4:
        time.sleep(60)  # a read that never returns
    return torch.randn(4, 8)


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    rank = dist.get_rank()
    faulthandler.dump_traceback_later(8, exit=False)
    for step in range(10 if HANG else 25):
        total = load_batch(rank, step).sum().reshape(1)
        dist.all_reduce(total)
        print(f"step {step} reduced {total.item():.3f}", flush=True)
        time.sleep(0.5)
    faulthandler.cancel_dump_traceback_later()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
