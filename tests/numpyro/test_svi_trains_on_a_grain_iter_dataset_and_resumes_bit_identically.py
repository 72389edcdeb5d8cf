"""numpyro-svi trains on the user's own ``grain.IterDataset`` and, SIGKILLed between
checkpoints and run again, ends bit-identical to an uninterrupted run (issue 20).

The stream yields single examples (shuffled and repeated by Grain); pipekit batches them and
scales each minibatch's likelihood by the declared ``backend_options.num_data``. Grain's
iterator state is saved in the same checkpoint commit as the ``SVIState``, so the rerun reads
the batches the killed run never trained on: the guide's params and every loss after the
resume equal the uninterrupted run's bit for bit. Real subprocesses, a real SIGKILL, real
Orbax checkpoints (``_svi_runs.py``).
"""

from __future__ import annotations

import signal
from pathlib import Path

import numpy as np
from _svi_runs import committed, finish, kill_when_paused

PAUSE_AT, EVERY = 35, 20  # killed between the checkpoints at 20 and 40


def test_iter_dataset_sigkill_then_rerun_gives_the_same_params_and_losses(
    tmp_path: Path,
) -> None:
    ref_dir, run_dir = tmp_path / "ref", tmp_path / "run"
    ref_dir.mkdir()
    run_dir.mkdir()
    ref_info = finish(ref_dir, "ref.npz", "iter")
    assert ref_info["final_step"] == 60 and ref_info["resumed_from_step"] is None
    assert np.isfinite(ref_info["final_loss"])

    assert kill_when_paused(run_dir, "out.npz", PAUSE_AT, EVERY, "iter") == -signal.SIGKILL
    assert not (run_dir / "out.npz").exists()
    assert committed(run_dir / "ckpt") == [EVERY]

    info = finish(run_dir, "out.npz", "iter")
    assert info["resumed_from_step"] == EVERY and info["final_step"] == 60

    ref, out = np.load(ref_dir / "ref.npz"), np.load(run_dir / "out.npz")
    params = sorted(k for k in ref.files if k.startswith("param:"))
    assert params and params == sorted(k for k in out.files if k.startswith("param:"))
    for key in params:
        assert ref[key].tobytes() == out[key].tobytes(), key
    assert out["loss_steps"].tolist() == list(range(EVERY + 1, 61))
    assert ref["loss"][EVERY:].tobytes() == out["loss"].tobytes()
