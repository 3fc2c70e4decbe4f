#!/usr/bin/env bash
# Regenerates console.log with a real run on CPU (any cwd; TORCHRUN is torchrun of a Python with
# torch):
#   TORCHRUN=/path/to/torchrun bash tests/data/launchers/host_memory/make.sh
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"
"${TORCHRUN:-torchrun}" --nproc-per-node 2 host_memory.py > console.log 2>&1
exit 0
