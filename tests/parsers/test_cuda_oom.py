# ruff: noqa: E501 -- test data are verbatim log lines
"""CUDA's out-of-memory sentence quoted mid-line (parsers/cuda_oom.py)."""

from __future__ import annotations

from tests.builders import analyze_files, only, parsed_by

# lm-sys/FastChat#256, verbatim: FSDP's state-dict warning at the final save, its head cut
CUT_WARNING = "ayers.39.mlp.gate_proj.weight on rank 1. This may mean that this state_dict entry could point to invalid memory regions after returning from state_dict() call if this parameter is managed by FSDP. Please check clone implementation of _fsdp_wrapped_module.model.layers.39.mlp.gate_proj.weight. Error: CUDA out of memory. Tried to allocate 270.00 MiB (GPU 1; 79.35 GiB total capacity; 76.93 GiB already allocated; 72.19 MiB free; 77.38 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"


def test_the_sentence_mid_line_is_an_oom_of_the_rank_it_names():
    oom = only(parsed_by("cuda_oom", [CUT_WARNING]))
    assert (oom["event"], oom["rank"], oom["device"]) == ("oom", 1, "1")
    assert oom["value"] == 270 * 2**20


def test_shapes_other_families_read_are_left_to_them():
    lines = [
        # tatsu-lab/stanford_alpaca#65's warning (its elided middle, FSDP's fixed words, as
        # lm-sys/FastChat#1242 quotes them), cut after the capacity: python_warnings reads it
        "/local_disk0/.ephemeral_nfs/cluster_libraries/python/lib/python3.9/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py:2224: UserWarning: Failed to clone() tensor with name lm_head.weight. This may mean that this state_dict entry could point to invalid memory regions after returning from state_dict() call if this parameter is managed by FSDP. Please check clone implementation of lm_head.weight. Error: CUDA out of memory. Tried to allocate 502.00 MiB (GPU 1; 39.59 GiB total capacity;",
        # an exception line (the traceback family; made up for this test)
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.75 GiB total capacity)",
    ]
    assert parsed_by("cuda_oom", lines).is_empty()


def test_the_final_save_s_oom_is_the_verdict(tmp_path):
    # FastChat#256's paste: the last steps, the summary, the cut, then the warning
    lines = [
        "{'loss': 1.317, 'learning_rate': 0.0, 'epoch': 1.0}",
        "{'train_runtime': 601.9411, 'train_samples_per_second': 7.029, 'train_steps_per_second': 0.219, 'train_loss': 1.4777254832513405, 'epoch': 1.0}",
        "",
        "....",
        CUT_WARNING,
    ]
    analysis = analyze_files(tmp_path, {"output.log": lines})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("oom", [1])


# horovod/horovod#1350, verbatim (the backtrace's middle left out): TensorFlow under Horovod
# fails to allocate on rank 1's GPU, retrying smaller, then aborts; mpirun reports the abort
DRIVER_OOM = [
    "[1,1]<stderr>:2019-08-26 18:41:15.943905: E tensorflow/stream_executor/cuda/cuda_driver.cc:828] failed to allocate 2.96G (3173555200 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
    "[1,1]<stderr>:2019-08-26 18:41:15.944791: E tensorflow/stream_executor/cuda/cuda_driver.cc:828] failed to allocate 2.66G (2856199680 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
    "[1,1]<stderr>:[aaron-argo-1:00093] *** End of error message ***",
    "--------------------------------------------------------------------------",
    "Primary job  terminated normally, but 1 process returned",
    "a non-zero exit code. Per user-direction, the job has been aborted.",
    "--------------------------------------------------------------------------",
    "--------------------------------------------------------------------------",
    "mpirun noticed that process rank 1 with PID 0 on node aaron-argo-1 exited on signal 6 (Aborted).",
    "--------------------------------------------------------------------------",
]


def test_the_cuda_driver_s_error_name_is_an_oom_with_its_size_in_bytes():
    oom = parsed_by("cuda_oom", DRIVER_OOM[:1]).row(0, named=True)
    assert (oom["event"], oom["value"]) == ("oom", 3173555200)


def test_a_rank_that_aborts_after_its_gpu_ran_out_died_of_the_oom(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": DRIVER_OOM})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("oom", [1])
    # the abort is the OOM's end, not a death of its own left unexplained
    assert all("SIGABRT" not in item.summary for item in analysis.findings)


# salesforce/CodeGen2#3, verbatim (pdsh's host prefix; two processes' tracebacks interleaved on
# one line): PyTorch's ROCm build names HIP where CUDA's names CUDA
HIP_OUT_OF_MEMORY = [
    "c05r2n11: RuntimeErrorRuntimeError: : HIP out of memory. Tried to allocate 576.00 MiB (GPU 3; 15.98 GiB total capacity; 15.83 GiB already allocated; 0 bytes free; 15.84 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_HIP_ALLOC_CONFHIP out of memory. Tried to allocate 576.00 MiB (GPU 1; 15.98 GiB total capacity; 15.83 GiB already allocated; 0 bytes free; 15.84 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_HIP_ALLOC_CONF",
    "c05r2n11: RuntimeError",
]


def test_hip_s_out_of_memory_is_an_oom_as_cuda_s_is(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": HIP_OUT_OF_MEMORY})
    oom = analysis.verdict.finding
    assert oom.kind == "oom" and "576 MiB" in oom.summary
    assert "c05r2n11" in analysis.verdict.finding.evidence[0].text
