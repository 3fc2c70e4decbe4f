"""A 3-process gloo job whose rank 1 fails to decode a sample at step 3, logs the exception
with `logging.exception` (the traceback under the logger's record) and exits with code 1,
while ranks 0 and 2 go on into step 3's all_reduce."""

import logging
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist


def decode(step: int, rank: int) -> torch.Tensor:
    if rank == 1 and step == 3:
        raise ValueError("cannot decode sample 4711: truncated JPEG")
    return torch.ones(1) * step


def main():
    logging.basicConfig(
        format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO
    )
    log = logging.getLogger("train")
    dist.init_process_group("gloo", timeout=timedelta(seconds=600))
    rank = dist.get_rank()
    for step in range(8):
        try:
            batch = decode(step, rank)
        except ValueError:
            log.exception("rank %d: step %d failed", rank, step)
            sys.exit(1)
        dist.all_reduce(batch)
        log.info("rank %d step %d loss %.2f", rank, step, batch.item())
        time.sleep(0.2)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
