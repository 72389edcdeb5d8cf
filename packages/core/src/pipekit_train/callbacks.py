"""Callbacks: user code run by the driver at host events.

The driver calls hooks in a fixed order at each host event (see
``docs/architecture.md``): ``on_step_end`` → ``on_eval_end`` →
``on_checkpoint``; callbacks in ``TrainingLoop.callbacks`` order, with the
loop's ``metric_writer`` (wrapped as ``LogToExperiment``) first.

``on_step_end`` runs at every host event, not after every single step: when
several steps are fused into one compiled call, ``state.window`` holds the
per-step values of every metric since the previous event so nothing is missed.
A callback that needs to run at a fixed cadence sets ``every_n_steps``; the
driver then places a host event at each multiple of it.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import ConfigError, TrainingError

if TYPE_CHECKING:
    from .carry import TrainerCarryState
    from .protocols import LoopView
    from .writers import MetricWriter

__all__ = [
    "Callback",
    "Checkpoint",
    "LogToExperiment",
    "EarlyStopping",
    "TerminateOnNaN",
    "ProgressBar",
    "BUILTIN_CALLBACKS",
]


class Callback:
    """Base class; override any subset of the hooks.

    ``state_dict`` / ``load_state_dict`` let a callback keep state across a
    resume: the driver stores it in the checkpoint's metadata. ``reset`` runs at
    the start of every run, before a checkpoint's state is loaded, so a loop that
    is run twice does not carry one run's state into the next.

    ``primary_only`` callbacks (progress, logging) run on process 0 alone in a
    multi-process run. ``on_exception`` runs instead of ``on_run_end`` when the
    run fails; the error is re-raised unchanged afterwards.
    """

    every_n_steps: int | None = None
    primary_only: bool = False

    def reset(self) -> None:
        """Forget any state from a previous run (called at the start of each run)."""

    def on_run_start(self, loop: LoopView, state: TrainerCarryState) -> None:
        """Called once, after resume, before the first step."""

    def on_step_end(self, loop: LoopView, state: TrainerCarryState) -> None:
        """Called at every host event with ``state.metrics`` / ``state.window`` fresh."""

    def on_eval_end(
        self, loop: LoopView, state: TrainerCarryState, metrics: dict[str, float]
    ) -> None:
        """Called after each evaluation with the ``val_``-prefixed metrics."""

    def on_checkpoint(self, loop: LoopView, state: TrainerCarryState, step: int) -> None:
        """Called after a checkpoint of ``step`` has been handed to the writer."""

    def on_run_end(self, loop: LoopView, state: TrainerCarryState, info: dict[str, Any]) -> None:
        """Called once when the run ends normally (also after an early stop)."""

    def on_exception(self, loop: LoopView, state: TrainerCarryState, error: BaseException) -> None:
        """Called once when the run ends with an error (teardown: close what you opened)."""

    def state_dict(self) -> dict[str, Any]:
        """JSON-able state to checkpoint; empty by default."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned."""

    # Serialisation used by TrainingLoop.to_yaml for the built-ins.
    def to_config(self) -> dict[str, Any]:
        raise ConfigError(
            f"callback {type(self).__name__} cannot be written to YAML; give it as "
            "'module:Factory' in the YAML file instead",
            field="callbacks",
        )


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}", field=name)
    return value


#: The step cadence of ``Checkpoint()`` when no cadence is given (a time floor applies to it).
DEFAULT_CHECKPOINT_STEPS = 500


