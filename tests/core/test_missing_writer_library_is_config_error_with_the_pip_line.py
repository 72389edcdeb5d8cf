"""A TensorBoard or MLflow writer without its library is a ConfigError with the pip line.

Raised when the run's writers are built (``resolve_writers``, which the callback runner
calls before a backend compiles anything), found with ``find_spec`` so nothing is
imported; and again by the writer itself if it is opened on its own, from any method
(``log_config`` used to import tensorboardX first and end in a bare ModuleNotFoundError).
A missing library is simulated with ``sys.modules[name] = None``, which makes
``import name`` raise ImportError and ``find_spec(name)`` return None.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pipekit_train import ConfigError, MlflowWriter, TensorBoardWriter
from pipekit_train.writers import resolve_writers

CASES = [
    ("tensorboard", "tensorboardX", "pip install 'pipekit-train-core[tensorboard]'"),
    ("mlflow", "mlflow", "pip install 'pipekit-train-core[mlflow]'"),
]


@pytest.mark.parametrize(("kind", "module", "pip_line"), CASES)
def test_building_the_writers_names_the_extra(
    kind: str, module: str, pip_line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ConfigError, match=f"needs {module}") as err:
        resolve_writers(["jsonl", kind], tmp_path)
    assert pip_line in str(err.value)
    assert err.value.field == "metric_writer[1]"


@pytest.mark.parametrize(("kind", "module", "pip_line"), CASES)
def test_a_writer_object_is_checked_too(
    kind: str, module: str, pip_line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = TensorBoardWriter(tmp_path) if kind == "tensorboard" else MlflowWriter()
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ConfigError, match=pip_line.replace("[", r"\[").replace("]", r"\]")):
        resolve_writers(writer, None)


@pytest.mark.parametrize("method", ["log_config", "log_info", "write"])
@pytest.mark.parametrize(("kind", "module", "pip_line"), CASES)
def test_every_first_call_of_a_writer_raises_the_config_error(
    method: str,
    kind: str,
    module: str,
    pip_line: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    writer = TensorBoardWriter(tmp_path) if kind == "tensorboard" else MlflowWriter()
    monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.setitem(sys.modules, f"{module}.summary", None)
    monkeypatch.setitem(sys.modules, f"{module}.entities", None)
    with pytest.raises(ConfigError) as err:
        if method == "write":
            writer.write(1, {"loss": 1.0})
        else:
            getattr(writer, method)({"batch_size": 1})
    assert pip_line in str(err.value)
