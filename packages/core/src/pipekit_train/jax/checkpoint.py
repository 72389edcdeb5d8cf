"""Orbax glue: one atomic checkpoint per step, a resume guard, and fault handling.

Each step is ONE Orbax composite checkpoint with up to three items, committed
together by Orbax's tmp-dir + rename protocol (a SIGKILL at any moment leaves the
last committed step intact; nothing is written outside that commit):

- ``state``: the pytree of jax arrays (model, optimiser state, step, RNG key),
  its small leaves packed into one array per dtype (:mod:`._packing`: Orbax's
  cost is per array), restored sharding-aware onto the caller's template, which
  may be sharded differently from the run that saved it;
- ``meta``: a JSON dict (fingerprint, step, phase, metrics, best values,
  callback state, the data iterator's position, and the state's ``layout``);
- ``trace`` (when the program emits per-step outputs, e.g. draws): a dict of
  host numpy arrays with one row per collected step, restored as numpy.

Why the extra machinery around ``ocp.CheckpointManager``: a resume must refuse a
checkpoint of a different run (fingerprint guard), must survive a corrupted or
truncated latest step (quarantine it by renaming, fall back to an older one;
never delete), and must not mistake a model-structure mismatch for corruption
(a readable checkpoint is never quarantined).
"""

from __future__ import annotations

import datetime
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipekit_train._checksum import ChecksumMismatch, json_checksum
from pipekit_train._warn import warn_user
from pipekit_train.errors import BackendNotInstalledError, CheckpointError, ConfigError
from pipekit_train.fingerprint import (
    OVERRIDE_HINT,
    check_fingerprint,
    fingerprint_diff,
    jsonable,
    unverifiable_message,
)
from pipekit_train.jax._packing import (
    item_template,
    layout_shapes,
    pack,
    path_name,
    unpack,
    unpack_by_path,
)

__all__ = [
    "RESUME_MODES",
    "Checkpointer",
    "checkpointer_for",
    "RestoreResult",
    "fingerprint_diff",
    "inspect_checkpoints",
    "read_state",
    "read_trace",
]

RESUME_MODES = ("auto", "never", "force")
_OVERRIDE_HINT = OVERRIDE_HINT


@dataclass(frozen=True)
class RestoreResult:
    """What :meth:`Checkpointer.restore` found: the step, state, meta and trace."""

    step: int
    state: Any
    meta: dict[str, Any]
    trace: dict[str, Any] | None = None


def _ensure_writable(directory: Path) -> None:
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


def _utc_stamp() -> str:
    return datetime.datetime.now(tz=datetime.UTC).strftime("%Y%m%dT%H%M%S%fZ")


def _free_name(path: Path) -> Path:
    """``path`` itself, or ``path.1``, ``path.2``, … whichever does not exist yet."""
    candidate, i = path, 0
    while candidate.exists():
        i += 1
        candidate = path.with_name(f"{path.name}.{i}")
    return candidate


def _dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _is_step_dir(p: Path) -> bool:
    return p.is_dir() and p.name.isdigit()


def _is_orbax_leftover(p: Path) -> bool:
    """Entries Orbax or this module put in a checkpoint dir (moved aside by resume='never')."""
    name = p.name
    return (
        _is_step_dir(p)
        or ".orbax-checkpoint-tmp" in name
        or (name.split(".", 1)[0].isdigit() and ".corrupt" in name)
    )


class _Corrupt(Exception):
    """A step that cannot be read back (internal: triggers quarantine and fallback)."""


