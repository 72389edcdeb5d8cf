"""NaN/inf in `dataset` or `val_dataset` stops the Equinox backend with a DataError naming the
field, key and row, before anything is compiled."""

from __future__ import annotations

import numpy as np
import pytest
from _eqx_helpers import make_data, run_loop, tiny_loop, watch_compilation

from pipekit_train import DataError


@pytest.mark.parametrize("field", ["dataset", "val_dataset"])
def test_nan_in_data_fails_before_compiling(monkeypatch, field: str) -> None:
    bad = make_data(40)
    bad["x"][5, 1] = np.nan
    overrides = {"dataset": make_data(40), field: bad}
    with watch_compilation(monkeypatch) as watch:
        with pytest.raises(DataError) as info:
            run_loop(tiny_loop(**overrides))
    assert not watch.anything, "the DataError came after the training step was compiled"
    assert f"TrainingLoop.{field}['x']" in str(info.value) and "row 5" in str(info.value)
