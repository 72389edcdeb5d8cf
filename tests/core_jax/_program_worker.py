"""Subprocess worker: runs the toy two-phase program with real Orbax checkpoints.

``python _program_worker.py CKPT_DIR OUT.npz`` prints ``STEP <n> <phase>`` at each
boundary (sleeping a little, so the parent can SIGKILL it at a chosen step) and,
when done, writes the final carry and trace to OUT.npz and prints
``DONE <resumed_from_step>``.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from _program_helpers import as_numpy, make_program, toy_loop

from pipekit_train import Callback, Checkpoint
from pipekit_train.driver import run_driver
from pipekit_train.jax.checkpoint import Checkpointer


class Announce(Callback):
    def on_step_end(self, loop, state):
        print("STEP", state.step, state.phase, flush=True)
        time.sleep(0.05)


def main(ckpt_dir: str, out: str) -> None:
    program = make_program(warmup_steps=12, sample_steps=30)
    loop = toy_loop(
        callbacks=[Announce(), Checkpoint(every_n_steps=5, keep_last=2)],
        checkpoint_dir=ckpt_dir,
        log_every_n_steps=1,
    )
    ckpt = Checkpointer(ckpt_dir, keep_last=2, fingerprint={"program": "toy-two-phase"})
    result = run_driver(
        loop, program, program.initial_carry, data=None, checkpointer=ckpt, steps_per_call=3
    )
    carry = as_numpy(program.tree(result.carry))
    np.savez(out, trace=result.trace["theta"], **carry)
    print("DONE", result.resumed_from_step, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
