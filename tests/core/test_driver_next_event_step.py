"""`next_event_step(step, intervals, max_steps)`: the first step after `step` at which any
cadence fires, capped at `max_steps`."""

from __future__ import annotations

import pytest

from pipekit_train.engine import next_event_step


@pytest.mark.parametrize(
    ("step", "intervals", "max_steps", "expected"),
    [
        (0, [10], 100, 10),
        (9, [10], 100, 10),
        (10, [10], 100, 20),  # strictly after the current step
        (95, [10], 100, 100),  # capped at max_steps
        (0, [10, 25], 100, 10),
        (20, [10, 25], 100, 25),
        (25, [10, 25], 100, 30),
        (5, [3, 4], 100, 6),
        (6, [3, 4], 100, 8),
        (0, [], 7, 7),  # no cadence: only max_steps
        (99, [1000], 100, 100),
        (0, [1], 100, 1),
        (41, [1, 50], 100, 42),
        (0, [500], 23, 23),
    ],
)
def test_next_event_step(step: int, intervals: list[int], max_steps: int, expected: int) -> None:
    assert next_event_step(step, intervals, max_steps) == expected


def test_walking_the_events_visits_every_multiple_once() -> None:
    steps, s = [], 0
    while s < 60:
        s = next_event_step(s, [6, 15], 60)
        steps.append(s)
    assert steps == [6, 12, 15, 18, 24, 30, 36, 42, 45, 48, 54, 60]
