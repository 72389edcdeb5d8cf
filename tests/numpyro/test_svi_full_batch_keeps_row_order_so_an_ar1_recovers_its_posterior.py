"""numpyro-svi at its default options never reorders a full batch: an AR(1) whose likelihood
depends on the order of the rows recovers its exact posterior (issue 25 item 1; before, the
default ``shuffle`` permuted the series every step and phi came out near 0). A task declared
``ordered`` is refused minibatches, naming the field and the fix."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bayes"))

from _bayes_models import ar1, ar1_data, ar1_posterior  # noqa: E402

from pipekit_train import TrainingLoop  # noqa: E402
from pipekit_train.adapters.bayes import NumpyroTask  # noqa: E402
from pipekit_train.errors import ConfigError  # noqa: E402


def _loop(batch_size: int, **task: object) -> TrainingLoop:
    x, y = ar1_data()
    return TrainingLoop(
        task=NumpyroTask(model=ar1, predictive_samples=2000, **task),  # type: ignore[arg-type]
        dataset={"x": x, "y": y},
        backend="numpyro-svi",
        batch_size=batch_size,
        max_steps=3000,
        optimizer_config={"name": "adam", "lr": 0.01},
        log_every_n_steps=3000,
    )


def test_ar1_at_default_options_recovers_the_exact_posterior() -> None:
    x, y = ar1_data()
    mean_ref, sd_ref = ar1_posterior(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = _loop(len(y)).run()
    phi = op.samples["phi"]
    assert abs(float(phi.mean()) - mean_ref) < 0.5 * sd_ref, (float(phi.mean()), mean_ref)
    assert 0.7 < float(phi.std()) / sd_ref < 1.4, (float(phi.std()), sd_ref)
    assert info["shuffled"] is False


def test_an_ordered_task_is_refused_minibatches_naming_the_field() -> None:
    with pytest.raises(ConfigError, match="batch_size=200") as err:
        _loop(50, ordered=True).run()
    assert err.value.field == "task.ordered"
