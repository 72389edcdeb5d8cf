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
from pathlib import Path
from typing import Any

from .engine import inspect_checkpoints as _inspect_files
from .engine import locate_step, read_torch_state
from .engine._orbax_files import OrbaxFiles
from .engine._torch_files import TorchFiles

__all__ = ["inspect_checkpoints", "read_state"]


def inspect_checkpoints(
    directory: str | os.PathLike[str], *, verify: bool = False
) -> list[dict[str, Any]]:
    """One dict per step of ``directory`` (``pipekit_train.engine.inspect_checkpoints``'s
    rows, from the files alone), with ``verify`` every committed step's arrays checked too.

    ``verify`` recomputes the CRC-32 of every array of each committed Orbax step (its
    ``state`` and ``trace``, read through Orbax: jax is imported then) and compares it with
    the step's record; a Lightning step file is checked whole either way. Each row gains
    ``verified``: True (every record matches), False (the step is damaged: ``valid`` is
    False and ``error`` names each damaged array's folder) or None (not checked: the step
    is not committed, already invalid, or was written before checksums).
    """
    rows = _inspect_files(directory)
    if verify:
        for row in rows:
            _verify_row(row)
    return rows


def _verify_row(row: dict[str, Any]) -> None:
    row["verified"] = None
    if not row["valid"]:
        return
    if row["store"] == OrbaxFiles.kind:
        from .jax.checkpoint import verify_step

        checked, problem = verify_step(row["path"])
        if problem is not None:
            row.update(valid=False, verified=False, error=f"checksum mismatch: {problem}")
        elif checked:
            row["verified"] = True
    else:  # a torch step file: checked whole against its record with the meta already
        files = TorchFiles(Path(row["path"]).parent)
        row["verified"] = True if files.checksum_path(int(row["step"])).exists() else None


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
