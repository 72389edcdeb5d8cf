"""Every bad ``backend_options`` value on the Lightning backend — the ``Trainer`` pass-through
included (``precision='bogus'``, ``devices=0``, ``strategy='nope'``, …) — is a
``PipekitError`` naming ``backend_options.<key>``, raised before ``Trainer.fit`` (nothing
trains or is compiled), with the files already in ``checkpoint_dir`` untouched. A library
complaint (Lightning's own ``ValueError`` / ``MisconfigurationException``) is turned into
a ``ConfigError`` naming the key, not raised as it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from _lightning_helpers import loop
from case_ids import case_id
from user_files import plant, snapshot

from pipekit_train import Callback
from pipekit_train.errors import ConfigError, PipekitError

NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")

CASES = [
    ({"precision": "bogus"}, "backend_options.precision", "bf16-mixed"),
    ({"precision": "16-mixd"}, "backend_options.precision", "did you mean '16-mixed'"),
    ({"devices": 0}, "backend_options.devices", "integer >= 1"),
    ({"devices": -2}, "backend_options.devices", "integer >= 1"),
    ({"devices": True}, "backend_options.devices", "integer >= 1"),
    ({"strategy": "nope"}, "backend_options.strategy", "ddp"),
    ({"strategy": "dpp"}, "backend_options.strategy", "did you mean 'ddp'"),
    ({"accelerator": "gpuu"}, "backend_options.accelerator", "did you mean 'gpu'"),
    pytest.param(
        {"accelerator": "cuda"},
        "backend_options.accelerator",
        "refused by Lightning",
        marks=NO_CUDA,
    ),
    ({"num_nodes": 0}, "backend_options.num_nodes", "integer >= 1"),
    ({"accumulate_grad_batches": 0}, "backend_options.accumulate_grad_batches", "integer >= 1"),
    ({"deterministic": "sometimes"}, "backend_options.deterministic", "'warn'"),
    ({"benchmark": "yes"}, "backend_options.benchmark", "true or false"),
    ({"callbacks": [Callback()]}, "backend_options.callbacks[0]", "TrainingLoop.callbacks"),
    ({"profiler": "bogus"}, "backend_options.profiler", "refused by Lightning"),
    ({"limit_train_batches": -1}, "backend_options.limit_train_batches", "refused by Lightning"),
    ({"precison": "bf16-mixed"}, "backend_options.precison", "did you mean 'precision'"),
    ({"max_epochs": 3}, "backend_options.max_epochs", "TrainingLoop.max_steps"),
    ({"resume": "yes"}, "backend_options.resume", "'never'"),
    ({"num_workers": -1}, "backend_options.num_workers", "integer >= 0"),
]


@pytest.fixture()
def fits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the calls of ``Trainer.fit`` (where Lightning starts to train)."""
    import lightning.pytorch as pl

    calls: list[int] = []
    original = pl.Trainer.fit

    def fit(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(pl.Trainer, "fit", fit)
    return calls


def _ids(case: Any) -> str:
    values = case.values if hasattr(case, "values") else case
    return case_id(values[0])


@pytest.mark.parametrize(("options", "field", "words"), CASES, ids=[_ids(c) for c in CASES])
def test_refused(tmp_path: Path, fits: list[int], options: dict, field: str, words: str) -> None:
    run_dir = tmp_path / "run"
    plant(run_dir)
    before = snapshot(run_dir)
    bad = loop(backend_options={"accelerator": "cpu", **options}, checkpoint_dir=str(run_dir))
    with pytest.raises(ConfigError) as info:
        bad.run()
    assert isinstance(info.value, PipekitError)
    assert info.value.field == field and field in str(info.value), info.value
    assert words in str(info.value), info.value
    assert not fits, "Trainer.fit was reached before the error"
    assert snapshot(run_dir) == before


def test_the_counter_sees_a_good_run_fit(tmp_path: Path, fits: list[int]) -> None:
    loop(max_steps=2, checkpoint_dir=str(tmp_path / "good")).run()
    assert fits
