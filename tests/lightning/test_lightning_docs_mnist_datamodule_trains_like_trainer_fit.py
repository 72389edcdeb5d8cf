"""The ``MNISTDataModule`` of Lightning's DataModule docs, shrunk to digits
(``prepare_data``, ``setup`` with a seeded ``random_split``, ``train_dataloader``,
``val_dataloader``), as ``dataset=`` beside the docs' classifier: ``prepare_data`` and
``setup("fit")`` run once each, the parameters equal ``Trainer.fit(model, datamodule=dm)``'s
on the same batches, and the validation metrics its ``validation_step`` logs over the whole
``val_dataloader`` equal Lightning's."""

from __future__ import annotations

from typing import Any

import pytest
from _direct import assert_same_parameters, direct_fit, ordered_loader
from _upstream import DigitsDataModule, LitClassifier

from pipekit_train import TrainingLoop

BATCH, STEPS, SEED = 32, 10, 0


class Counted(DigitsDataModule):
    def __init__(self) -> None:
        super().__init__(batch_size=BATCH)
        self.prepared, self.stages = 0, []

    def prepare_data(self) -> None:
        self.prepared += 1
        super().prepare_data()

    def setup(self, stage: str) -> None:
        self.stages.append(stage)
        super().setup(stage)


class InPipekitOrder(DigitsDataModule):
    def train_dataloader(self) -> Any:
        return ordered_loader(self.digits_train, BATCH, SEED, STEPS)


def test_docs_datamodule_trains_like_trainer_fit() -> None:
    dm, model = Counted(), LitClassifier(lr=3e-3)
    _, info = TrainingLoop(
        backend="lightning",
        task=model,
        dataset=dm,
        batch_size=BATCH,
        max_steps=STEPS,
        seed=SEED,
        backend_options={"accelerator": "cpu"},
    ).run()
    assert dm.prepared == 1 and dm.stages == ["fit"]
    reference = LitClassifier(lr=3e-3)
    trainer = direct_fit(
        reference,
        STEPS,
        {"limit_val_batches": 1.0, "val_check_interval": STEPS},
        datamodule=InPipekitOrder(batch_size=BATCH),
    )
    assert_same_parameters(model, reference)
    final = info["final_metrics"]
    for name in ("val_loss", "val_acc"):
        assert final[name] == pytest.approx(float(trainer.callback_metrics[name]), rel=1e-5)
