"""Issue 20: the user's module on their own shuffled ``DataLoader`` (a ``TensorDataset`` of
``(x, y)`` batches) SIGKILLed at step 21, mid-epoch, and resumed ends bit-identical to an
uninterrupted run of the same module on the same data given as arrays: pipekit owns the
order of a loader's batches as of arrays', so resume is exact and the loader changes
nothing but the batch form."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from _resume_helpers import run_worker

ARRAYS = {"PIPEKIT_TEST_OWN": "1"}
LOADER = {**ARRAYS, "PIPEKIT_TEST_LOADER": "1"}


def test_dataloader_sigkill_then_resume_matches_the_arrays_run(tmp_path: Path) -> None:
    run_worker(tmp_path / "ref", tmp_path / "ref.npz", 0, env=ARRAYS)
    reference = dict(np.load(tmp_path / "ref.npz"))
    ckpt = tmp_path / "ckpt"
    assert run_worker(ckpt, tmp_path / "killed.npz", 0, kill_at=21, env=LOADER) == -9
    run_worker(ckpt, tmp_path / "resumed.npz", 0, env=LOADER)
    info = json.loads((tmp_path / "resumed.npz.json").read_text())
    assert info["resumed_from_step"] == 20 and info["final_step"] == 40
    resumed = dict(np.load(tmp_path / "resumed.npz"))
    keys = [k for k in reference if k.startswith(("module/", "opt/"))]
    assert keys and any(k.endswith("momentum_buffer") for k in keys)
    for key in keys:
        np.testing.assert_array_equal(resumed[key], reference[key], err_msg=key)
    steps, losses = reference["losses_steps"].tolist(), reference["losses"].tolist()
    ref_loss = dict(zip(steps, losses, strict=True))
    got = dict(zip(resumed["losses_steps"].tolist(), resumed["losses"].tolist(), strict=True))
    assert min(got) == 21 and got == {s: ref_loss[s] for s in got}
