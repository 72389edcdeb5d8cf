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

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pipekit_train._checksum import ChecksumMismatch, json_checksum
from pipekit_train.engine._orbax_files import OrbaxFiles
from pipekit_train.engine._resume import (
    RESUME_MODES,
    STRUCTURE_HINT,
    parse_resume,
    resume_from_store,
)
from pipekit_train.engine._store import StepUnreadable, ensure_writable
from pipekit_train.errors import BackendNotInstalledError, CheckpointError, ConfigError
from pipekit_train.fingerprint import OVERRIDE_HINT, fingerprint_diff, jsonable
from pipekit_train.jax._packing import (
    item_template,
    layout_shapes,
    leaf_names,
    pack,
    positional,
    unpack,
    unpack_by_path,
)
from pipekit_train.jax._save_thread import SaveThread

__all__ = [
    "RESUME_MODES",
    "Checkpointer",
    "checkpointer_for",
    "RestoreResult",
    "fingerprint_diff",
    "read_state",
    "read_trace",
    "verify_step",
]


#: The resume guard's hint (core's ``fingerprint.OVERRIDE_HINT``), kept under its old name.
_OVERRIDE_HINT = OVERRIDE_HINT


@dataclass(frozen=True)
class RestoreResult:
    """What :meth:`Checkpointer.restore` found: the step, state, meta and trace."""

    step: int
    state: Any
    meta: dict[str, Any]
    trace: dict[str, Any] | None = None


