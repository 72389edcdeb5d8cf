"""A ``LightningDataModule``'s ``on_before_batch_transfer`` / ``transfer_batch_to_device`` /
``on_after_batch_transfer`` (the DataHooks docs' examples: a transform before the transfer,
the default move, a "GPU" transform after it) are called as ``Trainer.fit`` calls them: per
training batch in that order with ``self.trainer.training`` true, per validation batch (pipekit's
evaluation at the end, Lightning's ``val_check_interval`` there) with ``self.trainer.validating``
true, ``dataloader_idx=0`` — the same calls, parameters and
``val_loss`` as ``Trainer.fit`` run directly on the same data order. With ``model_op`` +
``loss=`` (which train on ``{"x", "y"}`` batches, not the datamodule's) such hooks are a
``ConfigError`` naming them and the way that works."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from _direct import assert_same_parameters, direct_fit, ordered_loader
from _upstream import DigitsDataModule, LitClassifier

from pipekit_train import TrainingLoop
from pipekit_train.errors import ConfigError

BATCH, STEPS, SEED = 32, 8, 0


class HookedDigits(DigitsDataModule):
    def __init__(self, batch_size: int = BATCH) -> None:
        super().__init__(batch_size)
        self.calls: list[tuple[str, str, int]] = []

    def _seen(self, hook: str, dataloader_idx: int) -> None:
        stage = "train" if self.trainer.training else "val" if self.trainer.validating else "?"
        self.calls.append((hook, stage, dataloader_idx))

    def on_before_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        self._seen("before", dataloader_idx)
        batch[0] = batch[0] * 2.0 - 1.0  # transforms(batch['x'])
        return batch

    def transfer_batch_to_device(self, batch: Any, device: torch.device, idx: int) -> Any:
        self._seen("transfer", idx)
        return super().transfer_batch_to_device(batch, device, idx)

    def on_after_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        self._seen("after", dataloader_idx)
        batch[0] = batch[0].flip(-1)  # gpu_transforms(batch['x'])
        return batch


class InPipekitOrder(HookedDigits):
    """The reference's training loader reads pipekit's batches (its own order otherwise)."""

    def train_dataloader(self) -> Any:
        return ordered_loader(self.digits_train, BATCH, SEED, STEPS)


def test_datamodule_hooks_are_called_as_trainer_fit_calls_them() -> None:
    dm, model = HookedDigits(), LitClassifier()
    op, info = TrainingLoop(
        backend="lightning",
        task=model,
        dataset=dm,
        batch_size=BATCH,
        max_steps=STEPS,
        seed=SEED,
        backend_options={"accelerator": "cpu"},
    ).run()
    ref_dm, reference = InPipekitOrder(), LitClassifier()
    trainer = direct_fit(
        reference, STEPS, {"limit_val_batches": 1.0, "val_check_interval": STEPS}, datamodule=ref_dm
    )
    train = [(h, "train", 0) for h in ("before", "transfer", "after")]
    assert dm.calls[:3] == train and ("before", "val", 0) in dm.calls
    assert dm.calls == ref_dm.calls
    assert_same_parameters(model, reference)
    val_loss = float(trainer.callback_metrics["val_loss"])
    assert info["final_metrics"]["val_loss"] == pytest.approx(val_loss, rel=1e-5)


def test_hooks_beside_model_op_and_loss_are_refused_naming_them(no_fit: None) -> None:
    net = LitClassifier().model
    hooks = r"HookedDigits with its own on_before_batch_transfer, transfer_batch_to_device"
    with pytest.raises(ConfigError, match=hooks) as err:
        TrainingLoop(
            backend="lightning",
            model_op=net,
            loss="cross_entropy",
            dataset=HookedDigits(),
            batch_size=BATCH,
            max_steps=STEPS,
            backend_options={"accelerator": "cpu"},
        ).run()
    assert "task= or model_op, without loss=" in str(err.value)
    assert err.value.field == "dataset"
