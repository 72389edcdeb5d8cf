"""Reading any backend's checkpoints without its model: the steps, and the saved arrays.

:func:`inspect_checkpoints` lists a ``checkpoint_dir``'s steps from its files alone (no jax
or torch import: the engine's). :func:`read_state` reads one step's arrays by dotted name,
verified against the step's checksums, importing the store's library then: an Orbax step
folder through ``pipekit_train.jax.checkpoint`` (core's ``[jax]`` extra), a Lightning
``step-*.pt`` file through torch. For tests, debugging and tools that have no model; a run
resumes through its backend's checkpointer. It sits above both the engine and the ``jax``
extra, since it reads what either wrote.
"""

from __future__ import annotations

import os
from typing import Any

from .engine import inspect_checkpoints, locate_step, read_torch_state
from .engine._orbax_files import OrbaxFiles
from .engine._torch_files import TorchFiles

__all__ = ["inspect_checkpoints", "read_state"]


def read_state(path: str | os.PathLike[str], step: int | None = None) -> dict[str, Any]:
    """The saved state of one step as host numpy arrays by dotted name, checksums verified.

    ``path`` is a step (an Orbax ``<dir>/<step>/`` folder or a ``step-<9 digits>.pt``
    file) or a checkpoint_dir (then ``step``, default the newest). Orbax: the state's
    leaves by key path (``pipekit_train.jax.checkpoint.read_state``). Torch files:
    ``module.<name>``, ``ema.<name>`` and the tensors of ``optimizer`` / ``scheduler`` by
    their path in the state dict. A step whose arrays differ from their checksums is a
    ``CheckpointError`` naming it.
    """
    files, chosen = locate_step(path, step)
    if isinstance(files, OrbaxFiles):
        from .jax.checkpoint import read_state as read_orbax_state

        return read_orbax_state(files.directory / str(chosen))
    assert isinstance(files, TorchFiles)
    return read_torch_state(files, chosen)
