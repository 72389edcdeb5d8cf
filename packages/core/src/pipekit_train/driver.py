"""The per-step driver shared by every per-step backend.

The driver owns *cadence*: ``max_steps``, when to fetch and log metrics, when to
evaluate and checkpoint, the callback order, early stopping, resume, and
SIGTERM. A backend owns only its compiled step, handed over as a
``StepProgram``. Equinox training steps, NumPyro SVI steps and BlackJAX draws
all run through here.

Fusion: the driver asks the program to run ``k <= steps_per_call`` steps in one
compiled call. Every host event (log, eval, checkpoint, a callback's
``every_n_steps``, ``max_steps``) is a chunk boundary, so each event happens at
its exact step whatever ``steps_per_call`` is, and step ``s`` draws its
randomness from ``fold_in(rng, s)``: results do not depend on the chunking.

Host events, in this order at a boundary step ``s`` (see docs/architecture.md):

1. fetch the per-step metrics of the steps since the last event (one
   device→host transfer), set ``state.window`` / ``state.metrics``;
2. ``on_step_end`` of each callback (the metric writer's first);
3. evaluation if due → ``on_eval_end``;
4. checkpoint if due (or stopping, or final) → ``on_checkpoint``;
5. stop if a callback set ``state.should_stop``, SIGTERM arrived, or ``s == max_steps``.

A ``PipekitError`` from a callback (``TerminateOnNaN``) ends the run without
checkpointing the bad state; pending asynchronous checkpoint writes are still
finished, so nothing already committed is lost.
"""

from __future__ import annotations

import signal
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .callbacks import Callback, Checkpoint, LogToExperiment
from .carry import TrainerCarryState

if TYPE_CHECKING:
    from .loop import TrainingLoop

__all__ = ["StepProgram", "BatchStream", "StepCheckpointer", "DriverResult", "run_driver"]


class StepProgram(Protocol):
    """What a backend hands to the driver: its compiled step and carry conversions.

    ``train_chunk`` runs ``num_steps`` steps starting after step ``step`` and
    returns the new carry and a dict of per-step metric arrays with leading axis
    ``num_steps`` (kept on the device; the driver fetches them at host events).
    ``batches`` is ``None`` when the driver was given no data stream.
    """

    def train_chunk(
        self, carry: Any, batches: Any, step: int, num_steps: int
    ) -> tuple[Any, dict[str, Any]]: ...

    def evaluate(self, carry: Any) -> dict[str, float]: ...

    def fetch(self, tree: Any) -> Any: ...

    def checkpoint_state(self, carry: Any) -> Any: ...

    def checkpoint_template(self, carry: Any) -> Any: ...

    def carry_from_checkpoint(self, state: Any) -> Any: ...


class BatchStream(Protocol):
    """A deterministic, checkpointable source of training batches."""

    def next_chunk(self, k: int) -> Any: ...

    @property
    def grain_iterator(self) -> Any: ...


class StepCheckpointer(Protocol):
    """The checkpoint glue (``pipekit_train.jax.checkpoint.Checkpointer``)."""

    def restore(self, state_template: Any, data_iterator: Any) -> Any: ...

    def save(self, step: int, state: Any, data_iterator: Any, meta: dict[str, Any]) -> Any: ...

    def wait(self) -> None: ...

    def close(self) -> None: ...


@dataclass
class DriverResult:
    """What the driver hands back to the adapter for ``backend_info``."""

    carry: Any
    state: TrainerCarryState
    resumed_from_step: int | None
    final_step: int
    stop_reason: str | None
    interrupted: str | None
    total_seconds: float
    train_seconds: float
    steps_run: int
    eval_metrics: dict[str, float] = field(default_factory=dict)


class _SignalFlag:
    """Turns SIGTERM into a flag the driver checks at every chunk boundary."""

    def __init__(self) -> None:
        self.received: str | None = None
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> _SignalFlag:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.getsignal(signal.SIGTERM)
            signal.signal(signal.SIGTERM, self._handle)
            self._installed = True
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        self.received = signal.Signals(signum).name

    def __exit__(self, *exc: Any) -> None:
        if self._installed:
            signal.signal(signal.SIGTERM, self._previous)


