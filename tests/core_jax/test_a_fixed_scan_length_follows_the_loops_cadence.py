"""A backend's fixed scan length (``fixed_chunk``) is cut to the loop's regular chunk.

With 100 steps a call and a log every 5 steps every chunk is at most 5 steps long, so a
100-step scan would never run and each chunk would run as single steps. In a run of at
least ``SCAN_REPAID_AFTER`` such chunks ``run_program`` compiles the loop's regular length
instead (``regular_chunk``: ``steps_per_call`` cut to the greatest common divisor of the
event cadences), and the bits stay those of single steps; a shorter run keeps single steps
(one compile fewer).
"""

from __future__ import annotations

import numpy as np
import pytest
from _program_helpers import as_numpy, make_program, toy_loop

from pipekit_train import Callback
from pipekit_train.engine import regular_chunk
from pipekit_train.jax.program import SCAN_REPAID_AFTER, run_program


class Every(Callback):
    def __init__(self, n: int) -> None:
        self.every_n_steps = n


def _run(steps_per_call: int, fixed: int | None, sample_steps: int = 130):
    program = make_program(sample_steps=sample_steps, fixed_chunk=fixed)
    result = run_program(
        toy_loop(), program, data=None, checkpointer=None, steps_per_call=steps_per_call
    )
    return program, as_numpy(program.tree(result.carry)), result


def test_a_longer_fixed_scan_compiles_the_log_cadence_and_keeps_the_bits():
    _, single, single_result = _run(1, None)
    program, carry, result = _run(100, 100)
    # log every 5; phases of 12 and 130 steps: the 2- and 3-step chunks at the phase end
    # run as single steps, every other chunk through the one 5-step scan
    assert 12 + 130 >= SCAN_REPAID_AFTER * 5
    assert program.fixed_chunk == 5
    assert sorted({k for _, k in program._compiled}) == [1, 5]
    for name in single:
        np.testing.assert_array_equal(carry[name], single[name])
    np.testing.assert_array_equal(result.trace["theta"], single_result.trace["theta"])


def test_a_short_run_keeps_single_steps_and_compiles_no_scan():
    _, single, _ = _run(1, None, sample_steps=30)
    program, carry, _ = _run(100, 100, sample_steps=30)
    assert 12 + 30 < SCAN_REPAID_AFTER * 5
    assert program.fixed_chunk == 100  # never reached: every chunk is at most 5 steps
    assert sorted({k for _, k in program._compiled}) == [1]
    for name in single:
        np.testing.assert_array_equal(carry[name], single[name])


@pytest.mark.parametrize(
    ("log", "callbacks", "steps_per_call", "want"),
    [
        (50, [], 100, 50),  # the defaults: a log every 50 steps, 100 steps a call
        (500, [], 100, 100),  # events further apart than a call: the call's length
        (30, [Every(50)], 100, 10),  # events at 30, 50, 60, 90, 100, …: every 10 steps
        (50, [], 7, 7),  # 7 steps a call between events 50 apart: 7 at a time
        (9, [Every(13)], 7, 1),  # events at 9, 13, 18, 26, 27, …: no common length
    ],
)
def test_the_regular_chunk_is_the_calls_length_cut_to_the_cadences_divisor(
    log, callbacks, steps_per_call, want
):
    loop = toy_loop(log_every_n_steps=log, callbacks=callbacks)
    assert regular_chunk(loop, checkpointing=False, steps_per_call=steps_per_call) == want
