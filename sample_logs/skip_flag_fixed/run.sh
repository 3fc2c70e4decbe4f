#!/usr/bin/env bash
# Regenerates skip_flag_fixed/logs/ from scratch (works from any cwd).
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
  ../ddp_train.py --timeout 20 --bad-rank 2 --bad-step 5 --skip-mode agree --extra-kv \
  > logs/launcher.log 2>&1
rc=$?
echo "skip_flag_fixed: torchrun exit code $rc after $(( $(date +%s) - start ))s (launcher output: $HERE/logs/launcher.log)"
