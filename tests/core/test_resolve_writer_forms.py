"""`resolve_writer` builds one writer from a writer object, a `{"kind": …, …}` dict or a
`"kind:path"` string; anything else is a ConfigError naming `metric_writer` (with a
suggestion for a misspelt kind). Bare names and lists need the loop's run folder
(`tests/core/test_writers_by_name.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipekit_train import (
    ConfigError,
    CsvWriter,
    JsonlWriter,
    MlflowWriter,
    TensorBoardWriter,
)
from pipekit_train.writers import resolve_writer, writer_to_config


class DuckWriter:
    def write(self, step: int, metrics: dict[str, float]) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


def test_an_object_with_write_flush_close_is_used_as_is() -> None:
    duck = DuckWriter()
    assert resolve_writer(duck) is duck
    jsonl = JsonlWriter("m.jsonl")
    assert resolve_writer(jsonl) is jsonl


def test_none_means_no_writer() -> None:
    assert resolve_writer(None) is None


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"kind": "jsonl", "path": "runs/m.jsonl"}, JsonlWriter("runs/m.jsonl")),
        ({"kind": "csv", "path": "runs/m.csv"}, CsvWriter("runs/m.csv")),
        ({"kind": "tensorboard", "path": "runs/tb"}, TensorBoardWriter("runs/tb")),
        (
            {"kind": "mlflow", "tracking_uri": "file:/tmp/mlruns", "experiment": "x"},
            MlflowWriter("file:/tmp/mlruns", "x"),
        ),
        ("jsonl:runs/m.jsonl", JsonlWriter("runs/m.jsonl")),
        ("csv:runs/m.csv", CsvWriter("runs/m.csv")),
        ("tensorboard:runs/tb", TensorBoardWriter("runs/tb")),
        ("mlflow:file:/tmp/mlruns", MlflowWriter("file:/tmp/mlruns")),
        ("mlflow:sqlite:///mlflow.db", MlflowWriter("sqlite:///mlflow.db")),
    ],
)
def test_dict_and_string_forms_build_the_writer(spec: object, expected: object) -> None:
    writer = resolve_writer(spec)
    assert type(writer) is type(expected)
    assert writer == expected


def test_the_dict_passed_in_is_not_modified() -> None:
    spec = {"kind": "jsonl", "path": "m.jsonl"}
    resolve_writer(spec)
    assert spec == {"kind": "jsonl", "path": "m.jsonl"}


@pytest.mark.parametrize(
    ("spec", "field", "text"),
    [
        ({"kind": "jsnol", "path": "m"}, "metric_writer.kind", "did you mean 'jsonl'"),
        ("tensorbord:runs", "metric_writer.kind", "did you mean 'tensorboard'"),
        ({"path": "m.jsonl"}, "metric_writer.kind", "one of"),
        ({"kind": "wandb"}, "metric_writer.kind", "'wandb'"),
        ({"kind": "jsonl"}, "metric_writer", "no location"),
        ("jsonl", "metric_writer", "writers_for_loop"),
        ({"kind": "csv", "path": "m", "mode": "w"}, "metric_writer", "mode"),
        ("metrics.jsonl", "metric_writer", "did you mean 'jsonl:metrics.jsonl'"),
        ("jsonl:", "metric_writer", "no location"),
        (42, "metric_writer", "int"),
        (["jsonl", "m"], "metric_writer", "list"),
    ],
)
def test_bad_forms_are_config_errors_naming_the_field(spec: object, field: str, text: str) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_writer(spec)
    assert info.value.field == field
    assert "metric_writer" in str(info.value)
    assert text in str(info.value)


def test_writer_yaml_forms(tmp_path: Path) -> None:
    assert writer_to_config(None) is None
    assert writer_to_config("jsonl:m.jsonl") == "jsonl:m.jsonl"
    assert writer_to_config({"kind": "csv", "path": "m.csv"}) == {"kind": "csv", "path": "m.csv"}
    for writer in (
        JsonlWriter(tmp_path / "a"),
        CsvWriter(tmp_path / "b"),
        TensorBoardWriter(tmp_path / "c"),
        MlflowWriter("file:/tmp/x", "exp", "run"),
    ):
        assert resolve_writer(writer_to_config(writer)) == writer
    with pytest.raises(ConfigError) as info:
        writer_to_config(DuckWriter())
    assert info.value.field == "metric_writer"
