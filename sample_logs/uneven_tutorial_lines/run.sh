#!/usr/bin/env bash
# Regenerates uneven_tutorial_lines/logs/ from scratch (works from any cwd).
# Override the launcher with TORCHRUN=... (e.g. TORCHRUN=/path/venv/bin/torchrun),
# or set PYTHON=... to run "$PYTHON -m torch.distributed.run".
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
TORCHRUN="${TORCHRUN:-torchrun}"
cd "$HERE"
rm -rf logs && mkdir -p logs
start=$(date +%s)
$TORCHRUN --standalone --nproc_per_node=3 --tee 3 \
  ../tutorial_train.py --timeout 20 --dataset-size 73 \
  > logs/console.log 2>&1
rc=$?
echo "uneven_tutorial_lines: torchrun exit code $rc after $(( $(date +%s) - start ))s (output: $HERE/logs/console.log)"
