"""Digits runs with writers given by name, read back by each tool's own reader.

A small MLP trains a few hundred steps on scikit-learn's digits with
``metric_writer="tensorboard"`` and with ``"mlflow"`` (its default SQLite store) and an
MLflow SQLite store. TensorBoard's ``EventAccumulator`` must find the training and
``val_`` scalars at the logged steps and the loop's config in the HParams plugin;
``MlflowClient`` must find the metrics, the config as params and the backend as tags.
The logs sit in the default locations, ``<checkpoint_dir>/logs/<kind>``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from _eqx_helpers import REPO, compilation_cache_dir, run_loop

from pipekit_train import TrainingLoop

sys.path.insert(0, str(REPO / "examples"))
from digits_mlp import load_split, make_model  # noqa: E402

MAX_STEPS, LOG_EVERY = 200, 50
LOGGED = [50, 100, 150, 200]


def digits_loop(tmp_path: Path, metric_writer: Any) -> TrainingLoop:
    return TrainingLoop(
        model_op=make_model(hidden=32, depth=1),
        dataset=load_split("train"),
        val_dataset=load_split("test"),
        loss="cross_entropy",
        batch_size=64,
        max_steps=MAX_STEPS,
        log_every_n_steps=LOG_EVERY,
        eval_every_n_steps=100,
        optimizer_config={"name": "adam", "lr": 3e-3},
        checkpoint_dir=str(tmp_path / "run"),
        metric_writer=metric_writer,
        backend="equinox",
        backend_options={"compilation_cache": compilation_cache_dir()},
    )


@pytest.fixture(autouse=True)
def _clean_mlflow_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)


def test_tensorboard_by_name_read_by_event_accumulator(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import plugin_data_pb2

    _, info = run_loop(digits_loop(tmp_path, "tensorboard"))
    logdir = tmp_path / "run" / "logs" / "tensorboard"
    assert any(p.name.startswith("events.out.tfevents") for p in logdir.iterdir())

    acc = EventAccumulator(str(logdir), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    for name in ("loss", "lr"):
        assert name in tags["scalars"], tags
        assert [e.step for e in acc.Scalars(name)] == LOGGED
    assert [e.step for e in acc.Scalars("val_accuracy")] == [100, 200]
    final = acc.Scalars("val_accuracy")[-1].value
    assert final == pytest.approx(info["final_metrics"]["val_accuracy"], abs=1e-6)
    assert final > 0.8  # it learnt something
    assert acc.Scalars("loss")[-1].value < acc.Scalars("loss")[0].value

    # The config as hyper-parameters (HParams plugin) and as text.
    content = acc.PluginTagToContent("hparams")
    start = plugin_data_pb2.HParamsPluginData.FromString(
        content["_hparams_/session_start_info"]
    ).session_start_info
    assert start.hparams["batch_size"].number_value == 64
    assert start.hparams["max_steps"].number_value == MAX_STEPS
    assert start.hparams["optimizer_config.name"].string_value == "adam"
    assert start.hparams["backend"].string_value == "equinox"
    assert start.hparams["model_op"].string_value == "<JaxModelOp>"  # no YAML form
    experiment = plugin_data_pb2.HParamsPluginData.FromString(
        content["_hparams_/experiment"]
    ).experiment
    assert {m.name.tag for m in experiment.metric_infos} >= {"loss", "val_accuracy", "lr"}
    (text,) = acc.Tensors("pipekit/config/text_summary")
    assert "batch_size: 64" in text.tensor_proto.string_val[0].decode()
    infos = acc.Tensors("pipekit/info/text_summary")
    assert "| versions.jax |" in infos[0].tensor_proto.string_val[0].decode()
    assert f"| final_step | {MAX_STEPS} |" in infos[-1].tensor_proto.string_val[0].decode()


def _mlflow_run(uri: str) -> Any:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("pipekit-train")
    assert experiment is not None
    (run,) = client.search_runs([experiment.experiment_id])
    return client, run


def _check_mlflow(uri: str, info: dict[str, Any]) -> None:
    client, run = _mlflow_run(uri)
    assert run.info.status == "FINISHED"
    history = client.get_metric_history(run.info.run_id, "loss")
    assert sorted(m.step for m in history) == LOGGED
    val = client.get_metric_history(run.info.run_id, "val_accuracy")
    assert sorted(m.step for m in val) == [100, 200]
    assert max(val, key=lambda m: m.step).value == pytest.approx(
        info["final_metrics"]["val_accuracy"], abs=1e-6
    )
    params = run.data.params
    assert params["batch_size"] == "64"
    assert params["max_steps"] == str(MAX_STEPS)
    assert params["optimizer_config.lr"] == "0.003"
    assert params["loss"] == "cross_entropy"
    tags = run.data.tags
    assert tags["pipekit.backend"] == "equinox"
    assert tags["pipekit.versions.jax"] == info["versions"]["jax"]
    assert tags["pipekit.final_step"] == str(MAX_STEPS)
    # the end of the run as the driver saw it: timings and the last metrics
    assert float(tags["pipekit.train_seconds"]) > 0
    assert "pipekit.final_metrics.loss" in tags, sorted(tags)


def test_mlflow_by_name_uses_a_sqlite_store_beside_the_run(tmp_path: Path) -> None:
    _, info = run_loop(digits_loop(tmp_path, "mlflow"))
    store = tmp_path / "run" / "logs" / "mlflow" / "mlflow.db"
    assert store.is_file()
    uri = f"sqlite:///{store}"
    _check_mlflow(uri, info)
    assert _mlflow_run(uri)[1].info.run_name == "run"  # the run folder's name
    assert os.environ.get("MLFLOW_ALLOW_FILE_STORE") is None  # no file store involved


def test_mlflow_sqlite_store(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    _, info = run_loop(digits_loop(tmp_path, {"kind": "mlflow", "tracking_uri": uri}))
    assert (tmp_path / "mlflow.db").is_file()
    assert not (tmp_path / "run" / "logs").exists()  # an explicit location is used as is
    _check_mlflow(uri, info)
    assert os.environ.get("MLFLOW_ALLOW_FILE_STORE") is None  # only set for file stores


def test_pipekit_train_plot_draws_the_run(tmp_path: Path) -> None:
    """`pipekit-train plot RUN_DIR --out DIR` (a subprocess) on an Equinox digits run."""
    import subprocess

    import numpy as np
    from _eqx_helpers import subprocess_env
    from matplotlib.image import imread

    run_loop(digits_loop(tmp_path, ["jsonl", "tensorboard"]))
    script = Path(sys.executable).with_name("pipekit-train")
    cmd = [str(script)] if script.is_file() else [sys.executable, "-m", "pipekit_train.cli"]
    out = tmp_path / "png"
    proc = subprocess.run(
        [*cmd, "plot", str(tmp_path / "run"), "--out", str(out)],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert str(out / "metrics.png") in proc.stdout.splitlines()
    for name in ("metrics.png", "loss.png", "lr.png", "accuracy.png"):
        path = out / name
        assert path.stat().st_size > 5_000
        assert float(np.var(imread(path)[..., :3])) > 1e-3
