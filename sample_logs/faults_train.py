"""Tiny CPU / gloo DDP training script for the later fault sample logs.

A sibling of ``ddp_train.py`` and ``collectives_train.py`` (both stay unchanged:
their logs cite their line numbers). Launched with
``torchrun --nproc_per_node=N faults_train.py [flags]`` by the per-scenario ``run.sh``
files. Every rank prints its device-mapping dict at start and, on every training
step, stage marks of the form::

    rank=<global rank> step=<global step> stage=<before_forward|before_backward|after_backward|after_step>

The global step counter starts at 0 and keeps counting across epochs. There is no
``loader sizes:`` print unless --loader-sizes is given.

Flags select the bug a scenario reproduces (see each scenario's README.md):

  --shard sampler          DistributedSampler (every rank gets the same number of batches)
  --shard remainder-last   buggy: contiguous shards of len(ds) // world_size samples and the
                           last rank also takes the remainder (it can get one batch more)
  --shard naive            buggy: contiguous shards of ceil(len(ds) / world_size) samples;
                           the last rank gets what is left over (it can get one batch fewer)
  --loader-sizes           at each epoch start, all_gather len(loader); rank 0 prints
                           "loader sizes: [...]"
  --epoch-end ORDER        barrier-first (barrier, then all_reduce of the loss sum) or
                           reduce-first (all_reduce of the 1-element loss sum, then barrier)
  --epoch-lines            print "rank=<r> epoch=<e> start" / "rank=<r> epoch=<e> end" and,
                           before the epoch-end dist.barrier(), the mark
                           "rank=<r> step=<its last step> stage=epoch_end_barrier"
  --bad-rank/--bad-step    where --fault is injected
  --fault preprocess-error a corrupt label; batch preprocessing raises ValueError and the
                           loop logs one warning and ``continue``s on that rank alone
  --setup-stall-rank R     rank R blocks in dataset loading (after init_process_group,
                           before the first collective) for --setup-stall-seconds; it logs
                           one "still loading" line after --still-loading-after seconds
  --log-format ts          Python logging with '%(asctime)s %(levelname)s %(message)s'
  --redirect-to DIR        rank redirects its own stdout/stderr to DIR/<--redirect-name>
"""

import argparse
import gc
import logging
import math
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.elastic.multiprocessing.errors import record
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Subset, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--dataset-size", type=int, default=192)
    p.add_argument("--timeout", type=int, default=20, help="process group timeout (s)")
    p.add_argument("--shard", choices=["sampler", "remainder-last", "naive"], default="sampler")
    p.add_argument("--epoch-lines", action="store_true")
    p.add_argument("--loader-sizes", action="store_true")
    p.add_argument("--epoch-end", choices=["barrier-first", "reduce-first"], default="barrier-first")
    p.add_argument("--bad-rank", type=int, default=-1)
    p.add_argument("--bad-step", type=int, default=-1)
    p.add_argument("--fault", choices=["none", "preprocess-error"], default="none")
    p.add_argument("--setup-stall-rank", type=int, default=-1)
    p.add_argument("--setup-stall-seconds", type=float, default=120.0)
    p.add_argument("--still-loading-after", type=float, default=5.0)
    p.add_argument("--log-format", choices=["plain", "ts"], default="plain")
    p.add_argument("--redirect-to", default=None)
    p.add_argument("--redirect-name", default="rank{rank}.log")
    return p.parse_args()


class Out:
    """Writes one line per message, either plain print or Python logging."""

    def __init__(self, args):
        self.ts = args.log_format == "ts"
        if self.ts:
            self.log = logging.getLogger("train")
            self.log.setLevel(logging.INFO)
            self.log.propagate = False
            handler = logging.StreamHandler(sys.stdout)
            handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
            self.log.addHandler(handler)

    def info(self, msg, *args):
        if self.ts:
            self.log.info(msg, *args)
        else:
            print(msg % args if args else msg, flush=True)

    def warning(self, msg, *args):
        if self.ts:
            self.log.warning(msg, *args)
        else:
            print("WARNING " + (msg % args if args else msg), flush=True)


