"""A ``grain.MapDataset`` the user shuffled trains on Lightning in its own order (decision 0198).

Grain's own idiom, ``MapDataset.source(records).shuffle(seed=7).map(fn)`` over scikit-learn's
digits, is read by index: global batch ``i`` is its elements ``i*B … (i+1)*B - 1``, the later
epochs as Grain defines them (epoch ``e`` reshuffled with ``seed + e``), no remainder
dropped, so batch ``i`` is Grain's own ``ds.repeat().batch(B)[i]`` — not pipekit's seeded
permutation of the materialised arrays. The reference is plain ``lightning.Trainer.fit`` of
the same MLP and loss on a ``DataLoader`` over exactly those Grain batches; 36 steps of 64
rows cross the first epoch's end (1797 digits: batch 28 holds the last 5 of epoch 0 and the
first 59 of epoch 1). The pipeline as it is and the same pipeline ``.repeat()``-ed (endless,
read by index, never whole) must both end with the reference's parameters, bit for bit.
Needs Grain beside torch, so it lives here (tests/lightning's session has no Grain).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import grain
import lightning.pytorch as pl
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits

from pipekit_train import TrainingLoop

# Lightning's own Trainer.fit, as the tests/lightning comparisons run it.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lightning"))
from _direct import direct_fit  # noqa: E402

BATCH, STEPS, SEED, LR = 64, 36, 3, 0.05


def _scale(record: dict[str, Any]) -> dict[str, Any]:
    return {"x": record["x"] / 16.0, "y": record["y"]}  # float64, as a user's pipeline makes it


def pipeline() -> grain.MapDataset:
    digits = load_digits()
    records = [{"x": digits.data[i], "y": digits.target[i]} for i in range(len(digits.target))]
    return grain.MapDataset.source(records).shuffle(seed=7).map(_scale)


def mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))


class Classifier(pl.LightningModule):
    """The same model and loss written for Lightning."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        x, y = batch
        return F.cross_entropy(self.net(x), y)

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=LR)


def grain_batches() -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Grain's own batching of the pipeline, ``ds.repeat().batch(B)[s]`` for step ``s``."""
    batches = pipeline().repeat().batch(BATCH)
    out = []
    for s in range(STEPS):
        b = batches[s]
        out.append((torch.from_numpy(b["x"].astype(np.float32)), torch.from_numpy(b["y"])))
    return out


@pytest.mark.parametrize("endless", [False, True], ids=["one-pass", "repeat"])
def test_map_dataset_trains_in_its_own_order_like_trainer_fit(endless: bool) -> None:
    net = mlp()
    reference = Classifier(copy.deepcopy(net))
    dataset = pipeline().repeat() if endless else pipeline()
    op, info = TrainingLoop(
        backend="lightning",
        model_op=net,
        dataset=dataset,
        loss="cross_entropy",
        batch_size=BATCH,
        max_steps=STEPS,
        seed=SEED,
        optimizer_config={"name": "sgd", "lr": LR},
        backend_options={"accelerator": "cpu"},
    ).run()
    assert info["final_step"] == STEPS
    loader = torch.utils.data.DataLoader(grain_batches(), batch_size=None)
    direct_fit(reference, STEPS, train_dataloaders=loader)
    got, want = dict(op.module.named_parameters()), dict(reference.net.named_parameters())
    assert got.keys() == want.keys()
    for name in got:
        assert torch.equal(got[name], want[name]), name
