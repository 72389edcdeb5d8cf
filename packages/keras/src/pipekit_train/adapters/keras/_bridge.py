"""Drive pipekit callbacks, evaluation and checkpoints from inside Keras' ``fit``.

A ``keras.callbacks.CallbackList`` subclass is handed to ``fit``. After each step it
only keeps that step's loss (a device array, no host transfer); at a host event —
every ``log_every_n_steps``, ``eval_every_n_steps``, ``Checkpoint.every_n_steps``,
a callback's ``every_n_steps``, ``max_steps``, or a SIGTERM / first Ctrl-C — it
fetches the window in one transfer and runs the order of ``docs/architecture.md``:
``on_step_end`` → evaluation → ``on_eval_end`` → checkpoint → ``on_checkpoint`` →
stop. A callback overriding ``on_train_batch_end`` would make Keras convert the logs
to Python floats after every step (a device sync, ~15 % slower on the digits MLP);
this avoids it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from pipekit_train.callbacks import Callback, Checkpoint, LogToExperiment
from pipekit_train.carry import TrainerCarryState

from ._signals import SignalFlag
from ._state import capture_state

__all__ = ["event_intervals", "make_bridge", "make_last_value_metric"]


def event_intervals(loop: Any) -> list[int]:
    """Every cadence that makes a host event (as the core driver places them)."""
    intervals = [loop.log_every_n_steps]
    if loop.eval_every_n_steps:
        intervals.append(loop.eval_every_n_steps)
    ckpt = loop.checkpoint_callback
    if ckpt is not None and loop.checkpoint_dir is not None:
        intervals.append(ckpt.every_n_steps)
    for cb in loop.callbacks:
        n = getattr(cb, "every_n_steps", None)
        if n and not isinstance(cb, Checkpoint):
            intervals.append(int(n))
    return sorted(set(intervals))


def make_last_value_metric(keras: Any) -> Any:
    """A metric holding the last step's loss, to replace Keras' running-mean tracker.

    Keras logs the *epoch's running mean* of the loss; pipekit callbacks see each
    step's own value (``state.window``), as on every other backend.
    """

    class LastValue(keras.metrics.Metric):  # type: ignore[misc, name-defined]
        def __init__(self, name: str = "loss") -> None:
            super().__init__(name=name)
            self._last = self.add_variable(shape=(), initializer="zeros", name="last")

        def update_state(self, values: Any, sample_weight: Any = None) -> None:
            self._last.assign(keras.ops.cast(values, self._last.dtype))

        def result(self) -> Any:
            return self._last.value

        def reset_state(self) -> None:
            self._last.assign(0.0)

    return LastValue()


def _json_floats(values: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        try:
            out[key] = float(value) if value is not None else None
        except (TypeError, ValueError):
            warnings.warn(f"metric {key!r} is not a number; not checkpointed", stacklevel=2)
    return out


def build_callbacks(loop: Any, is_primary: bool = True) -> tuple[list[Callback], Any]:
    """The loop's writer (as ``LogToExperiment``, first) then ``loop.callbacks``."""
    callbacks: list[Callback] = []
    writer = None
    if loop.metric_writer is not None and is_primary:
        from pipekit_train.writers import resolve_writer

        writer = resolve_writer(loop.metric_writer)
        callbacks.append(LogToExperiment(writer))
    callbacks.extend(cb for cb in loop.callbacks if isinstance(cb, Callback))
    return callbacks, writer


def make_bridge(
    keras: Any,
    *,
    loop: Any,
    model: Any,
    state: TrainerCarryState,
    callbacks: list[Callback],
    evaluate: Callable[[], dict[str, float]] | None,
    checkpointer: Any,
    fingerprint: dict[str, Any],
    signals: SignalFlag,
    start_step: int,
    rates: Callable[[list[int]], list[float]] | None = None,
) -> Any:
    """The ``CallbackList`` passed to ``fit`` (see the module docstring)."""
    import jax

    intervals = event_intervals(loop)
    ckpt_cb = loop.checkpoint_callback if checkpointer is not None else None

    class Bridge(keras.callbacks.CallbackList):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__([], add_history=True, add_progbar=False, model=model)
            self.pending: list[tuple[int, Any]] = []
            self.eval_metrics: dict[str, float] = {}
            self.last_checkpoint: int | None = None

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            step = start_step + int(batch) + 1
            self.pending.append((step, logs))
            due = step >= loop.max_steps or any(step % n == 0 for n in intervals)
            if due or signals.received is not None:
                self._event(step)

        def _event(self, step: int) -> None:
            # 1. one transfer for the whole window
            host = jax.device_get([dict(logs or {}) for _, logs in self.pending])
            window: dict[str, list[float]] = {}
            for values in host:
                for name, value in values.items():
                    try:
                        window.setdefault(name, []).append(float(value))
                    except (TypeError, ValueError):
                        continue
            steps = [s for s, _ in self.pending]
            if rates is not None:
                window["lr"] = rates(steps)
            state.window = window
            state.window_steps = steps
            self.pending = []
            state.step = step
            for name, seq in window.items():
                if seq:
                    state.metrics[name] = seq[-1]
            final = step >= loop.max_steps
            # 2. step-end callbacks
            for cb in callbacks:
                cb.on_step_end(loop, state)
            # 3. evaluation
            eval_due = evaluate is not None and (
                final
                or (loop.eval_every_n_steps and step % loop.eval_every_n_steps == 0)
                or state.should_stop
            )
            if eval_due or (ckpt_cb is not None and signals.received is not None):
                model.jax_state_sync()
            if eval_due and evaluate is not None:
                self.eval_metrics = {f"val_{k}": float(v) for k, v in evaluate().items()}
                state.metrics.update(self.eval_metrics)
                for cb in callbacks:
                    cb.on_eval_end(loop, state, self.eval_metrics)
            if signals.received is not None and not state.should_stop:
                state.should_stop = True
                state.stop_reason = f"{signals.received}: checkpointed and stopped"
            # 4. checkpoint
            if ckpt_cb is not None and (
                step % ckpt_cb.every_n_steps == 0 or final or state.should_stop
            ):
                model.jax_state_sync()
                meta = {
                    "step": step,
                    "fingerprint": fingerprint,
                    "metrics": _json_floats(state.metrics),
                    "best": _json_floats(state.best),
                    "callbacks": [
                        cb.state_dict() if isinstance(cb, Callback) else {} for cb in loop.callbacks
                    ],
                }
                checkpointer.save(step, capture_state(model), None, meta)
                self.last_checkpoint = step
                for cb in callbacks:
                    cb.on_checkpoint(loop, state, step)
            # 5. stop
            if state.should_stop:
                model.stop_training = True

    return Bridge()
