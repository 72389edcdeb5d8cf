"""Mistakes in a YAML loop are ConfigErrors that name the field: an unknown key (with the
closest valid field suggested), an unknown callback, and a bad factory import string —
the last one when the reference is resolved (`loop.resolved()`, which `run()` calls)."""

from __future__ import annotations

import pytest

from pipekit_train import ConfigError, TrainingLoop

BASE = "dataset: '_core_factories:make_dataset'\nloss: mse\n"


def test_unknown_key_is_named_and_closest_field_suggested() -> None:
    with pytest.raises(ConfigError) as info:
        TrainingLoop.from_yaml(BASE + "batch_sise: 64\n")
    exc = info.value
    assert exc.field == "batch_sise"
    assert "'batch_sise'" in str(exc)
    assert "did you mean 'batch_size'?" in str(exc)


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [
        ("max_step", "max_steps"),
        ("optimiser_config", "optimizer_config"),
        ("checkpoint_directory", "checkpoint_dir"),
        ("eval_every_n_step", "eval_every_n_steps"),
        ("val_data", "val_dataset"),
        ("backend_option", "backend_options"),
    ],
)
def test_other_misspellings_suggest_their_field(key: str, suggestion: str) -> None:
    with pytest.raises(ConfigError, match=f"did you mean '{suggestion}'") as info:
        TrainingLoop.from_yaml(BASE + f"{key}: 1\n")
    assert info.value.field == key


def test_unrelated_key_lists_the_valid_fields() -> None:
    with pytest.raises(ConfigError) as info:
        TrainingLoop.from_yaml(BASE + "zzz: 1\n")
    assert "valid fields: model_op, dataset" in str(info.value)


@pytest.mark.parametrize(
    "callbacks",
    ["[{EarlyStoping: {patience: 3}}]", "[EarlyStoping]"],
    ids=["with-arguments", "bare-name"],
)
def test_unknown_callback_name_is_named_with_suggestion(callbacks: str) -> None:
    with pytest.raises(ConfigError) as info:
        TrainingLoop.from_yaml(BASE + f"callbacks: {callbacks}\n")
    exc = info.value
    assert exc.field == "callbacks[0]"
    assert "'EarlyStoping'" in str(exc)
    assert "did you mean 'EarlyStopping'?" in str(exc)


def test_bad_builtin_callback_arguments_name_the_callback() -> None:
    with pytest.raises(ConfigError) as info:
        TrainingLoop.from_yaml(
            BASE + "callbacks: [TerminateOnNaN, {EarlyStopping: {patients: 3}}]\n"
        )
    assert info.value.field == "callbacks[1]"
    assert "EarlyStopping" in str(info.value) and "patients" in str(info.value)


def test_builtin_callback_arguments_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError) as info:
        TrainingLoop.from_yaml(BASE + "callbacks: [{EarlyStopping: 3}]\n")
    assert info.value.field == "callbacks[0]"


def test_builtin_callback_without_arguments_takes_defaults() -> None:
    loop = TrainingLoop.from_yaml(BASE + "callbacks:\n  - EarlyStopping:\n  - TerminateOnNaN\n")
    assert [type(cb).__name__ for cb in loop.callbacks] == ["EarlyStopping", "TerminateOnNaN"]


def test_callbacks_must_be_a_list() -> None:
    with pytest.raises(ConfigError) as info:
        TrainingLoop.from_yaml(BASE + "callbacks: {EarlyStopping: {}}\n")
    assert info.value.field == "callbacks"


@pytest.mark.parametrize(
    ("yaml_field", "value", "message"),
    [
        ("dataset", "no_such_module_for_pipekit_tests:make", "cannot import module"),
        ("dataset", "_core_factories:no_such_factory", "has no attribute 'no_such_factory'"),
        ("model_op", "_core_factories:make_needs_width", "make_needs_width"),
        ("val_dataset", "{factory: '_core_factories:make_val', kwargs: {bogus: 1}}", "bogus"),
        ("task", "no_such_module_for_pipekit_tests.sub:Task", "cannot import module"),
        ("loss", "_core_factories:no_such_loss", "has no attribute"),
    ],
    ids=["missing-module", "missing-attr", "missing-kwarg", "unexpected-kwarg", "task", "loss"],
)
def test_bad_factory_reference_names_the_field_at_resolve_time(
    yaml_field: str, value: str, message: str
) -> None:
    text = "dataset: '_core_factories:make_dataset'\nloss: mse\n"
    text = "\n".join(line for line in text.splitlines() if not line.startswith(f"{yaml_field}:"))
    quoted = value if value.startswith("{") else f"'{value}'"
    loop = TrainingLoop.from_yaml(text + f"\n{yaml_field}: {quoted}\n")  # builds fine
    with pytest.raises(ConfigError) as info:
        loop.resolved()
    exc = info.value
    assert exc.field == yaml_field
    assert str(exc).startswith(f"{yaml_field}:")
    assert message in str(exc)


def test_bad_callback_factory_names_its_position() -> None:
    loop = TrainingLoop.from_yaml(BASE + "callbacks: [ProgressBar, '_core_factories:nope']\n")
    with pytest.raises(ConfigError) as info:
        loop.resolved()
    assert info.value.field == "callbacks[1]"


@pytest.mark.parametrize(
    ("yaml_field", "value"),
    [
        ("dataset", "'not_an_import_string'"),
        ("model_op", "'pkg.module:'"),
        ("task", "{factory: 'no_colon'}"),
        ("val_dataset", "[1, 2, 3]"),
        ("dataset", "{factory: 'a:b', extra: 1}"),
        ("dataset", "{factory: 'a:b', kwargs: [1]}"),
    ],
)
def test_malformed_factory_reference_is_rejected_when_read_naming_the_field(
    yaml_field: str, value: str
) -> None:
    text = f"loss: mse\n{yaml_field}: {value}\n"
    if yaml_field != "dataset":
        text += "dataset: '_core_factories:make_dataset'\n"
    with pytest.raises(ConfigError) as info:
        TrainingLoop.from_yaml(text)
    assert info.value.field == yaml_field
    assert yaml_field in str(info.value)


def test_invalid_yaml_and_non_mapping_documents_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="invalid YAML"):
        TrainingLoop.from_yaml("dataset: [unclosed\nloss: mse\n")
    with pytest.raises(ConfigError, match="mapping"):
        TrainingLoop.from_yaml("- just\n- a list\n")


def test_missing_yaml_file_is_a_config_error(tmp_path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        TrainingLoop.from_yaml(tmp_path / "nope.yaml")