def make_loader(args, rank, world_size):
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(args.dataset_size, 8, generator=g)
    y = x.sum(dim=1, keepdim=True) * 0.5 + 0.1 * torch.randn(args.dataset_size, 1, generator=g)
    ds = TensorDataset(x, y)
    if args.shard == "remainder-last":
        # BUG: equal contiguous shards, and the last rank also takes the remainder.
        chunk = len(ds) // world_size
        stop = len(ds) if rank == world_size - 1 else (rank + 1) * chunk
        idx = list(range(rank * chunk, stop))
        return DataLoader(Subset(ds, idx), batch_size=args.batch_size, shuffle=False), None
    if args.shard == "naive":
        # BUG: contiguous shards of ceil(); the last rank gets what is left over.
        chunk = math.ceil(len(ds) / world_size)
        idx = list(range(rank * chunk, min((rank + 1) * chunk, len(ds))))
        return DataLoader(Subset(ds, idx), batch_size=args.batch_size, shuffle=False), None
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    return DataLoader(ds, batch_size=args.batch_size, sampler=sampler, drop_last=False), sampler


def preprocess(x, y):
    """Per-batch data validation / normalisation before forward."""
    bad = (~torch.isfinite(y[:, 0])) | (y[:, 0].abs() > 100)
    if bad.any():
        i = int(bad.nonzero()[0])
        raise ValueError(f"label out of range in sample {i}: {y[i, 0].item()}")
    return (x - x.mean()) / (x.std() + 1e-6), y


@record
def main():
    args = parse_args()
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])

    if args.redirect_to:
        path = os.path.join(args.redirect_to, args.redirect_name.format(rank=rank))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        f = open(path, "w", buffering=1)
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)
        sys.stdout = f
        sys.stderr = f

    out = Out(args)
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    out.info(repr({"rank": rank, "local_rank": local_rank, "device": local_rank, "world_size": world_size}))

    if args.setup_stall_rank >= 0:
        out.info(f"rank={rank} loading dataset")
        if rank == args.setup_stall_rank:
            # stands in for a slow/hung dataset read (e.g. a stuck network filesystem)
            time.sleep(args.still_loading_after)
            out.info(f"rank={rank} still loading dataset ({args.still_loading_after:g} s elapsed)")
            time.sleep(args.setup_stall_seconds - args.still_loading_after)
    loader, sampler = make_loader(args, rank, world_size)
    if args.setup_stall_rank >= 0:
        out.info(f"rank={rank} dataset ready")

    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))  # first collective
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.MSELoss()

    def mark(step, stage):
        out.info(f"rank={rank} step={step} stage={stage}")

    global_step = 0
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        if args.epoch_lines:
            out.info(f"rank={rank} epoch={epoch} start")
        if args.loader_sizes:
            # all_gather of len(loader) (all_gather_object needs numpy, absent in this venv)
            gathered = [torch.zeros(1, dtype=torch.long) for _ in range(world_size)]
            dist.all_gather(gathered, torch.tensor([len(loader)]))
            if rank == 0:
                out.info(f"loader sizes: {[int(t.item()) for t in gathered]}")
        loss_sum = torch.zeros(1)
        for x, y in loader:
            step = global_step
            global_step += 1
            if rank == args.bad_rank and step == args.bad_step and args.fault == "preprocess-error":
                y = y.clone()
                y[2, 0] = 1e9  # a corrupt label
            try:
                x, y = preprocess(x, y)
            except ValueError as exc:
                # BUG: only this rank skips the batch (and DDP's gradient all_reduce).
                out.warning("preprocess failed, skipping batch: %r", exc)
                continue
            mark(step, "before_forward")
            loss = loss_fn(model(x), y)
            mark(step, "before_backward")
            opt.zero_grad()
            loss.backward()
            mark(step, "after_backward")
            opt.step()
            mark(step, "after_step")
            loss_sum += loss.detach()
        if args.epoch_lines:
            out.info(f"rank={rank} epoch={epoch} end")
            mark(global_step - 1, "epoch_end_barrier")
        if args.epoch_end == "barrier-first":
            dist.barrier()
            dist.all_reduce(loss_sum)
        else:
            dist.all_reduce(loss_sum)
            dist.barrier()
        if rank == 0:
            out.info(f"epoch={epoch} loss_sum={loss_sum.item():.4f}")

    # Clean shutdown: drop the DDP wrapper (its reducer holds the process group) first.
    del model, opt
    gc.collect()
    dist.barrier()
    out.info(f"rank={rank} training done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
