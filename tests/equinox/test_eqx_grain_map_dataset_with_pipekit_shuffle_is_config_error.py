"""``backend_options.shuffle=True`` with a ``grain.MapDataset`` is a ConfigError (issue 36, 4).

A Grain pipeline is read in its own order, so pipekit's shuffle would silently not
happen: the explicit option is refused by name, before anything compiles, saying to
shuffle in the pipeline. ``shuffle=False`` agrees with the pipeline and trains.
"""

from __future__ import annotations

import grain
import pytest
from _eqx_helpers import make_data, make_module

from pipekit_train import ConfigError, TrainingLoop


def _loop(shuffle: bool) -> TrainingLoop:
    data = make_data(32)
    records = [(data["x"][i], data["y"][i]) for i in range(32)]
    return TrainingLoop(
        model_op=make_module(),
        dataset=grain.MapDataset.source(records).shuffle(seed=1),
        loss="cross_entropy",
        batch_size=8,
        max_steps=2,
        optimizer_config={"name": "adam", "lr": 1e-2},
        backend_options={"shuffle": shuffle},
    )


def test_explicit_shuffle_contradicting_the_pipeline_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"backend_options\.shuffle.*ds\.shuffle\(seed=") as e:
        _loop(True).run()
    assert e.value.field == "backend_options.shuffle"


def test_shuffle_false_agrees_with_the_pipeline() -> None:
    _, info = _loop(False).run()
    assert info["final_step"] == 2