def _positive_seconds(value: Any, name: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ConfigError(
            f"{name} must be a positive number of seconds (e.g. 600 for every 10 minutes), "
            f"got {value!r}",
            field=name,
        )
    return float(value)


@dataclass
class Checkpoint(Callback):
    """Save checkpoints at a step cadence, a time cadence, or both; keep the last ``keep_last``.

    Needs ``TrainingLoop.checkpoint_dir``. The final step, a phase end and a SIGTERM stop
    are always checkpointed as well.

    - ``every_n_steps``: a checkpoint at every multiple of it, exactly.
    - ``every_n_seconds``: a checkpoint at the first host event (a log, eval or callback
      step) at least that many seconds after the previous checkpoint (or the run's start),
      the way Levanter saves every N minutes. Saves fall only on steps that are host
      events anyway, so the compiled chunks and a resume stay bit-identical.
    - neither (``Checkpoint()``): the default cadence, every 500 steps, except that a due
      save is skipped while the previous one is still being committed and until 25 times
      its whole cost (call and asynchronous commit) has passed since it started, so
      checkpointing takes at most ~4 % of the run whatever the model's speed. An explicit
      cadence is kept exactly as given.

    ``keep_last`` counts checkpoints of any kind (one rotation, newest kept).
    """

    every_n_steps: int | None = None
    every_n_seconds: float | None = None
    keep_last: int | None = 3

    def __post_init__(self) -> None:
        if self.every_n_steps is not None:
            _positive_int(self.every_n_steps, "Checkpoint.every_n_steps")
        if self.every_n_seconds is not None:
            self.every_n_seconds = _positive_seconds(
                self.every_n_seconds, "Checkpoint.every_n_seconds"
            )
        if self.keep_last is not None:
            _positive_int(self.keep_last, "Checkpoint.keep_last")

    @property
    def default_cadence(self) -> bool:
        """Whether no cadence was given (the step default with its time floor applies)."""
        return self.every_n_steps is None and self.every_n_seconds is None

    @property
    def step_interval(self) -> int | None:
        """The step cadence in effect: the given one, the default, or ``None`` (time only)."""
        if self.every_n_steps is not None:
            return self.every_n_steps
        return DEFAULT_CHECKPOINT_STEPS if self.every_n_seconds is None else None

    def to_config(self) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if self.every_n_steps is not None:
            body["every_n_steps"] = self.every_n_steps
        if self.every_n_seconds is not None:
            body["every_n_seconds"] = self.every_n_seconds
        body["keep_last"] = self.keep_last
        return {"Checkpoint": body}


def scalar(value: Any) -> float:
    """A window entry as one float: itself, or the mean of a per-step array (chains)."""
    if isinstance(value, (int, float)):
        return float(value)
    size = getattr(value, "size", None)
    if size is not None and size != 1 and hasattr(value, "mean"):
        return float(value.mean())
    return float(value)


def _bad_entries(value: Any) -> list[tuple[tuple[int, ...], float]]:
    """``[(index, value)]`` of the non-finite elements of one window entry."""
    if isinstance(value, (int, float)):
        return [] if math.isfinite(value) else [((), float(value))]
    if getattr(value, "shape", ()) == ():
        v = float(value)
        return [] if math.isfinite(v) else [((), v)]
    import numpy as np

    arr = np.asarray(value, dtype=float)
    bad = np.argwhere(~np.isfinite(arr))
    return [(tuple(int(i) for i in idx), float(arr[tuple(idx)])) for idx in bad]


class LogToExperiment(Callback):
    """Send training metrics (at log steps) and eval metrics to a ``MetricWriter``.

    A metric with extra axes (one value per chain) is written as its mean. Metrics
    of a phase other than the run's last (counted) one, such as a sampler's
    warmup, are written as ``"<phase>/<name>"``.

    A writer with the optional ``log_config`` / ``log_info`` methods also gets the
    loop's configuration and the run's facts (backend, versions) at the start, and
    the driver's end-of-run facts (final step, resume) at the end.
    """

    primary_only = True

    def __init__(self, writer: MetricWriter) -> None:
        for method in ("write", "flush", "close"):
            if not callable(getattr(writer, method, None)):
                raise ConfigError(
                    f"LogToExperiment.writer must have a {method}() method "
                    "(see pipekit_train.MetricWriter)",
                    field="LogToExperiment.writer",
                )
        self.writer = writer
        self._last_written = -1

    def on_run_start(self, loop: LoopView, state: TrainerCarryState) -> None:
        from ._run_facts import loop_config, run_facts

        if callable(getattr(self.writer, "log_config", None)):
            self.writer.log_config(loop_config(loop))  # type: ignore[attr-defined]
        if callable(getattr(self.writer, "log_info", None)):
            self.writer.log_info(run_facts(loop))  # type: ignore[attr-defined]

    def on_step_end(self, loop: LoopView, state: TrainerCarryState) -> None:
        # The run's last step is always written: a sampler's total (warmup + draws) need not
        # be loop.max_steps nor a multiple of log_every_n_steps.
        last = state.total_steps or loop.max_steps
        if state.step % loop.log_every_n_steps == 0 or state.step == last:
            if state.step != self._last_written and state.window_steps:
                prefix = f"{state.phase}/" if state.phase != state.phases[-1] else ""
                train = {f"{prefix}{k}": scalar(v[-1]) for k, v in state.window.items() if v}
                self.writer.write(state.step, train)
                self._last_written = state.step

    def on_eval_end(
        self, loop: LoopView, state: TrainerCarryState, metrics: dict[str, float]
    ) -> None:
        self.writer.write(state.step, metrics)

    def on_run_end(self, loop: LoopView, state: TrainerCarryState, info: dict[str, Any]) -> None:
        if callable(getattr(self.writer, "log_info", None)):
            self.writer.log_info(info)  # type: ignore[attr-defined]
        self.writer.flush()

    def on_exception(self, loop: LoopView, state: TrainerCarryState, error: BaseException) -> None:
        self.writer.flush()

    def reset(self) -> None:
        self._last_written = -1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LogToExperiment) and other.writer is self.writer


