#!/usr/bin/env bash
# Regenerates join_early_termination/logs/ from scratch (works from any cwd).
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
  ../join_train.py --timeout 20 --dataset-size 177 --redirect-to logs --redirect-name 'worker_{rank}.log' \
  > logs/launcher.log 2>&1
rc=$?
echo "join_early_termination: torchrun exit code $rc after $(( $(date +%s) - start ))s (launcher output: $HERE/logs/launcher.log)"
