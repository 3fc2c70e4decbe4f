"""A 3-process gloo job whose rank 1 breaks out of its loop at step 4 (as on a rank whose data
ran out) and goes on to the final barrier, while ranks 0 and 2 wait in step 4's all_reduce:
every rank times out (15 s), each in its own collective."""

from datetime import timedelta

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=15))
    rank = dist.get_rank()
    for step in range(10):
        if rank == 1 and step == 4:
            print("no more data on this rank", flush=True)
            break
        total = torch.randn(4).sum().reshape(1)
        dist.all_reduce(total)
        print(f"step {step} reduced {total.item():.3f}", flush=True)
    dist.barrier()
    print("finished", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
