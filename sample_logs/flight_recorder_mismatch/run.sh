#!/usr/bin/env bash
# Regenerates flight_recorder_mismatch/logs/ and bench/fr_trace/fr_trace_output*.txt (PyTorch's
# analyzer on the dumps: kept out of sample_logs/, they are no log) from scratch (any cwd).
# Takes ~30 s.
#
# 4-rank gloo DDP job with the Flight Recorder on (TORCH_FR_BUFFER_SIZE=2000). At the end of
# epoch 0, rank 3's validation loss sum is NaN (a corrupt validation sample) and rank 3 skips
# the 1-element val-loss all_reduce that sits behind `if torch.isfinite(val_loss_sum)`; its next
# collective (the 3-element val-stats all_reduce) lands on the sequence number where the other
# ranks run the 1-element all_reduce. All four ranks hit the 20 s gloo timeout; each one catches
# the RuntimeError, writes its Flight Recorder buffer as pickle (logs/fr/rank_<r>) and JSON
# (logs/fr-json/rank_<r>.json), and re-raises. Then PyTorch's own analyzer is run on the dumps.
#
# Override the launcher with TORCHRUN=... (or PYTHON=... to run "$PYTHON -m torch.distributed.run"),
# the analyzer's interpreter with FR_PYTHON=... (default: the python next to torchrun, else
# /work/torchvenv/bin/python).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SAMPLES="$(dirname "$HERE")"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
if [ -z "$TORCHRUN" ]; then
  if command -v torchrun >/dev/null; then TORCHRUN=torchrun; else TORCHRUN=/work/torchvenv/bin/torchrun; fi
fi
FR_PYTHON="${FR_PYTHON:-${PYTHON:-/work/torchvenv/bin/python}}"
FRTRACE="$(dirname "$FR_PYTHON")/torchfrtrace"
# tabulate for the "with tabulate" / patched analyzer runs (kept out of the torch venv)
TOOLS="$(bash "$SAMPLES/dump_tools.sh" 2>/dev/null | tail -1)" || echo "warning: dump_tools.sh failed"
cd "$HERE"
FR_OUT="$SAMPLES/../bench/fr_trace"
rm -rf logs "$FR_OUT/fr_trace_output.txt" "$FR_OUT/fr_trace_output_patched_pg_config.txt" && mkdir -p logs "$FR_OUT"
start=$(date +%s)

# TORCH_FR_DUMP_TEMP_FILE is set to show that gloo never writes the automatic dump
# (no watchdog): logs/fr-auto/ is not created.
TORCH_FR_BUFFER_SIZE=2000 TORCH_FR_DUMP_TEMP_FILE="$HERE/logs/fr-auto/rank_" \
$TORCHRUN --standalone --nproc_per_node=4 \
  ../dumps_train.py --timeout 20 --eval --fault nan-val --bad-rank 3 --bad-epoch 0 \
  --fr-dump-dir logs --redirect-to logs --log-format ts > logs/launcher.log 2>&1
rc=$?
echo "flight_recorder_mismatch: torchrun exit code $rc after $(( $(date +%s) - start ))s (launcher output: $HERE/logs/launcher.log)"

# ---- PyTorch's analyzer on the dumps, verbatim ------------------------------------------
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
run_fr() {  # run_fr <outfile> <title> <env...> -- <command...>
  local out=$1 title=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  {
    echo "================================================================================"
    echo "## $title"
    echo "\$ (cd $(basename "$HERE")) ${envs[*]:+${envs[*]} }$*"
  } >> "$out"
  env "${envs[@]}" "$@" > "$TMP/stdout" 2> "$TMP/stderr"
  local code=$?
  {
    echo "--- stdout ($(wc -c < "$TMP/stdout") bytes) ---"; cat "$TMP/stdout"
    echo "--- stderr ($(wc -c < "$TMP/stderr") bytes) ---"; cat "$TMP/stderr"
    echo "--- exit code: $code ---"
    echo
  } >> "$out"
}
OUT="$FR_OUT/fr_trace_output.txt"
{
  echo "# PyTorch Flight Recorder analyzer on the dumps in logs/fr (pickle) and logs/fr-json (JSON),"
  echo "# exactly as the job wrote them. torch $("$FR_PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null)."
  echo "# Each block: the command (run from flight_recorder_mismatch/), its stdout, its stderr, its exit code."
  echo "# (The 'Failed to initialize NumPy' UserWarning is noise from the venv, which has no numpy.)"
  echo
} > "$OUT"
run_fr "$OUT" "entry point torchfrtrace, pickle dumps, prefix inferred" -- "$FRTRACE" logs/fr
run_fr "$OUT" "module form, pickle dumps, explicit prefix" -- "$FR_PYTHON" -m torch.distributed.flight_recorder.fr_trace logs/fr -p rank_
run_fr "$OUT" "pickle dumps, --just_print_entries (-j)" -- "$FRTRACE" logs/fr -j
run_fr "$OUT" "pickle dumps, --allow-incomplete-ranks -v" -- "$FRTRACE" logs/fr --allow-incomplete-ranks -v
run_fr "$OUT" "pickle dumps, with tabulate importable (PYTHONPATH=<dump tools>/pydeps from ../dump_tools.sh)" \
  PYTHONPATH="$TOOLS/pydeps" -- "$FRTRACE" logs/fr
