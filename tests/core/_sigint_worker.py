"""Subprocess worker: the toy backend under the real driver, slow enough to be interrupted.

``python _sigint_worker.py STEP_SECONDS``. Prints ``READY`` once training runs, then
``RESULT <interrupted> <final_step> <saved steps>`` when the driver returns, or
``ABORTED`` if a ``KeyboardInterrupt`` escapes.
"""

from __future__ import annotations

import sys
import time

from _core_toy_backend import RecordingCheckpointer, ToyData, ToyProgram, toy_loop

from pipekit_train import Checkpoint
from pipekit_train.engine import run_driver


def main(step_seconds: float) -> int:
    announced = []

    def on_step(step: int) -> None:
        if not announced:
            print("READY", flush=True)
            announced.append(True)
        time.sleep(step_seconds)

    ckpt = RecordingCheckpointer()
    loop = toy_loop(
        max_steps=100_000,
        log_every_n_steps=10,
        checkpoint_dir="unused-by-the-recording-checkpointer",
        callbacks=[Checkpoint(every_n_steps=10_000)],
    )
    try:
        result = run_driver(
            loop, ToyProgram(on_step=on_step), 0.0, data=ToyData(), checkpointer=ckpt
        )
    except KeyboardInterrupt:
        print("ABORTED", flush=True)
        return 130
    print("RESULT", result.interrupted, result.final_step, ckpt.saved_steps, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(float(sys.argv[1])))
