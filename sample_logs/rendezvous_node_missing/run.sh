#!/usr/bin/env bash
# Regenerates rendezvous_node_missing/logs/ from scratch (works from any cwd).
# Override the launcher with TORCHRUN=... (e.g. TORCHRUN=/path/venv/bin/torchrun),
# or set PYTHON=... to run "$PYTHON -m torch.distributed.run".
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
TORCHRUN="${TORCHRUN:-torchrun}"
cd "$HERE"
rm -rf logs && mkdir -p logs
start=$(date +%s)
# node 0 of a two-node job; node 1 is never launched
$TORCHRUN --nnodes=2 --node_rank=0 --nproc_per_node=2 \
  --rdzv-backend=c10d --rdzv-endpoint=127.0.0.1:29611 --rdzv-conf join_timeout=20 \
  ../ddp_train.py > logs/node0.log 2>&1
rc=$?
echo "rendezvous_node_missing: torchrun exit code $rc after $(( $(date +%s) - start ))s (launcher output: $HERE/logs/node0.log)"
