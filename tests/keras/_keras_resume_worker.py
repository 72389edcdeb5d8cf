"""A Keras training job run in a subprocess by the resume tests.

Usage: python _keras_resume_worker.py CKPT_DIR OUT_NPZ MODE [AT]

Trains a dropout MLP on digits (parameters depend on the dropout RNG stream and the
data order) for MAX_STEPS steps, checkpointing every 20, logging every 5. Prints
``step N`` at every host event (the parent may SIGKILL it at any moment;
``PIPEKIT_TEST_EVENT_SLEEP`` seconds of sleep per event slow it down for that, and
``PIPEKIT_TEST_WAIT_COMMIT`` holds it at step 35 until a checkpoint has committed, so
that a loaded machine cannot finish the run before the parent kills it). MODE:
``run`` (no interruption), ``kill-after-checkpoint`` (SIGKILL right after the
checkpoint of step AT was handed to the asynchronous writer), ``sigterm`` /
``sigint`` (sends itself that signal at the event of step AT). At a normal end it
writes every model and optimiser variable and the loss of every step it ran to
OUT_NPZ (and the compiled accuracy metric's row of every step, when there is one), and
prints backend_info and the evaluations as JSON on its last line.
``PIPEKIT_TEST_FEATURES=1`` trains with ``accumulate_steps=2`` and ``ema_decay=0.9``
(the EMA averages are optimiser variables, so they are in OUT_NPZ too).
``PIPEKIT_TEST_OWN=1`` trains the model the user compile()d (SGD with momentum on an
ExponentialDecay schedule, its own loss and accuracy metric; no loss=, no optimizer_config).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

import numpy as np
from _keras_helpers import digits, mlp, variables

from pipekit_train import Callback, Checkpoint, TrainingLoop

MAX_STEPS = 80


def _wait_for_a_commit(directory: str, timeout: float = 120.0) -> None:
    """Block until a checkpoint step has committed (the first async save can be slow)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.isdir(directory) and any(p.isdigit() for p in os.listdir(directory)):
            return
        time.sleep(0.05)


class Recorder(Callback):
    def __init__(self, mode: str, at: int) -> None:
        self.mode, self.at = mode, at
        self.losses: dict[int, float] = {}
        self.accuracies: dict[int, float] = {}  # the compiled metric's rows (PIPEKIT_TEST_OWN)
        self.evals: dict[int, dict[str, float]] = {}

    def on_step_end(self, loop, state) -> None:
        for step, loss in zip(state.window_steps, state.window["loss"], strict=True):
            self.losses[step] = float(loss)
        for step, acc in zip(state.window_steps, state.window.get("accuracy", []), strict=False):
            self.accuracies[step] = float(acc)
        if os.environ.get("PIPEKIT_TEST_WAIT_COMMIT") and state.step >= 35:
            _wait_for_a_commit(loop.checkpoint_dir)
        print(f"step {state.step}", flush=True)
        time.sleep(float(os.environ.get("PIPEKIT_TEST_EVENT_SLEEP", "0")))  # a slower run
        if state.step == self.at and self.mode in ("sigterm", "sigint"):
            os.kill(os.getpid(), signal.SIGTERM if self.mode == "sigterm" else signal.SIGINT)

    def on_eval_end(self, loop, state, metrics) -> None:
        self.evals[state.step] = dict(metrics)

    def on_checkpoint(self, loop, state, step) -> None:
        if step == self.at and self.mode == "kill-after-checkpoint":
            os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    ckpt, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    at = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    model = mlp(hidden=32, dropout=0.3, seed=0)
    recorder = Recorder(mode, at)
    features = (
        {"accumulate_steps": 2, "ema_decay": 0.9} if os.environ.get("PIPEKIT_TEST_FEATURES") else {}
    )
    training: dict = {
        "loss": "cross_entropy",
        "optimizer_config": {
            "name": "adamw",
            "lr": {"schedule": "cosine_decay", "init_value": 3e-3},
        },
    }
    if os.environ.get("PIPEKIT_TEST_OWN"):
        import keras

        rate = keras.optimizers.schedules.ExponentialDecay(0.05, decay_steps=30, decay_rate=0.5)
        model.compile(
            optimizer=keras.optimizers.SGD(rate, momentum=0.9),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )
        training = {}
    loop = TrainingLoop(
        **features,
        **training,
        model_op=model,
        dataset=digits(600),
        val_dataset=digits(200, offset=1500),
        batch_size=32,
        max_steps=MAX_STEPS,
        log_every_n_steps=5,
        eval_every_n_steps=40,
        checkpoint_dir=ckpt,
        callbacks=[Checkpoint(every_n_steps=20, keep_last=3), recorder],
        backend="keras",
    )
    _, info = loop.run()
    steps = sorted(recorder.losses)
    np.savez(
        out,
        *variables(model),
        loss_steps=np.array(steps),
        losses=np.array([recorder.losses[s] for s in steps]),
        accuracy_steps=np.array(sorted(recorder.accuracies)),
        accuracies=np.array([recorder.accuracies[s] for s in sorted(recorder.accuracies)]),
    )
    keep = ("final_step", "resumed_from_step", "interrupted", "stop_reason", "final_metrics")
    print(json.dumps({**{k: info[k] for k in keep}, "evals": recorder.evals}), flush=True)


if __name__ == "__main__":
    main()
