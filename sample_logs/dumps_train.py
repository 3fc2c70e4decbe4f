"""Tiny CPU / gloo training script for the hang-dump sample data (py-spy, Flight Recorder,
debug server).

A sibling of ``sample_logs/collectives_train.py`` (same seeded data, 8->16->1 MLP plus a small
``aux_head``, 12 steps/epoch on 4 ranks). Launched with
``torchrun --nproc_per_node=4 dumps_train.py [flags]`` by the per-scenario ``run.sh`` files.

Every rank prints, at start, its device-mapping dict and one ``rank=<r> pid=<pid> host=<h>``
line (so a dump taken by pid can be mapped to a rank), then on every training step the
stage marks::

    rank=<global rank> step=<global step> stage=<before_forward|before_backward|after_backward|after_step>

The global step counter starts at 0 and keeps counting across epochs. With
``--num-workers N > 0`` each DataLoader worker prints
``rank=<r> dataloader_worker=<id> pid=<pid>`` when it starts.

Flags select the bug a scenario reproduces (see each scenario's README.md):

  --sync ddp|manual        DDP wrapper, or an explicit dist.all_reduce per parameter
  --bad-rank/--bad-step    where the fault is injected
  --fault nan              a NaN sample at --bad-step; that rank alone ``continue``s past
                           backward
  --fault nan-val          a NaN sample in that rank's validation shard (epoch --bad-epoch,
                           default 0); with --eval the rank's val loss sum is NaN and it skips the
                           val-loss all_reduce (BUG: a collective behind
                           ``if torch.isfinite(val_loss_sum)``)
  --eval                   after each epoch's training loop, a no-grad validation pass over
                           the rank's val shard, then all_reduce(val_loss_sum) [1 element,
                           guarded], all_reduce(val_stats) [3 elements], then the usual
                           epoch-end barrier/all_reduce
  --reduce-loss            all_reduce the loss for the progress log after forward
                           (before the skip check)
  --epoch-end ORDER        barrier-first or reduce-first (1-element loss-sum all_reduce)
  --num-workers N          DataLoader worker processes per rank
  --fr-dump-dir DIR        when a collective raises (gloo timeout), write this rank's Flight
                           Recorder buffer as pickle (DIR/fr/<prefix><rank>) and JSON
                           (DIR/fr-json/<prefix><rank>.json), then re-raise
  --debug-server           torch.distributed.debug.start_debug_server() on every rank
                           (frontend on --debug-port, rank 0 only; periodic dumps into
                           --debug-dump-dir every --debug-dump-interval s); each rank prints
                           ``rank=<r> debug worker server http://<host>:<port>``
  --log-format ts          Python logging with '%(asctime)s %(levelname)s %(message)s'
  --redirect-to DIR        rank redirects its own stdout/stderr to DIR/<--redirect-name>
"""

import argparse
import gc
import logging
import os
import socket
import sys
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
    p.add_argument("--bad-epoch", type=int, default=0)
    p.add_argument("--fault", choices=["none", "nan", "nan-val"], default="none")
    p.add_argument("--eval", action="store_true")
    p.add_argument("--val-size", type=int, default=64)
    p.add_argument("--reduce-loss", action="store_true")
    p.add_argument("--epoch-end", choices=["barrier-first", "reduce-first"], default="barrier-first")
    p.add_argument("--num-workers", type=int, default=0)
    p.add_argument("--fr-dump-dir", default=None)
    p.add_argument("--fr-prefix", default="rank_")
    p.add_argument("--debug-server", action="store_true")
    p.add_argument("--debug-port", type=int, default=25999)
    p.add_argument("--debug-dump-dir", default=None)
    p.add_argument("--debug-dump-interval", type=float, default=60.0)
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
    """8 -> 16 -> 1 MLP with a small auxiliary head (always used here)."""

    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 1)
        self.aux_head = nn.Linear(16, 1)

    def forward(self, x, aux_mask):
        h = self.trunk(x)
        return self.head(h) + 0.1 * self.aux_head(h) * aux_mask


def worker_init(rank):
    def init(worker_id):
        print(f"rank={rank} dataloader_worker={worker_id} pid={os.getpid()}", flush=True)

    return init


def make_loader(args, rank, world_size):
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(args.dataset_size, 8, generator=g)
    y = x.sum(dim=1, keepdim=True) * 0.5 + 0.1 * torch.randn(args.dataset_size, 1, generator=g)
    aux_mask = torch.ones(args.dataset_size, 1)
    ds = TensorDataset(x, y, aux_mask)
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(
        ds,
        batch_size=args.batch_size,
        sampler=sampler,
        drop_last=False,
        num_workers=args.num_workers,
        worker_init_fn=worker_init(rank) if args.num_workers else None,
    )
    return loader, sampler