class Checkpointer:
    """One atomic Orbax checkpoint per step: ``state`` + JSON ``meta`` (+ ``trace``).

    ``keep_last`` (``None`` keeps all) is Orbax's ``max_to_keep``: old steps are
    only deleted after a newer one has committed, so at least one valid step
    always remains. ``resume`` is ``"auto"`` (resume if the fingerprint matches,
    else raise), ``"force"`` (resume despite a differing fingerprint, with a
    warning) or ``"never"`` (move existing checkpoints aside and start fresh).
    ``checksums=False`` writes steps without a checksum record, as versions before it
    did (for measuring their cost; such steps restore unverified). Restore verifies every
    step that has one either way.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        keep_last: int | None,
        fingerprint: Mapping[str, Any],
        resume: str = "auto",
        async_save: bool = True,
        checksums: bool = True,
    ) -> None:
        self.directory = Path(directory).expanduser().absolute()
        _ensure_writable(self.directory)  # before anything else
        if resume not in RESUME_MODES:
            raise ConfigError(
                f"backend_options.resume must be one of {list(RESUME_MODES)}, got {resume!r}.",
                field="backend_options.resume",
            )
        if keep_last is not None and (
            isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 1
        ):
            raise ConfigError(
                f"Checkpoint.keep_last must be a positive integer or None, got {keep_last!r}.",
                field="Checkpoint.keep_last",
            )
        self.keep_last = keep_last
        self.fingerprint: dict[str, Any] = jsonable(dict(fingerprint))
        self.resume = resume
        self.async_save = async_save
        self.checksums = checksums
        self._quarantined: list[Path] = []
        self._mngr = self._make_manager()

    def _make_manager(self) -> Any:
        try:
            import orbax.checkpoint as ocp

            from pipekit_train.jax import _checksum_item
        except ImportError as e:
            raise BackendNotInstalledError(
                f"pipekit_train.jax.checkpoint needs {getattr(e, 'name', None) or e!s} "
                "(not installed). Install core's JAX extra: pip install 'pipekit-train-core[jax]'"
            ) from e

        options = ocp.CheckpointManagerOptions(
            max_to_keep=self.keep_last,
            enable_async_checkpointing=self.async_save,
            # Unfinalised `<step>.orbax-checkpoint-tmp` dirs from a killed run are
            # never valid checkpoints; Orbax removes them on start-up.
            cleanup_tmp_directories=True,
            create=True,
            # Deleting the oldest step (keep_last) took ~1 ms per file here, ~20 ms a step:
            # a background thread does it (close() joins it); the newer step has committed
            # first, so a kill mid-delete leaves at most a damaged older step, quarantined on
            # restore like any unreadable one.
            enable_background_delete=True,
        )
        return ocp.CheckpointManager(
            self.directory,
            options=options,
            item_handlers={
                # Packed, the state is a few arrays: OCDBT's shared database costs more than it
                # saves there (~4 ms of CPU per save measured, see ._packing).
                "state": ocp.StandardCheckpointHandler(use_ocdbt=False),
                "meta": ocp.JsonCheckpointHandler(),
                # Packed as well: a few zarr arrays cost fewer files (and no OCDBT merge)
                # than an OCDBT database; old OCDBT traces still restore (format detected).
                "trace": ocp.PyTreeCheckpointHandler(use_ocdbt=False),
                # CRC-32 of every array of state and trace, computed in Orbax's commit thread
                # and committed with them (._checksum_item); restore verifies it.
                _checksum_item.ITEM: _checksum_item.ChecksumHandler(),
            },
        )

    # ---------------------------------------------------------------- queries
    def all_steps(self) -> list[int]:
        return sorted(self._mngr.all_steps())

    def latest_step(self) -> int | None:
        step = self._mngr.latest_step()
        return None if step is None else int(step)

    # ------------------------------------------------------------------- save
    def save(
        self,
        step: int,
        state: Any,
        meta: Mapping[str, Any],
        trace: Mapping[str, Any] | None = None,
    ) -> bool:
        """Start writing step ``step`` (asynchronously if ``async_save``).

        ``meta`` is stored with ``fingerprint`` and ``step`` added; ``trace`` (a
        dict of host arrays, one row per collected step) goes into the same
        commit. Returns False (and writes nothing) if the step already exists.
        """
        import numpy as np
        import orbax.checkpoint as ocp

        from pipekit_train.jax import _checksum_item

        step = int(step)
        if step in self._mngr.all_steps():
            return False
        packed, layout = pack(state)
        extra: dict[str, Any] = {"layout": layout}
        if self.checksums:
            extra["checksums"] = _checksum_item.marker()
        items: dict[str, Any] = {"state": ocp.args.StandardSave(packed)}
        described: dict[str, Any] = {"state": packed}
        if trace:
            packed_trace, extra["trace_layout"] = pack(
                {str(k): np.asarray(v) for k, v in trace.items()}
            )
            items["trace"] = ocp.args.PyTreeSave(packed_trace)
            described["trace"] = packed_trace
        full_meta = jsonable({**dict(meta), "fingerprint": self.fingerprint, "step": step, **extra})
        items["meta"] = ocp.args.JsonSave(full_meta)
        if self.checksums:  # the arrays' checksums are computed in Orbax's commit thread
            items[_checksum_item.ITEM] = _checksum_item.ChecksumSave(
                items=described, meta_checksum=json_checksum(full_meta)
            )
        saved: bool = self._mngr.save(step, args=ocp.args.Composite(**items), force=True)
        return saved

    def wait(self) -> None:
        """Block until pending asynchronous saves have committed."""
        self._mngr.wait_until_finished()

    def close(self) -> None:
        """Wait for pending saves and release Orbax's resources."""
        self._mngr.close()

    def __enter__(self) -> Checkpointer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- restore
    def restore(self, state_template: Any) -> RestoreResult | None:
        """Restore the newest usable step into ``state_template``.

        Returns None for a fresh start (no checkpoint, ``resume="never"``, or no
        readable step left). Corrupted steps are renamed ``<step>.corrupt`` with a
        warning and the next newest is tried. Raises :class:`CheckpointError` when
        the newest readable step belongs to a different run (fingerprint, unless
        ``resume="force"``) or does not fit the template's structure. The data
        iterator's position is in ``meta["data"]``; the trace (if any) comes back
        as numpy arrays.
        """
        self.wait()
        if self.resume == "never":
            self._archive_existing()
            return None
        self._mngr.reload()
        for step in sorted(self._mngr.all_steps(), reverse=True):
            try:
                result = self._restore_step(int(step), state_template)
            except _Corrupt as e:
                self._quarantine(int(step), e)
                continue
            return result
        if self._quarantined:
            warn_user(f"No readable checkpoint left in {self.directory}; starting from scratch.")
        return None

    def _restore_step(self, step: int, template: Any) -> RestoreResult:
        import orbax.checkpoint as ocp

        try:
            meta = self._mngr.restore(step, args=ocp.args.Composite(meta=ocp.args.JsonRestore()))[
                "meta"
            ]
            if not isinstance(meta, dict):
                raise ValueError(f"meta item is a {type(meta).__name__}, not a dict")
        except Exception as e:
            raise _Corrupt(f"its meta item is unreadable: {e}") from e
        records = self._checksum_records(step, meta)
        self._check_fingerprint(step, meta.get("fingerprint", {}))
        try:
            item_meta = self._mngr.item_metadata(step)
            saved_tree = item_meta["state"].tree
        except Exception as e:
            raise _Corrupt(f"its state metadata is unreadable: {e}") from e
        layout = meta.get("layout")
        target = _restore_template(template)
        if layout is None:  # a checkpoint written before the state was packed
            _check_structure(step, _flat_shapes(saved_tree), target)
        else:
            _check_structure(step, layout_shapes(layout), target, by_path=True)
            target = item_template(layout, target)
        items: dict[str, Any] = {"state": ocp.args.StandardRestore(target)}
        has_trace = (self.directory / str(step) / "trace").is_dir()
        if has_trace:
            items["trace"] = ocp.args.PyTreeRestore(restore_args=_numpy_restore_args(item_meta))
        try:
            restored = self._mngr.restore(step, args=ocp.args.Composite(**items))
        except CheckpointError:
            raise
        except Exception as e:
            problem = self._unreadable(step, saved_tree)
            if problem is not None:
                raise _Corrupt(problem) from e
            raise CheckpointError(
                f"Checkpoint step {step} in {self.directory} is readable but cannot be restored "
                f"into this run's state: {type(e).__name__}: {e}"
            ) from e
        if records is not None:
            self._verify(step, restored, records)
        state = restored["state"]
        if layout is not None:
            state = unpack(state, layout, _restore_template(template))
        trace = _trace_from(restored["trace"], meta) if has_trace else None
        return RestoreResult(step=step, state=state, meta=meta, trace=trace)

    def _checksum_records(self, step: int, meta: Mapping[str, Any]) -> dict[str, Any] | None:
        """The step's checksum records (``None`` for a step from before checksums), its meta
        checked against them; a missing, unreadable or mismatched record is ``_Corrupt``."""
        from pipekit_train.jax import _checksum_item

        marker = meta.get("checksums")
        try:
            records = _checksum_item.read_records(
                self.directory / str(step), marker if isinstance(marker, dict) else None
            )
            if records is not None and records["meta"] != json_checksum(meta):
                raise ChecksumMismatch("its meta item differs from the checksum recorded for it")
        except ChecksumMismatch as e:
            raise _Corrupt(f"checksum mismatch: {e}") from e
        return records

    def _verify(self, step: int, restored: Mapping[str, Any], records: Mapping[str, Any]) -> None:
        """Raise ``_Corrupt`` unless the restored state (and trace) match their checksums."""
        from pipekit_train.jax import _checksum_item

        try:
            for item in ("state", "trace"):
                if item in restored:
                    _checksum_item.verify_item(item, restored[item], records)
        except ChecksumMismatch as e:
            raise _Corrupt(f"checksum mismatch: {e}") from e

    def _check_fingerprint(self, step: int, saved: Mapping[str, Any]) -> None:
        where = f"at step {step} in {self.directory}"
        warning = check_fingerprint(saved, self.fingerprint, resume=self.resume, where=where)
        if warning is not None:
            warn_user(warning)
        blind = unverifiable_message(self.fingerprint, where)
        if blind is not None:
            if self.resume != "force":
                raise CheckpointError(blind + "\n" + OVERRIDE_HINT)
            warn_user(blind + '\nResuming anyway (backend_options={"resume": "force"}).')

    def _unreadable(self, step: int, saved_tree: Any) -> str | None:
        """Why step ``step`` cannot be read back at all (None if it reads fine as numpy)."""
        import jax
        import numpy as np
        import orbax.checkpoint as ocp

        step_dir = self.directory / str(step)
        try:
            restore_args = jax.tree.map(
                lambda _: ocp.RestoreArgs(restore_type=np.ndarray), saved_tree
            )
            with ocp.PyTreeCheckpointer() as ckptr:
                ckptr.restore(
                    step_dir / "state", args=ocp.args.PyTreeRestore(restore_args=restore_args)
                )
        except Exception as e:
            return f"its state item is unreadable: {type(e).__name__}: {e}"
        if (step_dir / "trace").is_dir():
            try:
                with ocp.PyTreeCheckpointer() as ckptr:
                    step_meta = ckptr.metadata(step_dir / "trace")
                    tree = getattr(step_meta, "item_metadata", step_meta).tree
                    args = jax.tree.map(lambda _: ocp.RestoreArgs(restore_type=np.ndarray), tree)
                    ckptr.restore(
                        step_dir / "trace", args=ocp.args.PyTreeRestore(restore_args=args)
                    )
            except Exception as e:
                return f"its trace item is unreadable: {type(e).__name__}: {e}"
        return None

    def _quarantine(self, step: int, error: BaseException) -> None:
        """Rename step ``step`` out of Orbax's view (``<step>.corrupt``); never delete."""
        src = self.directory / str(step)
        dst = _free_name(self.directory / f"{step}.corrupt")
        if _is_primary():
            src.rename(dst)
        _barrier(f"pipekit_quarantine_{step}")
        self._quarantined.append(dst)
        self._mngr.reload()
        warn_user(
            f"Checkpoint step {step} in {self.directory} is corrupted or truncated ({error}); "
            f"moved it to {dst.name} and falling back to the next newest step."
        )

    def _archive_existing(self) -> None:
        """``resume="never"``: move existing checkpoints into ``archived-<UTC time>/``."""
        entries = [p for p in self.directory.iterdir() if _is_orbax_leftover(p)]
        if not entries:
            return
        archive = _free_name(self.directory / f"archived-{_utc_stamp()}")
        if _is_primary():
            archive.mkdir()
            for p in entries:
                p.rename(archive / p.name)
        _barrier("pipekit_archive")
        self._mngr.reload()
        warn_user(
            f'backend_options={{"resume": "never"}}: moved {len(entries)} existing checkpoint '
            f"entries of {self.directory} to {archive.name}/ (nothing deleted); starting fresh."
        )


