"""DeepSpeed's INFO logger lines are lines of the job."""

from __future__ import annotations

from tests.builders import analyze_files

# zai-org/CogVideo#233, verbatim: a healthy fp16 run whose loss scale settles
HEALTHY = [
    "[2024-09-11 17:52:11,320] [INFO] [checkpointing.py:546:forward] ----Profiling time in "
    "checkpointing False",
    "[2024-09-11 17:52:18,030] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! "
    "Rank 0 Skipping step. Attempted loss scale: 4294967296, reducing to 2147483648",
    "[2024-09-11 17:52:32,563] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! "
    "Rank 0 Skipping step. Attempted loss scale: 2147483648, reducing to 1073741824",
]


def test_a_log_of_deepspeed_info_lines_is_read_as_a_healthy_job(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": HEALTHY})
    assert analysis.recognised_lines == len(HEALTHY)
    assert analysis.verdict is None
