#!/usr/bin/env bash
# Regenerates reducer_two_ranks/logs/ from scratch (works from any cwd).
# Override the launcher with TORCHRUN=... (e.g. TORCHRUN=/path/venv/bin/torchrun),
# or set PYTHON=... to run "$PYTHON -m torch.distributed.run".
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
TORCHRUN="${TORCHRUN:-torchrun}"
cd "$HERE"
rm -rf logs && mkdir -p logs
start=$(date +%s)
TORCH_DISTRIBUTED_DEBUG=INFO \
  $TORCHRUN --standalone --nproc_per_node=2 \
  ../collectives_train.py --timeout 20 --bad-rank 1 --bad-step 6 --fault no-aux \
  --redirect-to logs --redirect-name 'rank{rank}.log' \
  > logs/launcher.log 2>&1
rc=$?
echo "reducer_two_ranks: torchrun exit code $rc after $(( $(date +%s) - start ))s (launcher output: $HERE/logs/launcher.log)"
