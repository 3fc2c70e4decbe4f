#!/usr/bin/env bash
# Regenerates this folder's logs with real torchrun runs on CPU (any cwd):
#   restart/       --log-dir tree of a 2-process run that fails once and restarts
#                  (attempt_0 and attempt_1), plus its --tee console (restart/console.log)
#   restart_refused/console.log  a 3-process gloo run whose rank 1 raises at step 3; on its
#                  restart (--max-restarts=1) the new workers' full-mesh connects are refused
#   interrupted/console.log  a 3-process gloo run that hangs (rank 1 blocked reading a batch)
#                  and is stopped with Ctrl-C (SIGINT to torchrun) after 12 s
#   left_early/console.log  a 3-process gloo run whose rank 1 returns early at step 4
#   left_early_logdir/  the same run's --log-dir tree alone (--redirects 3, no console)
#   exited_quietly/console.log  a 3-process gloo run whose rank 1 prints why and calls
#                  sys.exit(1) at step 3 (no traceback); ranks 0 and 2 lose their connection
#   watchdog_stacks/console.log  a 3-process gloo run with faulthandler.dump_traceback_later(8):
#                  rank 1 blocks reading its step-4 batch (HANG=1); the watchdog dumps every
#                  rank's stacks, then ranks 0 and 2 time out after 20 s
#   watchdog_stacks_healthy/console.log  the same job without the hang: the watchdog fires
#                  mid-run and the job ends healthy
#   logged_exit/console.log  a 3-process gloo run whose rank 1 logs a ValueError with
#                  logging.exception at step 3 and exits with code 1; ranks 0 and 2 lose it
#   rich_traceback/console.log  a 3-process gloo run that draws its tracebacks with rich
#                  (`rich.traceback.install()`): rank 1 raises a ValueError at step 3
#   model_mismatch/console.log  a 3-process gloo run whose rank 1 builds one layer more than the
#                  others: every rank raises DDP's `DDP expects same model across all ranks`
#   shape_mismatch/console.log  a 4-process gloo run whose rank 2 builds a wider layer (the same
#                  parameter count): rank 2 raises DDP's `params[0] in this process with sizes
#                  [12, 8] appears not to match sizes of the same param in process 0`
#   shape_mismatch_rank0/console.log  the same with rank 0 the odd one: ranks 1-3 each raise it
#   wrapped_kill/console.log  a 3-process gloo run whose entry point wraps the real worker and
#                  exits with its return code; rank 1's child is killed by SIGKILL at step 3,
#                  so torchrun reports `exitcode: 247` (the byte `sys.exit(-9)` leaves)
#   hung_up/console.log  a healthy 3-process gloo job whose torchrun gets SIGHUP after 15 s
#                  (its terminal closing): the agent forwards it and raises SignalException
#   skipped_alone/console.log  a 3-process gloo FSDP2 run whose rank 1 says `loss is nan,
#                  skipping` at step 3 and skips its backward; gloo aborts on the mismatch
#   barrier_apart/console.log  a 3-process gloo run whose rank 1 breaks out of its loop into the
#                  final barrier while the others wait in all_reduce; all time out after 15 s
#   interrupted_healthy/<case>/console.log  a healthy 3-process gloo job stopped with Ctrl-C;
#                  where each rank stood depends on the moment (see ../README.md)
#   template_rank.log  console with TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='[${rank}]:'
#   template_rank_word.log  console with TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='[rank${rank}]: '
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TORCHRUN="${TORCHRUN:-torchrun}"
cd "$HERE"
rm -rf rich_traceback restart restart_refused interrupted left_early left_early_logdir exited_quietly watchdog_stacks watchdog_stacks_healthy model_mismatch shape_mismatch shape_mismatch_rank0 wrapped_kill hung_up skipped_alone barrier_apart interrupted_healthy template_rank.log template_rank_word.log
mkdir -p rich_traceback restart restart_refused interrupted left_early exited_quietly watchdog_stacks watchdog_stacks_healthy model_mismatch shape_mismatch shape_mismatch_rank0 wrapped_kill hung_up skipped_alone barrier_apart interrupted_healthy/again
FAIL_FIRST_ATTEMPT=1 $TORCHRUN --standalone --nproc_per_node=2 --max-restarts=1 \
  --log-dir restart/logs --redirects 3 --tee 3 worker.py > restart/console.log 2>&1
TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='[${rank}]:' $TORCHRUN --standalone --nproc_per_node=2 \
  --tee 3 worker.py > template_rank.log 2>&1
TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='[rank${rank}]: ' $TORCHRUN --standalone --nproc_per_node=2 \
  --tee 3 worker.py > template_rank_word.log 2>&1
$TORCHRUN --standalone --nproc_per_node=3 --max-restarts=1 crash_worker.py \
  > restart_refused/console.log 2>&1
$TORCHRUN --standalone --nproc_per_node=3 hang_worker.py > interrupted/console.log 2>&1 &
sleep 12
kill -INT $!
wait $!
$TORCHRUN --standalone --nproc_per_node=3 early_exit_worker.py > left_early/console.log 2>&1
$TORCHRUN --standalone --nproc_per_node=3 --log-dir left_early_logdir --redirects 3 \
  early_exit_worker.py > /dev/null 2>&1
$TORCHRUN --standalone --nproc_per_node=3 sys_exit_worker.py > exited_quietly/console.log 2>&1
HANG=1 $TORCHRUN --standalone --nproc_per_node=3 --tee 3 watchdog_worker.py \
  > watchdog_stacks/console.log 2>&1
$TORCHRUN --standalone --nproc_per_node=3 --tee 3 watchdog_worker.py \
  > watchdog_stacks_healthy/console.log 2>&1
$TORCHRUN --standalone --nproc_per_node=3 model_mismatch_worker.py > model_mismatch/console.log 2>&1
$TORCHRUN --standalone --nproc_per_node=4 shape_mismatch_worker.py > shape_mismatch/console.log 2>&1
SHAPE_RANK=0 $TORCHRUN --standalone --nproc_per_node=4 shape_mismatch_worker.py \
  > shape_mismatch_rank0/console.log 2>&1
$TORCHRUN --standalone --nproc_per_node=3 wrapped_worker.py > wrapped_kill/console.log 2>&1
$TORCHRUN --standalone --nproc_per_node=3 healthy_worker.py > hung_up/console.log 2>&1 &
sleep 15
kill -HUP $!
wait $!
$TORCHRUN --standalone --nproc_per_node=3 --tee 3 logged_worker.py > logged_exit/console.log 2>&1
$TORCHRUN --standalone --nproc_per_node=3 rich_worker.py > rich_traceback/console.log 2>&1
$TORCHRUN --standalone --nproc_per_node=3 skip_worker.py > skipped_alone/console.log 2>&1
$TORCHRUN --standalone --nproc_per_node=3 break_worker.py > barrier_apart/console.log 2>&1
$TORCHRUN --standalone --nproc_per_node=3 healthy_worker.py > interrupted_healthy/again/console.log 2>&1 &
sleep 15
kill -INT $!
wait $!
