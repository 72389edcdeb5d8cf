"""Subprocess worker: runs the toy two-phase program with real Orbax checkpoints.

``python _program_worker.py CKPT_DIR OUT.npz [PAUSE_AT]`` prints ``STEP <n> <phase>``
at each boundary and, at step ``PAUSE_AT``, waits there for the parent's SIGKILL
(so the kill lands at a known step whatever the load). When done, it writes the
final carry and trace to OUT.npz and prints ``DONE <resumed_from_step>``.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from _program_helpers import as_numpy, make_program, toy_loop

from pipekit_train import Callback, Checkpoint
from pipekit_train.engine import run_driver
from pipekit_train.jax.checkpoint import Checkpointer


class Announce(Callback):
    def __init__(self, pause_at: int | None, checkpointer: Checkpointer) -> None:
        self.pause_at = pause_at
        self.checkpointer = checkpointer

    def on_step_end(self, loop, state):
        if state.step == self.pause_at:
            # Let the newest asynchronous save commit (killing mid-save is covered by
            # test_checkpoint_survives_sigkill_mid_save), then wait to be killed.
            self.checkpointer.wait()
            print("STEP", state.step, state.phase, flush=True)
            time.sleep(120)
        print("STEP", state.step, state.phase, flush=True)


def main(ckpt_dir: str, out: str, pause_at: int | None) -> None:
    program = make_program(warmup_steps=12, sample_steps=30)
    ckpt = Checkpointer(ckpt_dir, keep_last=2, fingerprint={"program": "toy-two-phase"})
    loop = toy_loop(
        callbacks=[Announce(pause_at, ckpt), Checkpoint(every_n_steps=5, keep_last=2)],
        checkpoint_dir=ckpt_dir,
        log_every_n_steps=1,
    )
    result = run_driver(
        loop, program, program.initial_carry, data=None, checkpointer=ckpt, steps_per_call=3
    )
    carry = as_numpy(program.tree(result.carry))
    np.savez(out, trace=result.trace["theta"], **carry)
    print("DONE", result.resumed_from_step, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else None)
