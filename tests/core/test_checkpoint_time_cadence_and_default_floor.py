"""``Checkpoint(every_n_seconds=…)`` saves at the first host event that long after the previous
save; both cadences combine; ``Checkpoint()``'s default step cadence skips a due save while the
previous commit runs and until 25× its whole cost (call + asynchronous commit) has passed since
it started; an explicit ``every_n_steps`` is kept exactly; process 0's clock decides for every
process, asked only where the clock decides. A fake clock makes each case exact; one test runs
the real driver on the real clock (no timed assertion)."""

from __future__ import annotations

import math
from typing import Any

import pytest
import yaml
from _core_toy_backend import RecordingCheckpointer, ToyData, ToyProgram, toy_loop

from pipekit_train import Checkpoint, ConfigError, TrainingLoop
from pipekit_train.carry import TrainerCarryState
from pipekit_train.engine import (
    CallbackRunner,
    EventSite,
    SaveClock,
    Schedule,
    host_event,
    run_driver,
)


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def simulate(
    ckpt: Checkpoint,
    *,
    max_steps: int,
    log_every: int,
    seconds_per_event: float,
    save_cost: float = 0.0,
    share: Any = None,
    commit_seconds: float | None = None,
) -> list[int]:
    """Walk the run's host events on a fake clock; return the steps saved."""
    loop = toy_loop(
        max_steps=max_steps, log_every_n_steps=log_every, callbacks=[ckpt], checkpoint_dir="/tmp/x"
    )
    schedule = Schedule.for_loop(loop, checkpointing=True, evaluating=False)
    clock = FakeClock()
    saved: list[int] = []
    started: list[float] = []

    def save(step: int, meta: dict[str, Any]) -> None:
        started.append(clock.t)
        clock.t += save_cost
        saved.append(step)

    def busy() -> bool:  # an asynchronous commit runs commit_seconds after each save's start
        assert commit_seconds is not None
        return bool(started) and clock.t < started[-1] + commit_seconds

    site = EventSite(
        save=save,
        clock=SaveClock(
            every_seconds=schedule.checkpoint_seconds,
            now=clock,
            share=share or (lambda d: d),
            busy=busy if commit_seconds is not None else None,
        ),
    )
    state = TrainerCarryState(step=0, total_steps=max_steps)
    runner = CallbackRunner(loop, is_primary=True)
    step = 0
    while step < max_steps:
        nxt = schedule.next_event(step)
        clock.t += seconds_per_event * (nxt - step) / log_every
        step = state.step = nxt
        host_event(state, runner, schedule, site)
    return saved


def test_every_n_seconds_saves_at_the_first_event_past_the_interval() -> None:
    # 10 steps per event, 3 s each: events at t = 3, 6, 9, 12, ...; 10 s after the last save.
    saved = simulate(
        Checkpoint(every_n_seconds=10), max_steps=100, log_every=10, seconds_per_event=3.0
    )
    assert saved == [40, 80, 100]  # t=12 and t=24, then the final step (always)


def test_step_and_time_cadences_combine_and_any_save_restarts_the_clock() -> None:
    saved = simulate(
        Checkpoint(every_n_steps=50, every_n_seconds=10),
        max_steps=100,
        log_every=10,
        seconds_per_event=3.0,
    )
    # 40 (t=12, time), 50 (step; clock restarts at t=15), 90 (t=27), 100 (final)
    assert saved == [40, 50, 90, 100]


def test_default_cadence_waits_25_times_the_save_cost_between_saves() -> None:
    # 500 steps take 1 s, a save 0.2 s. The first save (500) is set-up, not a measure, so
    # 1000 is saved too (from t=2.2); then 25 x 0.2 = 5 s must pass: step 3500 (t=7.4).
    saved = simulate(
        Checkpoint(), max_steps=4000, log_every=500, seconds_per_event=1.0, save_cost=0.2
    )
    assert saved == [500, 1000, 3500, 4000]


