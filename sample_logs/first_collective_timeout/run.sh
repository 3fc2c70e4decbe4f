#!/usr/bin/env bash
# Regenerates first_collective_timeout/logs/ from scratch (works from any cwd).
# Override the launcher with TORCHRUN=... (e.g. TORCHRUN=/path/venv/bin/torchrun),
# or set PYTHON=... to run "$PYTHON -m torch.distributed.run".
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
TORCHRUN="${TORCHRUN:-torchrun}"
cd "$HERE"
rm -rf logs && mkdir -p logs
start=$(date +%s)
$TORCHRUN --standalone --nproc_per_node=4 --log-dir logs/torchrun --redirects 3 \
  ../faults_train.py --timeout 20 --setup-stall-rank 3 --setup-stall-seconds 120 --still-loading-after 5 \
  --log-format ts \
  > logs/launcher.log 2>&1
rc=$?
echo "first_collective_timeout: torchrun exit code $rc after $(( $(date +%s) - start ))s (launcher output: $HERE/logs/launcher.log)"
