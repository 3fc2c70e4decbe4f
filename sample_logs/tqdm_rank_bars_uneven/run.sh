#!/usr/bin/env bash
# Regenerates tqdm_rank_bars_uneven/logs/ from scratch (works from any cwd).
# Override the launcher with TORCHRUN=... (e.g. TORCHRUN=/path/venv/bin/torchrun),
# or set PYTHON=... to run "$PYTHON -m torch.distributed.run".
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
TORCHRUN="${TORCHRUN:-torchrun}"
cd "$HERE"
rm -rf logs && mkdir -p logs
start=$(date +%s)
$TORCHRUN --standalone --nproc_per_node=3 \
  ../framework_train.py --style tqdm --epochs 2 --timeout 20 --dataset-size 146 --shard remainder-last \
  --step-seconds 0.15 --redirect-to logs --redirect-name 'rank{rank}.log' \
  > logs/launcher.log 2>&1
rc=$?
echo "tqdm_rank_bars_uneven: torchrun exit code $rc after $(( $(date +%s) - start ))s (launcher output: $HERE/logs/launcher.log)"
