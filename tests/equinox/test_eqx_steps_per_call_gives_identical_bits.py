"""``steps_per_call`` K = 1, 7 and the default give bit-identical results.

Cadences are deliberately not multiples of K (log every 10, eval every 9), so
chunks are cut at uneven boundaries (K = 7 runs chunks of 7, 2, 1, 7, 1, 2, 7,
3); the public path (``TrainingLoop.run`` with ``backend_options``) is used
throughout. Per-step losses seen by callbacks are identical too, not just the
final parameters.
"""

from __future__ import annotations

import pytest
from _eqx_helpers import assert_bit_identical, make_data, run_loop, tiny_loop

from pipekit_train import Callback
from pipekit_train.adapters.equinox._options import DEFAULT_STEPS_PER_CALL
from pipekit_train.adapters.equinox._program import EquinoxProgram

VAL = make_data(16, seed=1)
MAX_STEPS = 30


class Losses(Callback):
    def __init__(self) -> None:
        self.steps: list[int] = []
        self.loss: list[float] = []
        self.evals: list[tuple[int, float]] = []

    def on_step_end(self, loop, state):
        self.steps.extend(state.window_steps)
        self.loss.extend(state.window["loss"])

    def on_eval_end(self, loop, state, metrics):
        self.evals.append((state.step, metrics["val_loss"]))


def _train(k):
    rec = Losses()
    options = {} if k is None else {"steps_per_call": k}
    chunks: list[int] = []
    original = EquinoxProgram.train_chunk

    def spy(self, carry, batches, step, num_steps):
        chunks.append(num_steps)
        return original(self, carry, batches, step, num_steps)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(EquinoxProgram, "train_chunk", spy)
        op, info = _run(options, rec)
    rec.chunks = chunks
    return op, info, rec


def _run(options, rec):
    return run_loop(
        tiny_loop(
            val_dataset=VAL,
            max_steps=MAX_STEPS,
            log_every_n_steps=10,
            eval_every_n_steps=9,
            callbacks=[rec],
            optimizer_config={
                "name": "adamw",
                "lr": {
                    "schedule": "warmup_cosine_decay",
                    "init_value": 0.0,
                    "peak_value": 1e-2,
                    "warmup_steps": 4,
                },
            },
            backend_options=options,
        )
    )


@pytest.fixture(scope="module")
def k1():
    return _train(1)


EVENTS = [9, 10, 18, 20, 27, 30]  # every host event: eval, log, the end


def expected_chunks(k: int) -> list[int]:
    """Chunks of at most ``k`` steps, never crossing a host event."""
    out, prev = [], 0
    for event in EVENTS:
        left = event - prev
        while left:
            out.append(min(k, left))
            left -= out[-1]
        prev = event
    return out


@pytest.mark.parametrize("k", [7, None], ids=["K=7", "default"])
def test_same_bits_as_k1(k1, k):
    op1, info1, rec1 = k1
    op, info, rec = _train(k)
    assert rec1.chunks == [1] * MAX_STEPS
    assert expected_chunks(7) == [7, 2, 1, 7, 1, 2, 7, 3]
    # The fusion really happened, cut at every event.
    assert rec.chunks == expected_chunks(DEFAULT_STEPS_PER_CALL if k is None else k)
    assert info["steps_per_call"] == (DEFAULT_STEPS_PER_CALL if k is None else k)
    assert_bit_identical(op, op1)
    assert rec.steps == rec1.steps == list(range(1, MAX_STEPS + 1))
    assert rec.loss == rec1.loss  # every step's loss, bit for bit (as floats)
    assert rec.evals == rec1.evals
    assert [s for s, _ in rec.evals] == [9, 18, 27, 30]
    assert info["final_metrics"] == info1["final_metrics"]
