"""`metric_writer` names writers (`"jsonl"`, `["csv", "jsonl"]`) that land in the run
folder under `logs/<kind>`: `checkpoint_dir` when the loop has one, else a fresh
`runs/<backend>-<UTC time>`. Explicit forms keep working; mistakes are ConfigErrors naming
the field and the fix. The loop's config and run facts reach writers that take them."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

import pytest
from _core_toy_backend import ToyData, ToyProgram, toy_loop

from pipekit_train import ConfigError, CsvWriter, JsonlWriter, MlflowWriter, TrainingLoop
from pipekit_train._run_facts import loop_config
from pipekit_train.engine import run_driver
from pipekit_train.writers import (
    MultiWriter,
    default_location,
    flatten,
    resolve_writers,
    run_dir_for,
    writers_for_loop,
)


def test_names_go_to_logs_beside_the_checkpoints(tmp_path: Path) -> None:
    loop = toy_loop(checkpoint_dir=str(tmp_path / "run"), metric_writer=["jsonl", "csv"])
    writers = writers_for_loop(loop)
    assert writers == [
        JsonlWriter(tmp_path / "run" / "logs" / "jsonl" / "metrics.jsonl"),
        CsvWriter(tmp_path / "run" / "logs" / "csv" / "metrics.csv"),
    ]
    assert (tmp_path / "run" / "logs" / "jsonl").is_dir()  # created (and checked) up front


def test_default_locations_of_every_kind(tmp_path: Path) -> None:
    assert default_location("tensorboard", tmp_path) == str(tmp_path / "logs" / "tensorboard")
    database = tmp_path / "logs" / "mlflow" / "mlflow.db"
    assert default_location("mlflow", tmp_path) == f"sqlite:///{database}"
    writer = resolve_writers({"kind": "mlflow", "experiment": "e"}, tmp_path)[0]
    artifacts = (tmp_path / "logs" / "mlflow" / "artifacts").as_uri()
    assert writer == MlflowWriter(f"sqlite:///{database}", "e", tmp_path.name, artifacts)


def test_without_checkpoint_dir_a_new_run_folder_under_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    loop = toy_loop(metric_writer="jsonl")
    first = run_dir_for(loop, now=0.0)
    assert first == Path("runs") / "equinox-19700101-000000"
    first.mkdir(parents=True)
    assert run_dir_for(loop, now=0.0) == Path("runs") / "equinox-19700101-000000-2"
    (writer,) = writers_for_loop(loop)
    assert isinstance(writer, JsonlWriter)
    assert writer.path.parts[0] == "runs" and writer.path.parts[-3:] == (
        "logs",
        "jsonl",
        "metrics.jsonl",
    )


def test_resolve_writers_takes_the_loop_or_its_folder(tmp_path: Path) -> None:
    loop = toy_loop(checkpoint_dir=str(tmp_path / "run"))
    by_loop = resolve_writers(["csv", "jsonl"], loop)
    assert by_loop == resolve_writers(["csv", "jsonl"], tmp_path / "run")
    assert resolve_writers(None, loop) == []
    with pytest.raises(ConfigError, match="no run folder"):
        resolve_writers("csv", None)


def test_explicit_forms_and_objects_are_kept(tmp_path: Path) -> None:
    obj = JsonlWriter(tmp_path / "mine.jsonl")
    loop = toy_loop(
        checkpoint_dir=str(tmp_path / "run"),
        metric_writer=[f"csv:{tmp_path / 'x.csv'}", {"kind": "jsonl", "path": "y.jsonl"}, obj],
    )
    writers = writers_for_loop(loop)
    assert writers[0] == CsvWriter(tmp_path / "x.csv")
    assert writers[1] == JsonlWriter("y.jsonl")
    assert writers[2] is obj


@pytest.mark.parametrize(
    ("spec", "field", "text"),
    [
        ("tensorbaord", "metric_writer", "did you mean 'tensorboard'"),
        (["jsonl", "wandb"], "metric_writer[1]", "'wandb'"),
        (["jsonl", {"kind": "wandb"}], "metric_writer[1].kind", "wandb"),
        (["jsonl", ["csv"]], "metric_writer[1]", "list"),
        ({"kind": "csv", "path": "m", "mode": "w"}, "metric_writer", "mode"),
        ({"kind": "jsonl", "file": "m"}, "metric_writer", "file"),
    ],
)
def test_mistakes_are_config_errors_at_construction(spec: Any, field: str, text: str) -> None:
    with pytest.raises(ConfigError) as info:
        toy_loop(metric_writer=spec)
    assert info.value.field == field
    assert text in str(info.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_an_unwritable_folder_is_a_config_error_naming_the_field(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        loop = toy_loop(checkpoint_dir=str(locked / "run"), metric_writer="csv")
        with pytest.raises(ConfigError) as info:
            writers_for_loop(loop)
        assert info.value.field == "metric_writer"
        assert "writable" in str(info.value)
    finally:
        locked.chmod(0o700)


def test_a_folder_nobody_may_create_is_a_config_error() -> None:
    # /proc refuses new folders even to root.
    loop = toy_loop(checkpoint_dir="/proc/pipekit-run", metric_writer="tensorboard")
    with pytest.raises(ConfigError) as info:
        writers_for_loop(loop)
    assert info.value.field == "metric_writer"
    assert "'tensorboard:PATH'" in str(info.value)


def test_a_file_where_the_folder_should_be_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "run").write_text("not a folder")
    loop = toy_loop(checkpoint_dir=str(tmp_path / "run"), metric_writer=["jsonl", "tensorboard"])
    with pytest.raises(ConfigError) as info:
        writers_for_loop(loop)
    assert info.value.field == "metric_writer[0]"
    assert "cannot write jsonl logs" in str(info.value) and "checkpoint_dir" in str(info.value)


def test_yaml_roundtrip_of_names_and_lists() -> None:
    loop = toy_loop(
        dataset="_core_factories:make_dataset",
        metric_writer=["tensorboard", "mlflow:sqlite:///m.db", {"kind": "csv"}],
    )
    again = TrainingLoop.from_yaml(loop.to_yaml())
    assert again.metric_writer == loop.metric_writer


class Recorder:
    """A writer with the optional log_config / log_info methods."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, dict[str, float]]] = []
        self.configs: list[dict[str, Any]] = []
        self.infos: list[dict[str, Any]] = []
        self.closed = False

    def write(self, step: int, metrics: dict[str, float]) -> None:
        self.rows.append((step, dict(metrics)))

    def flush(self) -> None: ...

    def close(self) -> None:
        self.closed = True

    def log_config(self, config: dict[str, Any]) -> None:
        self.configs.append(config)

    def log_info(self, info: dict[str, Any]) -> None:
        self.infos.append(info)


