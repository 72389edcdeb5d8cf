"""A NaN in one chain of four is caught at its step, and the error names the step and the chain."""

from __future__ import annotations

import pytest
from _program_helpers import make_program, toy_loop

from pipekit_train import TerminateOnNaN
from pipekit_train.engine import run_driver
from pipekit_train.errors import TrainingError


@pytest.mark.parametrize("k", [1, 10])
def test_nan_in_one_chain_is_caught(k):
    program = make_program(nan_at=(17, 2))
    loop = toy_loop(callbacks=[TerminateOnNaN(monitor="energy")])
    with pytest.raises(TrainingError, match=r"at step 17, chain 2"):
        run_driver(
            loop, program, program.initial_carry, data=None, checkpointer=None, steps_per_call=k
        )
