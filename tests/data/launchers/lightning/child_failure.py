"""A 2-process Lightning DDP run (gloo on CPU) whose rank 1 fails while rank 0 is still busy in
a long step (12 s, no collective): rank 1's dataset raises on a sample of its first batch.
Lightning's launcher (rank 0's process, which started rank 1 as a subprocess) sees the child
end with code 1, logs it under the child's rank and kills every process of the job with
SIGKILL, its own included: the shell reports rank 0's process `Killed`."""

import os
import time

import lightning
import torch
from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    def __len__(self) -> int:
        return 64

    def __getitem__(self, index: int) -> torch.Tensor:
        if int(os.environ.get("LOCAL_RANK", "0")) == 1 and index >= 40:
            raise ValueError(f"sample {index}: truncated record in shard-00017")
        return torch.randn(8)


class Model(lightning.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
        if self.global_rank == 0 and batch_idx == 0:
            time.sleep(12)  # a slow step on rank 0: rank 1 fails meanwhile
        loss = self.layer(batch).pow(2).mean()
        print(f"rank {self.global_rank} step {batch_idx} loss {loss.item():.4f}", flush=True)
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.01)


if __name__ == "__main__":
    trainer = lightning.Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_epochs=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    loader = DataLoader(Samples(), batch_size=4, shuffle=False)
    trainer.fit(Model(), loader)
