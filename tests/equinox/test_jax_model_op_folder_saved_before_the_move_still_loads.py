"""A folder written by ``pipekit_train.jax.ops.JaxModelOp`` (before it moved into
pipekit-train-equinox) loads with the class at its new place, giving the same outputs."""

from __future__ import annotations

import json
from pathlib import Path

import equinox as eqx
import jax
import numpy as np

from pipekit_train.adapters.equinox import JaxModelOp


def test_an_op_json_naming_the_old_class_loads(tmp_path: Path) -> None:
    module = eqx.nn.MLP(3, 2, 4, 1, key=jax.random.PRNGKey(0))
    folder = tmp_path / "op"
    JaxModelOp(module).save(folder)
    meta_path = folder / "op.json"
    meta = json.loads(meta_path.read_text())
    assert meta["op_class"] == "pipekit_train.adapters.equinox:JaxModelOp"
    meta["op_class"] = "pipekit_train.jax.ops:JaxModelOp"  # what the old class wrote
    meta_path.write_text(json.dumps(meta))

    skeleton = eqx.nn.MLP(3, 2, 4, 1, key=jax.random.PRNGKey(1))
    loaded = JaxModelOp.load(folder, like=skeleton)
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(np.asarray(loaded(x)), np.asarray(JaxModelOp(module)(x)))
