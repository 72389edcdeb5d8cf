"""A random augmentation in ``on_after_batch_transfer`` (the DataHooks docs' place for "GPU"
transforms) draws from a seed that is a function of ``(seed, global batch)``: Lightning
calls the transfer hooks before ``on_train_batch_start``, so the bridge seeds them at the
start of the run and after every batch. A run resumed from its step-3 checkpoint, in a
process whose torch generator is somewhere else, ends with the uninterrupted run's
parameters bit for bit."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import torch
from _upstream import DigitsDataModule, LitClassifier

from pipekit_train import Checkpoint, TrainingLoop


class Augmented(LitClassifier):
    def on_after_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        if self.trainer.training:
            batch[0] = batch[0] + 0.1 * torch.randn_like(batch[0])  # gpu_transforms
        return batch


def _run(ckpt: Path) -> tuple[torch.nn.Module, dict[str, Any]]:
    model = Augmented()
    _, info = TrainingLoop(
        backend="lightning",
        task=model,
        dataset=DigitsDataModule(batch_size=32),
        batch_size=32,
        max_steps=6,
        checkpoint_dir=str(ckpt),
        callbacks=[Checkpoint(every_n_steps=3)],
        backend_options={"accelerator": "cpu"},
    ).run()
    return model, info


def test_resumed_run_draws_the_same_augmentation(tmp_path: Path) -> None:
    whole, info = _run(tmp_path / "whole")
    assert info["resumed_from_step"] is None
    resumed_dir = tmp_path / "resumed"
    shutil.copytree(tmp_path / "whole", resumed_dir)
    (resumed_dir / "step-000000006.pt").unlink()
    torch.manual_seed(1234)  # another process: its generator is not where the first run's was
    torch.randn(17)
    resumed, info = _run(resumed_dir)
    assert info["resumed_from_step"] == 3 and info["final_step"] == 6
    for (name, a), b in zip(whole.state_dict().items(), resumed.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
