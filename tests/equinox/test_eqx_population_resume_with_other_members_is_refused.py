"""The resume guard records a population's members: the same population rerun resumes from
its checkpoint, one with other members is refused by name before anything trains, and its
checkpoint folder is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from _eqx_helpers import tiny_loop
from user_files import snapshot

from pipekit_train.adapters.equinox import run_population
from pipekit_train.errors import CheckpointError

MEMBERS = [{"optimizer_config.lr": 1e-2}, {"optimizer_config.lr": 3e-2, "seed": 4}]


def test_other_members_are_refused_on_resume(tmp_path: Path) -> None:
    loop = tiny_loop(checkpoint_dir=str(tmp_path / "run"), backend="equinox")
    first = run_population(loop, MEMBERS)
    assert [info["final_step"] for _, info in first] == [10, 10]
    again = run_population(loop, MEMBERS)
    assert again[1][1]["resumed_from_step"] == 10
    before = snapshot(tmp_path / "run")
    with pytest.raises(CheckpointError, match="population"):
        run_population(loop, [MEMBERS[0], {"optimizer_config.lr": 0.1}])
    assert snapshot(tmp_path / "run") == before
