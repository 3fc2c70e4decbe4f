#!/usr/bin/env bash
# Regenerates debug_server/logs/ from scratch (works from any cwd). Takes ~2.5 min.
#
# A 4-rank gloo DDP job in which rank 1 `continue`s past backward at step 7 (gloo timeout 120 s),
# with torch.distributed.debug.start_debug_server() called on every rank (Flight Recorder on,
# periodic dumps every 30 s into logs/debug_server/periodic/). While it hangs, every HTTP
# endpoint of the rank-0 frontend (GET) and of each rank's worker server (POST /handler/<name>)
# is fetched with curl and saved verbatim under logs/debug_server/.
# Override the launcher with TORCHRUN=... (or PYTHON=... to run "$PYTHON -m torch.distributed.run"),
# the frontend port with DEBUG_PORT=... (default 25999).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SAMPLES="$(dirname "$HERE")"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
if [ -z "$TORCHRUN" ]; then
  if command -v torchrun >/dev/null; then TORCHRUN=torchrun; else TORCHRUN=/work/torchvenv/bin/torchrun; fi
fi
PORT="${DEBUG_PORT:-25999}"
# py-spy (for the pyspy_dump handler, which runs `py-spy dump` from PATH) and tabulate + requests
# (imported by the rank-0 frontend) are installed outside the torch venv by setup_tools.sh.
TOOLS="$(bash "$SAMPLES/dump_tools.sh" 2>/dev/null | tail -1)" || { echo "dump_tools.sh failed"; exit 1; }
cd "$HERE"
rm -rf logs && mkdir -p logs/debug_server/frontend logs/debug_server/worker
DS=logs/debug_server
REQLOG=$DS/requests.log   # one line per request: time, method, URL, HTTP code, content type, bytes, seconds
start=$(date +%s)

PATH="$TOOLS/venv/bin:$PATH" PYTHONPATH="$TOOLS/pydeps${PYTHONPATH:+:$PYTHONPATH}" \
TORCH_FR_BUFFER_SIZE=2000 \
$TORCHRUN --standalone --nproc_per_node=4 --log-dir logs/torchrun --redirects 3 \
  ../dumps_train.py --timeout 120 --bad-rank 1 --bad-step 7 --fault nan --log-format ts \
  --debug-server --debug-port "$PORT" --debug-dump-dir "$HERE/$DS/periodic" --debug-dump-interval 30 \
  > logs/launcher.log 2>&1 &
TR_PID=$!

