#!/usr/bin/env bash
# Installs the tools the hang-dump scenarios need, outside the torch venv and outside the
# repository (idempotent), into $DUMP_TOOLS (default ~/.cache/logforensics-dump-tools):
#   $DUMP_TOOLS/venv/bin/py-spy   py-spy from PyPI, in its own venv
#   $DUMP_TOOLS/pydeps/           tabulate + requests (pip --target), on PYTHONPATH only for the
#                                 debug-server run (its rank-0 frontend imports them) and fr_trace
# Override the base interpreter with PYTHON=... (default /work/torchvenv/bin/python).
set -eu
TOOLS="${DUMP_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/logforensics-dump-tools}"
PY="${PYTHON:-/work/torchvenv/bin/python}"
if [ ! -x "$TOOLS/venv/bin/py-spy" ]; then
  "$PY" -m venv "$TOOLS/venv"
  "$TOOLS/venv/bin/pip" install -q py-spy
fi
if [ ! -d "$TOOLS/pydeps/tabulate" ] || [ ! -d "$TOOLS/pydeps/requests" ]; then
  "$PY" -m pip install -q --target "$TOOLS/pydeps" tabulate requests
fi
echo "$TOOLS"