@dataclass
class EarlyStopping(Callback):
    """Stop when ``monitor`` has not improved by ``min_delta`` for ``patience`` checks.

    The run stops at the ``patience``-th consecutive check without improvement
    (Lightning's and Keras' meaning; ``patience=0`` stops at the first one).

    A ``val_``-prefixed monitor is checked after each evaluation, any other after
    each log step. Best value and wait counter survive a resume.
    """

    monitor: str = "val_loss"
    patience: int = 5
    mode: str = "min"
    min_delta: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.monitor, str) or not self.monitor:
            raise ConfigError(
                "EarlyStopping.monitor must be a metric name", field="EarlyStopping.monitor"
            )
        if (
            isinstance(self.patience, bool)
            or not isinstance(self.patience, int)
            or (self.patience < 0)
        ):
            raise ConfigError(
                f"EarlyStopping.patience must be an integer >= 0, got {self.patience!r}",
                field="EarlyStopping.patience",
            )
        if self.mode not in ("min", "max"):
            raise ConfigError(
                f"EarlyStopping.mode must be 'min' or 'max', got {self.mode!r}",
                field="EarlyStopping.mode",
            )
        if (
            isinstance(self.min_delta, bool)
            or not isinstance(self.min_delta, (int, float))
            or not math.isfinite(self.min_delta)
            or self.min_delta < 0
        ):
            raise ConfigError(
                f"EarlyStopping.min_delta must be a finite number >= 0, got {self.min_delta!r}",
                field="EarlyStopping.min_delta",
            )
        self.reset()

    def reset(self) -> None:
        self._best: float | None = None
        self._wait = 0
        self.stopped_at: int | None = None

    def _check(self, state: TrainerCarryState, value: float) -> None:
        better = (
            self._best is None
            or (self.mode == "min" and value < self._best - self.min_delta)
            or (self.mode == "max" and value > self._best + self.min_delta)
        )
        if better:
            self._best, self._wait = value, 0
        else:
            self._wait += 1
        state.best[self.monitor] = self._best
        # As in Lightning and Keras: stop at the ``patience``-th check in a row without
        # improvement (``patience=0``: at the first one); an improving check never stops.
        if not better and self._wait >= self.patience:
            state.should_stop = True
            state.stop_reason = (
                f"EarlyStopping: {self.monitor} did not improve for {self._wait} checks"
            )
            self.stopped_at = state.step

    def on_step_end(self, loop: LoopView, state: TrainerCarryState) -> None:
        if not self.monitor.startswith("val_") and state.step % loop.log_every_n_steps == 0:
            if state.window.get(self.monitor):
                self._check(state, scalar(state.window[self.monitor][-1]))

    def on_eval_end(
        self, loop: LoopView, state: TrainerCarryState, metrics: dict[str, float]
    ) -> None:
        if self.monitor in metrics:
            self._check(state, float(metrics[self.monitor]))

    def state_dict(self) -> dict[str, Any]:
        return {"best": self._best, "wait": self._wait}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._best, self._wait = state.get("best"), int(state.get("wait", 0))

    def to_config(self) -> dict[str, Any]:
        return {
            "EarlyStopping": {
                "monitor": self.monitor,
                "patience": self.patience,
                "mode": self.mode,
                "min_delta": self.min_delta,
            }
        }


@dataclass
class TerminateOnNaN(Callback):
    """Abort with ``TrainingError`` as soon as ``monitor`` is NaN or infinite.

    Every step is checked (through ``state.window``), so the error names the
    first bad step even when steps are fused, and every element of a metric with
    extra axes, so a NaN in one chain of four is caught and the chain is named.
    The state after that step is not checkpointed: the last good checkpoint stays
    the newest on disk.
    """

    monitor: str = "loss"

    def on_step_end(self, loop: LoopView, state: TrainerCarryState) -> None:
        values = state.window.get(self.monitor)
        if values is None:
            return
        for step, value in zip(state.window_steps, values, strict=True):
            bad = _bad_entries(value)
            if bad:
                index, number = bad[0]
                where = f"at step {step}"
                if index:
                    where += (
                        f", chain {index[0]}" if len(index) == 1 else f", element {list(index)}"
                    )
                    if len(bad) > 1:
                        where += f" ({len(bad)} elements non-finite)"
                raise TrainingError(
                    f"TerminateOnNaN: {self.monitor} became {number} {where}; "
                    "training stopped and no checkpoint of the bad state was written. "
                    "Lower optimizer_config.lr, add optimizer_config.clip_norm, or check "
                    "the data for NaN/inf values."
                )

    def to_config(self) -> dict[str, Any]:
        return {"TerminateOnNaN": {"monitor": self.monitor}}


