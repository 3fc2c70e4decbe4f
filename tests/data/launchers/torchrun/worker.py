"""A tiny torchrun worker for the launcher test data: prints its ranks, and in the first
attempt (TORCHELASTIC_RESTART_COUNT=0) local rank 1 fails, so torchrun restarts the group."""

import os
import sys

rank = int(os.environ["RANK"])
local_rank = int(os.environ["LOCAL_RANK"])
attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
print(f"rank={rank} local_rank={local_rank} attempt={attempt} hello", flush=True)
print(f"warning from local rank {local_rank}", file=sys.stderr, flush=True)
if attempt == 0 and local_rank == 1 and os.environ.get("FAIL_FIRST_ATTEMPT") == "1":
    raise RuntimeError(f"rank {rank} fails in attempt {attempt}")
print(f"rank={rank} done", flush=True)
