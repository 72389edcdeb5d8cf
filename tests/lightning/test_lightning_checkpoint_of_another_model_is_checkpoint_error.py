"""A checkpoint_dir holding another model's checkpoint → CheckpointError naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from _lightning_helpers import loop, mlp

from pipekit_train.errors import CheckpointError


def test_checkpoint_of_another_model_is_refused(tmp_path: Path, no_fit, monkeypatch) -> None:
    ckpt = str(tmp_path / "ckpt")
    monkeypatch.undo()  # the first run trains for real
    loop(checkpoint_dir=ckpt).run()
    assert list(Path(ckpt).glob("step-*.pt"))

    import lightning.pytorch as pl

    def fit(*args, **kwargs):
        raise AssertionError("Trainer.fit was called")

    monkeypatch.setattr(pl.Trainer, "fit", fit)
    with pytest.raises(CheckpointError, match="model_structure") as err:
        loop(checkpoint_dir=ckpt, model_op=mlp(hidden=32)).run()
    assert "resume" in str(err.value)  # names the override
    assert sorted(p.name for p in Path(ckpt).glob("step-*.pt")) == ["step-000000006.pt"]


def test_force_with_another_model_still_cannot_load(tmp_path: Path) -> None:
    ckpt = str(tmp_path / "ckpt")
    loop(checkpoint_dir=ckpt).run()
    with pytest.warns(UserWarning, match="model_structure"):
        with pytest.raises(CheckpointError, match="another model's weights"):
            loop(
                checkpoint_dir=ckpt,
                model_op=mlp(hidden=32),
                backend_options={"accelerator": "cpu", "resume": "force"},
            ).run()
