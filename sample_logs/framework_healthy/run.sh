#!/usr/bin/env bash
# Regenerates framework_healthy/logs/ from scratch (works from any cwd).
# Override the launcher with TORCHRUN=... (e.g. TORCHRUN=/path/venv/bin/torchrun),
# or set PYTHON=... to run "$PYTHON -m torch.distributed.run".
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
TORCHRUN="${TORCHRUN:-torchrun}"
cd "$HERE"
rm -rf logs && mkdir -p logs
start=$(date +%s)
$TORCHRUN --standalone --nproc_per_node=4 --log-dir logs/torchrun --redirects 3 --tee 3 ../framework_train.py --style megatron --epochs 2 --timeout 20 \
  > logs/launcher.log 2>&1
rc=$?
echo "framework_healthy: torchrun exit code $rc after $(( $(date +%s) - start ))s (launcher output: $HERE/logs/launcher.log)"
