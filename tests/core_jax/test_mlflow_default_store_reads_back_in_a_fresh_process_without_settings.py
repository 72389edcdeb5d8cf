"""The run's default MLflow store opens in a fresh process with no setting at all.

``metric_writer="mlflow"`` without a location writes ``<run folder>/logs/mlflow/mlflow.db``
(SQLite). A new ``MlflowClient`` in a child process whose environment has no
``MLFLOW_ALLOW_FILE_STORE`` (MLflow 3 refuses file stores without it) reads the metrics,
params and tags back; nothing lands in the working directory (no ``./mlruns``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pipekit_train.writers import MlflowWriter, resolve_writers, viewing_hints

READER = textwrap.dedent(
    """
    import json, sys
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=sys.argv[1])
    experiment = client.get_experiment_by_name("pipekit-train")
    (run,) = client.search_runs([experiment.experiment_id])
    history = client.get_metric_history(run.info.run_id, "loss")
    print(json.dumps({
        "loss": sorted([m.step, m.value] for m in history),
        "params": run.data.params,
        "tags": {k: v for k, v in run.data.tags.items() if k.startswith("pipekit.")},
        "status": run.info.status,
        "run_name": run.info.run_name,
    }))
    """
)


@pytest.fixture(autouse=True)
def _no_mlflow_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)


def test_default_store_is_sqlite_read_back_by_a_fresh_client_without_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    run_dir = tmp_path / "run"
    (writer,) = resolve_writers("mlflow", run_dir)
    assert isinstance(writer, MlflowWriter)
    database = run_dir / "logs" / "mlflow" / "mlflow.db"
    assert writer.tracking_uri == f"sqlite:///{database}"
    writer.log_config({"batch_size": 64, "optimizer_config": {"name": "adam"}})
    writer.log_info({"backend": "equinox"})
    writer.write(5, {"loss": 0.5})
    writer.write(10, {"loss": 0.25})
    writer.close()
    assert database.is_file()
    assert "MLFLOW_ALLOW_FILE_STORE" not in os.environ  # a database store needs no opt-in

    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    proc = subprocess.run(
        [sys.executable, "-c", READER, writer.tracking_uri],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["loss"] == [[5, 0.5], [10, 0.25]]
    assert got["params"]["batch_size"] == "64"
    assert got["params"]["optimizer_config.name"] == "adam"
    assert got["tags"]["pipekit.backend"] == "equinox"
    assert got["status"] == "FINISHED"
    assert got["run_name"] == "run"
    assert list(cwd.iterdir()) == []  # no ./mlruns, no stray database

    # The end-of-run hint names exactly this store.
    (line,) = viewing_hints("mlflow", run_dir)
    assert f"mlflow ui --backend-store-uri sqlite:///{database}" in line
