"""Tiny CPU / gloo training script for the collective-failure sample logs.

A sibling of ``ddp_train.py`` (which stays unchanged: its logs cite its line
numbers). Launched with ``torchrun --nproc_per_node=4 collectives_train.py [flags]``
by the per-scenario ``run.sh`` files. Every rank prints its device-mapping dict at
start and, on every training step, stage marks of the form::

    rank=<global rank> step=<global step> stage=<before_forward|before_backward|after_backward|after_step>

The global step counter starts at 0 and keeps counting across epochs.

Flags select the bug a scenario reproduces (see each scenario's README.md):

  --sync ddp|manual        DDP wrapper, or an explicit dist.all_reduce per parameter
                           after backward (for TORCH_DISTRIBUTED_DEBUG=DETAIL runs)
  --bad-rank/--bad-step    where the fault is injected
  --fault nan              a NaN sample; that rank alone ``continue``s past backward
  --fault bad-label        a corrupt label; the loss raises ValueError
  --swallow-errors         buggy: an exception in forward/loss is printed
                           (traceback.print_exc()) and the rank ``continue``s alone
  --fault no-aux           a batch without auxiliary labels; forward skips the aux head
                           on that rank only (DDP, find_unused_parameters=False)
  --fault stall            the rank blocks for --stall-seconds while fetching a batch
  --reduce-loss            all_reduce the loss for the progress log after forward
                           (before the skip check)
  --epoch-end ORDER        barrier-first (barrier, then all_reduce of the loss sum) or
                           reduce-first (all_reduce of the 1-element loss sum, then barrier)
  --health-every N         every N steps, dist.monitored_barrier(wait_all_ranks=True)
                           with --health-timeout seconds, before forward
  --log-format ts          Python logging with '%(asctime)s %(levelname)s %(message)s'
  --redirect-to DIR        rank redirects its own stdout/stderr to DIR/<--redirect-name>
"""

import argparse
import gc
import logging
import os
import sys
import time
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.elastic.multiprocessing.errors import record
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--dataset-size", type=int, default=192)
    p.add_argument("--timeout", type=int, default=20, help="process group timeout (s)")
    p.add_argument("--sync", choices=["ddp", "manual"], default="ddp")
    p.add_argument("--bad-rank", type=int, default=-1)
    p.add_argument("--bad-step", type=int, default=-1)
    p.add_argument("--fault", choices=["none", "nan", "bad-label", "no-aux", "stall"], default="none")
    p.add_argument("--stall-seconds", type=float, default=120.0)
    p.add_argument("--swallow-errors", action="store_true")
    p.add_argument("--reduce-loss", action="store_true")
    p.add_argument("--epoch-end", choices=["barrier-first", "reduce-first"], default="barrier-first")
    p.add_argument("--health-every", type=int, default=0)
    p.add_argument("--health-timeout", type=int, default=10)
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

    def info(self, msg):
        if self.ts:
            self.log.info(msg)
        else:
            print(msg, flush=True)

    def warning(self, msg):
        if self.ts:
            self.log.warning(msg)
        else:
            print("WARNING " + msg, flush=True)


class Net(nn.Module):
    """8 -> 16 -> 1 MLP with a small auxiliary head used when the batch has aux labels."""

    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 1)
        self.aux_head = nn.Linear(16, 1)

    def forward(self, x, aux_mask):
        h = self.trunk(x)
        out = self.head(h)
        if aux_mask.any():  # data-dependent: no aux labels in the batch -> aux head unused
            out = out + 0.1 * self.aux_head(h) * aux_mask
        return out


def make_loader(args, rank, world_size):
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(args.dataset_size, 8, generator=g)
    y = x.sum(dim=1, keepdim=True) * 0.5 + 0.1 * torch.randn(args.dataset_size, 1, generator=g)
    aux_mask = torch.ones(args.dataset_size, 1)
    ds = TensorDataset(x, y, aux_mask)
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    return DataLoader(ds, batch_size=args.batch_size, sampler=sampler, drop_last=False), sampler


def checked_loss(pred, y):
    """MSE that refuses labels outside the valid range (a data-validation step)."""
    if not torch.isfinite(y).all() or y.abs().max() > 100:
        raise ValueError(f"label out of range in batch: max |y| = {y.abs().max().item()}")
    return nn.functional.mse_loss(pred, y)


def average_gradients(model, world_size):
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= world_size


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

    torch.manual_seed(0)
    net = Net()
    model = DDP(net) if args.sync == "ddp" else net
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loader, sampler = make_loader(args, rank, world_size)

    def mark(step, stage):
        out.info(f"rank={rank} step={step} stage={stage}")

    global_step = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        gathered = [torch.zeros(1, dtype=torch.long) for _ in range(world_size)]
        dist.all_gather(gathered, torch.tensor([len(loader)]))
        if rank == 0:
            out.info(f"loader sizes: {[int(t.item()) for t in gathered]}")
        loss_sum = torch.zeros(1)
        for x, y, aux_mask in loader:
            step = global_step
            global_step += 1
            faulty = rank == args.bad_rank and step == args.bad_step
            if faulty and args.fault == "stall":
                time.sleep(args.stall_seconds)  # stands in for a hung read (e.g. a stuck NFS mount)
            if faulty and args.fault == "nan":
                x = x.clone()
                x[0, 0] = float("nan")  # a corrupt sample
            if faulty and args.fault == "bad-label":
                y = y.clone()
                y[0, 0] = 1e9  # a corrupt label
            if faulty and args.fault == "no-aux":
                aux_mask = torch.zeros_like(aux_mask)  # no sample in this batch has aux labels
            mark(step, "before_forward")
            if args.health_every and step > 0 and step % args.health_every == 0:
                dist.monitored_barrier(
                    timeout=timedelta(seconds=args.health_timeout), wait_all_ranks=True
                )
            try:
                loss = checked_loss(model(x, aux_mask), y)
            except Exception:
                if not args.swallow_errors:
                    raise
                # BUG: the error is printed and the rank moves on to its next batch alone.
                traceback.print_exc()
                continue
            if args.reduce_loss:
                logged = loss.detach().reshape(1).clone()
                dist.all_reduce(logged)
                logged /= world_size
            mark(step, "before_backward")
            if not torch.isfinite(loss).item():
                # BUG: only this rank skips backward; the others run it.
                out.warning(f"rank={rank} step={step} non-finite loss={loss.item()} -> skipping batch")
                continue
            opt.zero_grad()
            loss.backward()
            if args.sync == "manual":
                average_gradients(model, world_size)
            mark(step, "after_backward")
            opt.step()
            mark(step, "after_step")
            loss_sum += loss.detach()
        out.info(f"rank={rank} epoch={epoch} finished local loop, entering epoch-end sync")
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
