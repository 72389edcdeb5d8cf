"""`pipekit-train run LOOP.yaml --set field=value …`: overrides are parsed as YAML, dotted
fields reach into mappings, and everything happens before the backend is resolved."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from _core_helpers import child_env, console_script, core_is_installed, run_module_cli

from pipekit_train import ConfigError, TrainingLoop
from pipekit_train.cli import main
from pipekit_train.config import apply_overrides

LOOP_YAML = """\
dataset: '_core_factories:make_dataset'
loss: mse
batch_size: 32
optimizer_config: {name: adamw, lr: 0.001, weight_decay: 0.01}
backend: keras
"""


@pytest.fixture
def no_preflight(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests replace ``TrainingLoop.run`` to see the loop the CLI built; the CLI's
    preflight (which answers a missing backend from the metadata, before ``run``) is
    replaced too, so they also pass where no backend is installed (tests-core)."""
    import pipekit_train.engine._preflight as preflight

    monkeypatch.setattr(preflight, "preflight", lambda loop, config_digest=None: None)


@pytest.fixture
def loop_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "loop.yaml"
    path.write_text(LOOP_YAML, encoding="utf-8")
    return path


# -- apply_overrides ---------------------------------------------------------------------


def test_values_are_parsed_as_yaml() -> None:
    out = apply_overrides(
        {"batch_size": 32},
        [
            "batch_size=64",
            "seed=7",
            "checkpoint_dir=/tmp/ck",
            "eval_every_n_steps=",
            "callbacks=[TerminateOnNaN, {EarlyStopping: {patience: 2}}]",
        ],
    )
    assert out == {
        "batch_size": 64,
        "seed": 7,
        "checkpoint_dir": "/tmp/ck",
        "eval_every_n_steps": None,
        "callbacks": ["TerminateOnNaN", {"EarlyStopping": {"patience": 2}}],
    }


def test_dotted_override_changes_one_key_and_keeps_the_rest() -> None:
    data = {"optimizer_config": {"name": "adamw", "lr": 0.001, "weight_decay": 0.01}}
    out = apply_overrides(data, ["optimizer_config.lr=0.01", "backend_options.trainer.devices=2"])
    assert out["optimizer_config"] == {"name": "adamw", "lr": 0.01, "weight_decay": 0.01}
    assert out["backend_options"] == {"trainer": {"devices": 2}}
    # The input mapping is not modified.
    assert data == {"optimizer_config": {"name": "adamw", "lr": 0.001, "weight_decay": 0.01}}


def test_dotted_override_of_a_field_missing_from_the_yaml_starts_from_its_default() -> None:
    out = apply_overrides({"dataset": "m:f", "loss": "mse"}, ["optimizer_config.lr=0.01"])
    assert out["optimizer_config"] == {"name": "adam", "lr": 0.01}
    TrainingLoop(**out)  # a valid loop


def test_unknown_field_is_named_with_suggestion() -> None:
    with pytest.raises(ConfigError) as info:
        apply_overrides({}, ["batch_sise=3"])
    assert info.value.field == "batch_sise"
    assert "'batch_sise'" in str(info.value) and "did you mean 'batch_size'" in str(info.value)


def test_override_without_equals_sign_is_rejected() -> None:
    with pytest.raises(ConfigError, match="field=value"):
        apply_overrides({}, ["batch_size"])


def test_dotted_override_into_a_non_mapping_names_the_field() -> None:
    with pytest.raises(ConfigError) as info:
        apply_overrides({"batch_size": 3}, ["batch_size.x=1"])
    assert info.value.field == "batch_size"


# -- the run subcommand ------------------------------------------------------------------


