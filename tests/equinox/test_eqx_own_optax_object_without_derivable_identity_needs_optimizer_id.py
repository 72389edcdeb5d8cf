"""An optax object whose identity cannot be derived trains, but resumes only once it is named.

The resume guard derives an optax object's identity from probe updates on a small
tree shaped like the model. An object that only works on the real shapes (here a
hand-written ``GradientTransformation`` that refuses leaves of fewer than 3
elements) cannot be probed: a fresh run trains, a rerun is refused with a
``CheckpointError`` that says how to name it (``backend_options.optimizer_id``).
Named, it resumes; a changed name is refused like any changed field. Nothing on
disk is lost along the way.
"""

from __future__ import annotations

from pathlib import Path

import jax
import optax
import pytest
from _eqx_helpers import run_loop, tiny_loop

from pipekit_train import CheckpointError


def _shape_bound_sgd(lr: float) -> optax.GradientTransformation:
    inner = optax.sgd(lr)

    def init(params):
        assert all(leaf.size >= 3 for leaf in jax.tree_util.tree_leaves(params)), "too small"
        return inner.init(params)

    return optax.GradientTransformation(init, inner.update)


def _steps(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if p.name.isdigit())


def test_unprobeable_object_resumes_only_when_named(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    _, info = run_loop(
        tiny_loop(optimizer_config=_shape_bound_sgd(1e-2), checkpoint_dir=str(ckpt), max_steps=5)
    )
    assert info["optimizer"]["identity_derived"] is False
    again = tiny_loop(optimizer_config=_shape_bound_sgd(1e-2), checkpoint_dir=str(ckpt))
    with pytest.raises(CheckpointError, match="optimizer_id") as err:
        run_loop(again)
    assert "could not be derived" in str(err.value)
    assert _steps(ckpt) == ["5"]

    named = tmp_path / "named"
    opts = {"optimizer_id": "shape-bound-sgd-1e-2"}
    run_loop(
        tiny_loop(
            optimizer_config=_shape_bound_sgd(1e-2),
            checkpoint_dir=str(named),
            max_steps=5,
            backend_options=opts,
        )
    )
    _, info = run_loop(
        tiny_loop(
            optimizer_config=_shape_bound_sgd(1e-2), checkpoint_dir=str(named), backend_options=opts
        )
    )
    assert info["resumed_from_step"] == 5 and info["final_step"] == 10
    renamed = tiny_loop(
        optimizer_config=_shape_bound_sgd(1e-2),
        checkpoint_dir=str(named),
        max_steps=20,
        backend_options={"optimizer_id": "shape-bound-sgd-1e-3"},
    )
    with pytest.raises(CheckpointError, match="optimizer_config"):
        run_loop(renamed)
    assert _steps(named) == ["10", "5"]
