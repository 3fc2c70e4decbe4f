#!/usr/bin/env bash
# Regenerates two_node_slurm/logs/ from scratch (works from any cwd).
# Override the launcher with TORCHRUN=... (e.g. TORCHRUN=/path/venv/bin/torchrun),
# or set PYTHON=... to run "$PYTHON -m torch.distributed.run"; MASTER_PORT=... picks the port.
#
# Emulates a 2-node SLURM job on one machine: the batch script runs
#   srun --label --ntasks-per-node=1 torchrun --nnodes=2 --nproc_per_node=2 ...
# so each node's torchrun console (with --tee) reaches slurm-4242.out behind srun's task id.
# Here the two "nodes" are two torchrun invocations (static rendezvous on 127.0.0.1, node_rank
# 0 and 1), and `label` prefixes their lines the way srun --label does ("<task id>: ").
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TORCHRUN="${TORCHRUN:-${PYTHON:+$PYTHON -m torch.distributed.run}}"
TORCHRUN="${TORCHRUN:-torchrun}"
PORT="${MASTER_PORT:-29741}"
cd "$HERE"
rm -rf logs && mkdir -p logs
OUT=logs/slurm-4242.out
start=$(date +%s)

label() {  # srun --label: "<task id>: " in front of every line of that task's output
  sed -u "s/^/$1: /"
}

node() {  # one node: srun task $1 runs torchrun with node_rank $1
  $TORCHRUN --nnodes=2 --node_rank="$1" --nproc_per_node=2 \
    --master_addr=127.0.0.1 --master_port="$PORT" \
    --log-dir "logs/node$1" --redirects 3 --tee 3 \
    ../ddp_train.py --timeout 20 --bad-rank 3 --bad-step 5 --skip-mode continue --log-format ts \
    2>&1 | label "$1" >> "$OUT"
  echo "${PIPESTATUS[0]}" > "logs/.rc$1"
}

# what `set -x` in the batch script writes to slurm-%j.out before srun starts
echo "+ srun --label --ntasks-per-node=1 torchrun --nnodes=2 --nproc_per_node=2 --master_addr=127.0.0.1 --master_port=$PORT ../ddp_train.py --timeout 20 --bad-rank 3 --bad-step 5 --skip-mode continue --log-format ts" >> "$OUT"
node 0 &
node 1 &
wait
rc0=$(cat logs/.rc0) rc1=$(cat logs/.rc1)
rm -f logs/.rc0 logs/.rc1
echo "two_node_slurm: torchrun exit codes node0=$rc0 node1=$rc1 after $(( $(date +%s) - start ))s (output: $HERE/$OUT)"
