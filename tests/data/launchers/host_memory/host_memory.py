# Rank 1 asks the host for more memory than it has: Python raises MemoryError on that rank.
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 1:
    hoard = bytearray(2**50)
dist.barrier()
dist.destroy_process_group()