def test_a_run_sends_config_and_facts_to_every_writer(tmp_path: Path) -> None:
    recorder = Recorder()
    loop = toy_loop(
        max_steps=20,
        checkpoint_dir=None,
        metric_writer=[recorder, f"jsonl:{tmp_path / 'm.jsonl'}", f"csv:{tmp_path / 'm.csv'}"],
    )
    run_driver(loop, ToyProgram(), 0.0, data=ToyData(), checkpointer=None)
    assert recorder.closed
    (config,) = recorder.configs
    assert config["max_steps"] == 20 and config["log_every_n_steps"] == 10
    assert config["metric_writer"][0] == "<Recorder>"  # no YAML form: its type name
    assert recorder.infos[0]["backend"] == "equinox"
    assert recorder.infos[-1]["final_step"] == 20
    assert [s for s, _ in recorder.rows] == [10, 20]
    lines = [json.loads(x) for x in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert [row["step"] for row in lines] == [10, 20]
    with (tmp_path / "m.csv").open() as fh:
        assert [int(r["step"]) for r in csv.DictReader(fh)] == [10, 20]


def test_loop_config_uses_type_names_for_objects_and_flattens() -> None:
    loop = toy_loop(loss=lambda p, t: 0.0, optimizer_config={"name": "adam", "lr": 1e-3})
    config = loop_config(loop)
    assert (
        config["loss"].startswith("<test_loop_config_uses_type_names")
        and "<lambda>" in config["loss"]
    )
    assert config["dataset"] == {"x": [0.0, 1.0], "y": [0.0, 1.0]}
    flat = flatten(config)
    assert flat["optimizer_config.lr"] == 0.001
    assert flat["optimizer_config.name"] == "adam"
    assert flat["eval_every_n_steps"] == "None"
    assert flat["callbacks"] == "[]"
    assert flat["backend_options"] == "{}"


def test_multi_writer_closes_all_and_reraises_the_first_failure() -> None:
    class Broken(Recorder):
        def close(self) -> None:
            raise OSError("disk gone")

    good = Recorder()
    multi = MultiWriter([Broken(), good])
    multi.write(1, {"loss": 1.0})
    with pytest.raises(OSError, match="disk gone"):
        multi.close()
    assert good.closed and good.rows == [(1, {"loss": 1.0})]