def checkpointer_for(
    loop: Any, fingerprint: Mapping[str, Any], *, resume: str = "auto", async_save: bool = True
) -> Checkpointer | None:
    """The loop's ``Checkpointer`` (its ``checkpoint_dir`` and ``Checkpoint.keep_last``),
    or ``None`` when the loop does not checkpoint."""
    if loop.checkpoint_dir is None:
        return None
    ckpt = loop.checkpoint_callback
    return Checkpointer(
        loop.checkpoint_dir,
        keep_last=ckpt.keep_last if ckpt is not None else None,
        fingerprint=fingerprint,
        resume=resume,
        async_save=async_save,
    )


def _trace_from(item: Mapping[str, Any], meta: Mapping[str, Any]) -> dict[str, Any]:
    """The trace as ``{name: host array}``, unpacked if it was written packed."""
    layout = meta.get("trace_layout")
    return dict(item) if layout is None else unpack_by_path(item, layout)


def read_trace(step_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The ``trace`` of one step folder as ``{name: host numpy array}``, or ``None``.

    For tools that read a sampler's draws from disk (``bayes`` plots) without a run.
    """
    step_dir = Path(step_dir)
    meta = _step_meta(step_dir)
    if not (step_dir / "trace").is_dir():
        return None
    return _trace_from(_read_numpy_item(step_dir / "trace"), meta)


def _step_meta(step_dir: Path) -> dict[str, Any]:
    """The JSON meta of a finalised step folder, or a ``CheckpointError`` saying what is wrong."""
    try:
        meta: dict[str, Any] = json.loads((step_dir / "meta" / "metadata").read_text())
    except (OSError, ValueError) as e:
        raise CheckpointError(
            f"{str(step_dir)!r} is not a readable checkpoint step folder (expected "
            f"<checkpoint_dir>/<step>/meta/metadata): {type(e).__name__}: {e}"
        ) from None
    return meta


def _read_numpy_item(item_dir: Path) -> dict[str, Any]:
    """One Orbax pytree item read back whole as host numpy arrays (no template needed)."""
    import jax
    import numpy as np
    import orbax.checkpoint as ocp

    with ocp.PyTreeCheckpointer() as ckptr:
        tree = ckptr.metadata(item_dir)
        tree = getattr(tree, "item_metadata", tree)
        tree = getattr(tree, "tree", tree)
        args = jax.tree.map(lambda _: ocp.RestoreArgs(restore_type=np.ndarray), tree)
        item: dict[str, Any] = ckptr.restore(
            item_dir, args=ocp.args.PyTreeRestore(restore_args=args)
        )
    return item


def _numpy_restore_args(item_meta: Any) -> Any:
    """Restore arguments that bring every trace array back as a host numpy array."""
    import jax
    import numpy as np
    import orbax.checkpoint as ocp

    tree = item_meta["trace"].tree
    return jax.tree.map(lambda _: ocp.RestoreArgs(restore_type=np.ndarray), tree)


def _is_primary() -> bool:
    """Only process 0 renames things on (shared) checkpoint storage."""
    import orbax.checkpoint as ocp

    return bool(ocp.multihost.process_index() == 0)


def _barrier(name: str) -> None:
    """Let every process see process 0's renames before going on (no-op on one process)."""
    import jax
    import orbax.checkpoint as ocp

    if jax.process_count() > 1:
        ocp.multihost.sync_global_processes(name)


def _restore_template(template: Any) -> Any:
    """``jax.ShapeDtypeStruct`` leaves carrying the sharding to restore onto."""
    import jax

    default = jax.sharding.SingleDeviceSharding(jax.local_devices()[0])

    def leaf(x: Any) -> Any:
        if isinstance(x, (jax.Array, jax.ShapeDtypeStruct)):
            sharding = getattr(x, "sharding", None) or default
            return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)
        return x

    return jax.tree.map(leaf, template)


