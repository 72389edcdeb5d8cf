"""An iterator factory as ``dataset`` trains; a resume replays it, and refuses one that changed.

Issue 20: ``dataset=make_iterator`` (a zero-argument function returning an
iterator of single examples). Its iterator has no state to save, so a resume
calls the factory again and skips the batches already consumed: 5 steps, then a
rerun to 10, equal 10 steps in one go bit for bit when the factory is
deterministic. The checkpoint records a CRC-32 of the last batch consumed; a
factory that yields other data on replay is a ``CheckpointError``, and the
checkpoint is kept.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _eqx_helpers import assert_bit_identical, make_data, run_loop, tiny_loop

from pipekit_train import CheckpointError

DATA = make_data(96)


def _factory(seed: int):
    def make_iterator():
        rng = np.random.default_rng(seed)
        while True:  # an endless, seeded stream of single examples
            i = int(rng.integers(len(DATA["x"])))
            yield {"x": DATA["x"][i], "y": DATA["y"][i]}

    return make_iterator


def test_deterministic_factory_replays_to_the_same_bits(tmp_path: Path) -> None:
    straight, _ = run_loop(tiny_loop(dataset=_factory(1), max_steps=10))
    ckpt = str(tmp_path / "ckpt")
    run_loop(tiny_loop(dataset=_factory(1), max_steps=5, checkpoint_dir=ckpt))
    resumed, info = run_loop(tiny_loop(dataset=_factory(1), max_steps=10, checkpoint_dir=ckpt))
    assert info["resumed_from_step"] == 5
    assert_bit_identical(straight, resumed)


def test_factory_that_yields_other_data_on_replay_is_refused(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    run_loop(tiny_loop(dataset=_factory(1), max_steps=5, checkpoint_dir=str(ckpt)))
    with pytest.raises(CheckpointError, match="not deterministic"):
        run_loop(tiny_loop(dataset=_factory(2), max_steps=10, checkpoint_dir=str(ckpt)))
    assert sorted(p.name for p in ckpt.iterdir() if p.name.isdigit()) == ["5"]
