#!/usr/bin/env bash
# Regenerates pyspy_hang/logs/ from scratch (works from any cwd). Takes ~2.5 min.
#
# A 4-rank gloo DDP job (DataLoader num_workers=1) in which rank 2 `continue`s past backward
# at step 5; gloo timeout raised to 120 s so that py-spy can dump every rank while it hangs.
# Override the launcher with TORCHRUN=... (or PYTHON=... to run "$PYTHON -m torch.distributed.run")
# and py-spy with PY_SPY=... (default: $TOOLS/venv/bin/py-spy, installed by ../dump_tools.sh).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SAMPLES="$(dirname "$HERE")"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
if [ -z "$TORCHRUN" ]; then
  if command -v torchrun >/dev/null; then TORCHRUN=torchrun; else TORCHRUN=/work/torchvenv/bin/torchrun; fi
fi
if [ -z "${PY_SPY:-}" ]; then
  TOOLS="$(bash "$SAMPLES/dump_tools.sh" 2>/dev/null | tail -1)" || { echo "dump_tools.sh failed"; exit 1; }
  PY_SPY="$TOOLS/venv/bin/py-spy"
fi
cd "$HERE"
rm -rf logs && mkdir -p logs/pyspy logs/pyspy-json logs/pyspy-native logs/pyspy-locals logs/pyspy-subprocesses
CMDLOG=logs/dump_commands.log   # every dump command, its start time, exit code and stderr
start=$(date +%s)

$TORCHRUN --standalone --nproc_per_node=4 --log-dir logs/torchrun --redirects 3 --tee 3 \
  ../dumps_train.py --timeout 120 --bad-rank 2 --bad-step 5 --fault nan --num-workers 1 \
  --log-format ts > logs/launcher.log 2>&1 &
TR_PID=$!

# 1. pid -> rank: every rank prints "rank=<r> pid=<pid> host=<h>" right after init_process_group
#    (torchrun --tee copies it into launcher.log as "[default<r>]:<ts> INFO rank=<r> pid=<pid> ...").
PID=("" "" "" "")
found=0
for _ in $(seq 1 120); do
  found=0
  for r in 0 1 2 3; do
    p=$(grep -ao "INFO rank=$r pid=[0-9]*" logs/launcher.log 2>/dev/null | head -1 | sed 's/.*pid=//')
    [ -n "$p" ] && PID[$r]=$p && found=$((found + 1))
  done
  [ "$found" -eq 4 ] && break
  sleep 0.5
done
[ "$found" -eq 4 ] || { echo "pyspy_hang: did not see 4 pid lines"; kill "$TR_PID"; exit 1; }

# 2. wait until the job hangs: rank 2 announces its epoch-end sync and ranks 0, 1, 3 printed
#    step=11 before_backward, then check that launcher.log stops growing for 5 s.
for _ in $(seq 1 240); do
  n=$(grep -ac "rank=[013] step=11 stage=before_backward" logs/launcher.log)
  if grep -aq "rank=2 epoch=0 finished local loop" logs/launcher.log && [ "$n" -eq 3 ]; then break; fi
  sleep 0.5
done
while :; do
  s1=$(stat -c %s logs/launcher.log); sleep 5; s2=$(stat -c %s logs/launcher.log)
  [ "$s1" = "$s2" ] && break
done
hang_seen=$(date +%s)

{
  echo "# pid -> rank, from the 'rank=<r> pid=<pid>' line each rank prints at start (launcher.log)"
  echo "torchrun_agent pid=$TR_PID"
  for r in 0 1 2 3; do echo "rank=$r pid=${PID[$r]}"; done
  grep -ao "rank=[0-3] dataloader_worker=[0-9]* pid=[0-9]*" logs/launcher.log | sed 's/^/worker: /'
} > logs/pid_map.txt
ps -e -o pid,ppid,stat,etimes,args --forest | awk -v a="$TR_PID" '
  NR==1 {print; next} $1==a || $2==a || seen[$2] {seen[$1]=1; print}' | cut -c1-220 > logs/ps_tree.txt

run_dump() {  # run_dump <outfile> <py-spy args...>
  local out=$1; shift
  local t0; t0=$(date '+%Y-%m-%d %H:%M:%S')
  "$PY_SPY" "$@" > "$out" 2> logs/.stderr.tmp
  local rc=$?
  { echo "[$t0] $(basename "$PY_SPY") $* > ${out#logs/} ; exit=$rc"
    [ -s logs/.stderr.tmp ] && sed 's/^/    stderr: /' logs/.stderr.tmp; } >> "$CMDLOG"
  rm -f logs/.stderr.tmp
}
echo "# $("$PY_SPY" --version)" > "$CMDLOG"
# 3. one plain dump per rank, then one JSON set, then the variants
for r in 0 1 2 3; do run_dump "logs/pyspy/rank$r.txt" dump --pid "${PID[$r]}"; done
for r in 0 1 2 3; do run_dump "logs/pyspy-json/rank$r.json" dump --json --pid "${PID[$r]}"; done
run_dump logs/pyspy-native/rank0.txt dump --native --pid "${PID[0]}"
run_dump logs/pyspy-locals/rank2.txt dump --locals --pid "${PID[2]}"
run_dump logs/pyspy-subprocesses/rank0.txt dump --subprocesses --pid "${PID[0]}"
run_dump logs/pyspy-subprocesses/torchrun_agent.txt dump --subprocesses --pid "$TR_PID"
run_dump logs/pyspy-subprocesses/torchrun_agent.json dump --subprocesses --json --pid "$TR_PID"
dumps_done=$(date +%s)

# 4. let the job run into its 120 s gloo timeout
wait "$TR_PID"
rc=$?
echo "pyspy_hang: torchrun exit code $rc after $(( $(date +%s) - start ))s (hang seen at +$(( hang_seen - start ))s, dumps done at +$(( dumps_done - start ))s; launcher output: $HERE/logs/launcher.log)"
echo "torchrun exit code $rc; hang detected at +$(( hang_seen - start ))s, dumps finished at +$(( dumps_done - start ))s, job ended at +$(( $(date +%s) - start ))s" > logs/run_summary.txt
