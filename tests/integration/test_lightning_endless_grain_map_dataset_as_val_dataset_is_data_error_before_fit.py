"""An endless ``grain.MapDataset`` (``.repeat()``) as Lightning's ``val_dataset`` is a
``DataError`` naming the field and the fix, raised before ``Trainer.fit`` (decision 0198).

Training reads such a pipeline by index (its own order); the validation set is read from
start to end, as before, and an endless one would never finish. The same pipeline as the
training ``dataset`` trains (``test_lightning_grain_map_dataset_trains_in_its_own_order_like_
trainer_fit.py``). Needs Grain beside torch, so it lives here (tests/lightning's session has
no Grain).
"""

from __future__ import annotations

import sys
from pathlib import Path

import grain
import pytest

from pipekit_train.errors import DataError

# The lightning tests' loop and their guard on Trainer.fit.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lightning"))
from _lightning_helpers import data, loop, no_fit  # noqa: E402, F401


@pytest.mark.usefixtures("no_fit")
def test_endless_map_dataset_as_val_dataset_is_refused_before_fit() -> None:
    d = data(32)
    records = [{"x": d["x"][i], "y": d["y"][i]} for i in range(32)]
    endless = grain.MapDataset.source(records).shuffle(seed=1).repeat()
    with pytest.raises(DataError, match=r"val_dataset is an endless.*before \.repeat"):
        loop(val_dataset=endless).run()