def _event_intervals(loop: TrainingLoop, callbacks: Sequence[Callback]) -> list[int]:
    intervals = [loop.log_every_n_steps]
    if loop.eval_every_n_steps:
        intervals.append(loop.eval_every_n_steps)
    ckpt = loop.checkpoint_callback
    if ckpt is not None and loop.checkpoint_dir is not None:
        intervals.append(ckpt.every_n_steps)
    for cb in callbacks:
        n = getattr(cb, "every_n_steps", None)
        if n and not isinstance(cb, Checkpoint):
            intervals.append(int(n))
    return sorted(set(intervals))


def next_event_step(step: int, intervals: Sequence[int], max_steps: int) -> int:
    """The first step after ``step`` at which a host event is due."""
    candidates = [(step // n + 1) * n for n in intervals]
    return min([max_steps, *candidates])


def _build_callbacks(loop: TrainingLoop, is_primary: bool) -> tuple[list[Callback], Any]:
    callbacks: list[Callback] = []
    writer = None
    if loop.metric_writer is not None and is_primary:
        from .writers import MultiWriter, writers_for_loop

        writer = MultiWriter(writers_for_loop(loop))
        callbacks.append(LogToExperiment(writer))
    for cb in loop.callbacks:
        if not is_primary and type(cb).__name__ in ("ProgressBar", "LogToExperiment"):
            continue
        callbacks.append(cb)
    return callbacks, writer


def run_driver(
    loop: TrainingLoop,
    program: StepProgram,
    carry: Any,
    *,
    data: BatchStream | None,
    checkpointer: StepCheckpointer | None,
    steps_per_call: int = 1,
    fingerprint: dict[str, Any] | None = None,
    is_primary: bool = True,
    rng: Any = None,
) -> DriverResult:
    """Run ``program`` from its (possibly resumed) carry to ``loop.max_steps``.

    Args:
        loop: the resolved loop (cadence fields, callbacks, writer).
        program: the backend's compiled step and conversions.
        carry: the freshly initialised device carry; replaced by the checkpoint
            when one is restored.
        data: the training batch stream, or ``None`` for full-batch programs.
        checkpointer: the checkpoint glue, or ``None`` when no ``checkpoint_dir``.
        steps_per_call: the largest number of steps fused into one call.
        fingerprint: the resume guard written into every checkpoint's metadata.
        is_primary: whether this process writes metrics and progress (process 0).
        rng: the run's base key, exposed to callbacks as ``state.rng``.
    """
    started = time.perf_counter()
    callbacks, writer = _build_callbacks(loop, is_primary)
    state = TrainerCarryState(step=0, rng=rng, opt_state=carry)
    resumed_from: int | None = None
    data_iter = data.grain_iterator if data is not None else None

    try:
        if checkpointer is not None:
            restored = checkpointer.restore(program.checkpoint_template(carry), data_iter)
            if restored is not None:
                carry = program.carry_from_checkpoint(restored.state)
                resumed_from = int(restored.step)
                meta = restored.meta or {}
                state.step = resumed_from
                state.metrics = dict(meta.get("metrics", {}))
                state.best = dict(meta.get("best", {}))
                # Callback state is stored by position in ``loop.callbacks`` (not in the
                # driver's list, which prepends the metric writer and drops progress and
                # logging callbacks on non-primary processes), so it lands on the same
                # callback on every process and whether or not a metric_writer is set.
                saved_cbs = meta.get("callbacks", [])
                for cb, saved in zip(loop.callbacks, saved_cbs, strict=False):
                    if saved and isinstance(cb, Callback):
                        cb.load_state_dict(saved)
        state.opt_state = carry
        # From loop.callbacks, not the per-process list: every process must place its
        # chunk boundaries (and so its compiled calls) at the same steps.
        user_callbacks = [c for c in loop.callbacks if isinstance(c, Callback)]
        intervals = _event_intervals(loop, user_callbacks)
        ckpt_cb = loop.checkpoint_callback if checkpointer is not None else None
        for cb in callbacks:
            cb.on_run_start(loop, state)

        pending: list[tuple[int, int, dict[str, Any]]] = []
        eval_metrics: dict[str, float] = {}
        last_ckpt = resumed_from
        train_started = time.perf_counter()
        first_step = state.step
        k_max = max(1, int(steps_per_call))

        with _SignalFlag() as sigterm:
            while state.step < loop.max_steps:
                boundary = next_event_step(state.step, intervals, loop.max_steps)
                k = min(k_max, boundary - state.step)
                batches = data.next_chunk(k) if data is not None else None
                carry, metrics = program.train_chunk(carry, batches, state.step, k)
                pending.append((state.step + 1, k, metrics))
                state.step += k
                if state.step != boundary and sigterm.received is None:
                    continue

                # 1. fetch the window's metrics in one transfer
                state.opt_state = carry
                _fetch_window(program, state, pending)
                pending = []
                final = state.step >= loop.max_steps
                # 2. step-end callbacks
                for cb in callbacks:
                    cb.on_step_end(loop, state)
                # 3. evaluation
                eval_due = loop.val_dataset is not None and (
                    final
                    or (loop.eval_every_n_steps and state.step % loop.eval_every_n_steps == 0)
                    or state.should_stop
                )
                if eval_due:
                    eval_metrics = {
                        f"val_{k2}": float(v) for k2, v in program.evaluate(carry).items()
                    }
                    state.metrics.update(eval_metrics)
                    for cb in callbacks:
                        cb.on_eval_end(loop, state, eval_metrics)
                if sigterm.received is not None and not state.should_stop:
                    state.should_stop = True
                    state.stop_reason = f"{sigterm.received}: checkpointed and stopped"
                # 4. checkpoint
                if (
                    ckpt_cb is not None
                    and checkpointer is not None
                    and (state.step % ckpt_cb.every_n_steps == 0 or final or state.should_stop)
                ):
                    meta = {
                        "step": state.step,
                        "fingerprint": fingerprint or {},
                        "metrics": _json_floats(state.metrics),
                        "best": _json_floats(state.best),
                        "callbacks": [
                            cb.state_dict() if isinstance(cb, Callback) else {}
                            for cb in loop.callbacks
                        ],
                    }
                    checkpointer.save(state.step, program.checkpoint_state(carry), data_iter, meta)
                    last_ckpt = state.step
                    for cb in callbacks:
                        cb.on_checkpoint(loop, state, state.step)
                # 5. stop
                if state.should_stop:
                    break
        train_seconds = time.perf_counter() - train_started
        if checkpointer is not None:
            checkpointer.wait()
        state.opt_state = carry
        info = {
            "final_step": state.step,
            "resumed_from_step": resumed_from,
            "last_checkpoint_step": last_ckpt,
        }
        for cb in callbacks:
            cb.on_run_end(loop, state, info)
        return DriverResult(
            carry=carry,
            state=state,
            resumed_from_step=resumed_from,
            final_step=state.step,
            stop_reason=state.stop_reason,
            interrupted=sigterm.received,
            total_seconds=time.perf_counter() - started,
            train_seconds=train_seconds,
            steps_run=state.step - first_step,
            eval_metrics=eval_metrics,
        )
    finally:
        if checkpointer is not None:
            try:
                checkpointer.wait()
            finally:
                checkpointer.close()
        if writer is not None:
            writer.close()


def _fetch_window(
    program: StepProgram, state: TrainerCarryState, pending: list[tuple[int, int, dict[str, Any]]]
) -> None:
    """Fetch all per-step metrics since the last event in one transfer."""
    if not pending:
        return
    host = program.fetch([m for _, _, m in pending])
    window: dict[str, list[float]] = {}
    steps: list[int] = []
    for (first, k, _), values in zip(pending, host, strict=True):
        steps.extend(range(first, first + k))
        for name, arr in values.items():
            if hasattr(arr, "reshape"):
                seq = list(arr.reshape(-1))
            elif isinstance(arr, (list, tuple)):  # a pure-Python program's per-step values
                seq = list(arr)
            else:
                seq = [arr]
            window.setdefault(name, []).extend(float(v) for v in seq)
    state.window = window
    state.window_steps = steps
    for name, seq in window.items():
        if seq:
            state.metrics[name] = seq[-1]


def _json_floats(values: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        try:
            out[key] = float(value) if value is not None else None
        except (TypeError, ValueError):
            warnings.warn(f"metric {key!r} is not a number; not checkpointed", stacklevel=2)
    return out
