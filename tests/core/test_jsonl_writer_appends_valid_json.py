"""JsonlWriter writes one strict-JSON object per line (non-finite values as strings),
appends across writer instances (a resumed run), and creates missing folders."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from pipekit_train import JsonlWriter, MetricWriter


def _strict_rows(path: Path) -> list[dict[str, Any]]:
    def reject(token: str) -> Any:
        raise ValueError(f"non-standard JSON token {token}")

    return [json.loads(line, parse_constant=reject) for line in path.read_text().splitlines()]


def test_rows_are_strict_json_with_step_time_and_metrics(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "metrics.jsonl"
    writer = JsonlWriter(path)
    assert isinstance(writer, MetricWriter)
    writer.write(10, {"loss": 0.5, "accuracy": 1})
    writer.write(20, {"loss": math.nan, "grad": math.inf, "low": -math.inf})
    writer.flush()
    rows = _strict_rows(path)
    assert [r["step"] for r in rows] == [10, 20]
    assert rows[0]["loss"] == 0.5 and rows[0]["accuracy"] == 1.0
    assert rows[1]["loss"] == "nan" and rows[1]["grad"] == "inf" and rows[1]["low"] == "-inf"
    assert all(isinstance(r["time"], float) for r in rows)
    writer.close()


def test_a_second_writer_appends_instead_of_truncating(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    first = JsonlWriter(path)
    first.write(1, {"loss": 3.0})
    first.write(2, {"loss": 2.0})
    first.close()
    resumed = JsonlWriter(path)
    resumed.write(2, {"loss": 2.0})  # a resumed run may repeat or go back a step
    resumed.write(3, {"loss": 1.0})
    resumed.close()
    assert [(r["step"], r["loss"]) for r in _strict_rows(path)] == [
        (1, 3.0),
        (2, 2.0),
        (2, 2.0),
        (3, 1.0),
    ]


def test_flush_makes_rows_visible_before_close(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    writer = JsonlWriter(path)
    writer.write(5, {"loss": 1.5})
    writer.flush()
    assert _strict_rows(path)[0]["loss"] == 1.5
    writer.close()
    writer.close()  # closing twice is harmless


def test_close_without_writes_creates_nothing(tmp_path: Path) -> None:
    JsonlWriter(tmp_path / "never.jsonl").close()
    assert not (tmp_path / "never.jsonl").exists()


def test_metric_values_must_be_numbers(tmp_path: Path) -> None:
    writer = JsonlWriter(tmp_path / "m.jsonl")
    with pytest.raises((TypeError, ValueError)):
        writer.write(1, {"loss": "high"})  # type: ignore[dict-item]
    writer.close()


def test_yaml_form_and_equality(tmp_path: Path) -> None:
    writer = JsonlWriter(tmp_path / "m.jsonl")
    assert writer.to_config() == {"kind": "jsonl", "path": str(tmp_path / "m.jsonl")}
    assert writer == JsonlWriter(str(tmp_path / "m.jsonl"))
    assert writer != JsonlWriter(tmp_path / "other.jsonl")
