"""The backend-agnostic training carry seen by the driver and by callbacks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["TrainerCarryState"]


@dataclass
class TrainerCarryState:
    """Everything the per-step driver carries between compiled calls.

    ``opt_state`` is opaque to core: the Equinox backend stores its device-side
    carry there (model arrays, optimiser state, step counter, RNG key) and other
    backends store their own (an ``SVIState``, a sampler state). Core only reads
    the host-side fields.

    Attributes:
        step: number of steps completed so far, counted over every phase.
        rng: the run's base PRNG key (backend array type); step ``s`` draws its
            randomness from ``fold_in(rng, s)`` so that the stream does not
            depend on how steps are grouped into compiled calls.
        opt_state: the backend's device carry.
        metrics: the last fetched training metrics (plain floats; a metric with
            extra axes, such as one value per chain, is reduced to its mean here),
            plus the latest evaluation metrics under ``val_`` names.
        window: per-step values of each training metric since the previous host
            event: a list with one entry per step of ``window_steps``, each a float
            or, for a metric with extra axes, a numpy array of that step's shape.
            It lets a callback see every step even when several steps are fused.
        window_steps: the step numbers (1-based, after the step) of ``window``.
        best: best monitored values, kept by ``EarlyStopping`` and checkpointed.
        should_stop: set by a callback (or a signal) to end the run at the next
            host event.
        stop_reason: a short human-readable reason that goes into ``backend_info``.
        phase: the name of the phase the latest step belongs to (``"train"`` for a
            program without phases; e.g. ``"warmup"`` / ``"sampling"`` for samplers).
        phases: the names of the program's phases in order; the last is the
            counted one (training, or a sampler's draws).
        total_steps: the steps the run is going for, over every phase.
        trace: ``None``, or (set by the driver) a function returning the per-step outputs
            of the collecting phases so far, ``{name: array (steps, …)}`` — a sampler's
            draws, for callbacks such as a convergence check.
    """

    step: int = 0
    rng: Any = None
    opt_state: Any = None
    metrics: dict[str, float] = field(default_factory=dict)
    window: dict[str, Any] = field(default_factory=dict)
    window_steps: list[int] = field(default_factory=list)
    best: dict[str, Any] = field(default_factory=dict)
    should_stop: bool = False
    stop_reason: str | None = None
    phase: str = "train"
    phases: tuple[str, ...] = ("train",)
    total_steps: int | None = None
    trace: Any = None
