"""Small shared pieces of the lightning tests: data, a model, a loop, a guard on ``fit``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from pipekit_train import TrainingLoop


def data(n: int = 96, features: int = 8, classes: int = 3, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features)).astype(np.float32)
    return {"x": x, "y": (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 1)}


def mlp(features: int = 8, classes: int = 3, hidden: int = 16) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(features, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, classes)
    )


def loop(**overrides: Any) -> TrainingLoop:
    kwargs: dict[str, Any] = {
        "backend": "lightning",
        "model_op": mlp(),
        "dataset": data(),
        "loss": "cross_entropy",
        "batch_size": 16,
        "max_steps": 6,
        "log_every_n_steps": 2,
        "backend_options": {"accelerator": "cpu"},
    }
    kwargs.update(overrides)
    return TrainingLoop(**kwargs)


@pytest.fixture()
def no_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if ``Trainer.fit`` is reached (the error must come before it)."""
    import lightning.pytorch as pl

    def fit(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("Trainer.fit was called; the error must be raised before it")

    monkeypatch.setattr(pl.Trainer, "fit", fit)
