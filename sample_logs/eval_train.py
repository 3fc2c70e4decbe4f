"""Tiny CPU / gloo DDP training script for the one-rank-evaluation sample logs.

The same 8 -> 16 -> 1 MLP in DDP and seeded synthetic data as ``framework_train.py``; each
rank draws a tqdm bar per epoch (``Epoch <e>, Rank <r>, world_size <w>``) to stderr, as
``framework_train.py --style tqdm`` does, and prints nothing else.

The bug: after epoch 0, one rank (--eval-rank) alone evaluates for --eval-seconds, with its
own tqdm bar (``Evaluating``), while the other ranks go on into epoch 1 and wait for it in
their first gradient all_reduce (DDP, in ``loss.backward()``). When the evaluation outlasts
the process group's timeout (--timeout), the others time out and torchrun stops the busy rank
with SIGTERM (its open bar's line is ended first).
"""

import argparse
import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.elastic.multiprocessing.errors import record
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--dataset-size", type=int, default=192)
    p.add_argument("--timeout", type=int, default=20, help="process group timeout (s)")
    p.add_argument("--step-seconds", type=float, default=0.05)
    p.add_argument("--eval-rank", type=int, default=0)
    p.add_argument("--eval-seconds", type=float, default=60.0)
    return p.parse_args()


class OpenBar:
    """The tqdm bar currently drawing on this rank's stderr (None between bars)."""

    bar = None


def end_bar_line_on_sigterm(signum, frame):
    # torchrun stops the surviving ranks with SIGTERM: end the bar's line, then die of it.
    if OpenBar.bar is not None:
        sys.stderr.write("\n")
        sys.stderr.flush()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def bar(iterable, desc):
    OpenBar.bar = tqdm(iterable, desc=desc, unit="batch", ascii=True, file=sys.stderr)
    return OpenBar.bar


def evaluate(model, args):
    """A slow evaluation pass over 20 batches; no collectives (model.module)."""
    with torch.no_grad():
        for _ in bar(range(20), "Evaluating"):
            model.module(torch.randn(args.batch_size, 8))
            time.sleep(args.eval_seconds / 20)
    OpenBar.bar.close()
    OpenBar.bar = None


@record
def main():
    args = parse_args()
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    signal.signal(signal.SIGTERM, end_bar_line_on_sigterm)

    g = torch.Generator().manual_seed(1234)
    x = torch.randn(args.dataset_size, 8, generator=g)
    y = x.sum(dim=1, keepdim=True) * 0.5 + 0.1 * torch.randn(args.dataset_size, 1, generator=g)
    ds = TensorDataset(x, y)
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(ds, batch_size=args.batch_size, sampler=sampler)

    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for xb, yb in bar(loader, f"Epoch {epoch}, Rank {rank}, world_size {world_size}"):
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            time.sleep(args.step_seconds)
        OpenBar.bar.close()
        OpenBar.bar = None
        if epoch == 0 and rank == args.eval_rank:
            evaluate(model, args)  # BUG: the other ranks do not wait for it
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
