"""Batch-norm CNN runs on simulated CPU devices, for the data-parallel batch-norm test.

Usage (``XLA_FLAGS=--xla_force_host_platform_device_count=4``):
    python _bn_sharding_worker.py OUT_DIR

Runs ``examples/digits_cnn.py``'s CNN (4 channels) for 20 SGD steps (lr 0.1; adam
would turn the pre-batch-norm conv biases' zero-mean rounding noise into
lr-sized steps), batch 32, four
ways: one device, and a 4-device data-parallel mesh (``steps_per_call=5``), each
with and without ``accumulate_steps=2``. Writes ``<name>.npz`` (trained weights,
batch-norm state, predictions on 64 test images) and ``results.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import numpy as np
from _cnn_example import digits_cnn
from jax.sharding import Mesh, PartitionSpec

from pipekit_train.adapters.equinox import ShardingSpec


def main() -> None:
    out = Path(sys.argv[1])
    spec = ShardingSpec(
        mesh=Mesh(np.array(jax.devices()[:4]), ("data",)),
        model_pspec=PartitionSpec(),
        data_pspec=PartitionSpec("data"),
    )
    x_test = digits_cnn.load_split("test")["x"][:64]
    results: dict = {"device_count": jax.device_count()}
    for name, sharding, acc in (
        ("single", None, 1),
        ("dp", spec, 1),
        ("single_acc", None, 2),
        ("dp_acc", spec, 2),
    ):
        loop = digits_cnn.make_loop(
            model_op=digits_cnn.make_model(channels=4),
            batch_size=32,
            max_steps=20,
            accumulate_steps=acc,
            val_dataset=None,
            eval_every_n_steps=None,
            sharding=sharding,
            optimizer_config={"name": "sgd", "lr": 0.1},
            backend_options={"steps_per_call": 5},
        )
        op, info = loop.run()
        arrays = {
            f"w{i}": np.asarray(a) for i, a in enumerate(jax.tree_util.tree_leaves(op.module))
        }
        arrays.update(
            {f"s{i}": np.asarray(a) for i, a in enumerate(jax.tree_util.tree_leaves(op.state))}
        )
        arrays["prediction"] = np.asarray(op(x_test))
        np.savez(out / f"{name}.npz", **arrays)
        results[name] = {"sharding": info["sharding"], "final_step": info["final_step"]}
    (out / "results.json").write_text(json.dumps(results))


if __name__ == "__main__":
    main()
