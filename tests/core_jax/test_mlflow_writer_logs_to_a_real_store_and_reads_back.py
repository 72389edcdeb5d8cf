"""MlflowWriter logs to a real MLflow tracking store; the metrics are read back with
MlflowClient.

The default store is SQLite (`sqlite:///mlflow.db`), which MLflow 3 opens without any
setting; the `[mlflow]` extra brings sqlalchemy and alembic for it. A file store given
explicitly still works: MLflow 3 refuses file stores unless MLFLOW_ALLOW_FILE_STORE is
true, and the writer opts in for file URIs when the variable is unset.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from pipekit_train import ConfigError, MlflowWriter
from pipekit_train.writers import resolve_writer

HAS_SQL = all(importlib.util.find_spec(m) is not None for m in ("sqlalchemy", "alembic"))


@pytest.fixture(autouse=True)
def _no_file_store_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)


def _history(uri: str, run_id: str, key: str) -> list[tuple[int, float]]:
    client = MlflowClient(tracking_uri=uri)
    return sorted((m.step, m.value) for m in client.get_metric_history(run_id, key))


def _log_and_check(uri: str) -> None:
    writer = resolve_writer({"kind": "mlflow", "tracking_uri": uri, "experiment": "exp-a"})
    assert isinstance(writer, MlflowWriter)
    writer.write(10, {"loss": 0.5, "accuracy": 0.75})
    writer.write(20, {"loss": 0.25})
    writer.write(20, {"val_loss": 0.375})
    writer.flush()
    run_id = writer.run_id
    assert run_id is not None
    writer.close()

    assert _history(uri, run_id, "loss") == [(10, 0.5), (20, 0.25)]
    assert _history(uri, run_id, "accuracy") == [(10, 0.75)]
    assert _history(uri, run_id, "val_loss") == [(20, 0.375)]
    client = MlflowClient(tracking_uri=uri)
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED"
    assert client.get_experiment(run.info.experiment_id).name == "exp-a"

    # A second writer (a resumed run) reuses the experiment and starts a new run.
    again = MlflowWriter(tracking_uri=uri, experiment="exp-a", run_name="second")
    again.write(1, {"loss": 1.0})
    again.close()
    assert again.run_id != run_id
    assert client.get_run(again.run_id).info.experiment_id == run.info.experiment_id
    assert client.get_run(again.run_id).info.run_name == "second"


def test_file_store_roundtrip(tmp_path: Path) -> None:
    _log_and_check(f"file:{tmp_path / 'mlruns'}")
    assert (tmp_path / "mlruns").is_dir()


@pytest.mark.skipif(not HAS_SQL, reason="the [mlflow] extra's sqlalchemy and alembic")
def test_default_tracking_uri_is_a_sqlite_store_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    writer = MlflowWriter()
    assert writer.tracking_uri == "sqlite:///mlflow.db"
    writer.write(3, {"loss": 0.125})
    writer.close()
    assert _history("sqlite:///mlflow.db", writer.run_id, "loss") == [(3, 0.125)]
    assert (tmp_path / "mlflow.db").is_file()
    assert "MLFLOW_ALLOW_FILE_STORE" not in os.environ


def test_explicit_file_store_refusal_is_respected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "false")
    writer = MlflowWriter(tracking_uri=f"file:{tmp_path / 'mlruns'}")
    with pytest.raises(Exception, match="MLFLOW_ALLOW_FILE_STORE"):
        writer.write(1, {"loss": 1.0})
    assert os.environ["MLFLOW_ALLOW_FILE_STORE"] == "false"


def test_sqlite_store_logs_or_says_what_to_install(tmp_path: Path) -> None:
    """With sqlalchemy + alembic a sqlite store works; without, a clear ConfigError."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    if HAS_SQL:
        _log_and_check(uri)
        return
    writer = MlflowWriter(tracking_uri=uri)
    with pytest.raises(ConfigError, match="sqlalchemy"):
        writer.write(1, {"loss": 1.0})
