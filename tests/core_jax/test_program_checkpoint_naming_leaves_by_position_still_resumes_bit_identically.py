"""A program's checkpoint written before its leaves were named by key path (the layout names
them ``"00000"``, ``"00001"``, … by position) still resumes, bit for bit: upgrading pipekit
never strands a run. The old step is made from a real run's step by rewriting its layout's
names back to positions (the arrays and their order are what the old version wrote) and
re-recording the meta's checksum, as the old version did."""

from __future__ import annotations

import json
import shutil

import numpy as np
from _program_helpers import as_numpy, make_program, toy_loop

from pipekit_train import Checkpoint
from pipekit_train._checksum import json_checksum
from pipekit_train.engine import run_driver
from pipekit_train.jax.checkpoint import Checkpointer


def _run(ckpt_dir):
    program = make_program(warmup_steps=4, sample_steps=6)
    ckpt = Checkpointer(ckpt_dir, keep_last=3, fingerprint={"program": "toy-two-phase"})
    loop = toy_loop(callbacks=[Checkpoint(every_n_steps=5, keep_last=3)], checkpoint_dir=ckpt_dir)
    try:
        result = run_driver(loop, program, program.initial_carry, data=None, checkpointer=ckpt)
    finally:
        ckpt.close()
    return result, as_numpy(program.tree(result.carry))


def test_positional_layout_resumes_bit_identically(tmp_path):
    ckpt_dir = tmp_path / "ckpt"
    whole, want = _run(ckpt_dir)
    shutil.rmtree(ckpt_dir / "10")

    step = ckpt_dir / "5"
    meta = json.loads((step / "meta" / "metadata").read_text())
    assert [e["path"] for e in meta["layout"]] == ["count", "scale", "theta"]
    for i, entry in enumerate(meta["layout"]):
        entry["path"] = f"{i:05d}"
    (step / "meta" / "metadata").write_text(json.dumps(meta))
    for record_file in (step / "checksums").glob("*"):
        if record_file.name.endswith(".json") or record_file.name == "metadata":
            record = json.loads(record_file.read_text())
            record["meta"] = json_checksum(meta)
            record_file.write_text(json.dumps(record))

    resumed, got = _run(ckpt_dir)
    assert resumed.resumed_from_step == 5
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])
    np.testing.assert_array_equal(resumed.trace["theta"], whole.trace["theta"])
