#!/usr/bin/env bash
# Regenerates hf_eval_on_main_only/logs/ from scratch (works from any cwd). Needs transformers
# and accelerate in the torch venv (this run: transformers 5.25.0, accelerate 1.16.0).
# Override the launcher with TORCHRUN=... (e.g. TORCHRUN=/path/venv/bin/torchrun),
# or set PYTHON=... to run "$PYTHON -m torch.distributed.run".
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
TORCHRUN="${TORCHRUN:-torchrun}"
WORK="$(mktemp -d)"  # Trainer's output_dir
cd "$WORK"
rm -rf "$HERE/logs" && mkdir -p "$HERE/logs"
start=$(date +%s)
$TORCHRUN --standalone --nproc_per_node=2 "$HERE/../hf_trainer_train.py" > "$HERE/logs/launcher.log" 2>&1
rc=$?
rm -rf "$WORK"
echo "hf_eval_on_main_only: torchrun exit code $rc after $(( $(date +%s) - start ))s (launcher output: $HERE/logs/launcher.log)"
