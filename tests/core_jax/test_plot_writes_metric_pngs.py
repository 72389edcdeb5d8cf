"""`pipekit_train.plot` draws real PNGs of a run's metric curves from its logs.

Logs are written by the real writers into a run folder's default locations
(`logs/jsonl`, `logs/csv`, `logs/tensorboard`). The figures are checked before saving
(axes labelled `step` and the metric name, train and validation lines), the PNGs after
(a real image: size, and pixel variance via `matplotlib.image.imread`, so not blank).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from pipekit_train import CsvWriter, JsonlWriter, LogsNotFoundError, TensorBoardWriter
from pipekit_train.errors import ExtraNotInstalledError
from pipekit_train.plot import (
    RunFolder,
    plot,
    read_metric_logs,
    register_plotter,
)
from pipekit_train.plot._metrics import metric_figures, metric_panels
from pipekit_train.plot._registry import _REGISTERED
from pipekit_train.writers import default_location


def write_run(writer: object, steps: range = range(10, 210, 10)) -> None:
    for step in steps:
        writer.write(step, {"loss": 2.0 / step, "lr": 1e-3 * (1 - step / 400)})  # type: ignore[attr-defined]
        if step % 50 == 0:
            writer.write(step, {"val_loss": 2.5 / step, "val_accuracy": 1 - 1 / step})  # type: ignore[attr-defined]
    writer.close()  # type: ignore[attr-defined]


def assert_real_png(path: Path) -> None:
    assert path.is_file() and path.stat().st_size > 5_000, path
    pixels = imread(path)
    assert pixels.ndim == 3 and pixels.shape[0] > 100 and pixels.shape[1] > 100
    assert float(np.var(pixels[..., :3])) > 1e-3, f"{path} is blank"


def test_figures_are_labelled_before_saving() -> None:
    series = {
        "loss": [(10, 1.0), (20, 0.5)],
        "lr": [(10, 1e-3), (20, 1e-5)],
        "val_loss": [(20, 0.7)],
        "val_accuracy": [(20, 0.9)],
    }
    assert metric_panels(series) == {
        "loss": ["loss", "val_loss"],
        "accuracy": ["val_accuracy"],
        "lr": ["lr"],
    }
    figures = metric_figures(series, title="run")
    assert set(figures) == {"metrics", "loss", "accuracy", "lr"}
    overview = figures["metrics"].axes
    assert [ax.get_xlabel() for ax in overview] == ["step"] * 3
    assert [ax.get_ylabel() for ax in overview] == ["loss", "accuracy", "learning rate"]
    (loss_ax,) = figures["loss"].axes
    assert [line.get_label() for line in loss_ax.get_lines()] == ["train", "validation"]
    assert list(loss_ax.get_lines()[0].get_xdata()) == [10, 20]
    (lr_ax,) = figures["lr"].axes
    assert lr_ax.get_yscale() == "log"  # spans two decades


@pytest.mark.parametrize("kind", ["jsonl", "csv", "tensorboard"])
def test_plot_reads_each_default_location(tmp_path: Path, kind: str) -> None:
    writers = {"jsonl": JsonlWriter, "csv": CsvWriter, "tensorboard": TensorBoardWriter}
    write_run(writers[kind](default_location(kind, tmp_path)))
    logs = read_metric_logs(tmp_path)
    assert logs.kind == kind
    assert [s for s, _ in logs.series["val_loss"]] == [50, 100, 150, 200]
    written = plot(tmp_path)
    assert {p.name for p in written} == {"metrics.png", "loss.png", "accuracy.png", "lr.png"}
    assert all(p.parent == tmp_path / "plots" for p in written)
    for path in written:
        assert_real_png(path)


def test_a_resumed_run_keeps_the_later_value_of_a_step(tmp_path: Path) -> None:
    path = default_location("jsonl", tmp_path)
    write_run(JsonlWriter(path), range(10, 60, 10))
    w = JsonlWriter(path)  # resumed from step 30: steps 40, 50 logged again
    for step in (40, 50, 60):
        w.write(step, {"loss": 9.0})
    w.close()
    loss = dict(read_metric_logs(tmp_path).series["loss"])
    assert loss[30] == pytest.approx(2.0 / 30) and loss[40] == loss[60] == 9.0
    out = tmp_path / "elsewhere"
    assert (out / "metrics.png") in plot(str(tmp_path), out=out)


def test_a_folder_without_logs_names_the_folder_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(LogsNotFoundError) as info:
        plot(tmp_path)
    assert str(tmp_path) in str(info.value) and "metric_writer: jsonl" in str(info.value)
    assert isinstance(info.value, FileNotFoundError)
    with pytest.raises(LogsNotFoundError, match="not a folder"):
        plot(tmp_path / "missing")
    # `runs/` given instead of one of its run folders: the message lists them.
    write_run(JsonlWriter(default_location("jsonl", tmp_path / "equinox-20260101-000000")))
    with pytest.raises(LogsNotFoundError, match="equinox-20260101-000000; give one of them"):
        plot(tmp_path)


def test_plot_cli_exits_2_with_a_clean_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pipekit_train.cli", "plot", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "LogsNotFoundError" in proc.stderr and "Traceback" not in proc.stderr


def test_without_matplotlib_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_run(JsonlWriter(default_location("jsonl", tmp_path)))
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ExtraNotInstalledError, match=r"pipekit-train-core\[plot\]"):
        plot(tmp_path)


class SamplesPlotter:
    """A backend's plotter: applies when the run folder holds samples."""

    name = "test-samples"

    def applies(self, run: RunFolder) -> bool:
        return (run.run_dir / "samples.txt").is_file()

    def render(self, run: RunFolder) -> list[Path]:
        run.out_dir.mkdir(parents=True, exist_ok=True)
        path = run.out_dir / "trace.png"
        path.write_bytes(b"png")
        return [path]


def test_a_registered_plotter_runs_when_its_files_are_there(tmp_path: Path) -> None:
    register_plotter(SamplesPlotter())
    try:
        (tmp_path / "samples.txt").write_text("1 2 3")
        assert [p.name for p in plot(tmp_path)] == ["trace.png"]  # no metric logs: skipped
        write_run(JsonlWriter(default_location("jsonl", tmp_path)))
        names = [p.name for p in plot(tmp_path)]
        assert names[0] == "metrics.png" and names[-1] == "trace.png"
    finally:
        _REGISTERED.pop("test-samples")
