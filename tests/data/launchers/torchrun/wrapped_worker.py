"""A 3-process gloo job whose entry point is a wrapper that runs the real worker as its child and
exits with the child's return code (`sys.exit(child.returncode)`), as job wrappers do. At step 3
rank 1's child is killed by SIGKILL (standing in for the OOM killer): the wrapper passes -9 on,
which leaves exit status 247, and that is what torchrun reports."""

import os
import signal
import subprocess
import sys
from datetime import timedelta


def child():
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    rank = dist.get_rank()
    model = DistributedDataParallel(torch.nn.Linear(8, 8))
    for step in range(6):
        if rank == 1 and step == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        model(torch.randn(4, 8)).sum().backward()
        print(f"rank {rank} step {step} done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child()
    else:
        result = subprocess.run([sys.executable, __file__, "--child"])
        sys.exit(result.returncode)
