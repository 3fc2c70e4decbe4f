"""DDP training under Join with `throw_on_early_termination=True`, on shards of unequal length.

The dataset is sharded by hand in contiguous `ceil(len(ds) / world_size)` chunks, so the last
rank gets fewer samples (177 samples, 4 ranks, batch 4: 12, 12, 12 and 11 batches). Without
Join the short rank would leave the loop and the others would hang in step 11's gradient
all_reduce; with `throw_on_early_termination=True` every rank raises instead: the short rank
`Rank 3 exhausted all inputs.`, the others `Detected at least one rank that exhausted inputs.
Throwing across all ranks.`

Launched by join_early_termination/run.sh (torchrun, gloo, CPU). Each rank redirects its own
stdout and stderr to `--redirect-to/<name>` so its traceback lands in its file.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.algorithms.join import Join
from torch.distributed.elastic.multiprocessing.errors import record
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Subset, TensorDataset


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--dataset-size", type=int, default=177)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--timeout", type=int, default=20, help="process group timeout (s)")
    p.add_argument("--redirect-to", default="logs")
    p.add_argument("--redirect-name", default="worker_{rank}.log")
    return p.parse_args()


def short_last_shard(args: argparse.Namespace, rank: int, world_size: int) -> DataLoader:
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(args.dataset_size, 8, generator=g)
    y = x.sum(dim=1, keepdim=True) * 0.5
    ds = TensorDataset(x, y)
    # BUG: contiguous shards of ceil(); the last rank gets what is left over
    chunk = math.ceil(len(ds) / world_size)
    idx = list(range(rank * chunk, min((rank + 1) * chunk, len(ds))))
    return DataLoader(Subset(ds, idx), batch_size=args.batch_size, shuffle=False)


@record
def main() -> None:
    args = parse_args()
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    path = os.path.join(args.redirect_to, args.redirect_name.format(rank=rank))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    out = open(path, "w", buffering=1)
    os.dup2(out.fileno(), 1)
    os.dup2(out.fileno(), 2)
    sys.stdout = sys.stderr = out
    logging.basicConfig(
        stream=out, level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s"
    )
    log = logging.getLogger("train")

    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    loader = short_last_shard(args, rank, world_size)
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.MSELoss()

    with Join([model], throw_on_early_termination=True):
        for step, (x, y) in enumerate(loader):
            log.info(f"rank={rank} step={step} stage=before_forward")
            loss = loss_fn(model(x), y)
            log.info(f"rank={rank} step={step} stage=before_backward")
            opt.zero_grad()
            loss.backward()
            log.info(f"rank={rank} step={step} stage=after_backward")
            opt.step()
            log.info(f"rank={rank} step={step} stage=after_step")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
