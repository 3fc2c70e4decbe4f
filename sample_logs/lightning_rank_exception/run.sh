#!/usr/bin/env bash
# Regenerates lightning_rank_exception/logs/ from scratch (works from any cwd). Needs lightning in the torch venv
# (this run: torch 2.13.0+cpu, lightning 2.6.6, Python 3.11.7). Set PYTHON=... to pick the
# interpreter. Launch: Lightning's own launcher (`python lightning_train.py`, devices=2): rank 0
# is this process, Lightning re-runs the script for rank 1; both write to this one console.
# A 180 s guard (coreutils timeout) stops a job that never ends.
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python}"
rm -rf "$HERE/logs" && mkdir -p "$HERE/logs"
cd "$HERE/.."  # the script's folder, as a user types it
export PYTHONUNBUFFERED=1  # flushed as on a terminal: the ranks' lines interleave in time order
start=$(date +%s)
timeout -k 10 180 "$PYTHON" lightning_train.py --fault rank_exception --devices 2 > "$HERE/logs/console.log" 2>&1
rc=$?
echo "lightning_rank_exception: exit code $rc after $(( $(date +%s) - start ))s (console: $HERE/logs/console.log)"
