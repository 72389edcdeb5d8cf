"""`pipekit_train.checkpoints.read_state` reads the saved arrays of a step of either store (an
Orbax step folder, a Lightning ``step-*.pt``) by name, from a checkpoint_dir (newest step) or
from the step itself, and refuses a step whose bytes differ from their checksum.

Before, ``read_state`` read Orbax folders only and did not check the checksums, so a test or
tool reading a damaged step got wrong numbers without a word.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from pipekit_train.checkpoints import read_state
from pipekit_train.errors import CheckpointError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from checkpoint_damage import biggest_data_file, flip_bytes  # noqa: E402

VALUES = np.random.default_rng(0).normal(size=512).astype(np.float32)


def _orbax(d: Path) -> tuple[str, Path]:
    import jax.numpy as jnp

    from pipekit_train.jax.checkpoint import Checkpointer

    with Checkpointer(d, keep_last=None, fingerprint={}) as ck:
        for step in (1, 2):
            ck.save(step, {"params": {"w": jnp.asarray(VALUES * step)}}, {})
    return "params.w", biggest_data_file(d / "2")


def _torch(d: Path) -> tuple[str, Path]:
    import torch

    from pipekit_train.adapters.lightning._checkpoint import TorchFileStore

    store = TorchFileStore(d, keep_last=None)
    for step in (1, 2):
        store.save(step, {"module": {"w": torch.from_numpy(VALUES * step)}}, {"fingerprint": {}})
    return "module.w", d / "step-000000002.pt"


@pytest.mark.parametrize("make", [_orbax, _torch], ids=["orbax", "torch-file"])
def test_read_state_of_either_store(make, tmp_path: Path) -> None:
    name, newest_data = make(tmp_path)
    np.testing.assert_array_equal(read_state(tmp_path)[name], VALUES * 2)  # the newest step
    np.testing.assert_array_equal(read_state(tmp_path, step=1)[name], VALUES)
    step_path = tmp_path / ("2" if name.startswith("params") else "step-000000002.pt")
    np.testing.assert_array_equal(read_state(step_path)[name], VALUES * 2)

    flip_bytes(newest_data)
    with pytest.raises(CheckpointError, match="checksum mismatch"):
        read_state(step_path)
    np.testing.assert_array_equal(read_state(tmp_path, step=1)[name], VALUES)
    with pytest.raises(CheckpointError, match="no committed step 7"):
        read_state(tmp_path, step=7)
