"""Tiny CPU / gloo script printing free-form progress lines (no stage marks), for the
sample logs whose progress the analyzer must read from templates.

Launched with ``torchrun --nproc_per_node=3 free_form_train.py [flags]`` by the per-scenario
``run.sh``; all ranks print to the launcher's console (no --tee, no --log-dir), so their lines
interleave in one file with no rank prefix.

  --style thread   ``This is thread <rank> with training step <s> command <c>`` after each
                   of two all_reduces per step (the rank is only in the words)
  --style device   ``iter: step <s>, loss: <x>, lr: <y>, mem_usage:cuda:<rank> <m>GB`` once
                   per step (the rank is only in the CUDA device tag)
  --bad-rank/--bad-step  that rank ``continue``s past the rest of that step (one all_reduce
                   fewer than the others); the ranks then hang at the final barrier
At start every rank prints ``past barrier for <rank>`` and ``past all_reduce for <rank>``.
"""

import argparse
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--style", choices=["thread", "device"], default="thread")
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--bad-rank", type=int, default=-1)
    p.add_argument("--bad-step", type=int, default=-1)
    p.add_argument("--timeout", type=int, default=15)
    args = p.parse_args()
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    t = torch.ones(4)
    dist.barrier()
    print(f"past barrier for {rank}", flush=True)
    dist.all_reduce(t)
    print(f"past all_reduce for {rank}", flush=True)
    for step in range(args.steps):
        if rank == args.bad_rank and step == args.bad_step:
            print(f"rank {rank}: bad batch at step {step}, skipping", file=sys.stderr, flush=True)
            continue
        if args.style == "thread":
            for command in (1, 2):
                dist.all_reduce(t)
                print(
                    f"This is thread {rank} with training step {step} command {command}",
                    flush=True,
                )
        else:
            dist.all_reduce(t)
            print(
                f"iter: step {step}, loss: {1.0 / (step + 1):.4f}, lr: 0.001, "
                f"mem_usage:cuda:{rank} {7.5 + 0.01 * step:.2f}GB",
                flush=True,
            )
    dist.barrier()
    print(f"rank {rank} done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