@dataclass
class ProgressBar(Callback):
    """Progress over ``max_steps``: step, steps/s, ETA and the latest metrics.

    On a terminal it is a tqdm bar on ``file`` (standard error by default); its
    description is ``train[<backend>]``, or the sampler's phase
    (``warmup[numpyro-mcmc]``) when the carry state has a ``phase``. When the
    stream is not a terminal, or the ``CI`` environment variable is set, it
    prints one plain line per ``log_every_n_steps`` (and at the end) instead,
    which reads well in log files.
    """

    leave: bool = True
    file: Any = field(default=None, repr=False, compare=False)
    _bar: Any = field(default=None, init=False, repr=False, compare=False)
    primary_only = True
    _plain: bool = field(default=False, init=False, repr=False, compare=False)
    _start: tuple[float, int] = field(default=(0.0, 0), init=False, repr=False, compare=False)
    _printed: int = field(default=-1, init=False, repr=False, compare=False)

    def _stream(self) -> Any:
        return self.file if self.file is not None else sys.stderr

    def on_run_start(self, loop: LoopView, state: TrainerCarryState) -> None:
        import time

        from ._progress import bar_width, describe, interactive

        stream = self._stream()
        self._start, self._printed = (time.perf_counter(), state.step), -1
        self._plain = not interactive(stream)
        if self._plain:
            return
        from tqdm import tqdm

        self._bar = tqdm(
            total=state.total_steps or loop.max_steps,
            initial=state.step,
            desc=describe(loop.backend, getattr(state, "phase", None)),
            unit="step",
            leave=self.leave,
            file=stream,
            **bar_width(stream),
        )

    def _rate(self, step: int) -> float | None:
        """Steps/s since the previous line (since the start for the first one).

        The first interval includes compilation; later ones measure training alone, so
        the ETA settles after the second line.
        """
        import time

        now = time.perf_counter()
        elapsed, done = now - self._start[0], step - self._start[1]
        self._start = (now, step)
        return done / elapsed if elapsed > 0 and done > 0 else None

    def _print_line(self, loop: LoopView, state: TrainerCarryState) -> None:
        from ._progress import describe, status_line

        if state.step == self._printed:
            return
        desc = describe(loop.backend, getattr(state, "phase", None))
        total = state.total_steps or loop.max_steps
        line = status_line(desc, state.step, total, self._rate(state.step), state.metrics)
        stream = self._stream()
        print(line, file=stream, flush=True)
        self._printed = state.step

    def on_step_end(self, loop: LoopView, state: TrainerCarryState) -> None:
        if self._plain:
            total = state.total_steps or loop.max_steps
            if state.step % loop.log_every_n_steps == 0 or state.step >= total:
                self._print_line(loop, state)
            return
        if self._bar is None:
            return
        from ._progress import describe, format_metrics

        desc = describe(loop.backend, getattr(state, "phase", None))
        if self._bar.desc != desc:
            self._bar.set_description_str(desc, refresh=False)
        self._bar.update(state.step - self._bar.n)
        shown = format_metrics(state.metrics)
        if shown:
            self._bar.set_postfix(shown)

    def on_run_end(self, loop: LoopView, state: TrainerCarryState, info: dict[str, Any]) -> None:
        if self._plain:
            self._print_line(loop, state)
            self._plain = False
            return
        if self._bar is not None:
            self._bar.update(state.step - self._bar.n)
            self._bar.close()
            self._bar = None

    def on_exception(self, loop: LoopView, state: TrainerCarryState, error: BaseException) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def to_config(self) -> dict[str, Any]:
        return {"ProgressBar": {"leave": self.leave}}


BUILTIN_CALLBACKS: dict[str, type[Callback]] = {
    "Checkpoint": Checkpoint,
    "EarlyStopping": EarlyStopping,
    "TerminateOnNaN": TerminateOnNaN,
    "ProgressBar": ProgressBar,
}
"""Callbacks that YAML may name directly (``{"EarlyStopping": {...}}``)."""
