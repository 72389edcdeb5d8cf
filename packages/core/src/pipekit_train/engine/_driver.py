"""The per-step driver shared by every per-step backend.

The driver owns *cadence*: the step budget, when to fetch and log metrics,
when to evaluate and checkpoint, the callback order (through the
:class:`~pipekit_train.engine.CallbackRunner`), early stopping, resume, phases,
the trace of per-step outputs, and SIGTERM / Ctrl-C. A backend owns only its
compiled step, handed over as a ``StepProgram`` (JAX backends build one with
``pipekit_train.jax.program.build_program``). Equinox training steps, NumPyro
SVI steps, MCMC draws and BlackJAX draws all run through here.

Fusion: the driver asks the program to run ``k <= steps_per_call`` steps in one
compiled call. Every host event (log, eval, checkpoint, a callback's
``every_n_steps``, a phase end, the last step) is a chunk boundary, so each event
happens at its exact step whatever ``steps_per_call`` is, and step ``s`` draws its
randomness from ``fold_in(rng, s)``: results do not depend on the chunking.

Phases: a program may declare phases (``program.phases``, e.g. a sampler's
``warmup`` then ``sampling``) that run one after the other through the same
chunked, checkpointed loop; steps are counted over all phases, a phase end is
always a boundary and a checkpoint, and ``state.phase`` names the current one.
Without phases the run is one phase ``"train"`` of ``loop.max_steps`` steps.

Trace: a program may return per-step *outputs* (draws) besides its metrics; the
steps of phases with ``collect=True`` are kept in a host-side trace that is saved
in the same atomic checkpoint as the state, restored with it, and returned in
:class:`DriverResult`.

Host events: at a boundary the driver fetches the window in one transfer and
calls :func:`~pipekit_train.engine.host_event`, the routine the Lightning and
Keras bridges call too (its module docstring gives the order).

A ``PipekitError`` from a callback (``TerminateOnNaN``) ends the run without
checkpointing the bad state; pending asynchronous checkpoint writes are still
finished, so nothing already committed is lost. On any error the callbacks'
``on_exception`` teardown runs and the error is re-raised unchanged.

After the last step (and its checkpoint, committed: pending asynchronous writes are
waited for first) the driver calls ``training_ended``: an error from then on — a
callback's ``on_run_end``, the adapter building its operator or report — reaches the
user as a ``FinishError`` that keeps the run (``engine._report``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._signals import StopSignals
from ..callbacks import Callback, scalar
from ..carry import TrainerCarryState
from ._events import EventSite, host_event, record_window
from ._program import BatchStream, Phase, StepCheckpointer, StepProgram, close_checkpointer
from ._report import RunOutcome, training_ended, training_started
from ._runner import CallbackRunner
from ._save_clock import SaveClock
from ._schedule import Schedule

if TYPE_CHECKING:
    from ..protocols import LoopView

__all__ = ["DriverResult", "run_driver"]


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
    trace: dict[str, Any] = field(default_factory=dict)
    run_dir: str | None = None
    last_checkpoint_step: int | None = None
    #: Each training metric's mean over each host event's window, as ``(step, mean)`` pairs
    #: in order (this process's steps only: a resumed run's start from its resume step);
    #: beyond ``HISTORY_MAX`` entries neighbouring windows are merged in pairs. What a
    #: convergence check reads, like Keras's ``History``.
    history: dict[str, list[tuple[int, float]]] = field(default_factory=dict)

    def outcome(self) -> RunOutcome:
        """How the run ended, for the adapter's ``backend_info`` (``engine.backend_info``)."""
        return RunOutcome(
            final_step=self.final_step,
            resumed_from_step=self.resumed_from_step,
            last_checkpoint_step=self.last_checkpoint_step,
            stop_reason=self.stop_reason,
            interrupted=self.interrupted,
            train_seconds=self.train_seconds,
            steps_run=self.steps_run,
            final_metrics=dict(self.state.metrics),
            run_dir=self.run_dir,
        )


