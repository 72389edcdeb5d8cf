"""A newest Lightning checkpoint file with 8 bytes inverted (same size) is caught by its
checksum before ``torch.load`` reads it: a warning names the step, the file (and its checksum
record) is renamed ``*.corrupt``, the run resumes from the step before and ends with the
uninterrupted run's bits (the module's and the optimiser's tensors)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from _lightning_helpers import loop
from checkpoint_damage import assert_same_bits, flip_bytes

from pipekit_train import Checkpoint, TrainingLoop


def _loop(ckpt: Path) -> TrainingLoop:
    return loop(
        max_steps=6,
        checkpoint_dir=str(ckpt),
        callbacks=[Checkpoint(every_n_steps=2, keep_last=3)],
    )


def _tensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a checkpoint file's module and optimiser state, by a dotted name."""
    payload = torch.load(path, map_location="cpu", weights_only=True)
    out: dict[str, np.ndarray] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, torch.Tensor):
            out[prefix] = value.detach().cpu().numpy()
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}", v)
        elif isinstance(value, list | tuple):
            for i, v in enumerate(value):
                walk(f"{prefix}.{i}", v)

    walk("module", payload["module"])
    walk("optimizer", payload["optimizer"])
    return out


def test_bit_flip_in_the_newest_file_falls_back_to_the_previous_one(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    _, info = _loop(ckpt).run()
    assert info["resumed_from_step"] is None
    files = sorted(ckpt.glob("step-*.pt"))
    assert [p.name for p in files] == [f"step-{s:09d}.pt" for s in (2, 4, 6)]
    newest = files[-1]
    reference = _tensors(newest)

    flip_bytes(newest)
    with pytest.warns(UserWarning, match=r"step 6\b.*checksum mismatch"):
        _, info = _loop(ckpt).run()

    assert (ckpt / "step-000000006.pt.corrupt").is_file()
    assert (ckpt / "step-000000006.pt.crc32.corrupt").is_file()
    assert info["resumed_from_step"] == 4
    assert_same_bits(_tensors(ckpt / "step-000000006.pt"), reference)
