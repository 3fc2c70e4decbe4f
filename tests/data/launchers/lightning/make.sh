#!/usr/bin/env bash
# Regenerates console.log with a real run on CPU (any cwd; PYTHON is a Python with torch and
# lightning):
#   PYTHON=/path/to/python bash tests/data/launchers/lightning/make.sh
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"
# (through a shell that reports how its child ended, as a job script's shell does)
bash -c '"$0" child_failure.py; true' "${PYTHON:-python}" > console.log 2>&1
exit 0
