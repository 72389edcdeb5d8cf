"""An unknown Optuna sampler or pruner name is a ConfigError naming ``sampler`` / ``pruner``
(with the closest known name), raised before the sweep folder is made."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipekit_train.errors import ConfigError
from pipekit_train.sweep import Sweep

BASE = {"dataset": "m:d", "loss": "mse", "model_op": "m:f", "max_steps": 4}
SPACE = {"optimizer_config.lr": {"type": "float", "low": 1e-4, "high": 1e-2}}


@pytest.mark.parametrize(
    ("kw", "field", "hint"),
    [
        ({"sampler": "TPESampeler"}, "sampler", "TPESampler"),
        ({"sampler": {"name": "RandomSampler", "kwargs": {"nope": 1}}}, "sampler", "nope"),
        ({"pruner": "MedianPrunner"}, "pruner", "MedianPruner"),
    ],
)
def test_unknown_names_are_config_errors(tmp_path: Path, kw: dict, field: str, hint: str) -> None:
    sweep = Sweep(loop=BASE, space=SPACE, objective="loss", folder=tmp_path / "sw", **kw)
    with pytest.raises(ConfigError, match=hint) as info:
        sweep.run()
    assert info.value.field == field
    assert not (tmp_path / "sw" / "trials").exists()
