#!/usr/bin/env bash
# Regenerates console.log with a real run on CPU (any cwd; PYTHON is a Python with torch):
#   PYTHON=/path/to/python bash tests/data/launchers/elastic_function/make.sh
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"
"${PYTHON:-python}" function_worker.py > console.log 2>&1
exit 0
