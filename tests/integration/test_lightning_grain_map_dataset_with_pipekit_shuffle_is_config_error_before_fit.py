"""``backend_options.shuffle=True`` with a ``grain.MapDataset`` on Lightning is core's
``ConfigError`` (decision 0198), raised before ``Trainer.fit``.

A Grain pipeline is read in its own order, so pipekit's shuffle would silently not happen:
the option is refused by name, saying to shuffle in the pipeline — core's
``refuse_shuffle_option``, as on Equinox, not Lightning's "no Trainer option 'shuffle'"
(Lightning has no such option, so ``shuffle=False`` is that error, as it always was).
Needs Grain beside torch, so it lives here (tests/lightning's session has no Grain).
"""

from __future__ import annotations

import sys
from pathlib import Path

import grain
import pytest

from pipekit_train import ConfigError

# The lightning tests' loop and their guard on Trainer.fit.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lightning"))
from _lightning_helpers import data, loop, no_fit  # noqa: E402, F401


@pytest.mark.usefixtures("no_fit")
def test_pipekit_shuffle_beside_a_map_dataset_is_refused_before_fit(tmp_path: Path) -> None:
    d = data(32)
    records = [{"x": d["x"][i], "y": d["y"][i]} for i in range(32)]
    dataset = grain.MapDataset.source(records).shuffle(seed=1)
    run = loop(
        dataset=dataset,
        checkpoint_dir=str(tmp_path / "ckpt"),
        backend_options={"accelerator": "cpu", "shuffle": True},
    )
    want = r"contradicts TrainingLoop\.dataset, a grain\.MapDataset.*ds\.shuffle\(seed="
    with pytest.raises(ConfigError, match=want) as e:
        run.run()
    assert e.value.field == "backend_options.shuffle"
    assert not (tmp_path / "ckpt").exists()