def _flat_shapes(tree: Any) -> dict[str, tuple[int, ...]]:
    """Dotted key → shape of every leaf of an Orbax metadata or template tree."""
    import orbax.checkpoint as ocp

    return {
        ".".join(key): tuple(getattr(leaf, "shape", ()))
        for key, leaf in ocp.tree.to_flat_dict(tree).items()
    }


def _check_structure(
    step: int, saved: Mapping[str, tuple[int, ...]], template: Any, *, by_path: bool = False
) -> None:
    """Raise :class:`CheckpointError` if the template's leaves differ from the saved ones.

    ``saved`` maps each saved leaf's dotted name to its shape: from a packed
    state's layout (``by_path``: the template's names are its key paths) or from an
    unpacked state's Orbax metadata.
    """
    import jax
    import orbax.checkpoint as ocp

    if by_path:
        flat = jax.tree_util.tree_flatten_with_path(template)[0]
        ours = {path_name(path): leaf for path, leaf in flat}
    else:
        ours = {".".join(k): v for k, v in ocp.tree.to_flat_dict(template).items()}
    problems: list[str] = []
    for key in sorted(set(saved) - set(ours)):
        problems.append(f"  {key}: in the checkpoint, not in this run's state")
    for key in sorted(set(ours) - set(saved)):
        problems.append(f"  {key}: in this run's state, not in the checkpoint")
    for key in sorted(set(saved) & set(ours)):
        shape, t = saved[key], ours[key]
        t_dtype = getattr(t, "dtype", None)
        if t_dtype is None or jax.dtypes.issubdtype(t_dtype, jax.dtypes.prng_key):
            continue
        if tuple(shape) != tuple(t.shape):
            problems.append(
                f"  {key}: shape {tuple(shape)} in the checkpoint, {tuple(t.shape)} now"
            )
    if problems:
        shown = "\n".join(problems[:20]) + (
            f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else ""
        )
        raise CheckpointError(
            f"Checkpoint step {step} holds a different model/optimiser structure than this run:\n"
            f"{shown}\n{_STRUCTURE_HINT}"
        )


