"""A plain Orbax user restores a run's checkpoint with stock arguments, without pipekit.

``orbax.checkpoint.CheckpointManager(dir).restore(step)`` (no item handlers, no args, in
a process where ``pipekit_train`` cannot be imported) returns every item of the step:
the ``state`` as the packed host buffers pipekit writes, the ``meta`` with the ``layout``
that names each leaf by the carry's key path, and the ``checksums`` record as JSON. The
layout's numbers alone rebuild the leaves, and they equal what the documented call
``pipekit_train.checkpoints.read_state`` gives and what the run ended with.

Before, the stock restore raised ``ValueError`` on the ``checksums`` item (its handler's
type string named a pipekit class) and the layout named the leaves ``"00000"``, ….
"""

from __future__ import annotations

import json

import numpy as np
from _program_helpers import as_numpy, make_program, toy_loop

from pipekit_train import Checkpoint
from pipekit_train.checkpoints import read_state
from pipekit_train.engine import run_driver
from pipekit_train.jax.checkpoint import Checkpointer

STOCK = """
import json, sys
import numpy as np
import orbax.checkpoint as ocp

restored = ocp.CheckpointManager(sys.argv[1]).restore(int(sys.argv[2]))
state, meta = restored["state"], restored["meta"]
leaves = {}
for e in meta["layout"]:  # docs/checkpointing.md, "Looking inside"
    if "item" in e:
        leaves[e["path"]] = np.asarray(state[e["item"]])
    else:
        size = int(np.prod(e["shape"], dtype=np.int64))
        buf = np.asarray(state[e["buffer"]])
        leaves[e["path"]] = buf[e["offset"] : e["offset"] + size].reshape(e["shape"])
np.savez(sys.argv[3], **leaves)
print(json.dumps({"items": sorted(restored.keys()), "state": sorted(state),
                  "checksums": sorted(restored["checksums"]), "step": meta["step"]}))
"""


def test_stock_orbax_restore_and_read_state_give_the_named_carry(tmp_path, python_without):
    ckpt_dir = tmp_path / "ckpt"
    program = make_program(warmup_steps=4, sample_steps=6)
    ckpt = Checkpointer(ckpt_dir, keep_last=2, fingerprint={"program": "toy-two-phase"})
    loop = toy_loop(callbacks=[Checkpoint(every_n_steps=5, keep_last=2)], checkpoint_dir=ckpt_dir)
    result = run_driver(
        loop, program, program.initial_carry, data=None, checkpointer=ckpt, steps_per_call=2
    )
    ckpt.close()
    final = as_numpy(program.tree(result.carry))  # {"count", "scale", "theta"}

    out = tmp_path / "stock.npz"
    code = f"import sys; sys.argv = ['x', {str(ckpt_dir)!r}, '10', {str(out)!r}]\n" + STOCK
    done = python_without(code, "pipekit_train")
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["items"] == ["checksums", "meta", "state", "trace"]
    assert seen["state"] == ["packed__float32", "packed__int32"] and seen["step"] == 10
    assert {"algorithm", "arrays", "meta"} <= set(seen["checksums"])

    stock = dict(np.load(out))
    ours = read_state(ckpt_dir, step=10)
    assert sorted(stock) == sorted(ours) == sorted(final) == ["count", "scale", "theta"]
    for name in final:
        np.testing.assert_array_equal(stock[name], final[name])
        np.testing.assert_array_equal(ours[name], final[name])
