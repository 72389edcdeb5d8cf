"""The real resume hints of the Orbax checkpoint glue, printed by the CLI, read as `--set` flags."""

from __future__ import annotations

from pipekit_train._cli_hints import cli_message
from pipekit_train.config import _field_names
from pipekit_train.jax import checkpoint


def test_resume_override_hint_becomes_set_flags() -> None:
    out = cli_message(checkpoint._OVERRIDE_HINT, frozenset(_field_names()))
    assert "--set backend_options.resume=force" in out
    assert "--set backend_options.resume=never" in out
    assert 'backend_options={"' not in out
