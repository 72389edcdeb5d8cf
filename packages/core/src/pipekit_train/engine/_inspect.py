"""Reading a checkpoint folder of any backend: which store wrote it, its steps, its arrays.

The store kind is told from the folder's files (Orbax step folders ``<step>/``, or torch
step files ``step-<9 digits>.pt``), so ``pipekit-train inspect`` lists the steps and
meta of an Equinox, NumPyro, BlackJAX, Keras or Lightning run without importing jax or
torch. :func:`read_torch_state` reads a torch step's arrays (importing torch then) and
verifies them against the step's checksum first; reading an Orbax step's arrays needs JAX,
so it is ``pipekit_train.jax.checkpoint``'s, and ``pipekit_train.checkpoints.read_state``
reads either.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..errors import CheckpointError
from ._orbax_files import OrbaxFiles
from ._store import StepFiles, StepUnreadable, dir_size
from ._torch_files import TorchFiles

__all__ = [
    "open_checkpoint_files",
    "find_checkpoint_files",
    "inspect_checkpoints",
    "locate_step",
    "read_torch_state",
]

_STEP_FILE = re.compile(r"^step-(\d{9})\.pt$")

_KINDS: tuple[type[OrbaxFiles] | type[TorchFiles], ...] = (OrbaxFiles, TorchFiles)


def open_checkpoint_files(directory: str | os.PathLike[str]) -> StepFiles | None:
    """The store that wrote ``directory``'s checkpoints (as files), or ``None`` if none did.

    A folder holding both kinds' committed steps is a ``CheckpointError``: two runs of
    different backends share it, and a reader would pick one silently.
    """
    root = Path(directory).expanduser().absolute()
    if not root.is_dir():
        raise CheckpointError(f"checkpoint_dir {str(root)!r} does not exist or is not a directory.")
    found = [kind(root) for kind in _KINDS]
    with_steps = [f for f in found if f.steps()]
    if len(with_steps) > 1:
        raise CheckpointError(
            f"{root} holds checkpoints of two stores ({', '.join(f.kind for f in with_steps)}): "
            "give each run its own checkpoint_dir."
        )
    if with_steps:
        return with_steps[0]
    entries = [f for f in found if any(f.owns(p) for p in root.iterdir())]
    return entries[0] if entries else None


def find_checkpoint_files(run_dir: str | os.PathLike[str]) -> StepFiles | None:
    """The checkpoint store in ``run_dir`` or, failing that, in one of its sub-folders
    (a run folder whose checkpoint_dir is ``run_dir/checkpoints``)."""
    root = Path(run_dir)
    if not root.is_dir():
        return None
    try:
        here = open_checkpoint_files(root)
    except CheckpointError:  # two stores' steps: not one run's folder to read a trace from
        return None
    if here is not None and here.steps():
        return here
    for sub in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.isdigit()):
        try:
            files = open_checkpoint_files(sub)
        except CheckpointError:
            continue
        if files is not None and files.steps():
            return files
    return here


def inspect_checkpoints(directory: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """One dict per step (committed, quarantined or unfinished) for ``pipekit-train inspect``.

    Keys: ``step``, ``path``, ``store`` (``"orbax"`` or ``"torch-file"``), ``valid``,
    ``error`` (why not), ``meta`` (``None`` if unreadable; holds the fingerprint and
    metrics) and ``size_bytes``. Files only: no jax or torch import. A torch file is
    checked whole against its checksum (CRC-32 of the bytes); an Orbax step's meta against
    its record (the arrays are checked where they are read: ``checkpoints.read_state``). Writes
    nothing.
    """
    files = open_checkpoint_files(directory)
    if files is None:
        return []
    assert isinstance(files, (OrbaxFiles, TorchFiles))
    rows: list[dict[str, Any]] = []
    for step, path, why in files.entries():
        row: dict[str, Any] = {
            "step": step,
            "path": str(path),
            "store": files.kind,
            "valid": False,
            "error": why,
            "meta": None,
            "size_bytes": dir_size(path),
        }
        if why is None:
            if isinstance(files, OrbaxFiles):
                row["meta"], row["error"] = files.check(path)
            else:
                row["meta"], row["error"] = files.check(step)
                record = files.checksum_path(step)
                row["size_bytes"] += record.stat().st_size if record.exists() else 0
            row["valid"] = row["error"] is None
        rows.append(row)
    return rows


def locate_step(path: str | os.PathLike[str], step: int | None) -> tuple[StepFiles, int]:
    """The store and step that ``path`` names: a step folder or file, or a checkpoint_dir
    (then ``step``, default the newest committed one)."""
    p = Path(path).expanduser().absolute()
    if step is None and p.name.isdigit() and p.is_dir():
        return OrbaxFiles(p.parent), int(p.name)
    named = _STEP_FILE.match(p.name)
    if step is None and named is not None and p.is_file():
        return TorchFiles(p.parent), int(named.group(1))
    if not p.is_dir():
        raise CheckpointError(
            f"{str(p)!r} is not a readable checkpoint step folder (expected "
            "<checkpoint_dir>/<step>/ or <checkpoint_dir>/step-<9 digits>.pt)"
        )
    files = open_checkpoint_files(p)
    steps = files.steps() if files is not None else []
    if files is None or not steps:
        raise CheckpointError(f"no committed checkpoint in {p}")
    chosen = steps[-1] if step is None else int(step)
    if chosen not in steps:
        raise CheckpointError(f"no committed step {chosen} in {p}; it holds steps {steps}")
    return files, chosen


def read_torch_state(files: TorchFiles, step: int) -> dict[str, Any]:
    """The arrays of torch step file ``step`` by dotted name, its checksum verified:
    ``module.<name>``, ``ema.<name>`` and the tensors of ``optimizer`` / ``scheduler`` by
    their path in the state dict (torch imported now)."""
    try:
        payload = files.load_payload(files.verified_bytes(step))
    except StepUnreadable as e:
        raise CheckpointError(
            f"checkpoint step {step} in {files.directory} cannot be read: {e}"
        ) from None
    out: dict[str, Any] = {}
    for key in ("module", "optimizer", "scheduler", "ema"):
        _flatten_tensors(payload.get(key), key, out)
    return out


def _flatten_tensors(value: Any, prefix: str, out: dict[str, Any]) -> None:
    """Every tensor under ``value`` as a numpy array at its dotted path (bfloat16 as float32)."""
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten_tensors(v, f"{prefix}.{k}", out)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _flatten_tensors(v, f"{prefix}.{i}", out)
    elif hasattr(value, "detach") and hasattr(value, "numpy"):
        import torch

        tensor = value.detach().cpu()
        if tensor.dtype == torch.bfloat16:
            tensor = tensor.float()
        out[prefix] = tensor.numpy()