def make_val_loader(args, rank, world_size):
    g = torch.Generator().manual_seed(4321)
    x = torch.randn(args.val_size, 8, generator=g)
    y = x.sum(dim=1, keepdim=True) * 0.5 + 0.1 * torch.randn(args.val_size, 1, generator=g)
    ds = TensorDataset(x, y, torch.ones(args.val_size, 1))
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=False)
    return DataLoader(ds, batch_size=args.batch_size, sampler=sampler)


def evaluate(args, model, val_loader, rank, epoch, out):
    """Rank-local validation pass (no collectives); returns (loss sum, stats)."""
    val_loss_sum = torch.zeros(1)
    n_batches = n_samples = n_nonfinite = 0
    with torch.no_grad():
        for i, (x, y, aux_mask) in enumerate(val_loader):
            if args.fault == "nan-val" and rank == args.bad_rank and epoch == args.bad_epoch and i == 2:
                x = x.clone()
                x[1, 3] = float("nan")  # a corrupt validation sample
            loss = nn.functional.mse_loss(model(x, aux_mask), y, reduction="sum")
            val_loss_sum += loss
            n_batches += 1
            n_samples += x.shape[0]
            n_nonfinite += int(not torch.isfinite(loss).item())
    out.info(
        f"rank={rank} epoch={epoch} stage=eval_done val_batches={n_batches} "
        f"val_samples={n_samples} val_loss_sum={val_loss_sum.item():.4f}"
    )
    return val_loss_sum, torch.tensor([float(n_batches), float(n_samples), float(n_nonfinite)])


def average_gradients(model, world_size):
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= world_size


def dump_flight_recorder(args, rank, out):
    """Write this rank's Flight Recorder buffer, pickle and JSON, as the job fails."""
    c10d = torch._C._distributed_c10d
    pkl_dir = os.path.join(args.fr_dump_dir, "fr")
    json_dir = os.path.join(args.fr_dump_dir, "fr-json")
    os.makedirs(pkl_dir, exist_ok=True)
    os.makedirs(json_dir, exist_ok=True)
    pkl_path = os.path.join(pkl_dir, f"{args.fr_prefix}{rank}")
    json_path = os.path.join(json_dir, f"{args.fr_prefix}{rank}.json")
    with open(pkl_path, "wb") as f:
        f.write(c10d._dump_fr_trace())
    with open(json_path, "wb") as f:
        f.write(c10d._dump_fr_trace_json())
    out.info(f"rank={rank} wrote flight recorder dumps {pkl_path} {json_path}")


def train(args, rank, world_size, out):
    torch.manual_seed(0)
    net = Net()
    model = DDP(net) if args.sync == "ddp" else net
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loader, sampler = make_loader(args, rank, world_size)
    val_loader = make_val_loader(args, rank, world_size) if args.eval else None

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
            if rank == args.bad_rank and step == args.bad_step and args.fault == "nan":
                x = x.clone()
                x[0, 0] = float("nan")  # a corrupt sample
            mark(step, "before_forward")
            loss = nn.functional.mse_loss(model(x, aux_mask), y)
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
        if args.eval:
            val_loss_sum, val_stats = evaluate(args, model, val_loader, rank, epoch, out)
            if torch.isfinite(val_loss_sum).all():
                # BUG: a collective behind a rank-local condition; a rank whose val loss is
                # NaN skips it, and its next collective pairs with this one elsewhere.
                dist.all_reduce(val_loss_sum)
            dist.all_reduce(val_stats)
            if rank == 0:
                out.info(
                    f"epoch={epoch} val_loss={val_loss_sum.item() / max(val_stats[1].item(), 1):.4f} "
                    f"val_stats={val_stats.tolist()}"
                )
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
    out.info(f"rank={rank} pid={os.getpid()} host={socket.gethostname()}")

    if args.debug_server:
        # The frontend's and the handlers' INFO lines go to this rank's stderr.
        logging.basicConfig(
            level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        import torch.distributed.debug as dist_debug

        dist_debug.start_debug_server(
            port=args.debug_port,
            dump_dir=args.debug_dump_dir,
            dump_interval=args.debug_dump_interval,
            enabled_dumps={"stacks", "pyspy_dump", "fr_trace", "wait_counters", "tcpstore"},
        )
        worker_url = f"http://{socket.gethostname()}:{dist_debug._WORKER_SERVER.port}"
        out.info(
            f"rank={rank} debug worker server {worker_url}"
            + (f" frontend port {args.debug_port}" if rank == 0 else "")
        )

    try:
        train(args, rank, world_size, out)
    except RuntimeError:
        if args.fr_dump_dir:
            dump_flight_recorder(args, rank, out)
        raise

    dist.barrier()
    out.info(f"rank={rank} training done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
