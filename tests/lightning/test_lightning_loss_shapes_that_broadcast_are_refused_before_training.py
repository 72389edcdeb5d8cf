"""A regression model's ``(n, 1)`` output against ``(n,)`` targets under ``loss="mse"`` is
aligned, as on the JAX backends (core's ``align_shapes``), and trains exactly as
``Trainer.fit`` on ``F.mse_loss(pred, y[:, None])``; a pair torch would *broadcast*
(``(n, 2)`` against ``(n, 1)``, or ``(n, n)`` against ``(n,)``) is a ``ConfigError`` naming
both shapes, raised on the probe batch before training: ``fit`` is never reached, no
pipekit callback runs, no checkpoint folder is made."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from _direct import assert_same_parameters, direct_fit, ordered_loader
from sklearn.datasets import load_diabetes

from pipekit_train import Callback, TrainingLoop
from pipekit_train.errors import ConfigError

BATCH, STEPS, SEED = 16, 8, 0


def _diabetes() -> dict[str, np.ndarray]:
    d = load_diabetes()
    x = d.data.astype(np.float32)
    y = ((d.target - d.target.mean()) / d.target.std()).astype(np.float32)
    return {"x": x[:128], "y": y[:128]}  # y has shape (n,)


def _regressor(width: int = 1) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.Tanh(), torch.nn.Linear(16, width))


def _loop(model: torch.nn.Module, data: dict[str, np.ndarray], **kw: Any) -> TrainingLoop:
    return TrainingLoop(
        backend="lightning",
        model_op=model,
        dataset=data,
        loss="mse",
        batch_size=BATCH,
        max_steps=STEPS,
        seed=SEED,
        optimizer_config={"name": "sgd", "lr": 0.05},
        backend_options={"accelerator": "cpu"},
        **kw,
    )


class Regression(pl.LightningModule):
    """The same model and loss written for Lightning, the target given the output's shape."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        x, y = batch
        return F.mse_loss(self.net(x), y[:, None])

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=0.05)


def test_output_n_by_1_against_n_targets_trains_like_trainer_fit_on_the_aligned_loss() -> None:
    data = _diabetes()
    model = _regressor()
    reference = Regression(copy.deepcopy(model))
    op, info = _loop(model, data).run()
    assert info["final_step"] == STEPS
    x, y = torch.from_numpy(data["x"]), torch.from_numpy(data["y"])
    dataset = torch.utils.data.TensorDataset(x, y)
    direct_fit(reference, STEPS, train_dataloaders=ordered_loader(dataset, BATCH, SEED, STEPS))
    assert_same_parameters(op.module, reference.net)


class Seen(Callback):
    def __init__(self) -> None:
        self.events: list[str] = []

    def on_run_start(self, loop: Any, state: Any) -> None:
        self.events.append("run_start")

    def on_step_end(self, loop: Any, state: Any) -> None:
        self.events.append("step_end")


@pytest.mark.parametrize(
    ("width", "column", "shapes"),
    [
        (2, True, r"\(16, 2\) and targets of shape \(16, 1\)"),  # would broadcast to (16, 2)
        (BATCH, False, r"\(16, 16\) and targets of shape \(16,\)"),  # to (16, 16)
    ],
)
def test_a_pair_that_broadcasts_is_refused_before_training(
    tmp_path: Path, no_fit: None, width: int, column: bool, shapes: str
) -> None:
    data = _diabetes()
    if column:
        data["y"] = data["y"][:, None]
    seen = Seen()
    ckpt = tmp_path / "ckpt"
    with pytest.raises(ConfigError, match=r"loss 'mse' got predictions of shape " + shapes) as err:
        _loop(_regressor(width), data, callbacks=[seen], checkpoint_dir=str(ckpt)).run()
    assert err.value.field == "TrainingLoop.loss"
    assert "TrainingLoop.dataset, before training" in str(err.value)
    assert seen.events == [] and not ckpt.exists()


def test_the_validation_set_is_probed_too(no_fit: None) -> None:
    data = _diabetes()
    val = {"x": data["x"][:32], "y": data["y"][:32, None].repeat(2, axis=1)}  # (n, 2) targets
    with pytest.raises(ConfigError, match=r"\(16, 1\) and targets of shape \(16, 2\).*val_dataset"):
        _loop(_regressor(), data, val_dataset=val).run()
