"""Resume policy, written once over any :class:`~._store.CheckpointStore`.

``backend_options["resume"]`` is one of :data:`RESUME_MODES`:

- ``"auto"`` (default): resume from the newest committed step whose fingerprint matches
  this run's; a differing fingerprint is a ``CheckpointError`` naming each field;
- ``"force"``: resume despite a differing fingerprint, with a warning naming the fields;
- ``"never"``: move the folder's steps into ``archived-<UTC time>/`` (``.1``, ``.2`` … if
  that name is taken; nothing deleted) and start fresh.

A newest step that cannot be read back (truncated, garbled, checksum mismatch) is
quarantined — renamed ``*.corrupt`` by the store, with a warning — and the next newest is
tried; a readable step that does not fit the run is never quarantined (the store raises
``CheckpointError``). The Orbax store and the torch-file store implement only the
mechanics; every backend's resume goes through :func:`resume_from_store`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal, TypeVar, cast

from .._warn import warn_user
from ..errors import CheckpointError, ConfigError
from ..fingerprint import OVERRIDE_HINT, check_fingerprint, unverifiable_message
from ._store import CheckpointStore, StepUnreadable, free_name, utc_stamp

__all__ = [
    "RESUME_MODES",
    "ResumeMode",
    "STRUCTURE_HINT",
    "archive_checkpoints",
    "check_resume_guard",
    "parse_resume",
    "quarantine_step",
    "resume_from_store",
]

#: The values of ``backend_options["resume"]``: the one list every backend checks against.
RESUME_MODES: Final[tuple[str, ...]] = ("auto", "force", "never")

ResumeMode = Literal["auto", "force", "never"]

#: What to do when a checkpoint holds another model's structure.
STRUCTURE_HINT: Final = (
    'Start fresh with backend_options={"resume": "never"} (old checkpoints are moved aside) '
    "or use a new checkpoint_dir."
)

ResultT = TypeVar("ResultT")


def parse_resume(value: object = "auto", *, field: str = "backend_options.resume") -> ResumeMode:
    """``value`` as a resume mode, or a ``ConfigError`` naming ``field`` and the choices."""
    if not isinstance(value, str) or value not in RESUME_MODES:
        raise ConfigError(
            f"{field} must be one of {list(RESUME_MODES)}, got {value!r}.", field=field
        )
    return cast(ResumeMode, value)


def check_resume_guard(
    saved: Mapping[str, Any], current: Mapping[str, Any], *, mode: ResumeMode, where: str
) -> None:
    """Refuse (``CheckpointError``) or, under ``"force"``, warn about resuming ``where``.

    Two reasons: the saved fingerprint differs from this run's (each field named), or
    this run's fingerprint lists what it could not derive an identity for.
    """
    warning = check_fingerprint(saved, current, resume=mode, where=where)
    if warning is not None:
        warn_user(warning)
    blind = unverifiable_message(current, where)
    if blind is not None:
        if mode != "force":
            raise CheckpointError(blind + "\n" + OVERRIDE_HINT)
        warn_user(blind + '\nResuming anyway (backend_options={"resume": "force"}).')


def quarantine_step(store: CheckpointStore[Any], step: int, why: BaseException | str) -> Path:
    """Rename a damaged step aside through the store (never delete) and say so."""
    moved = store.quarantine(step)
    warn_user(
        f"Checkpoint step {step} in {store.directory} is corrupted or truncated ({why}); "
        f"moved it to {moved.name} and falling back to the next newest step."
    )
    return moved


def archive_checkpoints(store: CheckpointStore[Any]) -> Path | None:
    """``resume="never"``: move the store's entries into a new ``archived-<UTC time>/``.

    The name gets ``.1``, ``.2`` … when taken (two archives in the same microsecond, or a
    user folder of that name), so an archive never merges into another. ``None`` (and no
    warning) when there was nothing to move.
    """
    into = free_name(store.directory / f"archived-{utc_stamp()}")
    moved = store.archive(into)
    if not moved:
        return None
    warn_user(
        f'backend_options={{"resume": "never"}}: moved {moved} existing checkpoint '
        f"entries of {store.directory} to {into.name}/ (nothing deleted); starting fresh."
    )
    return into


def resume_from_store(
    store: CheckpointStore[ResultT],
    template: Any,
    *,
    mode: str,
    fingerprint: Mapping[str, Any],
) -> ResultT | None:
    """The step to resume from, loaded, or ``None`` for a fresh start.

    ``never`` archives and returns ``None``. Otherwise the steps are tried newest first:
    the meta is read (no arrays), the resume guard checked against ``fingerprint``, then
    the step loaded into ``template``; a step the store cannot read back is quarantined
    and the next tried. A fingerprint or structure mismatch raises ``CheckpointError``.
    """
    resume = parse_resume(mode)
    if resume == "never":
        archive_checkpoints(store)
        return None
    quarantined = False
    for step in reversed(store.steps()):
        try:
            meta = store.read_meta(step)
            where = f"at step {step} in {store.directory}"
            check_resume_guard(meta.get("fingerprint", {}), fingerprint, mode=resume, where=where)
            return store.load(step, template)
        except StepUnreadable as e:
            quarantine_step(store, step, e)
            quarantined = True
    if quarantined:
        warn_user(f"No readable checkpoint left in {store.directory}; starting from scratch.")
    return None
