"""CsvWriter: one row per write, columns the union of metric names in first-seen order
(earlier rows blank in later columns); a second writer on the same file keeps its rows."""

from __future__ import annotations

import csv
from pathlib import Path

from pipekit_train import CsvWriter, MetricWriter


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


def test_columns_are_the_union_of_metric_names(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "metrics.csv"
    writer = CsvWriter(path)
    assert isinstance(writer, MetricWriter)
    writer.write(10, {"loss": 0.5})
    writer.write(20, {"loss": 0.25, "val_loss": 0.75})
    writer.write(30, {"val_accuracy": 0.9})
    writer.close()
    columns, rows = _read(path)
    assert columns == ["step", "loss", "val_loss", "val_accuracy"]
    assert rows == [
        {"step": "10", "loss": "0.5", "val_loss": "", "val_accuracy": ""},
        {"step": "20", "loss": "0.25", "val_loss": "0.75", "val_accuracy": ""},
        {"step": "30", "loss": "", "val_loss": "", "val_accuracy": "0.9"},
    ]


def test_flush_writes_the_file_atomically_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "metrics.csv"
    writer = CsvWriter(path)
    writer.write(1, {"loss": 1.0})
    writer.flush()
    assert _read(path)[1] == [{"step": "1", "loss": "1.0"}]
    writer.write(2, {"loss": 0.5})
    writer.flush()
    assert len(_read(path)[1]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.csv"]


def test_a_resumed_writer_keeps_the_earlier_rows(tmp_path: Path) -> None:
    path = tmp_path / "metrics.csv"
    first = CsvWriter(path)
    first.write(10, {"loss": 2.0})
    first.write(20, {"loss": 1.0, "val_loss": 1.5})
    first.close()
    resumed = CsvWriter(path)
    resumed.write(20, {"loss": 1.0})
    resumed.write(30, {"loss": 0.5, "lr": 0.001})
    resumed.close()
    columns, rows = _read(path)
    assert columns == ["step", "loss", "val_loss", "lr"]
    assert [(r["step"], r["loss"]) for r in rows] == [
        ("10", "2.0"),
        ("20", "1.0"),
        ("20", "1.0"),
        ("30", "0.5"),
    ]
    assert rows[1]["val_loss"] == "1.5" and rows[3]["lr"] == "0.001"


def test_yaml_form_and_equality(tmp_path: Path) -> None:
    writer = CsvWriter(tmp_path / "m.csv")
    assert writer.to_config() == {"kind": "csv", "path": str(tmp_path / "m.csv")}
    assert writer == CsvWriter(str(tmp_path / "m.csv"))
