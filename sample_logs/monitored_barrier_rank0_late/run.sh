#!/usr/bin/env bash
# Regenerates monitored_barrier_rank0_late/logs/ from scratch (works from any cwd).
# Override the launcher with TORCHRUN=... (e.g. TORCHRUN=/path/venv/bin/torchrun),
# or set PYTHON=... to run "$PYTHON -m torch.distributed.run".
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
TORCHRUN="${TORCHRUN:-torchrun}"
cd "$HERE"
rm -rf logs && mkdir -p logs
start=$(date +%s)
$TORCHRUN --standalone --nproc_per_node=4 \
  ../collectives_train.py --timeout 20 --bad-rank 0 --bad-step 8 --fault stall --stall-seconds 120 \
  --health-every 4 --health-timeout 10 --log-format ts --redirect-to logs \
  > logs/launcher.log 2>&1
rc=$?
echo "monitored_barrier_rank0_late: torchrun exit code $rc after $(( $(date +%s) - start ))s (launcher output: $HERE/logs/launcher.log)"
