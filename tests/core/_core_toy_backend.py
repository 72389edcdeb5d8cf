"""A real, pure-Python backend for the driver's tests: no array library at all.

The carry is one float "parameter". Each step ``s`` reads its batch (a float from
``ToyData``) and moves the parameter towards it, plus a deterministic step-dependent
term standing in for ``fold_in(rng, s)``. The per-step metrics are Python lists, one
value per step of the chunk, and ``fetch`` returns them unchanged. Every call, save,
restore and hook is recorded so the tests can check the driver's contract exactly.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pipekit_train import Callback, TrainingLoop
from pipekit_train.engine import BatchStream, StepProgram


def step_noise(step: int) -> float:
    """A deterministic per-step term (what ``fold_in(rng, step)`` is for a JAX backend)."""
    return ((step * 2654435761) % 1000) / 1e6


class ToyData(BatchStream):
    """A deterministic, checkpointable batch stream: batch ``i`` is a float of ``i``."""

    def __init__(self) -> None:
        self.position = 0
        self.chunks: list[int] = []

    @staticmethod
    def value(i: int) -> float:
        return 1.0 + 0.5 * math.sin(i)

    def next_chunk(self, k: int) -> list[float]:
        self.chunks.append(k)
        out = [self.value(self.position + i) for i in range(k)]
        self.position += k
        return out

    def get_state(self) -> dict[str, int]:
        return {"position": self.position}

    def set_state(self, state: dict[str, int]) -> None:
        self.position = int(state["position"])


class ToyProgram(StepProgram):
    """A ``StepProgram``: the compiled step of a backend, in plain Python.

    ``loss_at(step, param, batch)`` overrides the training loss of a step (to script
    early stopping or a NaN); ``on_step(step)`` runs inside the chunk after step ``step``
    (to send a signal mid-chunk); ``val_losses`` scripts ``evaluate``'s ``loss`` by call.
    """

    def __init__(
        self,
        lr: float = 0.1,
        *,
        loss_at: Callable[[int, float, float], float] | None = None,
        on_step: Callable[[int], None] | None = None,
        val_losses: list[float] | None = None,
    ) -> None:
        self.lr = lr
        self.loss_at = loss_at
        self.on_step = on_step
        self.val_losses = list(val_losses) if val_losses is not None else None
        self.calls: list[tuple[int, int]] = []
        self.evaluations: list[float] = []
        self.fetches = 0

    def train_chunk(
        self, carry: float, batches: list[float] | None, step: int, num_steps: int
    ) -> tuple[float, dict[str, list[float]]]:
        assert batches is None or len(batches) == num_steps
        self.calls.append((step, num_steps))
        param = carry
        losses: list[float] = []
        params: list[float] = []
        for i in range(num_steps):
            s = step + i + 1
            batch = batches[i] if batches is not None else ToyData.value(s - 1)
            param = param - self.lr * 2.0 * (param - batch) + step_noise(s)
            loss = (param - batch) ** 2
            if self.loss_at is not None:
                loss = self.loss_at(s, param, batch)
                if math.isnan(loss):
                    param = math.nan
            losses.append(loss)
            params.append(param)
            if self.on_step is not None:
                self.on_step(s)
        return param, {"loss": losses, "param": params}

    def evaluate(self, carry: float) -> dict[str, float]:
        if self.val_losses is not None:
            value = self.val_losses[len(self.evaluations)]
        else:
            value = (carry - 1.0) ** 2
        self.evaluations.append(value)
        return {"loss": value}

    def fetch(self, tree: Any) -> Any:
        self.fetches += 1
        return tree

    def checkpoint_state(self, carry: float) -> dict[str, float]:
        return {"param": carry}

    def checkpoint_template(self, carry: float) -> dict[str, float]:
        return {"param": 0.0}

    def carry_from_checkpoint(self, state: dict[str, float]) -> float:
        return float(state["param"])


@dataclass
class Saved:
    step: int
    state: Any
    meta: dict[str, Any]
    trace: dict[str, Any] | None = None

    @property
    def data_state(self) -> Any:
        return self.meta.get("data")


@dataclass
class Restored:
    step: int
    state: Any
    meta: dict[str, Any]
    trace: dict[str, Any] | None = None


@dataclass
class RecordingCheckpointer:
    """The checkpoint glue's contract, in memory. ``restore_from`` is what restore returns."""

    restore_from: Saved | None = None
    events: list[tuple[Any, ...]] | None = None
    saves: list[Saved] = field(default_factory=list)
    restore_calls: int = 0
    wait_calls: int = 0
    close_calls: int = 0

    def restore(self, state_template: Any) -> Restored | None:
        self.restore_calls += 1
        if self.restore_from is None:
            return None
        saved = self.restore_from
        return Restored(
            saved.step,
            copy.deepcopy(saved.state),
            copy.deepcopy(saved.meta),
            copy.deepcopy(saved.trace),
        )

    def save(
        self, step: int, state: Any, meta: dict[str, Any], trace: dict[str, Any] | None = None
    ) -> None:
        # The metadata must survive JSON (it goes into the checkpoint as JSON).
        meta_copy = json.loads(json.dumps(meta))
        self.saves.append(Saved(step, copy.deepcopy(state), meta_copy, copy.deepcopy(trace)))
        if self.events is not None:
            self.events.append(("checkpointer", "save", step))

    def wait(self) -> None:
        self.wait_calls += 1

    def close(self) -> None:
        self.close_calls += 1

    @property
    def saved_steps(self) -> list[int]:
        return [s.step for s in self.saves]


