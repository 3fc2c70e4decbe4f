#!/usr/bin/env bash
# Regenerates two_jobs_one_folder/logs/ from scratch (works from any cwd).
# Override the launcher with TORCHRUN=... (e.g. TORCHRUN=/path/venv/bin/torchrun),
# or set PYTHON=... to run "$PYTHON -m torch.distributed.run".
#
# Two separate torchrun launches write into ONE --log-dir (a user re-ran the job into the
# same folder): run A (4 ranks, the skip-backward bug, hangs) and then run B (2 ranks, the
# --skip-mode agree fix, healthy). torchrun names each launch's sub-folder
# <random run id>_<random suffix>; this script prints which one is which and writes the two
# names into the "run_id" fields of expected.json (A first, then B).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
TORCHRUN="${TORCHRUN:-torchrun}"
cd "$HERE"
rm -rf logs && mkdir -p logs/torchrun
start=$(date +%s)
$TORCHRUN --standalone --nproc_per_node=4 --log-dir logs/torchrun --redirects 3 \
  ../ddp_train.py --timeout 20 --bad-rank 2 --bad-step 5 --skip-mode continue --log-format ts \
  > logs/launcher_A.log 2>&1
rcA=$?
runA=$(ls logs/torchrun)
$TORCHRUN --standalone --nproc_per_node=2 --log-dir logs/torchrun --redirects 3 \
  ../ddp_train.py --timeout 20 --bad-rank 1 --bad-step 5 --skip-mode agree --log-format ts \
  > logs/launcher_B.log 2>&1
rcB=$?
runB=$(ls logs/torchrun | grep -vxF "$runA")
if [ -f expected.json ]; then
  awk -v a="$runA" -v b="$runB" \
    '/"run_id":/ { n++; sub(/"run_id": *"[^"]*"/, "\"run_id\": \"" (n == 1 ? a : b) "\"") } { print }' \
    expected.json > expected.json.tmp && mv expected.json.tmp expected.json
fi
echo "two_jobs_one_folder: run A (logs/torchrun/$runA) torchrun exit code $rcA, run B (logs/torchrun/$runB) torchrun exit code $rcB, after $(( $(date +%s) - start ))s (launcher output: $HERE/logs/launcher_A.log, $HERE/logs/launcher_B.log)"
