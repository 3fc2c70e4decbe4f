"""A 2-process job launched as a Python function (torch.distributed.launcher's elastic_launch,
start method spawn): rank 1 raises before its first step, rank 0 waits."""

import time

import torch.distributed as dist
from torch.distributed.launcher.api import LaunchConfig, elastic_launch


def work() -> None:
    dist.init_process_group("gloo")
    if dist.get_rank() == 1:
        raise ValueError("bad shard on rank 1")
    time.sleep(60)


if __name__ == "__main__":
    config = LaunchConfig(
        min_nodes=1,
        max_nodes=1,
        nproc_per_node=2,
        run_id="fn",
        rdzv_backend="c10d",
        rdzv_endpoint="localhost:29533",
        max_restarts=0,
        start_method="spawn",
    )
    elastic_launch(config, work)()