class Recorder(Callback):
    """Records every hook call as ``(name, hook, step)`` into a shared event list."""

    def __init__(self, name: str, events: list[tuple[Any, ...]], every_n_steps: int | None = None):
        self.name = name
        self.events = events
        self.every_n_steps = every_n_steps
        self.history: list[tuple[int, float]] = []
        self.run_start_step: int | None = None
        self.run_start_metrics: dict[str, float] = {}

    def on_run_start(self, loop: TrainingLoop, state: Any) -> None:
        self.run_start_step = state.step
        self.run_start_metrics = dict(state.metrics)
        self.events.append((self.name, "run_start", state.step))

    def on_step_end(self, loop: TrainingLoop, state: Any) -> None:
        self.events.append((self.name, "step_end", state.step))
        assert state.window_steps == sorted(state.window_steps)
        self.history.extend(zip(state.window_steps, state.window.get("loss", []), strict=True))

    def on_eval_end(self, loop: TrainingLoop, state: Any, metrics: dict[str, float]) -> None:
        self.events.append((self.name, "eval_end", state.step))

    def on_checkpoint(self, loop: TrainingLoop, state: Any, step: int) -> None:
        assert step == state.step
        self.events.append((self.name, "checkpoint", step))

    def on_run_end(self, loop: TrainingLoop, state: Any, info: dict[str, Any]) -> None:
        self.events.append((self.name, "run_end", state.step))

    def steps(self, hook: str) -> list[int]:
        return [s for n, h, s in self.events if n == self.name and h == hook]


class RecordingWriter:
    """A ``MetricWriter`` that records writes into the shared event list."""

    def __init__(self, events: list[tuple[Any, ...]] | None = None) -> None:
        self.events = events if events is not None else []
        self.rows: list[tuple[int, dict[str, float]]] = []
        self.flushes = 0
        self.closed = False

    def write(self, step: int, metrics: dict[str, float]) -> None:
        self.rows.append((step, dict(metrics)))
        self.events.append(("writer", "write", step))

    def flush(self) -> None:
        self.flushes += 1

    def close(self) -> None:
        self.closed = True


def toy_loop(**overrides: Any) -> TrainingLoop:
    """A resolved loop over plain-Python data (the driver reads only its cadence fields)."""
    kwargs: dict[str, Any] = {
        "dataset": {"x": [0.0, 1.0], "y": [0.0, 1.0]},
        "loss": "mse",
        "max_steps": 100,
        "log_every_n_steps": 10,
    }
    kwargs.update(overrides)
    return TrainingLoop(**kwargs)