def run_driver(
    loop: LoopView,
    program: StepProgram,
    carry: Any,
    *,
    data: BatchStream | None,
    checkpointer: StepCheckpointer | None,
    steps_per_call: int = 1,
    fingerprint: dict[str, Any] | None = None,
    is_primary: bool = True,
    rng: Any = None,
    hooks: Sequence[Callback] = (),
) -> DriverResult:
    """Run ``program`` from its (possibly resumed) carry to the end of its last phase.

    Without phases the run is ``loop.max_steps`` steps of one phase ``"train"``.

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
        hooks: the backend's own callbacks (a sampler's end-of-warmup check), run after
            the loop's at every host event; not part of the checkpoint.
    """
    started = time.perf_counter()
    phases = _phases_of(program, loop)
    total = total_steps(program, loop)
    ends = _phase_ends(phases)
    state = TrainerCarryState(
        step=0,
        rng=rng,
        opt_state=carry,
        phases=tuple(p.name for p in phases),
        total_steps=total,
    )
    state.phase = _phase_at(phases, 0).name
    trace = _Trace()
    state.trace = trace.arrays
    resumed_from: int | None = None
    training_started()
    try:
        runner = CallbackRunner(loop, is_primary=is_primary, hooks=hooks)
        with runner.guard(state):
            if checkpointer is not None:
                restored = checkpointer.restore(program.checkpoint_template(carry))
                if restored is not None:
                    carry = program.carry_from_checkpoint(restored.state)
                    resumed_from = int(restored.step)
                    meta = restored.meta or {}
                    state.step = resumed_from
                    runner.restore(state, meta)
                    if data is not None and meta.get("data") is not None:
                        data.set_state(meta["data"])
                    trace.load(getattr(restored, "trace", None))
            # Callbacks see the carry as the backend's pytree (e.g. the Equinox TrainState's
            # arrays), not the program's flat list of leaves.
            state.opt_state = program.tree(carry)
            state.phase = _phase_at(phases, state.step).name
            schedule = Schedule.for_loop(
                loop,
                checkpointing=checkpointer is not None,
                evaluating=loop.val_dataset is not None,
                total=total,
                phase_ends=ends,
            )
            runner.run_start(state)

            pending: list[tuple[int, int, bool, Any]] = []
            history: dict[str, list[tuple[int, float]]] = {}
            eval_metrics: dict[str, float] = {}
            last_ckpt = resumed_from
            train_started = time.perf_counter()
            first_step = state.step
            k_max = max(1, int(steps_per_call))

            def save(step: int, meta: dict[str, Any]) -> None:
                assert checkpointer is not None
                # ``total_steps`` (every phase together) lets the preflight tell a finished
                # run from the files alone (``engine._preflight``).
                checkpointer.save(
                    step,
                    program.checkpoint_state(carry),
                    {**meta, "total_steps": total},
                    trace.arrays() if trace else None,
                )

            with StopSignals() as signals:
                site = EventSite(
                    evaluate=lambda: program.evaluate(carry),
                    save=save if checkpointer is not None else None,
                    data_state=(lambda _step: data.get_state()) if data is not None else None,
                    signal=lambda: signals.received,
                    fingerprint=fingerprint or {},
                    clock=SaveClock(
                        every_seconds=schedule.checkpoint_seconds,
                        share=getattr(checkpointer, "share_decision", None) or _same,
                        busy=getattr(checkpointer, "saving", None),
                    ),
                    settle=checkpointer.wait if checkpointer is not None else None,
                )
                while state.step < total:
                    phase = _phase_at(phases, state.step)
                    boundary = schedule.next_event(state.step)
                    k = min(k_max, boundary - state.step)
                    batches = data.next_chunk(k) if data is not None else None
                    out = program.train_chunk(carry, batches, state.step, k)
                    carry = out[0]
                    pending.append((state.step + 1, k, phase.collect, out[1:]))
                    state.step += k
                    if state.step != boundary and signals.received is None:
                        continue

                    if data is not None and state.step < total:
                        k_next = min(k_max, schedule.next_event(state.step) - state.step)
                        data.prefetch(k_next, program.place_chunk)
                    # 1. fetch the window's metrics (and outputs) in one transfer
                    state.opt_state = program.tree(carry)
                    state.phase = phase.name
                    _fetch_window(program, state, pending, trace)
                    _record_history(history, state)
                    pending = []
                    # 2.-7. the host-event routine every loop shares
                    outcome = host_event(state, runner, schedule, site)
                    if outcome.eval_metrics is not None:
                        eval_metrics = outcome.eval_metrics
                    if outcome.checkpointed:
                        last_ckpt = state.step
                    if outcome.stop:
                        break
            train_seconds = time.perf_counter() - train_started
            if checkpointer is not None:
                checkpointer.wait()
            # The steps are done and the newest checkpoint committed: what fails from here
            # on (on_run_end, the adapter's operator and report) is a FinishError that keeps
            # the run (``engine._report.after_the_last_step``).
            training_ended(
                state.step, last_ckpt, steps_run=state.step - first_step, total_steps=total
            )
            state.opt_state = program.tree(carry)
            # What the run's writers record at the end (the adapter's backend_info adds
            # what only it knows, such as devices and library versions).
            info = {
                "final_step": state.step,
                "resumed_from_step": resumed_from,
                "last_checkpoint_step": last_ckpt,
                "stop_reason": state.stop_reason,
                "interrupted": signals.received,
                "train_seconds": train_seconds,
                "total_seconds": time.perf_counter() - started,
                "steps_per_second": (
                    (state.step - first_step) / train_seconds if train_seconds > 0 else None
                ),
                "final_metrics": dict(state.metrics),
                "phases": {p.name: p.steps for p in phases},
            }
            runner.run_end(state, info)
            return DriverResult(
                carry=carry,
                state=state,
                resumed_from_step=resumed_from,
                final_step=state.step,
                stop_reason=state.stop_reason,
                interrupted=signals.received,
                total_seconds=time.perf_counter() - started,
                train_seconds=train_seconds,
                steps_run=state.step - first_step,
                eval_metrics=eval_metrics,
                trace=trace.arrays() if trace else {},
                run_dir=None if runner.run_dir is None else str(runner.run_dir),
                last_checkpoint_step=last_ckpt,
                history=history,
            )
    finally:
        close_checkpointer(checkpointer)


