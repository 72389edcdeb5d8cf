"""The DataModule docs' ``MNISTDataModule`` (shrunk to digits) as ``dataset`` *and*
``val_dataset`` evaluates its ``val_dataloader`` at ``eval_every_n_steps``, as
``Trainer(val_check_interval=4)`` validates it: the same ``val_loss`` / ``val_acc`` at steps
4 and 8 — with ``val_dataset`` left out, too (the datamodule's ``val_dataloader`` is its
validation data, as under ``Trainer``). Another ``val_dataset`` beside the ``val_dataloader``
is refused, and so is ``eval_every_n_steps`` for a datamodule without one: each refusal names
the way that works, never the other.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import pytest
from _direct import direct_fit, ordered_loader
from _upstream import DigitsDataModule, LitClassifier

from pipekit_train import TrainingLoop
from pipekit_train.errors import ConfigError

BATCH, STEPS, SEED = 32, 8, 0


class InPipekitOrder(DigitsDataModule):
    def train_dataloader(self) -> Any:
        return ordered_loader(self.digits_train, BATCH, SEED, STEPS)


class Validations(pl.Callback):
    def __init__(self) -> None:
        self.seen: dict[int, dict[str, float]] = {}

    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        metrics = trainer.callback_metrics
        self.seen[trainer.global_step] = {k: float(metrics[k]) for k in ("val_loss", "val_acc")}


def _loop(dm: DigitsDataModule, val: Any, path: Path | None = None) -> TrainingLoop:
    return TrainingLoop(
        backend="lightning",
        task=LitClassifier(lr=3e-3),
        dataset=dm,
        val_dataset=val,
        eval_every_n_steps=4,
        batch_size=BATCH,
        max_steps=STEPS,
        seed=SEED,
        metric_writer=None if path is None else f"jsonl:{path}",
        backend_options={"accelerator": "cpu"},
    )


@pytest.mark.parametrize("val", ["the datamodule", None])
def test_datamodule_val_dataloader_at_the_eval_cadence_like_val_check_interval(
    tmp_path: Path, val: str | None
) -> None:
    dm = DigitsDataModule(batch_size=BATCH)
    path = tmp_path / "metrics.jsonl"
    _loop(dm, dm if val else None, path).run()
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    ours = {r["step"]: r for r in rows if "val_loss" in r}
    seen = Validations()
    direct_fit(
        LitClassifier(lr=3e-3),
        STEPS,
        {"limit_val_batches": 1.0, "val_check_interval": 4, "callbacks": [seen]},
        datamodule=InPipekitOrder(batch_size=BATCH),
    )
    assert sorted(ours) == sorted(seen.seen) == [4, 8]
    for step, metrics in seen.seen.items():
        for name, value in metrics.items():
            assert ours[step][name] == pytest.approx(value, rel=1e-5), (step, name)


def test_another_val_dataset_beside_val_dataloader_names_the_way(no_fit: None) -> None:
    dm = DigitsDataModule(batch_size=BATCH)
    other = {"x": [[0.0] * 64] * 32, "y": [0] * 32}
    with pytest.raises(ConfigError, match="val_dataset=<the same datamodule>") as err:
        _loop(dm, other).run()
    assert err.value.field == "val_dataset"  # the way it names is the test above
    assert "drop val_dataset" in str(err.value)


class TrainOnly(pl.LightningDataModule):
    """A datamodule with a ``train_dataloader`` and no ``val_dataloader``."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = DigitsDataModule(batch_size=BATCH)

    def setup(self, stage: str) -> None:
        self.inner.setup(stage)

    def train_dataloader(self) -> Any:
        return self.inner.train_dataloader()


def test_eval_cadence_on_a_datamodule_without_val_dataloader_names_the_ways(
    no_fit: None,
) -> None:
    with pytest.raises(ConfigError, match="defines no val_dataloader") as err:
        _loop(TrainOnly(), None).run()
    assert err.value.field == "eval_every_n_steps"
    assert "val_check_interval" in str(err.value) and "give val_dataset=" in str(err.value)
