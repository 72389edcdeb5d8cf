"""The contract kit's cases for this repository's backends, in one shape.

Each backend's ``_<backend>_contract.py`` names its case with :func:`case` and, for the
supervised backends (Equinox, Lightning, Keras), builds its loop with :func:`supervised_loop`:
the same 16 steps of batch 16, AdamW and ``cross_entropy`` on each backend's own tiny model
(``<module>:make_model``) and data (``<module>:make_data``), every object field an import
string so the kit can run it through ``pipekit-train run``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipekit_train import TrainingLoop
from pipekit_train.testing import BackendCase


def case(
    backend: str,
    module: str,
    *,
    bad_options: Mapping[str, Any],
    loop: str = "make_loop",
    **fields: Any,
) -> BackendCase:
    """``backend``'s case: its loop ``<module>:<loop>``, its operator's inputs
    ``<module>:op_inputs``, and the bad values of its own options."""
    return BackendCase(
        backend=backend,
        make_loop=f"{module}:{loop}",
        op_inputs=f"{module}:op_inputs",
        bad_options=dict(bad_options),
        **fields,
    )


def supervised_loop(backend: str, module: str, **fields: Any) -> TrainingLoop:
    """16 steps of ``<module>:make_model`` on ``<module>:make_data`` (batch 16, AdamW)."""
    return TrainingLoop(
        model_op=f"{module}:make_model",
        dataset=f"{module}:make_data",
        loss="cross_entropy",
        batch_size=16,
        max_steps=16,
        seed=3,
        optimizer_config={"name": "adamw", "lr": 1e-2},
        backend=backend,
        **fields,
    )
