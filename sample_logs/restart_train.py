"""collectives_train.py with its fault on the first attempt only, for the restart sample.

torchrun sets TORCHELASTIC_RESTART_COUNT in every worker: 0 on the first attempt, 1 after
one restart of the worker group. On the first attempt rank 1's loss raises ValueError at
step 4 (``--fault bad-label``) and the worker group fails; torchrun (``--max-restarts=1``)
starts the workers again, and the second attempt trains to the end. Other flags are passed
through to collectives_train.py unchanged.
"""

import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
if restart == 0:
    sys.argv += ["--fault", "bad-label", "--bad-rank", "1", "--bad-step", "4"]
else:
    # In the agent's store the first attempt's gloo addresses are still there, and the
    # restarted workers tried to connect to them (`Gloo connectFullMesh failed ... Connection
    # refused`, torch 2.13.0+cpu): after a restart, rank 0 serves a store of its own.
    os.environ["TORCHELASTIC_USE_AGENT_STORE"] = "False"
    os.environ["MASTER_PORT"] = str(int(os.environ["MASTER_PORT"]) + restart)
sys.argv[0] = os.path.join(HERE, "collectives_train.py")
runpy.run_path(sys.argv[0], run_name="__main__")
