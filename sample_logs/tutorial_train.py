"""A CPU / gloo copy of PyTorch's DDP tutorial series trainer (pytorch/examples,
distributed/ddp-tutorial-series/multigpu_torchrun.py) with one bug: the script shards the
dataset itself instead of using a DistributedSampler, and the last rank also takes the
remainder, so it can get a batch more than the others.

Every rank prints the tutorial's line at the start of each epoch::

    [GPU<local rank>] Epoch <e> | Batchsize: <b> | Steps: <len(train_data)>

and nothing else per step (no stage marks): the tutorial's own output. rank 0 prints the
tutorial's checkpoint line after each epoch. Launched with
``torchrun --standalone --nproc_per_node=N tutorial_train.py --dataset-size S``.
"""

import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Subset, TensorDataset


class Trainer:
    def __init__(self, model, train_data, optimizer, gpu_id):
        self.gpu_id = gpu_id
        self.model = DDP(model)
        self.train_data = train_data
        self.optimizer = optimizer

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        loss = F.mse_loss(self.model(source), targets)
        loss.backward()
        self.optimizer.step()

    def _run_epoch(self, epoch):
        b_sz = len(next(iter(self.train_data))[0])
        print(f"[GPU{self.gpu_id}] Epoch {epoch} | Batchsize: {b_sz} | Steps: {len(self.train_data)}", flush=True)
        for source, targets in self.train_data:
            self._run_batch(source, targets)

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            self._run_epoch(epoch)
            if self.gpu_id == 0:
                print(f"Epoch {epoch} | Training checkpoint saved at checkpoint.pt", flush=True)


def shard(dataset, rank, world_size):
    # BUG: contiguous shards; the last rank also takes the remainder
    per_rank = len(dataset) // world_size
    end = len(dataset) if rank == world_size - 1 else (rank + 1) * per_rank
    return Subset(dataset, range(rank * per_rank, end))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--dataset-size", type=int, default=73)
    parser.add_argument("--timeout", type=int, default=20, help="process group timeout (s)")
    args = parser.parse_args()
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    rank, world_size = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(args.dataset_size, 20), torch.randn(args.dataset_size, 1))
    train_data = DataLoader(shard(dataset, rank, world_size), batch_size=args.batch_size)
    model = torch.nn.Linear(20, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    Trainer(model, train_data, optimizer, local_rank).train(args.epochs)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
