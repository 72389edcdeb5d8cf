"""The builder's K-step calls equal K single steps, bit for bit: carry, per-chain metrics, trace.

Cadences are not multiples of K (log every 5, phases of 12 and 30 steps), so
chunks of many lengths run; ``fixed_chunk`` compiles only two shapes and must
give the same bits too.
"""

from __future__ import annotations

import numpy as np
import pytest
from _program_helpers import CHAINS, DIM, as_numpy, make_program, toy_loop

from pipekit_train import Callback
from pipekit_train.engine import run_driver


class Window(Callback):
    def __init__(self) -> None:
        self.steps: list[int] = []
        self.energy: list[np.ndarray] = []
        self.phases: list[tuple[int, str]] = []

    def on_step_end(self, loop, state):
        self.steps.extend(state.window_steps)
        self.energy.extend(state.window["energy"])
        self.phases.append((state.step, state.phase))


def _run(k, fixed=None):
    rec = Window()
    program = make_program(fixed_chunk=fixed)
    result = run_driver(
        toy_loop(callbacks=[rec]),
        program,
        program.initial_carry,
        data=None,
        checkpointer=None,
        steps_per_call=k,
    )
    return as_numpy(program.tree(result.carry)), result, rec


@pytest.fixture(scope="module")
def reference():
    return _run(1)


@pytest.mark.parametrize(("k", "fixed"), [(7, None), (50, None), (4, 4)])
def test_fused_calls_give_identical_bits(reference, k, fixed):
    carry_1, result_1, rec_1 = reference
    carry_k, result_k, rec_k = _run(k, fixed)
    for name in carry_1:
        np.testing.assert_array_equal(carry_k[name], carry_1[name])
    assert rec_k.steps == rec_1.steps == list(range(1, 43))
    # one window entry per step, each with the chain axis (never flattened)
    assert all(e.shape == (CHAINS,) for e in rec_k.energy)
    np.testing.assert_array_equal(np.stack(rec_k.energy), np.stack(rec_1.energy))
    # the trace holds the sampling phase only, one row per draw
    assert result_k.trace["theta"].shape == (30, CHAINS, DIM)
    np.testing.assert_array_equal(result_k.trace["theta"], result_1.trace["theta"])
    assert result_k.final_step == 42


def test_phases_are_seen_by_callbacks(reference):
    _, result, rec = reference
    seen = dict(rec.phases)
    assert seen[10] == "warmup" and seen[12] == "warmup"
    assert seen[15] == "sampling" and seen[42] == "sampling"
    assert result.state.phases == ("warmup", "sampling")


def test_fixed_chunk_compiles_two_shapes():
    program = make_program(fixed_chunk=4)
    run_driver(
        toy_loop(), program, program.initial_carry, data=None, checkpointer=None, steps_per_call=4
    )
    assert sorted({k for _, k in program._compiled}) == [1, 4]
