"""A 3-process gloo job training a model sharded with FSDP2 (`fully_shard`) on CPU: at step 3
rank 1 finds its loss NaN (as it says), skips its backward and goes on to step 4's forward,
whose parameter all-gather meets the others' gradient reduce-scatter; gloo aborts on the
mismatched sizes."""

from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    rank = dist.get_rank()
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Linear(16, 4))
    for layer in model:
        fully_shard(layer)
    fully_shard(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(8):
        loss = model(torch.randn(4, 16)).sum()
        if rank == 1 and step == 3:
            print(f"rank {rank} step {step}: loss is nan, skipping", flush=True)
            continue
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"rank {rank} step {step} loss {loss.item():.3f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
