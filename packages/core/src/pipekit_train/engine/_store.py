"""The checkpoint store: the mechanics of one checkpoint folder, apart from resume policy.

A store saves a step, loads one back, lists the committed steps, reads a step's JSON meta
without loading its arrays, quarantines a damaged step and moves the folder's steps into
an archive. It decides nothing: which step to resume, what to do with a damaged one and
when to archive is :mod:`._resume`'s policy, written once for every store.

Two stores exist: Orbax step folders (``pipekit_train.jax.checkpoint.Checkpointer``, used
by every JAX backend and Keras) and ``torch.save`` step files (the Lightning backend's
``TorchFileStore``). Their file layouts are described in core without jax or torch
(:mod:`._orbax_files`, :mod:`._torch_files`), so ``pipekit-train inspect`` reads either
folder on any install. :class:`StepFiles` holds the file moves they share.
"""

from __future__ import annotations

import datetime
import os
import tempfile
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, TypeVar

from ..errors import CheckpointError

__all__ = [
    "CheckpointStore",
    "StepFiles",
    "StepUnreadable",
    "StoreKind",
    "dir_size",
    "ensure_writable",
    "free_name",
    "utc_stamp",
]

#: The store kinds, named as ``inspect`` reports them.
StoreKind = Literal["orbax", "torch-file"]

ResultT_co = TypeVar("ResultT_co", covariant=True)


class StepUnreadable(Exception):
    """A committed step that cannot be read back (truncated, garbled, checksum mismatch).

    Internal: a store raises it, the resume policy quarantines the step and tries the
    next newest. A readable step that does not fit the run raises ``CheckpointError``.
    """


class CheckpointStore(Protocol[ResultT_co]):
    """What the resume policy and the tools need from a checkpoint folder (mechanics only)."""

    kind: ClassVar[str]
    directory: Path

    def steps(self) -> list[int]:
        """Committed steps, oldest first."""
        ...

    def read_meta(self, step: int) -> dict[str, Any]:
        """Step ``step``'s JSON meta, checked against its checksum record, no arrays read.

        Raises :class:`StepUnreadable` when it cannot be read or its record disagrees.
        """
        ...

    def load(self, step: int, template: Any) -> ResultT_co:
        """Step ``step`` restored (into ``template`` where the store needs one), verified.

        :class:`StepUnreadable` for damage; ``CheckpointError`` for a readable step that
        does not fit the run (another model's structure).
        """
        ...

    def save(
        self, step: int, state: Any, meta: dict[str, Any], trace: dict[str, Any] | None = None
    ) -> Any:
        """Write step ``step`` (state, meta and trace) as one atomic commit."""
        ...

    def quarantine(self, step: int) -> Path:
        """Rename step ``step`` out of the store's view (never delete); return its new path."""
        ...

    def archive(self, into: Path) -> int:
        """Move every entry of this store into the new folder ``into``; return how many."""
        ...


def free_name(path: Path) -> Path:
    """``path`` itself, or ``path.1``, ``path.2``, … whichever does not exist yet."""
    candidate, i = path, 0
    while candidate.exists():
        i += 1
        candidate = path.with_name(f"{path.name}.{i}")
    return candidate


def utc_stamp() -> str:
    """The current UTC time to the microsecond, for archive names."""
    return datetime.datetime.now(tz=datetime.UTC).strftime("%Y%m%dT%H%M%S%fZ")


def dir_size(path: Path) -> int:
    """Bytes of a file, or of every file under a folder."""
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def ensure_writable(directory: Path) -> None:
    """Create ``directory`` if needed and prove it is writable, leaving nothing behind."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if not directory.is_dir():
            raise NotADirectoryError(f"{directory} exists and is not a directory")
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as e:
        raise CheckpointError(
            f"TrainingLoop.checkpoint_dir {str(directory)!r} is not a writable directory: "
            f"{e.strerror or e}. Choose a directory you can write to."
        ) from None


class StepFiles:
    """The file moves every store shares: quarantine a step, archive the folder.

    A subclass names its layout: :meth:`committed_step`, :meth:`step_paths` (the files or folders
    of one step, the main one first) and :meth:`owns` (whether an entry of the folder is
    the store's, so ``archive`` moves it). Only the primary process renames
    (:meth:`is_primary`); :meth:`barrier` lets the others see it; :meth:`moved` runs after
    any move (a store with a cache of the folder reloads it). User files are never moved.
    """

    kind: ClassVar[str] = ""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory).expanduser().absolute()

    # layout ------------------------------------------------------------------------
    def steps(self) -> list[int]:
        """Committed steps, oldest first."""
        if not self.directory.is_dir():
            return []
        found = (self.committed_step(p) for p in self.directory.iterdir())
        return sorted(s for s in found if s is not None)

    def committed_step(self, entry: Path) -> int | None:
        """The step of a committed step's entry of the folder, ``None`` for any other."""
        raise NotImplementedError

    def step_paths(self, step: int) -> list[Path]:
        raise NotImplementedError

    def owns(self, entry: Path) -> bool:
        raise NotImplementedError

    def read_meta(self, step: int) -> dict[str, Any]:
        """Step ``step``'s JSON meta, checked, no arrays read (:class:`StepUnreadable`)."""
        raise NotImplementedError

    def entries(self) -> list[tuple[int, Path, str | None]]:
        """``(step, path, why not committed)`` of every step entry, for ``inspect``."""
        raise NotImplementedError

    def describe(self, step: int) -> str:
        """Where step ``step`` is, for messages."""
        return f"at step {step} in {self.directory}"

    # processes -----------------------------------------------------------------------
    def is_primary(self) -> bool:
        return True

    def barrier(self, name: str) -> None:
        return None

    def moved(self) -> None:
        return None

    # moves ---------------------------------------------------------------------------
    def quarantine(self, step: int) -> Path:
        """Rename step ``step``'s files to ``<name>.corrupt`` (``.corrupt.1`` … if taken)."""
        paths = [p for p in self.step_paths(step) if p.exists()]
        suffix, i = ".corrupt", 0
        while any(p.with_name(p.name + suffix).exists() for p in paths):
            i += 1
            suffix = f".corrupt.{i}"
        if self.is_primary():
            for p in paths:
                os.replace(p, p.with_name(p.name + suffix))
        self.barrier(f"pipekit_quarantine_{step}")
        self.moved()
        main = self.step_paths(step)[0]
        return main.with_name(main.name + suffix)

    def archive(self, into: Path) -> int:
        """Move every entry the store owns into ``into`` (created); nothing else moves."""
        self.barrier("pipekit_archive_list")  # every process lists before process 0 moves
        entries = [p for p in self.directory.iterdir() if self.owns(p)]
        if not entries:
            return 0
        if self.is_primary():
            into.mkdir()
            for p in entries:
                os.replace(p, into / p.name)
        self.barrier("pipekit_archive")
        self.moved()
        return len(entries)
