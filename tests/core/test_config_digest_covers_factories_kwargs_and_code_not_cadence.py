"""The config digest a checkpoint records (what lets the CLI call a rerun complete from the
files alone) changes with anything the factories would build differently — an import
string, a kwarg, the factory module's code or a helper beside it that it imports, an
identity field — and not with what a step does not depend on (callbacks, cadence, writers,
the checkpoint folder, `backend_options.resume`) nor with a file beside it that it does not
import. A loop holding a live object has none: only the backend can judge it. Nothing is
imported to compute it."""

from __future__ import annotations

import sys
from pathlib import Path

from pipekit_train import TrainingLoop
from pipekit_train._config_digest import config_digest
from pipekit_train.config import loop_from_dict

FACTORY = "def make(width=4):\n    return {'x': [[0.0] * width] * 8, 'y': [0.0] * 8}\n"


def _config(**changes: object) -> dict[str, object]:
    base: dict[str, object] = {
        "backend": "equinox",
        "model_op": {"factory": "digest_probe_factories:make", "kwargs": {"width": 4}},
        "dataset": "digest_probe_factories:make",
        "loss": "mse",
        "max_steps": 20,
        "checkpoint_dir": "runs/a",
        "log_every_n_steps": 5,
        "backend_options": {"steps_per_call": 5},
    }
    base.update(changes)
    return base


def _digest(folder: Path, **changes: object) -> str | None:
    return config_digest(loop_from_dict(_config(**changes), (str(folder),)))


def test_the_digest_follows_what_the_factories_build(tmp_path: Path) -> None:
    (tmp_path / "digest_probe_factories.py").write_text(FACTORY)
    base = _digest(tmp_path)
    assert base is not None and base == _digest(tmp_path)
    assert "digest_probe_factories" not in sys.modules  # found on disk, never imported
    for changed in (
        {"model_op": {"factory": "digest_probe_factories:make", "kwargs": {"width": 5}}},
        {"dataset": {"factory": "digest_probe_factories:make", "kwargs": {"width": 4}}},
        {"max_steps": 21},
        {"seed": 1},
        {"batch_size": 8},
        {"backend_options": {"steps_per_call": 10}},
        {"backend": "keras"},
    ):
        assert _digest(tmp_path, **changed) != base, changed
    for same in (
        {"checkpoint_dir": "runs/b"},
        {"log_every_n_steps": 10},
        {"callbacks": [{"Checkpoint": {"every_n_steps": 7}}]},
        {"backend_options": {"steps_per_call": 5, "resume": "auto"}},
        {"metric_writer": "jsonl"},
    ):
        assert _digest(tmp_path, **same) == base, same

    (tmp_path / "digest_probe_factories.py").write_text(FACTORY + "# edited\n")
    edited = _digest(tmp_path)
    assert edited is not None and edited != base
    (tmp_path / "unrelated_example.py").write_text("X = 1\n")
    assert _digest(tmp_path) == edited  # a file the factory does not import does not count
    (tmp_path / "helpers_beside_it.py").write_text("WIDTH = 4\n")
    factory = tmp_path / "digest_probe_factories.py"
    factory.write_text("import helpers_beside_it\n" + factory.read_text())
    with_helper = _digest(tmp_path)
    assert with_helper not in (None, edited)
    (tmp_path / "helpers_beside_it.py").write_text("WIDTH = 5\n")
    assert _digest(tmp_path) != with_helper  # the user's helper it imports counts too


def test_a_missing_module_or_a_live_object_gives_no_digest(tmp_path: Path) -> None:
    assert _digest(tmp_path) is None  # digest_probe_factories is not on the path
    live = TrainingLoop(model_op=object(), dataset={"x": [0.0], "y": [0.0]}, loss="mse")
    assert config_digest(live) is None
