"""Tiny CPU / gloo Hugging Face Trainer job for the Trainer-style sample logs.

A DDP run of transformers' Trainer (torchrun, `use_cpu=True`, `ddp_backend="gloo"`) on the
same kind of 8 -> 16 -> 1 MLP and seeded synthetic data as the other scripts, printing only
what Trainer prints: its tqdm bar and its `{'loss': ...}` dicts, on the main process.

The bug: after training, only the main process evaluates (`if trainer.is_world_process_zero():
trainer.evaluate()`). Trainer's evaluation gathers the losses from every rank
(accelerate's `gather_for_metrics` -> `all_gather`), but the other ranks have left the script
and exited cleanly: the main process's all_gather loses its peers.
"""

import torch
import torch.nn as nn
from torch.utils.data import Dataset
from transformers import Trainer, TrainingArguments


class Pairs(Dataset):
    def __init__(self, size):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(size, 8, generator=g)
        self.y = self.x.sum(1, keepdim=True)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": self.x[i], "labels": self.y[i]}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x, labels=None):
        out = self.net(x)
        return {"loss": nn.functional.mse_loss(out, labels), "logits": out}


args = TrainingArguments(
    output_dir="out",
    per_device_train_batch_size=4,
    per_device_eval_batch_size=4,
    num_train_epochs=2,
    logging_steps=5,
    report_to=[],
    save_strategy="no",
    use_cpu=True,
    ddp_backend="gloo",
    ddp_timeout=20,
)
trainer = Trainer(model=Model(), args=args, train_dataset=Pairs(96), eval_dataset=Pairs(400))
trainer.train()
if trainer.is_world_process_zero():
    print(trainer.evaluate())  # BUG: evaluation gathers from every rank; only rank 0 runs it
print("done", flush=True)