class Checkpointer(OrbaxFiles):
    """One atomic Orbax checkpoint per step: ``state`` + JSON ``meta`` (+ ``trace``).

    The Orbax :class:`~pipekit_train.engine.CheckpointStore`: it saves, loads, lists and
    moves steps; which step a run resumes from (and quarantine, archive, the fingerprint
    check) is core's policy, :func:`pipekit_train.engine.resume_from_store`.

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
        super().__init__(directory)
        ensure_writable(self.directory)  # before anything else
        parse_resume(resume)
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
        #: The loop's plain-config digest (``_config_digest``), written into every meta so a
        #: finished run can be told from the files alone (``engine._preflight``).
        self.config_digest: str | None = None
        #: Runs Orbax's blocking save part off the caller's thread (._save_thread), in a
        #: single-process run with asynchronous saves; ``None`` saves on the caller's.
        self._thread: SaveThread | None = None
        self._mngr = self._make_manager()
        if async_save and _process_count() == 1:
            self._thread = SaveThread()

    def _settle(self) -> None:
        """Wait for a save handed to the save thread (raising its error) before using Orbax."""
        if self._thread is not None:
            self._thread.settle()

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
    kind: ClassVar[str] = "orbax"

    def steps(self) -> list[int]:
        """Committed steps, oldest first (Orbax's view of the folder)."""
        self._settle()
        return sorted(int(s) for s in self._mngr.all_steps())

    def all_steps(self) -> list[int]:
        return self.steps()

    def is_primary(self) -> bool:
        return _is_primary()

    def barrier(self, name: str) -> None:
        _barrier(name)

    def moved(self) -> None:
        self._settle()
        self._mngr.reload()

    def saving(self) -> bool:
        """Whether an asynchronous save is still being committed (on this process)."""
        if self._thread is not None and self._thread.busy():
            return True
        self._settle()
        return bool(self._mngr.is_saving_in_progress())

    def share_decision(self, decision: bool) -> bool:
        """Process 0's ``decision`` on every process (a save is collective); one process
        returns its own without a collective."""
        return _share_decision(decision)

    def latest_step(self) -> int | None:
        self._settle()
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
        The state is copied to host buffers here; with the save thread, Orbax's
        blocking part runs there, and its error is raised by the next call.
        """
        import numpy as np
        import orbax.checkpoint as ocp

        from pipekit_train.jax import _checksum_item

        step = int(step)
        self._settle()
        if step in self._mngr.all_steps():
            return False
        packed, layout = pack(state)
        extra: dict[str, Any] = {"layout": layout}
        if self.checksums:
            extra["checksums"] = _checksum_item.marker()
        if self.config_digest is not None:
            extra["config_digest"] = self.config_digest
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
        args = ocp.args.Composite(**items)
        if self._thread is not None:
            # What Orbax's own save does first, kept on this thread: the previous step has
            # committed when this one is handed off (a kill after ``on_checkpoint`` of
            # step N finds every earlier step durable). Instant unless saves overlap.
            self._mngr.wait_until_finished()
            self._thread.submit(self._orbax_save, step, args)
            return True
        return self._orbax_save(step, args)

    def _orbax_save(self, step: int, args: Any) -> bool:
        saved: bool = self._mngr.save(step, args=args, force=True)
        return saved

    def wait(self) -> None:
        """Block until pending asynchronous saves have committed."""
        self._settle()
        self._mngr.wait_until_finished()

    def close(self) -> None:
        """Wait for pending saves and release Orbax's resources."""
        try:
            if self._thread is not None:
                self._thread.close()
        finally:
            self._mngr.close()

    def __enter__(self) -> Checkpointer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- restore
    def restore(self, state_template: Any) -> RestoreResult | None:
        """Restore the step to resume from into ``state_template`` (core's resume policy).

        Returns None for a fresh start (no checkpoint, ``resume="never"``, or no
        readable step left). Corrupted steps are renamed ``<step>.corrupt`` with a
        warning and the next newest is tried. Raises :class:`CheckpointError` when
        the newest readable step belongs to a different run (fingerprint, unless
        ``resume="force"``) or does not fit the template's structure. The data
        iterator's position is in ``meta["data"]``; the trace (if any) comes back
        as numpy arrays.
        """
        self.wait()
        self._mngr.reload()
        return resume_from_store(
            self, state_template, mode=self.resume, fingerprint=self.fingerprint
        )

    def load(self, step: int, template: Any) -> RestoreResult:
        """Step ``step`` restored into ``template`` and verified against its checksums."""
        import jax
        import orbax.checkpoint as ocp

        self._settle()
        meta = self.raw_meta(step)
        records = self.records(step, meta)
        try:
            item_meta = self._mngr.item_metadata(step)
            saved_tree = item_meta["state"].tree
        except Exception as e:
            raise StepUnreadable(f"its state metadata is unreadable: {e}") from e
        layout = meta.get("layout")
        target = _restore_template(template)
        # A program's checkpoint from before its leaves were named by key path names them
        # by position ("00000", ...): read it by position into the named template.
        by_position = _by_position(
            [e["path"] for e in layout] if layout is not None else sorted(_flat_shapes(saved_tree)),
            target,
        )
        if layout is None:  # a checkpoint written before the state was packed
            if by_position:
                treedef = jax.tree_util.tree_structure(target)
                target = {f"{i:05d}": v for i, v in enumerate(jax.tree_util.tree_leaves(target))}
            _check_structure(step, _flat_shapes(saved_tree), target)
        else:
            if by_position:
                names = leaf_names(target)
                layout = [{**e, "path": n} for e, n in zip(layout, names, strict=True)]
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
                raise StepUnreadable(problem) from e
            raise CheckpointError(
                f"Checkpoint step {step} in {self.directory} is readable but cannot be restored "
                f"into this run's state: {type(e).__name__}: {e}"
            ) from e
        if records is not None:
            _verify(restored, records)
        state = restored["state"]
        if layout is not None:
            state = unpack(state, layout, _restore_template(template))
        elif by_position:
            state = jax.tree_util.tree_unflatten(treedef, [state[k] for k in sorted(state)])
        trace = _trace_from(restored["trace"], meta) if has_trace else None
        return RestoreResult(step=step, state=state, meta=meta, trace=trace)

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


def _verify(restored: Mapping[str, Any], records: Mapping[str, Any]) -> None:
    """Raise ``StepUnreadable`` unless the restored state (and trace) match their checksums."""
    from pipekit_train.jax import _checksum_item

    try:
        for item in ("state", "trace"):
            if item in restored:
                _checksum_item.verify_item(item, restored[item], records)
    except ChecksumMismatch as e:
        raise StepUnreadable(f"checksum mismatch: {e}") from e


def checkpointer_for(
    loop: Any, fingerprint: Mapping[str, Any], *, resume: str = "auto", async_save: bool = True
) -> Checkpointer | None:
    """The loop's ``Checkpointer`` (its ``checkpoint_dir`` and ``Checkpoint.keep_last``),
    or ``None`` when the loop does not checkpoint."""
    if loop.checkpoint_dir is None:
        return None
    from pipekit_train._config_digest import digest_of

    ckpt = loop.checkpoint_callback
    checkpointer = Checkpointer(
        loop.checkpoint_dir,
        keep_last=ckpt.keep_last if ckpt is not None else None,
        fingerprint=fingerprint,
        resume=resume,
        async_save=async_save,
    )
    checkpointer.config_digest = digest_of(loop)
    return checkpointer


def _trace_from(item: Mapping[str, Any], meta: Mapping[str, Any]) -> dict[str, Any]:
    """The trace as ``{name: host array}``, unpacked if it was written packed."""
    layout = meta.get("trace_layout")
    return dict(item) if layout is None else unpack_by_path(item, layout)


def read_trace(step_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The ``trace`` of one step folder as ``{name: host numpy array}``, or ``None``.

    For tools that read a sampler's draws from disk (``bayes`` plots) without a run. The
    draws are checked against the step's checksums (``CheckpointError`` if they differ).
    """
    step_dir = Path(step_dir)
    meta, records = _step_meta(step_dir)
    if not (step_dir / "trace").is_dir():
        return None
    item = _read_numpy_item(step_dir / "trace")
    _verify_read(step_dir, "trace", item, records)
    return _trace_from(item, meta)


def _step_meta(step_dir: Path) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The JSON meta of a finalised step folder and its checksum records (``None`` for a step
    from before checksums), or a ``CheckpointError`` saying what is wrong."""
    files = OrbaxFiles(step_dir.parent)
    try:
        meta = files.raw_meta(int(step_dir.name)) if step_dir.name.isdigit() else None
    except StepUnreadable as e:
        why: str = str(e)
        meta = None
    else:
        why = "not named by a step number"
    if meta is None:
        raise CheckpointError(
            f"{str(step_dir)!r} is not a readable checkpoint step folder (expected "
            f"<checkpoint_dir>/<step>/meta/metadata): {why}"
        )
    try:
        records = files.records(int(step_dir.name), meta)
    except StepUnreadable as e:
        raise CheckpointError(f"checkpoint step folder {str(step_dir)!r}: {e}") from None
    return meta, records


def _verify_read(
    step_dir: Path, item: str, values: Mapping[str, Any], records: Mapping[str, Any] | None
) -> None:
    """``CheckpointError`` unless an item read from ``step_dir`` matches its checksums."""
    from pipekit_train.jax import _checksum_item

    if records is None:
        return
    try:
        _checksum_item.verify_item(item, values, records)
    except ChecksumMismatch as e:
        raise CheckpointError(
            f"checkpoint step folder {str(step_dir)!r}: checksum mismatch: {e}"
        ) from None


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


def _process_count() -> int:
    import jax

    return int(jax.process_count())


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


def _share_decision(decision: bool) -> bool:
    """Broadcast process 0's boolean to every process (no-op on one process)."""
    import jax

    if jax.process_count() == 1:
        return bool(decision)
    import numpy as np
    from jax.experimental import multihost_utils

    return bool(multihost_utils.broadcast_one_to_all(np.asarray(decision, dtype=np.int32)))


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


def _by_position(saved: list[str], template: Any) -> bool:
    """Whether a checkpoint whose leaves are named ``saved`` is read by position into
    ``template``: it names them ``"00000"``, … (a program's checkpoint from before they were
    named by key path), the template does not, and they are as many."""
    import jax

    ours = leaf_names(template)
    return (
        positional(saved)
        and not positional(ours)
        and len(saved) == len(jax.tree_util.tree_leaves(template))
    )


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
        ours = dict(zip(leaf_names(template), jax.tree_util.tree_leaves(template), strict=True))
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
            f"{shown}\n{STRUCTURE_HINT}"
        )


def read_state(step_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``state`` of one step folder as host numpy arrays, by leaf name, without a template.

    Names are the leaves' dotted key paths in the saved state (``"model.layers.0.weight"``
    for a program's carry, ``"params.w"`` for a nested state; ``"00003"`` for a program's
    step written before leaves were named), in the state's leaf order, packed leaves
    unpacked; PRNG keys come back as their raw key data. For tests, debugging and tools
    that have no model to restore into; a run resumes through
    :meth:`Checkpointer.restore`. The arrays are checked against the step's checksums
    first (``CheckpointError`` naming the array if not).
    """
    import numpy as np
    import orbax.checkpoint as ocp

    step_dir = Path(step_dir)
    meta, records = _step_meta(step_dir)
    item = _read_numpy_item(step_dir / "state")
    if meta.get("layout") is not None:
        _verify_read(step_dir, "state", item, records)
    layout = meta.get("layout")
    if layout is None:
        return {".".join(k): np.asarray(v) for k, v in ocp.tree.to_flat_dict(item).items()}
    return unpack_by_path(item, layout)


def verify_step(step_dir: str | os.PathLike[str]) -> tuple[bool, str | None]:
    """``(checked, problem)``: every array of one step folder recomputed against its CRC record.

    Reads the ``state`` and ``trace`` items whole (as host numpy) and checks each array's
    records (every process's pieces). ``problem`` names each damaged array by its folder
    (``<step>/state/packed__float32``) and what differs, or is ``None``; ``checked`` is
    False for a step written before checksums (nothing to compare with). For
    ``pipekit-train inspect --verify``; a resume checks the same on restore.
    """
    from pipekit_train._checksum import verify_record
    from pipekit_train.jax import _checksum_item

    step_dir = Path(step_dir)
    try:
        _, records = _step_meta(step_dir)
    except CheckpointError as e:
        return False, str(e)
    if records is None:
        return False, None
    arrays: Mapping[str, Any] = records["arrays"]
    problems: list[str] = []
    for item in ("state", "trace"):
        folder = step_dir / item
        recorded = sorted(k for k in arrays if k.startswith(f"{item}/"))
        if not folder.is_dir():
            if recorded:
                problems.append(f"{folder}: missing, its arrays were recorded")
            continue
        try:
            values = _read_numpy_item(folder)
        except Exception as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            problems.append(f"{folder}: unreadable: {type(e).__name__}: {first}")
            continue
        for name, value in values.items():
            key = f"{item}/{name}"
            try:
                if key not in arrays:
                    raise ChecksumMismatch(f"{key}: no checksum was recorded for it")
                verify_record(key, arrays[key], _checksum_item._piece_reader(value))
            except ChecksumMismatch as e:
                problems.append(f"{step_dir / key}: {e}")
        for key in recorded:
            if key.split("/", 1)[1] not in values:
                problems.append(f"{step_dir / key}: recorded, but not in the step")
    return True, "; ".join(problems) or None
