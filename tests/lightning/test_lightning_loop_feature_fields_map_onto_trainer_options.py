"""The loop's training-feature fields on the lightning backend: ``accumulate_steps`` and
``precision`` map onto Lightning's ``accumulate_grad_batches`` and precision plugin (the same
run, bit for bit, as giving the Trainer option directly); a loop field that contradicts the
Trainer option is a ``ConfigError`` before ``Trainer.fit``. (``ema_decay`` is the bridge's
own average: ``test_lightning_ema_weights_are_checkpointed_and_build_the_op.py``.)"""

from __future__ import annotations

import numpy as np
import pytest
from _lightning_helpers import loop

from pipekit_train.errors import ConfigError


def _params(op) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for p in op.module.parameters()]


def test_a_loop_field_contradicting_the_trainer_option_is_refused(no_fit) -> None:
    with pytest.raises(ConfigError) as e:
        loop(accumulate_steps=2, backend_options={"accumulate_grad_batches": 3}).run()
    assert e.value.field == "backend_options.accumulate_grad_batches"


def test_accumulate_steps_is_accumulate_grad_batches() -> None:
    by_field, info = loop(max_steps=6, accumulate_steps=2).run()
    by_option, _ = loop(max_steps=6, backend_options={"accumulate_grad_batches": 2}).run()
    assert info["final_step"] == 6  # optimiser steps, as the loop counts them
    for a, b in zip(_params(by_field), _params(by_option), strict=True):
        np.testing.assert_array_equal(a, b)


def test_mixed_bfloat16_runs_through_lightnings_precision_plugin() -> None:
    op, info = loop(max_steps=4, precision="mixed-bfloat16").run()
    assert info["final_step"] == 4
    assert all(p.dtype.is_floating_point for p in op.module.parameters())
