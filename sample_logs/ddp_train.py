"""Tiny DDP (CPU / gloo) training script used to generate the sample logs.

Launched with ``torchrun --nproc_per_node=4 ddp_train.py [flags]`` by the
per-scenario ``run.sh`` files. Every rank prints, on every training step, stage
marks of the form::

    rank=<global rank> step=<global step> stage=<before_forward|before_backward|after_backward|after_step>

The global step counter starts at 0 and keeps counting across epochs.

Flags select the bug a scenario reproduces (see each scenario's README.md):

  --bad-rank/--bad-step   inject a NaN batch on one rank at one global step
  --skip-mode continue    buggy: that rank alone ``continue``s past backward
  --skip-mode agree       fixed: all ranks all_reduce(MAX) a skip flag and skip together
  --shard naive           naive contiguous shard of a dataset whose size is not
                          divisible by world_size (uneven DataLoader lengths)
  --device-bug            device computed as rank % GPUS_PER_NODE with a wrong
                          hard-coded default of 3 GPUs per node
  --log-format ts         Python logging with '%(asctime)s %(levelname)s %(message)s'
  --extra-kv              add loss=/epoch= key=value pairs to the stage marks
  --rank-file DIR         logging.FileHandler -> DIR/rank<N>.log (plus stdout)
  --redirect-to DIR       rank redirects its own stdout/stderr to DIR/rank<N>.log
"""

import argparse
import gc
import logging
import math
import os
import socket
import sys
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
    p.add_argument("--shard", choices=["sampler", "naive"], default="sampler")
    p.add_argument("--timeout", type=int, default=20, help="process group timeout (s)")
    p.add_argument("--bad-rank", type=int, default=-1)
    p.add_argument("--bad-step", type=int, default=-1)
    p.add_argument("--skip-mode", choices=["continue", "agree"], default="continue")
    p.add_argument("--device-bug", action="store_true")
    p.add_argument("--host", action="store_true", help="add 'host' to the device map")
    p.add_argument("--log-format", choices=["plain", "ts"], default="plain")
    p.add_argument("--extra-kv", action="store_true")
    p.add_argument("--rank-file", default=None)
    p.add_argument("--redirect-to", default=None)
    return p.parse_args()


class Out:
    """Writes one line per message, either plain print or Python logging."""

    def __init__(self, args, rank):
        self.ts = args.log_format == "ts"
        if self.ts:
            fmt = logging.Formatter("%(asctime)s %(levelname)s %(message)s")
            self.log = logging.getLogger("train")
            self.log.setLevel(logging.INFO)
            self.log.propagate = False
            sh = logging.StreamHandler(sys.stdout)
            sh.setFormatter(fmt)
            self.log.addHandler(sh)
            if args.rank_file:
                fh = logging.FileHandler(os.path.join(args.rank_file, f"rank{rank}.log"), mode="w")
                fh.setFormatter(fmt)
                self.log.addHandler(fh)

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


def device_map(args, rank, local_rank, world_size):
    if args.device_bug:
        # BUG: GPUS_PER_NODE is not exported by the launcher, and the hard-coded
        # default (3) is wrong for this 4-process node: rank 3 -> device 0.
        gpus_per_node = int(os.environ.get("GPUS_PER_NODE", "3"))
        device = rank % gpus_per_node
    else:
        device = local_rank  # what torch.cuda.set_device(local_rank) would use
    d = {"rank": rank, "local_rank": local_rank, "device": device, "world_size": world_size}
    if args.host:
        d["host"] = socket.gethostname()
    return d


def make_loader(args, rank, world_size):
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(args.dataset_size, 8, generator=g)
    y = x.sum(dim=1, keepdim=True) * 0.5 + 0.1 * torch.randn(args.dataset_size, 1, generator=g)
    ds = TensorDataset(x, y)
    if args.shard == "naive":
        # BUG: contiguous shard with ceil(); the last rank gets what is left over.
        chunk = math.ceil(len(ds) / world_size)
        idx = list(range(rank * chunk, min((rank + 1) * chunk, len(ds))))
        return DataLoader(
            Subset(ds, idx), batch_size=args.batch_size, shuffle=False, drop_last=False
        ), None
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    return DataLoader(ds, batch_size=args.batch_size, sampler=sampler, drop_last=False), sampler


@record
def main():
    args = parse_args()
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])

    if args.redirect_to:
        f = open(os.path.join(args.redirect_to, f"rank{rank}.log"), "w", buffering=1)
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)
        sys.stdout = f
        sys.stderr = f

    out = Out(args, rank)
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    out.info(repr(device_map(args, rank, local_rank, world_size)))

    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.MSELoss()
    loader, sampler = make_loader(args, rank, world_size)

    def mark(step, stage, **kv):
        msg = f"rank={rank} step={step} stage={stage}"
        if args.extra_kv:
            msg += "".join(f" {k}={v}" for k, v in kv.items())
        out.info(msg)

    global_step = 0
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        # all_gather of len(loader); dist.all_gather_object would do the same but
        # needs numpy, which this CPU venv does not have.
        gathered = [torch.zeros(1, dtype=torch.long) for _ in range(world_size)]
        dist.all_gather(gathered, torch.tensor([len(loader)]))
        sizes = [int(t.item()) for t in gathered]
        if rank == 0:
            out.info(f"loader sizes: {sizes}")
        epoch_loss = torch.zeros(2)
        for x, y in loader:
            step = global_step
            global_step += 1
            if rank == args.bad_rank and step == args.bad_step:
                x = x.clone()
                x[0, 0] = float("nan")  # a corrupt sample
            mark(step, "before_forward", epoch=epoch)
            loss = loss_fn(model(x), y)
            mark(step, "before_backward", loss=f"{loss.item():.4f}", epoch=epoch)
            bad = not torch.isfinite(loss).item()
            if args.skip_mode == "agree":
                flag = torch.tensor([1.0 if bad else 0.0])
                dist.all_reduce(flag, op=dist.ReduceOp.MAX)
                if flag.item() > 0:
                    out.warning(
                        f"rank={rank} step={step} skip_flag local={int(bad)} global={int(flag.item())} "
                        f"-> skipping this step on all ranks"
                    )
                    continue
            elif bad:
                # BUG: only this rank skips backward; the others run it.
                out.warning(
                    f"rank={rank} step={step} non-finite loss={loss.item()} -> skipping batch"
                )
                continue
            opt.zero_grad()
            loss.backward()
            mark(step, "after_backward", loss=f"{loss.item():.4f}", epoch=epoch)
            opt.step()
            mark(step, "after_step", loss=f"{loss.item():.4f}", epoch=epoch)
            epoch_loss += torch.tensor([loss.item(), 1.0])
        out.info(f"rank={rank} epoch={epoch} finished local loop, entering epoch-end barrier")
        dist.barrier()
        dist.all_reduce(epoch_loss)
        if rank == 0:
            out.info(f"epoch={epoch} mean_loss={(epoch_loss[0] / epoch_loss[1]).item():.4f}")

    # Clean shutdown: drop the DDP wrapper (its reducer holds the process group)
    # before destroy_process_group(); otherwise a rank can abort at exit with
    # "terminate called without an active exception" (seen with torch 2.13 CPU).
    del model, opt
    gc.collect()
    dist.barrier()
    out.info(f"rank={rank} training done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