@pytest.mark.usefixtures("no_preflight")
def test_run_applies_overrides_before_resolving_the_backend(
    loop_yaml: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: dict[str, Any] = {}

    def fake_run(self: TrainingLoop) -> tuple[Any, dict[str, Any]]:
        seen["loop"] = self
        return object(), {"backend": self.backend, "final_step": self.max_steps}

    monkeypatch.setattr(TrainingLoop, "run", fake_run)
    code = main(
        [
            "run",
            str(loop_yaml),
            "--set",
            "batch_size=64",
            "--set",
            "optimizer_config.lr=0.01",
            "--set",
            "backend=equinox",
            "--no-progress",
            "--compilation-cache",
            "off",
        ]
    )
    assert code == 0
    loop = seen["loop"]
    assert loop.batch_size == 64
    assert loop.optimizer_config == {"name": "adamw", "lr": 0.01, "weight_decay": 0.01}
    assert loop.backend == "equinox"
    assert loop.callbacks == []  # --no-progress
    assert "compilation_cache" not in loop.backend_options
    assert "final_step: 1000" in capsys.readouterr().out


@pytest.mark.usefixtures("no_preflight")
def test_run_adds_a_progress_bar_unless_told_not_to(
    loop_yaml: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}
    monkeypatch.setattr(TrainingLoop, "run", lambda self: (seen.setdefault("loop", self), {}))
    assert main(["run", str(loop_yaml), "--compilation-cache", "/tmp/cc"]) == 0
    assert [type(c).__name__ for c in seen["loop"].callbacks] == ["ProgressBar"]
    assert seen["loop"].backend_options["compilation_cache"] == "/tmp/cc"


def test_run_with_keras_exits_2_with_install_command(
    loop_yaml: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from _core_helpers import registered_backends

    if "keras" in registered_backends():
        pytest.skip("the keras backend is installed here")
    code = main(
        ["run", str(loop_yaml), "--set", "batch_size=64", "--set", "optimizer_config.lr=0.01"]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "BackendNotInstalledError" in err
    assert "pip install pipekit-train-keras" in err


def test_an_invalid_override_fails_as_config_error_not_backend_error(
    loop_yaml: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """batch_size=0 is caught by TrainingLoop validation, before the keras backend is
    looked up: the override was applied before backend resolution."""
    assert main(["run", str(loop_yaml), "--set", "batch_size=0"]) == 2
    err = capsys.readouterr().err
    assert "ConfigError" in err and "batch_size" in err
    assert "pip install" not in err


def test_unknown_set_field_exits_2_naming_it(
    loop_yaml: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(loop_yaml), "--set", "max_step=5"]) == 2
    err = capsys.readouterr().err
    assert "'max_step'" in err and "did you mean 'max_steps'" in err


def test_missing_loop_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "absent.yaml")]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.usefixtures("no_preflight")
def test_loop_file_with_another_suffix_is_read_as_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "loop.txt"
    path.write_text(LOOP_YAML, encoding="utf-8")
    seen: dict[str, Any] = {}
    monkeypatch.setattr(TrainingLoop, "run", lambda self: (seen.setdefault("loop", self), {}))
    assert main(["run", str(path), "--no-progress"]) == 0
    assert seen["loop"].backend == "keras"


def _check_keras_subprocess(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "pip install pipekit-train-keras" in result.stderr
    assert "Traceback" not in result.stderr


def test_python_m_cli_run_with_overrides_reports_missing_keras(loop_yaml: Path) -> None:
    from _core_helpers import registered_backends

    if "keras" in registered_backends():
        pytest.skip("the keras backend is installed here")
    _check_keras_subprocess(
        run_module_cli(
            "run", str(loop_yaml), "--set", "batch_size=64", "--set", "optimizer_config.lr=0.01"
        )
    )


def test_console_script_run_with_overrides_reports_missing_keras(loop_yaml: Path) -> None:
    from _core_helpers import registered_backends

    if not core_is_installed():
        pytest.skip("pipekit-train-core is not installed here (running from a source tree)")
    if "keras" in registered_backends():
        pytest.skip("the keras backend is installed here")
    result = subprocess.run(
        [
            str(console_script()),
            "run",
            str(loop_yaml),
            "--set",
            "batch_size=64",
            "--set",
            "optimizer_config.lr=0.01",
        ],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
    )
    _check_keras_subprocess(result)
