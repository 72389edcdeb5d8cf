"""SIGKILL at any moment leaves the newest committed checkpoint valid and restorable.

A child process resumes from the directory and then saves step after step (asynchronously,
a few MB each) until it is killed with SIGKILL at varied moments; after each kill the
directory must restore to a committed step whose state and data position match that step.
"""

from __future__ import annotations

import random
import signal
import subprocess
import textwrap
import time

import numpy as np
import pytest
from _ckpt_helpers import (
    FINGERPRINT,
    PYTHON,
    assert_state_equal,
    child_env,
    data_iterator,
    make_state,
    template,
)

from pipekit_train.jax.checkpoint import Checkpointer

WIDTH = 100_000

CHILD = f"""
import sys
from _ckpt_helpers import FINGERPRINT, data_iterator, make_state, template
from pipekit_train.jax.checkpoint import Checkpointer

ck = Checkpointer(sys.argv[1], keep_last=2, fingerprint=FINGERPRINT)
it = data_iterator()
result = ck.restore(template(width={WIDTH}))
if result is not None:
    it.set_state(result.meta["data"])
step = result.step + 1 if result else 1
print("START", step, flush=True)
while True:
    it.next_batch()
    ck.save(step, make_state(float(step), width={WIDTH}), {{"step": step, "data": it.get_state()}})
    print("SAVING", step, flush=True)
    step += 1
"""


@pytest.mark.slow
def test_kill_at_several_points(tmp_path):
    rng = random.Random(0)
    expected_start = 1
    for kill_after in (2, 3, 5, 4):
        child = subprocess.Popen(
            [PYTHON, "-c", textwrap.dedent(CHILD), str(tmp_path)],
            stdout=subprocess.PIPE,
            text=True,
            env=child_env(JAX_PLATFORMS="cpu"),
        )
        seen = []
        try:
            for line in child.stdout:
                if line.startswith("START"):
                    # the child resumes right after the step the parent verified
                    assert int(line.split()[1]) == expected_start
                if line.startswith("SAVING"):
                    seen.append(int(line.split()[1]))
                    if len(seen) >= kill_after:
                        break
            time.sleep(rng.uniform(0.0, 0.3))  # land somewhere inside the next save
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
        assert seen, "child saved nothing"
        # lines the child printed before it died: the last save it started (a line the
        # kill cut short has no step number and says nothing)
        started = [
            int(x.split()[1])
            for x in child.stdout.read().splitlines()
            if x.startswith("SAVING ") and x.split()[1:2] and x.split()[1].isdigit()
        ]
        last_started = max([seen[-1], *started])

        it = data_iterator()
        with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
            result = ck.restore(template(width=WIDTH))
        assert result is not None, "no valid checkpoint after SIGKILL"
        # save(n) waits for save(n - 1) to commit, so "SAVING n" means n - 1 is durable
        assert seen[-1] - 1 <= result.step <= last_started
        assert result.meta["step"] == result.step
        assert_state_equal(result.state, make_state(float(result.step), width=WIDTH))
        it.set_state(result.meta["data"])
        assert it.position == result.step
        np.testing.assert_array_equal(
            it.next_batch()["y"], data_iterator().source[result.step]["y"]
        )
        assert not list(tmp_path.glob("*.corrupt"))
        expected_start = result.step + 1