_STRUCTURE_HINT = (
    'Start fresh with backend_options={"resume": "never"} (old checkpoints are moved aside) '
    "or use a new checkpoint_dir."
)


def inspect_checkpoints(directory: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """One dict per step directory (plus quarantined ones) for ``pipekit-train inspect``.

    Keys: ``step``, ``path``, ``valid`` (meta, state metadata and data state all
    readable), ``error`` (why not), ``meta`` (``None`` if unreadable; holds the
    fingerprint and metrics) and ``size_bytes``. Reads only; writes nothing.
    """
    root = Path(directory).expanduser().absolute()
    if not root.is_dir():
        raise CheckpointError(f"checkpoint_dir {str(root)!r} does not exist or is not a directory.")
    rows: list[dict[str, Any]] = []
    candidates = [p for p in root.iterdir() if p.is_dir() and p.name.split(".", 1)[0].isdigit()]
    for p in sorted(candidates, key=lambda p: (int(p.name.split(".", 1)[0]), p.name)):
        row: dict[str, Any] = {
            "step": int(p.name.split(".", 1)[0]),
            "path": str(p),
            "valid": False,
            "error": None,
            "meta": None,
            "size_bytes": _dir_size(p),
        }
        if not _is_step_dir(p):
            row["error"] = (
                "incomplete (unfinalised)" if ".orbax-checkpoint-tmp" in p.name else "quarantined"
            )
        else:
            row["meta"], row["error"] = _inspect_step(p)
            row["valid"] = row["error"] is None
        rows.append(row)
    return rows


def read_state(step_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``state`` of one step folder as host numpy arrays, by leaf name, without a template.

    Names are the leaves' dotted key paths (``"00003"`` for a program's flat carry,
    ``"params.w"`` for a nested state), packed leaves unpacked; PRNG keys come back as
    their raw key data. For tests, debugging and tools that have no model to restore
    into; a run resumes through :meth:`Checkpointer.restore`.
    """
    import numpy as np
    import orbax.checkpoint as ocp

    step_dir = Path(step_dir)
    meta = _step_meta(step_dir)
    item = _read_numpy_item(step_dir / "state")
    layout = meta.get("layout")
    if layout is None:
        return {".".join(k): np.asarray(v) for k, v in ocp.tree.to_flat_dict(item).items()}
    return unpack_by_path(item, layout)


def _inspect_step(step_dir: Path) -> tuple[dict[str, Any] | None, str | None]:
    import logging

    import orbax.checkpoint as ocp

    # Orbax logs absl WARNINGs about files a reader does not need (e.g. a missing
    # _CHECKPOINT_METADATA in an item folder); inspect is read-only, so keep them quiet.
    absl_logger = logging.getLogger("absl")
    absl_level = absl_logger.level
    absl_logger.setLevel(logging.ERROR)
    try:
        return _read_step(step_dir, ocp)
    finally:
        absl_logger.setLevel(absl_level)


def _read_step(step_dir: Path, ocp: Any) -> tuple[dict[str, Any] | None, str | None]:
    """``(meta, error)`` of one finalised step folder; ``error`` is ``None`` if all reads."""
    meta: dict[str, Any] | None = None
    try:
        meta = json.loads((step_dir / "meta" / "metadata").read_text())
    except Exception as e:
        return None, f"meta unreadable: {type(e).__name__}: {e}"
    try:
        with ocp.PyTreeCheckpointer() as ckptr:
            if ckptr.metadata(step_dir / "state") is None:
                raise ValueError("no state metadata")
    except Exception as e:
        return meta, f"state unreadable: {type(e).__name__}: {e}"
    for f in sorted((step_dir / "data").glob("process_*.json")):
        try:
            json.loads(f.read_text())
        except Exception as e:
            return meta, f"data state unreadable: {type(e).__name__}: {e}"
    return meta, None
