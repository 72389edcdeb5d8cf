"""Issue 20: a user ``LightningModule`` — as ``model_op`` (no ``loss=``) or as ``task=`` —
trains with its own ``training_step`` and ``configure_optimizers`` (SGD 0.1 + momentum, a
``StepLR``): the logged ``lr`` follows the scheduler, its ``self.log("my_train_loss")`` is in
the JSONL and ``final_metrics``, and its ``validation_step``'s ``log_dict`` values are
``val_*`` at the eval cadence. A scheduler of ``interval="epoch"`` steps at pipekit's data
epochs (96 rows / 16 = 6 updates); a per-epoch ``ReduceLROnPlateau`` monitors a ``val_*``
metric of the same step, and the checkpoint of that step holds the stepped state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from _lightning_helpers import data, loop
from _own_module import OwnModule


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("as_field", ["model_op", "task"])
def test_own_module_trains_with_its_own_steps_optimizer_and_logs(
    tmp_path: Path, as_field: str
) -> None:
    d = data()
    module = OwnModule()
    fields = {"model_op": module} if as_field == "model_op" else {"model_op": None, "task": module}
    path = tmp_path / "metrics.jsonl"
    op, info = loop(
        **fields,
        loss=None,
        max_steps=8,
        val_dataset=d,
        eval_every_n_steps=4,
        log_every_n_steps=1,
        checkpoint_dir=str(tmp_path / "ckpt"),
        metric_writer=f"jsonl:{path}",
    ).run()
    assert op.module is module
    rows = _rows(path)
    train = {r["step"]: r for r in rows if "loss" in r}
    # StepLR(step_size=3, gamma=0.5) stepped per update, read from param_groups[0]["lr"].
    assert [train[s]["lr"] for s in range(1, 9)] == [0.1] * 3 + [0.05] * 3 + [0.025] * 2
    assert all(r["my_train_loss"] == pytest.approx(2 * r["loss"]) for r in train.values())
    val = [r for r in rows if "val_my_loss" in r]
    assert [r["step"] for r in val] == [4, 8]
    assert all(0.0 <= r["val_my_acc"] <= 1.0 for r in val)
    final = info["final_metrics"]
    assert final["lr"] == 0.025 and "my_train_loss" in final and "val_my_loss" in final
    ckpt = torch.load(tmp_path / "ckpt" / "step-000000008.pt", weights_only=True)
    assert ckpt["optimizer"]["param_groups"][0]["momentum"] == 0.9  # the module's SGD
    assert all("momentum_buffer" in s for s in ckpt["optimizer"]["state"].values())
    assert ckpt["scheduler"]["last_epoch"] == 8


def test_epoch_interval_scheduler_steps_at_each_data_epoch(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    loop(
        model_op=OwnModule(interval="epoch", step_size=1),
        loss=None,
        max_steps=13,
        log_every_n_steps=1,
        metric_writer=f"jsonl:{path}",
    ).run()
    lr = {r["step"]: r["lr"] for r in _rows(path) if "lr" in r}
    assert [lr[s] for s in range(1, 14)] == [0.1] * 6 + [0.05] * 6 + [0.025]


class Plateau(OwnModule):
    """``ReduceLROnPlateau`` per epoch on ``val_my_loss`` (logged by its validation_step)."""

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=0, factor=0.5)
        self.plateau = plateau
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": plateau, "monitor": "val_my_loss"},
        }


def test_reduce_on_plateau_epoch_scheduler_sees_the_val_metric(tmp_path: Path) -> None:
    module = Plateau()
    module.validation_step = lambda batch, i: module.log("val_my_loss", torch.tensor(1.0))
    loop(
        model_op=module,
        loss=None,
        max_steps=18,
        val_dataset=data(),
        eval_every_n_steps=6,
        checkpoint_dir=str(tmp_path / "ckpt"),
    ).run()
    # A constant val loss: epoch 1 sets the best, epochs 2 and 3 halve the rate (patience 0).
    assert module.plateau.optimizer.param_groups[0]["lr"] == pytest.approx(0.025)
    ckpt = torch.load(tmp_path / "ckpt" / "step-000000018.pt", weights_only=True)
    # The checkpoint of step 18 (an epoch end) holds the state after that epoch's step.
    assert ckpt["optimizer"]["param_groups"][0]["lr"] == pytest.approx(0.025)
    assert ckpt["scheduler"]["best"] == 1.0