stdout_of() { ls logs/torchrun/*/attempt_0/"$1"/stdout.log 2>/dev/null | head -1; }
# 1. each rank prints "rank=<r> pid=<pid> host=<h>" and "rank=<r> debug worker server http://<host>:<port>"
URL=("" "" "" ""); PID=("" "" "" "")
for _ in $(seq 1 120); do
  found=0
  for r in 0 1 2 3; do
    f=$(stdout_of "$r"); [ -n "$f" ] || continue
    u=$(grep -ao "rank=$r debug worker server http://[^ ]*" "$f" | head -1 | sed 's/.* //')
    p=$(grep -ao "rank=$r pid=[0-9]*" "$f" | head -1 | sed 's/.*pid=//')
    [ -n "$u" ] && [ -n "$p" ] && URL[$r]=$u && PID[$r]=$p && found=$((found + 1))
  done
  [ "$found" -eq 4 ] && break
  sleep 0.5
done
[ "$found" -eq 4 ] || { echo "debug_server: did not see 4 worker urls"; kill "$TR_PID"; exit 1; }

# 2. wait for the hang: rank 1 announces its epoch-end sync, ranks 0, 2, 3 printed step=11
#    before_backward, and no rank's stdout.log grows for 5 s.
for _ in $(seq 1 240); do
  n=0
  for r in 0 2 3; do grep -aq "rank=$r step=11 stage=before_backward" "$(stdout_of $r)" && n=$((n + 1)); done
  if grep -aq "rank=1 epoch=0 finished local loop" "$(stdout_of 1)" && [ "$n" -eq 3 ]; then break; fi
  sleep 0.5
done
while :; do
  s1=$(cat logs/torchrun/*/attempt_0/*/stdout.log | wc -c); sleep 5
  s2=$(cat logs/torchrun/*/attempt_0/*/stdout.log | wc -c)
  [ "$s1" = "$s2" ] && break
done
hang_seen=$(date +%s)
{
  echo "torchrun_agent pid=$TR_PID"
  for r in 0 1 2 3; do echo "rank=$r pid=${PID[$r]} worker_server=${URL[$r]}"; done
  echo "frontend (rank 0 child process) http://localhost:$PORT"
} > $DS/addresses.txt

fetch() {  # fetch <GET|POST> <url> <outfile>
  local method=$1 url=$2 out=$3 t0 w
  t0=$(date '+%Y-%m-%d %H:%M:%S')
  w=$(curl -sS -m 120 -X "$method" -D "$out.headers" -o "$out" \
        -w '%{http_code} %{content_type} %{size_download} %{time_total}' "$url" 2>> $DS/curl_errors.log)
  echo "[$t0] $method $url -> $w -> ${out#$DS/}" >> $REQLOG
}
# 3. the frontend (rank 0's child process): every route the default handlers register
for route in / /stacks /pyspy_dump "/pyspy_dump?native=1" "/pyspy_dump?subprocesses=1" \
             /fr_trace /fr_trace_json /fr_trace_nccl /fr_trace_nccl_json \
             /torchcomms_fr_trace /torchcomms_fr_trace_json /torchcomms_health_check \
             "/profile?duration=1" /wait_counters /tcpstore /no_such_route; do
  name=$(echo "$route" | sed -e 's#^/##' -e 's#[?=&]#_#g'); [ -n "$name" ] || name=index
  fetch GET "http://localhost:$PORT$route" "$DS/frontend/$name.html"
done
# 4. each rank's worker server directly (POST /handler/<name>; the handlers the frontend uses)
for r in 0 1 2 3; do
  d=$DS/worker/rank$r; mkdir -p "$d"
  fetch POST "${URL[$r]}/handler/ping" "$d/ping.txt"
  fetch POST "${URL[$r]}/handler/dump_traceback" "$d/dump_traceback.txt"
  fetch POST "${URL[$r]}/handler/pyspy_dump?nonblocking=1" "$d/pyspy_dump.txt"
  fetch POST "${URL[$r]}/handler/fr_trace_json" "$d/fr_trace_json.json"
  fetch POST "${URL[$r]}/handler/wait_counter_values" "$d/wait_counter_values.json"
done
fetch POST "${URL[1]}/handler/pyspy_dump?native=1" "$DS/worker/rank1/pyspy_dump_native.txt"
fetch POST "${URL[1]}/handler/torch_profile?duration=1" "$DS/worker/rank1/torch_profile.json"
fetch POST "${URL[1]}/handler/dump_nccl_trace_json" "$DS/worker/rank1/dump_nccl_trace_json.txt"
fetch GET "${URL[1]}/handler/ping" "$DS/worker/rank1/ping_GET.txt"
captures_done=$(date +%s)
[ -s $DS/curl_errors.log ] || rm -f $DS/curl_errors.log   # kept only when curl itself failed

# 5. let the job run into its 120 s gloo timeout (the periodic dumper keeps writing meanwhile)
wait "$TR_PID"
rc=$?
echo "torchrun exit code $rc; hang detected at +$(( hang_seen - start ))s, captures finished at +$(( captures_done - start ))s, job ended at +$(( $(date +%s) - start ))s" > logs/run_summary.txt
echo "debug_server: torchrun exit code $rc after $(( $(date +%s) - start ))s (hang seen at +$(( hang_seen - start ))s, captures done at +$(( captures_done - start ))s; launcher output: $HERE/logs/launcher.log)"
