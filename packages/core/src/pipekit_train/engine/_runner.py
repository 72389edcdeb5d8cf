"""The callback runner: pipekit callbacks and metric writers, driven from any loop.

The per-step driver uses it, and so does a backend that owns its loop
(Lightning's ``Trainer.fit``, Keras' ``fit``) from its library's own hooks. It
holds what every such loop needs and none should copy:

- construction: the loop's ``metric_writer`` wrapped as ``LogToExperiment``
  first, then ``TrainingLoop.callbacks`` in order; ``primary_only`` callbacks
  (progress, logging) are dropped on processes other than 0;
- ``reset`` of every callback at the start of a run, then, on resume, each
  callback's ``load_state_dict`` from the checkpoint's metadata (stored by
  position in ``TrainingLoop.callbacks``, so it lands on the same callback on
  every process and whether or not a writer is set);
- the order of hooks at a boundary (``step_end`` → ``eval_end`` →
  ``checkpoint_done``), and the checkpoint metadata (metrics, best values,
  callback state);
- teardown on every exit path: used as a context manager, an error runs each
  callback's ``on_exception`` and closes the writers, then re-raises the error
  unchanged; a normal end runs ``on_run_end`` (through :meth:`run_end`).

The bridge contract for loop-owning backends is in ``docs/architecture.md``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._warn import warn_user
from ..callbacks import Callback, LogToExperiment
from ..carry import TrainerCarryState
from ._report import finishing

if TYPE_CHECKING:
    from ..protocols import LoopView

__all__ = ["CallbackRunner"]


class CallbackRunner:
    """Runs the loop's callbacks and writer in the documented order (see module docstring)."""

    def __init__(
        self, loop: LoopView, *, is_primary: bool = True, hooks: Sequence[Callback] = ()
    ) -> None:
        self.loop = loop
        self.is_primary = is_primary
        self.callbacks: list[Callback] = []
        self.writer: Any = None
        self.run_dir: Any = None
        self._closed = False
        if loop.metric_writer is not None and is_primary:
            from ..writers import MultiWriter, resolve_writers, run_dir_for

            # Built here, before training starts: a bad log folder is a ConfigError now.
            self.run_dir = run_dir_for(loop)
            self.writer = MultiWriter(resolve_writers(loop.metric_writer, self.run_dir))
            self.callbacks.append(LogToExperiment(self.writer))
        for cb in loop.callbacks:
            if isinstance(cb, Callback) and (is_primary or not cb.primary_only):
                self.callbacks.append(cb)
        # The backend's own checks (``run_driver(hooks=...)``), after the user's: they see the
        # same host events and keep no state in the checkpoint.
        self.callbacks.extend(cb for cb in hooks if is_primary or not cb.primary_only)
        for cb in self._user_callbacks():
            cb.reset()

    def _user_callbacks(self) -> list[Callback]:
        return [cb for cb in self.loop.callbacks if isinstance(cb, Callback)]

    # ---------------------------------------------------------------- resume
    def restore(self, state: TrainerCarryState, meta: Mapping[str, Any]) -> None:
        """Put a checkpoint's metrics, best values and callback state back."""
        state.metrics = dict(meta.get("metrics", {}) or {})
        state.best = dict(meta.get("best", {}) or {})
        saved = list(meta.get("callbacks", []) or [])
        for cb, cb_state in zip(self.loop.callbacks, saved, strict=False):
            if cb_state and isinstance(cb, Callback):
                cb.load_state_dict(dict(cb_state))

    def checkpoint_meta(self, state: TrainerCarryState) -> dict[str, Any]:
        """The runner's part of a checkpoint's metadata (JSON-able)."""
        return {
            "step": state.step,
            "metrics": _json_floats(state.metrics),
            "best": _json_floats(state.best),
            "callbacks": [
                cb.state_dict() if isinstance(cb, Callback) else {} for cb in self.loop.callbacks
            ],
        }

    # ------------------------------------------------------------------ hooks
    def run_start(self, state: TrainerCarryState) -> None:
        for cb in self.callbacks:
            cb.on_run_start(self.loop, state)

    def step_end(self, state: TrainerCarryState) -> None:
        for cb in self.callbacks:
            cb.on_step_end(self.loop, state)

    def eval_end(self, state: TrainerCarryState, metrics: dict[str, float]) -> None:
        state.metrics.update(metrics)
        for cb in self.callbacks:
            cb.on_eval_end(self.loop, state, metrics)

    def checkpoint_done(self, state: TrainerCarryState, step: int) -> None:
        for cb in self.callbacks:
            cb.on_checkpoint(self.loop, state, step)

    def run_end(self, state: TrainerCarryState, info: dict[str, Any]) -> None:
        """The normal end: ``on_run_end`` of each callback, then the writers close.

        After the last step each is a named part of the ``"report"`` stage, so a failure
        here is a ``FinishError`` naming the callback (``engine._report.finishing``).
        """
        for cb in self.callbacks:
            with finishing("report", f"{type(cb).__name__}.on_run_end"):
                cb.on_run_end(self.loop, state, info)
        with finishing("report", "closing the metric writer"):
            self.close()

    # --------------------------------------------------------------- teardown
    def close(
        self, error: BaseException | None = None, state: TrainerCarryState | None = None
    ) -> None:
        """Teardown (idempotent). With ``error``, each callback's ``on_exception`` runs first.

        A failure inside teardown is reported as a warning, so the run's own error
        is what the caller sees.
        """
        if self._closed:
            return
        self._closed = True
        if error is not None:
            st = state if state is not None else TrainerCarryState()
            for cb in self.callbacks:
                try:
                    cb.on_exception(self.loop, st, error)
                except Exception as exc:  # noqa: BLE001 - never mask the run's error
                    warn_user(f"{type(cb).__name__}.on_exception failed during teardown: {exc!r}")
        if self.writer is not None:
            try:
                self.writer.close()
            except Exception as exc:  # noqa: BLE001
                if error is None:
                    raise
                warn_user(f"closing the metric writer failed: {exc!r}")

    def guard(self, state: TrainerCarryState) -> _Guard:
        """``with runner.guard(state):`` — teardown with ``on_exception`` if the body raises."""
        return _Guard(self, state)

    def __iter__(self) -> Iterator[Callback]:
        return iter(self.callbacks)


class _Guard:
    def __init__(self, runner: CallbackRunner, state: TrainerCarryState) -> None:
        self.runner = runner
        self.state = state

    def __enter__(self) -> CallbackRunner:
        return self.runner

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is not None:
            self.runner.close(exc, self.state)
        # a normal exit leaves closing to run_end (or the caller)


def _json_floats(values: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        try:
            out[key] = float(value) if value is not None else None
        except (TypeError, ValueError):
            warn_user(f"metric {key!r} is not a number, so it is not checkpointed")
    return out
