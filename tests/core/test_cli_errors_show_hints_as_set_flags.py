"""The CLI prints error hints in its own terms: `backend_options={"resume": "force"}` becomes
`--set backend_options.resume=force`, and `TrainingLoop.batch_size` becomes the YAML field
with the `--set` form. The translation is over the message text, so any backend's errors get it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipekit_train._cli_hints import cli_message
from pipekit_train.cli import main
from pipekit_train.config import _field_names

FIELDS = frozenset(_field_names())


def test_backend_options_dict_hint_becomes_set_flags() -> None:
    msg = 'To resume anyway pass backend_options={"resume": "force"}; or use a new checkpoint_dir.'
    out = cli_message(msg, FIELDS)
    assert "--set backend_options.resume=force" in out
    assert "backend_options={" not in out


def test_several_keys_and_yaml_scalars() -> None:
    out = cli_message(
        'use backend_options={"steps_per_call": 1, "async_checkpointing": False}', FIELDS
    )
    assert (
        "--set backend_options.steps_per_call=1 --set backend_options.async_checkpointing=false"
        in out
    )


def test_values_with_spaces_are_shell_quoted() -> None:
    out = cli_message('pass backend_options={"note": "two words"}', FIELDS)
    assert "--set 'backend_options.note=two words'" in out


def test_text_that_is_not_a_field_hint_is_left_alone() -> None:
    msg = "got extra={'a': 1} and shape={1, 2}"
    assert cli_message(msg, FIELDS) == msg


def test_field_mentions_point_at_the_yaml_field_and_set(tmp_path: Path, capsys) -> None:
    loop = tmp_path / "loop.yaml"
    loop.write_text("dataset: '_core_factories:make_dataset'\nloss: mse\nbatch_size: 0\n")
    assert main(["run", str(loop), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "TrainingLoop.batch_size" not in err
    assert "--set batch_size=VALUE" in err


def test_python_api_errors_are_unchanged() -> None:
    """Only the CLI translates: the exception raised to Python callers keeps its text."""
    from pipekit_train import ConfigError, TrainingLoop

    with pytest.raises(ConfigError, match=r"TrainingLoop\.batch_size"):
        TrainingLoop(dataset={"x": [0.0], "y": [0.0]}, loss="mse", batch_size=0)
