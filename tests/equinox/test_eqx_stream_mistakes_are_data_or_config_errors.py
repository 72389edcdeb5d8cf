"""Streams: what cannot be honoured is named before compiling (issue 20).

- a Grain dataset already batched by ``.batch(n)`` (map-style or iterable) is a
  ``DataError`` naming it and the fix (pass it unbatched, ``batch_size=n``),
  instead of reading each batch as one example;
- a single-use iterator or generator is a ``DataError`` saying to pass a factory;
- ``backend_options.shuffle`` next to a stream contradicts the stream's own order:
  a ``ConfigError`` naming both;
- a stream that runs out before ``max_steps`` is a ``DataError`` naming the step.
"""

from __future__ import annotations

import grain
import pytest
from _eqx_helpers import make_data, run_loop, tiny_loop

from pipekit_train import ConfigError, DataError

DATA = make_data(48)
RECORDS = [{"x": DATA["x"][i], "y": DATA["y"][i]} for i in range(48)]


@pytest.mark.parametrize(
    "dataset",
    [
        grain.MapDataset.source(RECORDS).batch(8),
        grain.MapDataset.source(RECORDS).batch(8).map(lambda b: b),
        grain.MapDataset.source(RECORDS).batch(8).to_iter_dataset(),
    ],
    ids=["map-batched", "map-batched-then-mapped", "iter-batched"],
)
def test_prebatched_grain_dataset_is_named_with_the_fix(dataset) -> None:
    with pytest.raises(DataError, match=r"already batched by \.batch\(8\).*batch_size=8"):
        run_loop(tiny_loop(dataset=dataset))


def test_single_use_iterator_says_to_pass_a_factory() -> None:
    with pytest.raises(DataError, match="single-use iterator.*lambda"):
        run_loop(tiny_loop(dataset=iter(RECORDS)))


def test_shuffle_option_with_a_stream_names_both() -> None:
    stream = grain.MapDataset.source(RECORDS).repeat().to_iter_dataset()
    with pytest.raises(ConfigError, match="backend_options.shuffle contradicts") as info:
        run_loop(tiny_loop(dataset=stream, backend_options={"shuffle": False}))
    assert info.value.field == "backend_options.shuffle"


def test_stream_that_runs_out_names_the_step() -> None:
    with pytest.raises(DataError, match="ran out after 3 batches.*repeat it"):
        run_loop(tiny_loop(dataset=lambda: iter(RECORDS), max_steps=10))