def test_default_cadence_counts_the_asynchronous_commit_and_never_queues_behind_it() -> None:
    # Each save call returns at once and its commit runs 2.5 s more. 500 steps take 0.8 s.
    # Save 500 (t=0.8); no save while its commit runs (1000-2000); 2500 (t=4.0, the first
    # save's cost is set-up); its commit is seen done at t=7.2, so it cost 3.2 s and the
    # next needs 80 s from t=4.0, past the run's end (t=80): only the final step then.
    saved = simulate(
        Checkpoint(), max_steps=50_000, log_every=500, seconds_per_event=0.8, commit_seconds=2.5
    )
    assert saved == [500, 2500, 50_000]


def test_an_explicit_step_cadence_is_kept_exactly() -> None:
    saved = simulate(
        Checkpoint(every_n_steps=500),
        max_steps=4500,
        log_every=500,
        seconds_per_event=1.0,
        save_cost=0.125,
    )
    assert saved == list(range(500, 4501, 500))


def test_process_zero_decides_and_is_asked_only_where_the_clock_decides() -> None:
    asked: list[bool] = []

    def process_zero_says_no(local: bool) -> bool:
        asked.append(local)
        return False

    saved = simulate(
        Checkpoint(every_n_seconds=1),
        max_steps=50,
        log_every=10,
        seconds_per_event=5.0,
        share=process_zero_says_no,
    )
    assert saved == [50]  # this process wanted every save; process 0's "no" wins
    assert asked == [True, True, True, True]  # events 10..40 (50 is the final, always saved)

    asked.clear()
    saved = simulate(
        Checkpoint(every_n_steps=20),
        max_steps=50,
        log_every=10,
        seconds_per_event=5.0,
        share=process_zero_says_no,
    )
    assert saved == [20, 40, 50] and asked == []  # no time cadence: no collective


@pytest.mark.parametrize("steps_per_call", [1, 4, 50])
def test_time_saves_fall_on_existing_events_and_leave_the_chunks_unchanged(
    steps_per_call: int, tmp_path
) -> None:
    def run(callbacks: list[Any]) -> tuple[list[int], list[tuple[int, int]]]:
        loop = toy_loop(
            max_steps=60, log_every_n_steps=5, callbacks=callbacks, checkpoint_dir=str(tmp_path)
        )
        program, ckpt = ToyProgram(), RecordingCheckpointer()
        run_driver(
            loop, program, 0.0, data=ToyData(), checkpointer=ckpt, steps_per_call=steps_per_call
        )
        return ckpt.saved_steps, program.calls

    saved, calls = run([Checkpoint(every_n_seconds=1e-9)])
    _, calls_without = run([Checkpoint(every_n_steps=1000)])
    assert calls == calls_without  # the compiled chunks are the static ones
    assert set(saved) <= set(range(5, 61, 5)) and saved[-1] == 60
    assert len(saved) > 1  # at least one save besides the final one


@pytest.mark.parametrize("bad", [0, -5, True, "600", math.nan, math.inf])
def test_bad_every_n_seconds_is_a_config_error_naming_the_field(bad: Any) -> None:
    with pytest.raises(ConfigError, match="every_n_seconds") as info:
        Checkpoint(every_n_seconds=bad)
    assert info.value.field == "Checkpoint.every_n_seconds"


def test_time_cadence_round_trips_through_yaml(tmp_path) -> None:
    ckpt = Checkpoint(every_n_steps=1000, every_n_seconds=600, keep_last=2)
    data = "_core_factories:make_dataset"
    loop = toy_loop(dataset=data, callbacks=[ckpt], checkpoint_dir=str(tmp_path))
    text = loop.to_yaml()
    assert yaml.safe_load(text)["callbacks"] == [
        {"Checkpoint": {"every_n_steps": 1000, "every_n_seconds": 600.0, "keep_last": 2}}
    ]
    again = TrainingLoop.from_yaml(text)
    assert again.checkpoint_callback == ckpt
    plain = toy_loop(dataset=data, callbacks=[Checkpoint()], checkpoint_dir=str(tmp_path))
    default = TrainingLoop.from_yaml(plain.to_yaml())
    assert default.checkpoint_callback == Checkpoint() and Checkpoint().default_cadence
