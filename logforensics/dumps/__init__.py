"""Hang dumps read beside the logs: `py-spy dump` stacks and PyTorch Flight Recorder traces
(`flight_recorder`, `pyspy`: the formats; `load`: the tables a job keeps)."""