run_fr "$OUT" "JSON dumps as written (names end in .json), prefix inferred" -- "$FRTRACE" logs/fr-json
run_fr "$OUT" "JSON dumps as written, explicit prefix" -- "$FRTRACE" logs/fr-json -p rank_
mkdir -p "$TMP/fr-json-nosuffix"
for f in logs/fr-json/*.json; do cp "$f" "$TMP/fr-json-nosuffix/$(basename "$f" .json)"; done
run_fr "$OUT" "JSON dumps copied to a temp dir without the .json suffix (rank_0 ... rank_3)" -- "$FRTRACE" "$TMP/fr-json-nosuffix"
sed -i "s#$TMP#<tmpdir>#g" "$OUT"

# ---- Diagnostic only: the same pickles with pg_config re-keyed -----------------------------
# Copies of logs/fr/* in a temp dir, with pg_config {'': {'name': '', 'desc': '', ...}} rewritten
# to {'0': {'name': '0', 'desc': 'default_pg', ...}} (the pg name/desc the entries carry in
# process_group), to see what the analyzer reports once the KeyError is out of the way.
# logs/fr itself is never modified.
OUT2="$FR_OUT/fr_trace_output_patched_pg_config.txt"
mkdir -p "$TMP/fr-patched"
"$FR_PYTHON" - "$HERE/logs/fr" "$TMP/fr-patched" > "$TMP/patch.log" 2>&1 <<'EOF'
import os, pickle, sys
src, dst = sys.argv[1], sys.argv[2]
for name in sorted(os.listdir(src)):
    with open(os.path.join(src, name), "rb") as f:
        d = pickle.load(f)
    old = d["pg_config"]
    new = {}
    for key, cfg in old.items():
        pg_name, pg_desc = d["entries"][0]["process_group"] if d["entries"] else ("0", "default_pg")
        new[key or pg_name] = dict(cfg, name=cfg["name"] or pg_name, desc=cfg["desc"] or pg_desc)
    d["pg_config"] = new
    with open(os.path.join(dst, name), "wb") as f:
        pickle.dump(d, f)
    print(f"{name}: pg_config {old!r} -> {new!r}")
EOF
{
  echo "# DIAGNOSTIC, not the dumps as written: copies of logs/fr/rank_* whose pg_config was re-keyed"
  echo "# by this run.sh (see the comment there). Rewrite log:"
  grep -v -i numpy "$TMP/patch.log" | grep -v "_conversion_method_template" | sed 's/^/#   /'
  echo
} > "$OUT2"
run_fr "$OUT2" "patched pickles, default options" PYTHONPATH="$TOOLS/pydeps" -- "$FRTRACE" "$TMP/fr-patched"
run_fr "$OUT2" "patched pickles, -j (just print entries)" PYTHONPATH="$TOOLS/pydeps" -- "$FRTRACE" "$TMP/fr-patched" -j
run_fr "$OUT2" "patched pickles, -v (verbose: tables)" PYTHONPATH="$TOOLS/pydeps" -- "$FRTRACE" "$TMP/fr-patched" -v
sed -i "s#$TMP#<tmpdir>#g" "$OUT2"
echo "flight_recorder_mismatch: analyzer output in $HERE/$OUT and $HERE/$OUT2"
