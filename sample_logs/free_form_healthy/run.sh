#!/usr/bin/env bash
# Regenerates free_form_healthy/logs/ from scratch (works from any cwd).
# Override the launcher with TORCHRUN=... (e.g. TORCHRUN=/path/venv/bin/torchrun),
# or set PYTHON=... to run "$PYTHON -m torch.distributed.run".
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
TORCHRUN="${TORCHRUN:-torchrun}"
cd "$HERE"
rm -rf logs && mkdir -p logs
start=$(date +%s)
$TORCHRUN --standalone --nproc_per_node=3 ../free_form_train.py --style thread \
  > logs/launcher.log 2>&1
rc=$?
echo "free_form_healthy: torchrun exit code $rc after $(( $(date +%s) - start ))s (launcher output: $HERE/logs/launcher.log)"
