#!/usr/bin/env bash
# Regenerates restart_recovered/logs/ from scratch (works from any cwd).
# Override the launcher with TORCHRUN=... (e.g. TORCHRUN=/path/venv/bin/torchrun),
# or set PYTHON=... to run "$PYTHON -m torch.distributed.run".
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
TORCHRUN="${TORCHRUN:-torchrun}"
cd "$HERE"
rm -rf logs && mkdir -p logs
start=$(date +%s)
# LOGLEVEL=INFO: the agent's INFO lines (the restart, the workers' success) are printed
LOGLEVEL=INFO $TORCHRUN --nnodes=1 --nproc_per_node=4 --rdzv-backend=c10d \
  --rdzv-endpoint=127.0.0.1:29517 --max-restarts=1 --tee 3 \
  ../restart_train.py --timeout 20 --log-format ts \
  > logs/launcher.log 2>&1
rc=$?
echo "restart_recovered: torchrun exit code $rc after $(( $(date +%s) - start ))s (launcher output: $HERE/logs/launcher.log)"
