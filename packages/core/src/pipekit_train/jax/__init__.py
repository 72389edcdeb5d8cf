"""JAX helpers behind core's ``[jax]`` extra (``pip install 'pipekit-train-core[jax]'``).

Importing this package imports nothing from JAX; each name below is loaded
from its submodule on first access:

- ``resolve_optimizer``, ``current_learning_rate``, ``validate_optimizer_config``
  (``.optim``) — ``optimizer_config`` → optax;
- ``resolve_loss``, ``resolve_accuracy``, ``is_classification`` (``.losses``) —
  the JAX implementations of the loss names;
- ``own_optimizer`` — a user's own optax object as ``optimizer_config``, checked and given
  an identity for the resume guard;
- ``GrainBatchIterator`` (``.data``) — the engine's batch order read by Grain worker
  processes (the order itself, ``BatchSource`` / ``BatchIterator``, and the dataset
  forms are backend-neutral: :mod:`pipekit_train.engine`);
- ``Checkpointer``, ``checkpointer_for`` (``.checkpoint``) — the Orbax glue, with core's
  resume policy and guard (listing any backend's steps: ``pipekit_train.engine``);
- ``build_program``, ``run_program``, ``Program``, ``Phase`` (``.program``) — a backend's
  pure step → the driver's fused, donated, key-folded compiled calls, run;
- ``jax_backend_info`` (``.report``) — the run report of ``docs/run-report.md``;
- ``tree_structure_digest`` (``.structure``) — the resume guard's model digest;
- ``enable_compilation_cache``, ``use_compilation_cache`` (``.compile_cache``).

These are the names a backend outside this repository builds on (``docs/writing-a-backend.md``):
public and kept stable within a minor version of ``pipekit-train-core``.

``JaxModelOp`` moved to the Equinox distribution (``pipekit_train.adapters.equinox``):
asking for it here raises an ``AttributeError`` saying so, since core never imports
an adapter.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, str] = {
    "resolve_optimizer": "optim",
    "current_learning_rate": "optim",
    "validate_optimizer_config": "optim",
    "resolve_loss": "losses",
    "resolve_accuracy": "losses",
    "is_classification": "losses",
    "GrainBatchIterator": "data",
    "Checkpointer": "checkpoint",
    "checkpointer_for": "checkpoint",
    "enable_compilation_cache": "compile_cache",
    "use_compilation_cache": "compile_cache",
    "build_program": "program",
    "run_program": "program",
    "Program": "program",
    "Phase": "program",
    "jax_backend_info": "report",
    "own_optimizer": "_own_optax",
    "tree_structure_digest": "structure",
}

#: Names that lived here before and the module that holds them now.
_MOVED: dict[str, str] = {
    "JaxModelOp": "pipekit_train.adapters.equinox",
    "inspect_checkpoints": "pipekit_train.engine",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    submodule = _LAZY.get(name)
    if name in _MOVED:
        raise AttributeError(
            f"{name} moved to {_MOVED[name]}: write 'from {_MOVED[name]} import {name}'"
            + (" (pip install pipekit-train-equinox)" if "adapters" in _MOVED[name] else "")
        )
    if submodule is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{submodule}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