def _same(decision: bool) -> bool:
    return decision


def _phases_of(program: StepProgram, loop: LoopView) -> list[Phase]:
    phases = list(program.phases or [])
    if not phases:
        return [Phase("train", int(loop.max_steps), collect=True)]
    return phases


def total_steps(program: StepProgram, loop: LoopView) -> int:
    """The steps ``run_driver`` runs ``program`` for: its phases', or ``loop.max_steps``."""
    return sum(p.steps for p in _phases_of(program, loop))


def _phase_ends(phases: Sequence[Phase]) -> list[int]:
    ends, total = [], 0
    for p in phases:
        total += p.steps
        ends.append(total)
    return ends


def _phase_at(phases: Sequence[Phase], step: int) -> Phase:
    """The phase that step ``step + 1`` belongs to (the last phase once all are done)."""
    total = 0
    for p in phases:
        total += p.steps
        if step < total:
            return p
    return phases[-1]


def _per_step(name: str, values: Any, k: int) -> list[Any]:
    """One entry per step of a chunk's metric: floats, or arrays for extra axes."""
    if hasattr(values, "shape"):
        if values.ndim == 0:
            seq: list[Any] = [float(values)]
        elif values.ndim == 1:
            seq = values.tolist()
        else:
            seq = list(values)
    elif isinstance(values, (list, tuple)):  # a pure-Python program's per-step values
        seq = list(values)
    else:
        seq = [float(values)]
    if len(seq) != k:
        raise ValueError(
            f"the step program returned metric {name!r} with {len(seq)} entries for a chunk "
            f"of {k} steps; per-step metrics need a leading axis of length {k}"
        )
    return seq


