"""MLflow tracking through the ``mlflow`` client (the ``[mlflow]`` extra)."""

from __future__ import annotations

import importlib.util
import os
import re
from typing import Any
from urllib.parse import urlparse

from ..errors import ConfigError

_DATABASE_SCHEMES = ("sqlite", "postgresql", "mysql", "mssql")
# MLflow's limits (mlflow.utils.validation): keys, values, entries per log_batch call.
_MAX_KEY, _MAX_PARAM, _MAX_TAG, _PER_BATCH = 250, 6000, 8000, 100
_BAD_KEY_CHARS = re.compile(r"[^\w\-. /]")


def _key(name: str) -> str:
    """A valid MLflow param / tag key (alphanumerics, ``_ - . /`` and spaces)."""
    return _BAD_KEY_CHARS.sub("_", name)[:_MAX_KEY]


def _scheme(uri: str) -> str:
    scheme = urlparse(uri).scheme
    return "" if len(scheme) == 1 else scheme  # a Windows drive letter is a path


class MlflowWriter:
    """Log metrics to an MLflow run; a file store (``file:./mlruns``) needs no server.

    The run is created on the first write and ended by ``close``.

    ``tracking_uri`` is any MLflow tracking URI. The default, a local file store,
    is the one store that ``mlflow-skinny`` (the ``[mlflow]`` extra) can open
    without a server. MLflow 3 keeps the file store in maintenance mode and
    refuses it unless ``MLFLOW_ALLOW_FILE_STORE`` is true; for a ``file:`` (or
    plain path) URI this writer sets that variable when it is unset (an explicit
    value is respected). A database store (``sqlite:///mlflow.db``, MLflow's own
    recommendation) also needs ``sqlalchemy`` and ``alembic``, which the
    ``[mlflow]`` extra installs.

    ``log_config`` logs the loop's configuration as run *params* (flattened keys
    such as ``optimizer_config.lr``); ``log_info`` logs run facts (backend,
    library versions, final step) as *tags* prefixed ``pipekit.``.
    """

    def __init__(
        self,
        tracking_uri: str = "file:./mlruns",
        experiment: str = "pipekit-train",
        run_name: str | None = None,
    ) -> None:
        self.tracking_uri = tracking_uri
        self.experiment = experiment
        self.run_name = run_name
        self._client: Any = None
        self.run_id: str | None = None

    def _open(self) -> Any:
        if self._client is None:
            try:
                from mlflow.tracking import MlflowClient
            except ImportError as exc:
                raise ConfigError(
                    "metric_writer kind 'mlflow' needs mlflow: "
                    "pip install 'pipekit-train-core[mlflow]'",
                    field="metric_writer",
                ) from exc
            scheme = _scheme(self.tracking_uri)
            if scheme in ("", "file"):
                os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
            elif scheme.split("+")[0] in _DATABASE_SCHEMES and (
                importlib.util.find_spec("sqlalchemy") is None
                or importlib.util.find_spec("alembic") is None
            ):
                raise ConfigError(
                    f"metric_writer: MLflow tracking URI {self.tracking_uri!r} is a database "
                    "store, which needs sqlalchemy and alembic: pip install sqlalchemy "
                    "alembic (or the full mlflow package), or use a file store "
                    "('file:./mlruns')",
                    field="metric_writer",
                )
            client = MlflowClient(tracking_uri=self.tracking_uri)
            experiment = client.get_experiment_by_name(self.experiment)
            experiment_id = (
                experiment.experiment_id
                if experiment is not None
                else client.create_experiment(self.experiment)
            )
            run = client.create_run(experiment_id, run_name=self.run_name)
            self._client, self.run_id = client, run.info.run_id
        return self._client

    def write(self, step: int, metrics: dict[str, float]) -> None:
        from mlflow.entities import Metric

        client = self._open()
        import time

        now = int(time.time() * 1000)
        client.log_batch(
            self.run_id,
            metrics=[Metric(k, float(v), now, int(step)) for k, v in metrics.items()],
        )

    def log_config(self, config: dict[str, Any]) -> None:
        """The flattened config as params (values longer than MLflow allows are cut)."""
        from mlflow.entities import Param

        from ._config import flatten

        client = self._open()
        params = [Param(_key(k), str(v)[:_MAX_PARAM]) for k, v in flatten(config).items()]
        for i in range(0, len(params), _PER_BATCH):
            client.log_batch(self.run_id, params=params[i : i + _PER_BATCH])

    def log_info(self, info: dict[str, Any]) -> None:
        """Run facts as ``pipekit.<key>`` tags (a later value replaces an earlier one)."""
        from mlflow.entities import RunTag

        from ._config import flatten

        client = self._open()
        tags = [RunTag(_key(f"pipekit.{k}"), str(v)[:_MAX_TAG]) for k, v in flatten(info).items()]
        for i in range(0, len(tags), _PER_BATCH):
            client.log_batch(self.run_id, tags=tags[i : i + _PER_BATCH])

    def flush(self) -> None:
        """MLflow's client writes synchronously; nothing to flush."""

    def close(self) -> None:
        if self._client is not None and self.run_id is not None:
            self._client.set_terminated(self.run_id)
        self._client = None

    def to_config(self) -> dict[str, Any]:
        return {
            "kind": "mlflow",
            "tracking_uri": self.tracking_uri,
            "experiment": self.experiment,
            "run_name": self.run_name,
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MlflowWriter) and other.to_config() == self.to_config()
