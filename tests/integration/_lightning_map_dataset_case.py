"""The contract kit's Lightning case with its data as a shuffled, mapped ``grain.MapDataset``.

The Lightning case's model (a dropout MLP, so the RNG stream matters as well as the data
order) on the same 96 generated rows, given as Grain's idiom
``MapDataset.source(records).shuffle(seed=5).map(fn)`` (float64 out, as a user's pipeline
makes it): the pipeline is read in its own order (decision 0198), 6 batches an epoch, so
the kit's 16 steps run over several of Grain's epochs. Every object field an import string,
so the kit can run it through ``pipekit-train run``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import grain

from pipekit_train import TrainingLoop

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lightning"))
from _lightning_contract import make_model, op_inputs  # noqa: E402, F401
from _lightning_helpers import data  # noqa: E402
from contract_cases import case, supervised_loop  # noqa: E402

CASE = case("lightning", __name__, bad_options={})


def _double(record: dict[str, Any]) -> dict[str, Any]:
    return {"x": record["x"].astype("float64") * 2.0, "y": record["y"]}


def make_data() -> grain.MapDataset:
    d = data()
    records = [{"x": d["x"][i], "y": d["y"][i]} for i in range(len(d["y"]))]
    return grain.MapDataset.source(records).shuffle(seed=5).map(_double)


def make_loop() -> TrainingLoop:
    return supervised_loop("lightning", __name__, backend_options={"accelerator": "cpu"})
