"""Tiny PyTorch Lightning DDP job (CPU, gloo) used to produce real fault logs.

Launch:  python lightning_train.py --fault <name> [--devices 2]
Lightning's own launcher (_SubprocessScriptLauncher) re-runs this script for
ranks 1..N-1, so one console holds every rank's output.

Faults (all injected on global rank 1 only):
  none            clean run
  return_none     training_step returns None at global step 5
  skip_backward   the backward() hook skips loss.backward() at global step 5
                  (so rank 1 never joins DDP's gradient all-reduce for that step)
  rank_exception  training_step raises ValueError("bad batch on rank 1") at global step 5
  uneven          hand-built per-rank DataLoader; rank 1 gets one batch fewer
                  (use_distributed_sampler=False)
"""
import argparse
import datetime
import os
import sys
import time
import tempfile

import torch
from torch import nn
from torch.utils.data import DataLoader, Sampler, TensorDataset

import lightning as L
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.strategies import DDPStrategy

FAULT_RANK = 1
FAULT_STEP = 5
BATCH_SIZE = 4


TRACE = False


def trace(msg: str) -> None:
    """Diagnostics only (--trace); off in the recorded scenario runs."""
    if TRACE:
        r = os.environ.get("LOCAL_RANK", "0")
        print(f"[trace rank{r} pid{os.getpid()} t={time.time():.3f}] {msg}", file=sys.stderr, flush=True)


class MLP(L.LightningModule):
    def __init__(self, fault: str):
        super().__init__()
        self.fault = fault
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))

    def _fault_here(self, name: str) -> bool:
        return (
            self.fault == name
            and self.global_rank == FAULT_RANK
            and self.trainer.global_step == FAULT_STEP
        )

    def training_step(self, batch, batch_idx):
        x, y = batch
        trace(f"training_step epoch={self.current_epoch} batch_idx={batch_idx} global_step={self.trainer.global_step}")
        loss = nn.functional.mse_loss(self.net(x), y)
        if self._fault_here("rank_exception"):
            raise ValueError("bad batch on rank 1")
        if self._fault_here("return_none"):
            return None
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def backward(self, loss, *args, **kwargs):
        if self._fault_here("skip_backward"):
            trace(f"SKIPPING backward at global_step={self.trainer.global_step}")
            if TRACE:  # diagnostics: show where this rank is blocked 5 s later
                import faulthandler
                faulthandler.dump_traceback_later(5, repeat=False, exit=False)
            return  # rank 1 silently skips backward -> no gradient all-reduce this step
        trace(f"backward start global_step={self.trainer.global_step}")
        loss.backward(*args, **kwargs)
        trace(f"backward done global_step={self.trainer.global_step}")

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def make_dataset(n: int) -> TensorDataset:
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(n, 8, generator=g)
    w = torch.randn(8, 1, generator=g)
    y = x @ w + 0.1 * torch.randn(n, 1, generator=g)
    return TensorDataset(x, y)


class RankSplitSampler(Sampler):
    """Hand-made per-rank split: contiguous blocks of whole batches, remainder batches go to rank 0."""

    def __init__(self, n: int, rank: int, world: int, batch_size: int):
        n_batches = n // batch_size
        base, rem = divmod(n_batches, world)
        counts = [base + (rem if r == 0 else 0) for r in range(world)]
        start = sum(counts[:rank]) * batch_size
        self.indices = list(range(start, start + counts[rank] * batch_size))

    def __iter__(self):
        return iter(self.indices)

    def __len__(self):
        return len(self.indices)


class UnevenDataModule(L.LightningDataModule):
    def train_dataloader(self):
        # 68 samples = 17 batches of 4 -> rank 0: 9 batches, rank 1: 8 batches
        ds = make_dataset(68)
        sampler = RankSplitSampler(len(ds), self.trainer.global_rank, self.trainer.world_size, BATCH_SIZE)
        return DataLoader(ds, batch_size=BATCH_SIZE, sampler=sampler)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fault", default="none",
                   choices=["none", "return_none", "skip_backward", "rank_exception", "uneven"])
    p.add_argument("--devices", type=int, default=2)
    p.add_argument("--trace", action="store_true", help="diagnostics: print per-rank step/backward events to stderr")
    p.add_argument("--csv-logger", action="store_true", help="use a CSVLogger in a temp dir instead of logger=False")
    args = p.parse_args()
    global TRACE
    TRACE = args.trace

    L.seed_everything(0, verbose=False)
    logger = CSVLogger(tempfile.mkdtemp(prefix="pl_csv_")) if args.csv_logger else False

    trainer = L.Trainer(
        accelerator="cpu",
        devices=args.devices,
        strategy=DDPStrategy(process_group_backend="gloo", timeout=datetime.timedelta(seconds=20)),
        max_epochs=2,
        log_every_n_steps=1,
        enable_checkpointing=False,
        logger=logger,
        use_distributed_sampler=(args.fault != "uneven"),
    )
    model = MLP(args.fault)
    if args.fault == "uneven":
        trainer.fit(model, datamodule=UnevenDataModule())
    else:
        # 64 samples, batch 4, DistributedSampler over 2 ranks -> 8 steps/epoch per rank
        trainer.fit(model, train_dataloaders=DataLoader(make_dataset(64), batch_size=BATCH_SIZE, shuffle=True))
    trace("fit returned normally; process exiting")


if __name__ == "__main__":
    main()
