"""An unusable ``checkpoint_dir`` is a CheckpointError before compiling; nothing on disk is lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from _eqx_helpers import (
    assert_bit_identical,
    make_model,
    run_loop,
    tiny_loop,
    watch_compilation,
)

from pipekit_train import Checkpoint, CheckpointError


def _tree(root: Path) -> dict[str, int]:
    """Every file under ``root`` with its size: a snapshot of what is on disk."""
    return {
        str(p.relative_to(root)): p.stat().st_size for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_checkpoint_dir_below_a_regular_file(monkeypatch, tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file, not a folder")
    target = blocker / "ckpt"
    with watch_compilation(monkeypatch) as watch:
        with pytest.raises(CheckpointError) as info:
            run_loop(tiny_loop(checkpoint_dir=str(target)))
    assert not watch.anything
    msg = str(info.value)
    assert "checkpoint_dir" in msg and str(target) in msg and "writable" in msg
    assert blocker.read_text() == "a file, not a folder"


def test_checkpoint_dir_that_is_a_regular_file(monkeypatch, tmp_path):
    target = tmp_path / "ckpt"
    target.write_text("precious")
    with watch_compilation(monkeypatch) as watch:
        with pytest.raises(CheckpointError, match="checkpoint_dir"):
            run_loop(tiny_loop(checkpoint_dir=str(target)))
    assert not watch.anything
    assert target.read_text() == "precious"


def test_checkpoint_of_a_different_model_structure(monkeypatch, tmp_path):
    ckpt = tmp_path / "ckpt"
    one_layer = dict(checkpoint_dir=str(ckpt), callbacks=[Checkpoint(every_n_steps=5)])
    first_op, first = run_loop(tiny_loop(model_op=make_model(depth=1), max_steps=10, **one_layer))
    assert first["final_step"] == 10 and first["resumed_from_step"] is None
    before = _tree(ckpt)
    assert before

    with watch_compilation(monkeypatch) as watch:
        with pytest.raises(CheckpointError) as info:
            run_loop(tiny_loop(model_op=make_model(depth=2), max_steps=10, **one_layer))
    assert not watch.anything, "the mismatch was found after compiling"
    msg = str(info.value)
    assert "model_structure" in msg  # the differing fingerprint field
    assert str(ckpt) in msg
    assert '"resume": "never"' in msg or "new checkpoint_dir" in msg  # how to get past it
    # The only fingerprint field that differs is the model's structure.
    for other in ("optimizer_config", "dataset_length", "batch_size", "seed"):
        assert f"{other}:" not in msg

    # Nothing was lost, moved or rewritten ...
    assert _tree(ckpt) == before
    # ... and the old checkpoint still restores: the 1-layer run resumes from it.
    op, info2 = run_loop(tiny_loop(model_op=make_model(depth=1), max_steps=10, **one_layer))
    assert info2["resumed_from_step"] == 10 and info2["final_step"] == 10
    assert_bit_identical(op, first_op)


def test_checkpoint_of_a_different_width_names_model_structure(tmp_path):
    ckpt = tmp_path / "ckpt"
    run_loop(tiny_loop(model_op=make_model(width=8), max_steps=5, checkpoint_dir=str(ckpt)))
    with pytest.raises(CheckpointError, match="model_structure"):
        run_loop(tiny_loop(model_op=make_model(width=16), max_steps=5, checkpoint_dir=str(ckpt)))
