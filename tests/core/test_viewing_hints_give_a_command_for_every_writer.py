"""``viewing_hints`` says how to open what each writer wrote, without opening anything.

One line per writer — ``tensorboard --logdir``, ``mlflow ui --backend-store-uri``, the JSON
lines and CSV paths — then ``pipekit-train plot RUN_DIR`` when a plottable log is in the
run folder. Built from a loop, a ``metric_writer`` value or writer objects; runs in
core alone (no tensorboardX, no mlflow imported, no folder created).
"""

from __future__ import annotations

import sys
from pathlib import Path

from _core_toy_backend import toy_loop

from pipekit_train import CsvWriter, JsonlWriter, MlflowWriter, TensorBoardWriter
from pipekit_train.writers import MultiWriter, viewing_hints


def test_every_writer_kind_by_name_gets_its_command_and_the_plot_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    lines = viewing_hints(["tensorboard", "mlflow", "jsonl", "csv"], run)
    database = (run / "logs" / "mlflow" / "mlflow.db").absolute()
    assert lines == [
        f"TensorBoard: tensorboard --logdir {run}/logs/tensorboard  (pip install tensorboard)",
        f"MLflow: mlflow ui --backend-store-uri sqlite:///{database}"
        "  (the UI needs the full package: pip install mlflow)",
        f"JSON lines: {run}/logs/jsonl/metrics.jsonl",
        f"CSV: {run}/logs/csv/metrics.csv",
        f"Plots: pipekit-train plot {run}  (PNG files in {run}/plots)",
    ]
    assert not run.exists()  # nothing created
    assert "tensorboardX" not in sys.modules and "mlflow" not in sys.modules


def test_a_loop_uses_its_checkpoint_dir_as_the_run_folder(tmp_path: Path) -> None:
    loop = toy_loop(checkpoint_dir=str(tmp_path / "ck"), metric_writer="jsonl")
    assert viewing_hints(loop) == [
        f"JSON lines: {tmp_path}/ck/logs/jsonl/metrics.jsonl",
        f"Plots: pipekit-train plot {tmp_path}/ck  (PNG files in {tmp_path}/ck/plots)",
    ]


def test_a_loop_without_a_run_folder_names_only_the_placed_writers(tmp_path: Path) -> None:
    loop = toy_loop(metric_writer=["jsonl", f"csv:{tmp_path}/m.csv"])
    assert viewing_hints(loop) == [f"CSV: {tmp_path}/m.csv"]  # no guessed runs/<time> folder
    assert viewing_hints(loop, tmp_path / "r")[0].startswith("JSON lines: ")


def test_writer_objects_and_explicit_uris_keep_their_locations(tmp_path: Path) -> None:
    writers = MultiWriter(
        [
            TensorBoardWriter(tmp_path / "tb dir"),
            MlflowWriter("file:/tmp/mlruns"),
            MlflowWriter("http://tracking:5000"),
            JsonlWriter(tmp_path / "elsewhere.jsonl"),
        ]
    )
    assert viewing_hints(writers, tmp_path / "run") == [
        f"TensorBoard: tensorboard --logdir '{tmp_path}/tb dir'  (pip install tensorboard)",
        "MLflow: MLFLOW_ALLOW_FILE_STORE=true mlflow ui --backend-store-uri file:/tmp/mlruns"
        "  (the UI needs the full package: pip install mlflow)",
        "MLflow: open http://tracking:5000 (the tracking server's own UI)",
        f"JSON lines: {tmp_path}/elsewhere.jsonl",
    ]  # no plot line: no log under <run>/logs


def test_no_writer_gives_no_lines_and_duplicates_are_dropped(tmp_path: Path) -> None:
    assert viewing_hints(None, tmp_path) == []
    assert viewing_hints([CsvWriter(tmp_path / "a.csv"), CsvWriter(tmp_path / "a.csv")]) == [
        f"CSV: {tmp_path}/a.csv"
    ]