def _fetch_window(
    program: StepProgram,
    state: TrainerCarryState,
    pending: list[tuple[int, int, bool, Any]],
    trace: _Trace,
) -> None:
    """Fetch all per-step metrics (and outputs) since the last event in one transfer."""
    if not pending:
        return
    host = program.fetch([rest for _, _, _, rest in pending])
    window: dict[str, list[Any]] = {}
    steps: list[int] = []
    for (first, k, collect, _), rest in zip(pending, host, strict=True):
        steps.extend(range(first, first + k))
        metrics = rest[0]
        for name, arr in metrics.items():
            window.setdefault(name, []).extend(_per_step(name, arr, k))
        if len(rest) > 1 and collect and rest[1]:
            trace.append(rest[1], k)
    record_window(state, window, steps)


#: Entries a metric's history keeps at most: beyond, neighbouring windows are merged in pairs
#: (a run logging every step for a million steps keeps a bounded, coarser history).
HISTORY_MAX = 4096


def _record_history(history: dict[str, list[tuple[int, float]]], state: TrainerCarryState) -> None:
    """Append each metric's mean over the window just fetched (finite values only).

    Array windows (every JAX backend's) take one NumPy reduction per metric at each host
    event, the window stacked as steps × chains, not a Python loop over its steps; plain
    numbers, or steps that differ in shape, go through ``scalar`` per step. NumPy is imported
    only for array windows: core itself does not depend on it.
    """
    for name, values in state.window.items():
        if not values:
            continue
        try:
            if hasattr(values[0], "__array__"):
                import numpy as np

                stacked = np.asarray(values, dtype=float)
                finite = stacked[np.isfinite(stacked)]
                mean = float(finite.mean()) if finite.size else None
            else:
                mean = _finite_mean([scalar(v) for v in values])
        except (TypeError, ValueError):  # ragged steps, or not a number per step
            try:
                mean = _finite_mean([scalar(v) for v in values])
            except (TypeError, ValueError):
                continue
        if mean is not None:
            entries = history.setdefault(name, [])
            entries.append((state.step, mean))
            if len(entries) > HISTORY_MAX:
                entries[:] = _halved(entries)


def _finite_mean(values: list[float]) -> float | None:
    finite = [v for v in values if math.isfinite(v)]
    return math.fsum(finite) / len(finite) if finite else None


def _halved(entries: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """Neighbouring entries merged in pairs: the later step, the two means' mean."""
    out = [(b[0], (a[1] + b[1]) / 2.0) for a, b in zip(entries[0::2], entries[1::2], strict=False)]
    if len(entries) % 2:
        out.append(entries[-1])
    return out


class _Trace:
    """The per-step outputs of the collecting phases, on the host, chunk by chunk.

    Chunks are concatenated only when a checkpoint or the result needs them.
    """

    def __init__(self) -> None:
        self._chunks: dict[str, list[Any]] = {}
        self.length = 0

    def __bool__(self) -> bool:
        return bool(self._chunks)

    def append(self, outputs: dict[str, Any], k: int) -> None:
        for name, value in outputs.items():
            n = len(value)
            if n != k:
                raise ValueError(
                    f"the step program returned output {name!r} with {n} entries for a chunk "
                    f"of {k} steps"
                )
            self._chunks.setdefault(name, []).append(value)
        self.length += k

    def load(self, saved: dict[str, Any] | None) -> None:
        self._chunks = {}
        self.length = 0
        if saved:
            lengths = {len(v) for v in saved.values()}
            self._chunks = {name: [value] for name, value in saved.items()}
            self.length = lengths.pop() if len(lengths) == 1 else 0

    def arrays(self) -> dict[str, Any]:
        """Each output's steps so far as one array (or list, for pure-Python programs)."""
        out: dict[str, Any] = {}
        for name, chunks in self._chunks.items():
            if len(chunks) > 1 and hasattr(chunks[0], "shape"):
                import numpy as np

                merged = np.concatenate([np.asarray(c) for c in chunks])
                self._chunks[name] = [merged]
            elif len(chunks) > 1:
                self._chunks[name] = [[v for c in chunks for v in c]]
            out[name] = self._chunks[name][0]
        return out
