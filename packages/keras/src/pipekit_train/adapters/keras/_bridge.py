"""Drive pipekit callbacks, evaluation and checkpoints from inside Keras' ``fit``.

A ``keras.callbacks.CallbackList`` subclass is handed to ``fit``. After each step it
only keeps that step's logs (device arrays, no host transfer); at a host event —
every step the run's ``Schedule`` names, or a SIGTERM / first Ctrl-C — it fetches
the window in one transfer and calls core's ``host_event`` (the driver's order:
``step_end`` → evaluation → ``eval_end`` → checkpoint → ``checkpoint_done``), whose
stop decision becomes ``model.stop_training``.
A plain ``keras.callbacks.Callback`` overriding ``on_train_batch_end`` would make
Keras convert the logs to Python floats after every step (a device sync, ~15 %
slower on the digits MLP); this avoids it. The user's own Keras callbacks
(``backend_options["callbacks"]``) are members of the list and get every hook, that
per-step transfer included, only when there are some. They also see the *data's*
epochs, as in ``fit``: every ``steps_per_epoch`` steps (core's ``BatchSource`` epoch,
``n // batch_size``) the bridge syncs the state and calls their ``on_epoch_end`` with
the model's metric results and, with a ``val_dataset``, the evaluation as ``val_<name>``
(then ``on_epoch_begin`` of the next), before that step's host event. So the user's
``EarlyStopping`` stops at its epoch (the loop stops there: the step's evaluation and
checkpoint run as at any stop) and ``ReduceLROnPlateau`` lowers the rate the next step
reads. Keras' own end of ``fit``'s single epoch goes to the ``History`` only.

With ``accumulate_steps=k`` Keras calls it after every micro-batch; the step is the
optimiser update (micro-batch ``b`` ends update ``(b + 1) / k`` when ``k`` divides
``b + 1``), so every cadence counts updates, and a step's logged values are the mean
over its ``k`` micro-batches (the loss as on the Equinox backend).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipekit_train.carry import TrainerCarryState
from pipekit_train.engine import (
    CallbackRunner,
    EventSite,
    SaveClock,
    Schedule,
    host_event,
    record_window,
)

from ._state import capture_state

__all__ = ["make_bridge", "make_last_value_metric"]


def make_last_value_metric(keras: Any) -> Any:
    """A metric holding the last step's loss, to replace Keras' running-mean tracker.

    Keras logs the *epoch's running mean* of the loss; pipekit callbacks see each
    step's own value (``state.window``), as on every other backend.
    """

    class LastValue(keras.metrics.Metric):
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


def make_bridge(
    keras: Any,
    *,
    loop: Any,
    model: Any,
    state: TrainerCarryState,
    runner: CallbackRunner,
    evaluate: Callable[[], dict[str, float]] | None,
    checkpointer: Any,
    fingerprint: dict[str, Any],
    signals: Any,
    start_step: int,
    data_state: Callable[[int], dict[str, Any]],
    rates: Callable[[list[int]], list[float]] | None = None,
    accumulate: int = 1,
    user_callbacks: list[Any] | None = None,
    on_epoch_begin: Callable[[], None] | None = None,
    steps_per_epoch: int | None = None,
) -> Any:
    """The ``CallbackList`` passed to ``fit`` (see the module docstring)."""
    import jax

    schedule = Schedule.for_loop(
        loop, checkpointing=checkpointer is not None, evaluating=evaluate is not None
    )

    def synced_evaluate() -> dict[str, float]:
        assert evaluate is not None
        model.jax_state_sync()
        return evaluate()

    def save(step: int, meta: dict[str, Any]) -> None:
        model.jax_state_sync()
        checkpointer.save(step, capture_state(model), meta)

    site = EventSite(
        evaluate=synced_evaluate if evaluate is not None else None,
        save=save if checkpointer is not None else None,
        data_state=data_state,
        signal=lambda: signals.received,
        fingerprint=fingerprint,
        clock=SaveClock(
            every_seconds=schedule.checkpoint_seconds,
            share=getattr(checkpointer, "share_decision", None) or (lambda d: d),
            busy=getattr(checkpointer, "saving", None),
        ),
        settle=checkpointer.wait if checkpointer is not None else None,
    )

    class Bridge(keras.callbacks.CallbackList):
        def __init__(self) -> None:
            super().__init__(
                list(user_callbacks or []), add_history=True, add_progbar=False, model=model
            )
            self.forward = bool(user_callbacks)
            self.pending: list[tuple[int, list[Any]]] = []
            self.micro: list[Any] = []
            self.eval_metrics: dict[str, float] = {}
            self.last_checkpoint: int | None = None
            self.users = list(user_callbacks or [])
            self.data_epoch = start_step // steps_per_epoch if steps_per_epoch else 0

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            # fit's one epoch is the whole run: only its History sees that end; the
            # user's callbacks saw each of the data's epochs (_data_epoch_end).
            for callback in self.callbacks:
                if callback not in self.users:
                    callback.on_epoch_end(epoch, logs)

        def _data_epoch_end(self, step: int) -> None:
            model.jax_state_sync()  # fit gathers the state again before the next step
            logs = {name: float(value) for name, value in model.get_metrics_result().items()}
            if evaluate is not None:
                logs.update({f"val_{k}": float(v) for k, v in evaluate().items()})
            for callback in self.users:
                callback.on_epoch_end(self.data_epoch, logs)
            refresh = getattr(rates, "refresh", None)
            if refresh is not None:  # a callback may have set the rate (ReduceLROnPlateau)
                refresh(step)
            self.data_epoch += 1
            if model.stop_training:
                state.should_stop = True
                state.stop_reason = state.stop_reason or (
                    f"a Keras callback (backend_options['callbacks']) stopped training at "
                    f"the end of epoch {self.data_epoch - 1} (step {step})"
                )
                return
            for callback in self.users:
                callback.on_epoch_begin(self.data_epoch, None)

        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            if on_epoch_begin is not None:  # after fit's reset_metrics, before its state
                on_epoch_begin()
            super().on_epoch_begin(epoch, logs)

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            if self.forward:  # the user's Keras callbacks (they take the host transfer)
                super().on_train_batch_end(batch, logs)
            self.micro.append(logs)
            done, rest = divmod(int(batch) + 1, accumulate)
            if rest:  # inside an accumulation cycle: no optimiser update yet
                return
            step = start_step + done
            self.pending.append((step, self.micro))
            self.micro = []
            if self.users and steps_per_epoch and step % steps_per_epoch == 0:
                self._data_epoch_end(step)
            if schedule.is_event(step) or signals.received is not None or state.should_stop:
                self._event(step)

        def _fetch(self, step: int) -> None:
            host = jax.device_get([[dict(m or {}) for m in micro] for _, micro in self.pending])
            window: dict[str, list[float]] = {}
            for micro in host:
                for name in micro[-1]:
                    try:
                        values = [float(m[name]) for m in micro]
                    except (KeyError, TypeError, ValueError):
                        continue
                    window.setdefault(name, []).append(
                        values[0] if len(values) == 1 else sum(values) / len(values)
                    )
            steps = [s for s, _ in self.pending]
            if rates is not None:
                window["lr"] = rates(steps)
            self.pending = []
            state.step = step
            record_window(state, window, steps)

        def _event(self, step: int) -> None:
            self._fetch(step)  # one transfer for the whole window
            outcome = host_event(state, runner, schedule, site)
            if outcome.eval_metrics is not None:
                self.eval_metrics = outcome.eval_metrics
            if outcome.checkpointed:
                self.last_checkpoint = step
            if outcome.stop:
                model.stop_training = True

    return Bridge()
