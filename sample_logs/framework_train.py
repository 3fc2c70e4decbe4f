"""Tiny CPU / gloo DDP training script for the framework-style sample logs.

A sibling of ``ddp_train.py``, ``collectives_train.py`` and ``faults_train.py`` (same
8 -> 16 -> 1 MLP wrapped in DDP, same seeded synthetic data). Unlike them it prints
**no** ``stage=`` marks and no device-mapping dict: each rank prints only what a training
framework would print, one progress line (or progress bar) per step, chosen by --style:

  --style megatron   a Megatron-LM-style line after every iteration, e.g.
                     " [Rank 2] iteration        6/      48 | consumed samples: ... |
                     elapsed time per iteration (ms): ... | learning rate: ... | lm loss: ... |
                     loss scale: 1.0 | number of skipped iterations:   0 |"
                     (rank 0 also prints a "using world size: ..." line at start)
  --style steps      "step <s>/<total> loss=<loss> lr=<lr>" after the forward pass, before
                     backward; the line carries no rank
  --style tqdm       a tqdm progress bar per epoch, labelled
                     "Epoch <e>, Rank <r>, world_size <w>", written to stderr with \\r updates;
                     closed (ending the line) when the epoch's loop ends or is left by an
                     exception, and a newline is written if the rank is stopped by SIGTERM
                     while its bar is open

The step / iteration counter is global, starts at 0 and keeps counting across epochs
(<total> = epochs * len(loader)). Each epoch ends with dist.barrier() plus an all_reduce
of the loss sum.

Flags select the bug a scenario reproduces (see each scenario's README.md):

  --shard sampler          DistributedSampler (every rank gets the same number of batches)
  --shard remainder-last   buggy: contiguous shards of len(ds) // world_size samples and the
                           last rank also takes the remainder (it can get one batch more)
  --bad-rank/--bad-step    where --fault is injected (global step)
  --fault nan-skip         a NaN sample; that rank alone prints one WARNING line and
                           ``continue``s past backward
  --fault stall            the rank blocks for --stall-seconds while fetching that batch
  --step-seconds S         sleep S seconds after each optimizer step (stands in for compute)
  --redirect-to DIR        rank redirects its own stdout/stderr to DIR/<--redirect-name>
"""

import argparse
import gc
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
from torch.utils.data import DataLoader, Subset, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--style", choices=["megatron", "steps", "tqdm"], required=True)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--dataset-size", type=int, default=192)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--timeout", type=int, default=20, help="process group timeout (s)")
    p.add_argument("--shard", choices=["sampler", "remainder-last"], default="sampler")
    p.add_argument("--bad-rank", type=int, default=-1)
    p.add_argument("--bad-step", type=int, default=-1)
    p.add_argument("--fault", choices=["none", "nan-skip", "stall"], default="none")
    p.add_argument("--stall-seconds", type=float, default=120.0)
    p.add_argument("--step-seconds", type=float, default=0.0)
    p.add_argument("--redirect-to", default=None)
    p.add_argument("--redirect-name", default="rank{rank}.log")
    return p.parse_args()


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
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    return DataLoader(ds, batch_size=args.batch_size, sampler=sampler, drop_last=False), sampler


def say(msg):
    print(msg, flush=True)


class OpenBar:
    """The tqdm bar currently drawing on this rank's stderr (None between epochs)."""

    bar = None


def end_bar_line_on_sigterm(signum, frame):
    # torchrun stops the surviving ranks with SIGTERM: end the bar's line, then die of it.
    if OpenBar.bar is not None:
        sys.stderr.write("\n")
        sys.stderr.flush()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


@record
def main():
    args = parse_args()
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])

    if args.redirect_to:
        path = os.path.join(args.redirect_to, args.redirect_name.format(rank=rank))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        f = open(path, "w", buffering=1)
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)
        sys.stdout = f
        sys.stderr = f

    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    loader, sampler = make_loader(args, rank, world_size)
    total = args.epochs * len(loader)
    if args.style == "megatron" and rank == 0:
        say(
            f"using world size: {world_size}, data-parallel size: {world_size}, "
            f"tensor-model-parallel size: 1, pipeline-model-parallel size: 1"
        )
    if args.style == "tqdm":
        from tqdm import tqdm

        signal.signal(signal.SIGTERM, end_bar_line_on_sigterm)

    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    loss_fn = nn.MSELoss()

    global_step = 0
    skipped = 0
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        batches = loader
        if args.style == "tqdm":
            OpenBar.bar = batches = tqdm(
                loader,
                desc=f"Epoch {epoch}, Rank {rank}, world_size {world_size}",
                unit="batch",
                ascii=True,
                file=sys.stderr,
            )
        loss_sum = torch.zeros(1)
        try:
            for x, y in batches:
                step = global_step
                global_step += 1
                t0 = time.perf_counter()
                faulty = rank == args.bad_rank and step == args.bad_step
                if faulty and args.fault == "stall":
                    time.sleep(args.stall_seconds)  # stands in for a hung read (e.g. a stuck NFS mount)
                if faulty and args.fault == "nan-skip":
                    x = x.clone()
                    x[0, 0] = float("nan")  # a corrupt sample
                loss = loss_fn(model(x), y)
                if args.style == "steps":
                    say(f"step {step}/{total} loss={loss.item():.4f} lr={args.lr:g}")
                if not torch.isfinite(loss).item():
                    # BUG: only this rank skips backward (and DDP's gradient all_reduce).
                    word = "iteration" if args.style == "megatron" else "step"
                    say(f"WARNING: NaN loss at {word} {step}, skipping this batch")
                    skipped += 1
                    continue
                opt.zero_grad()
                loss.backward()
                opt.step()
                if args.step_seconds:
                    time.sleep(args.step_seconds)
                loss_sum += loss.detach()
                if args.style == "megatron":
                    ms = (time.perf_counter() - t0) * 1000.0
                    consumed = (step + 1) * args.batch_size * world_size
                    say(
                        f" [Rank {rank}] iteration {step:8d}/{total:8d} |"
                        f" consumed samples: {consumed:12d} |"
                        f" elapsed time per iteration (ms): {ms:.1f} |"
                        f" learning rate: {args.lr:.3E} |"
                        f" lm loss: {loss.item():.6E} |"
                        f" loss scale: 1.0 |"
                        f" number of skipped iterations: {skipped:3d} |"
                    )
        finally:
            if OpenBar.bar is not None:
                OpenBar.bar.close()  # final refresh + newline
                OpenBar.bar = None
        dist.barrier()
        dist.all_reduce(loss_sum)
        if rank == 0 and args.style == "steps":
            say(f"epoch {epoch} done, mean loss={loss_sum.item() / (world_size * len(loader)):.4f}")

    # Clean shutdown: drop the DDP wrapper (its reducer holds the process group) first.
    del model, opt
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
