"""MLflow tracking through the ``mlflow`` client (the ``[mlflow]`` extra)."""

from __future__ import annotations

import os
import re
from typing import Any

from ._extras import (
    database_libraries_missing,
    missing_database_libraries,
    missing_library,
    tracking_scheme,
)

# MLflow's limits (mlflow.utils.validation): keys, values, entries per log_batch call.
_MAX_KEY, _MAX_PARAM, _MAX_TAG, _PER_BATCH = 250, 6000, 8000, 100
_BAD_KEY_CHARS = re.compile(r"[^\w\-. /]")


def _key(name: str) -> str:
    """A valid MLflow param / tag key (alphanumerics, ``_ - . /`` and spaces)."""
    return _BAD_KEY_CHARS.sub("_", name)[:_MAX_KEY]


class MlflowWriter:
    """Log metrics to an MLflow run; a SQLite store (``sqlite:///mlflow.db``) needs no server.

    The run is created on the first write and ended by ``close``.

    ``tracking_uri`` is any MLflow tracking URI, kept as given. The default, a
    SQLite database, is MLflow 3's own recommendation and the store its client
    and ``mlflow ui --backend-store-uri sqlite:///…`` open without any setting;
    it needs ``sqlalchemy`` and ``alembic``, which the ``[mlflow]`` extra installs
    next to ``mlflow-skinny``. (Named in ``metric_writer`` without a location, the
    store is ``<run folder>/logs/mlflow/mlflow.db``.) A file store (``file:./mlruns``)
    still works: MLflow 3 keeps it in maintenance mode and refuses it unless
    ``MLFLOW_ALLOW_FILE_STORE`` is true, so for a ``file:`` (or plain path) URI
    this writer sets that variable in its own process when it is unset (an
    explicit value is respected) — a later reader must set it too.

    ``artifact_location`` is where an experiment this writer *creates* keeps its
    artifacts (MLflow's default is ``./mlruns`` of the working directory); an
    existing experiment keeps its own.

    ``log_config`` logs the loop's configuration as run *params* (flattened keys
    such as ``optimizer_config.lr``); ``log_info`` logs run facts (backend,
    library versions, final step) as *tags* prefixed ``pipekit.``.
    """

    def __init__(
        self,
        tracking_uri: str = "sqlite:///mlflow.db",
        experiment: str = "pipekit-train",
        run_name: str | None = None,
        artifact_location: str | None = None,
    ) -> None:
        self.tracking_uri = tracking_uri
        self.experiment = experiment
        self.run_name = run_name
        self.artifact_location = artifact_location
        self._client: Any = None
        self.run_id: str | None = None

    def _open(self) -> Any:
        if self._client is None:
            try:
                from mlflow.tracking import MlflowClient
            except ImportError as exc:
                raise missing_library("mlflow") from exc
            if tracking_scheme(self.tracking_uri) in ("", "file"):
                os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
            elif database_libraries_missing(self.tracking_uri):
                raise missing_database_libraries(self.tracking_uri)
            client = MlflowClient(tracking_uri=self.tracking_uri)
            experiment = client.get_experiment_by_name(self.experiment)
            experiment_id = (
                experiment.experiment_id
                if experiment is not None
                else client.create_experiment(
                    self.experiment, artifact_location=self.artifact_location
                )
            )
            run = client.create_run(experiment_id, run_name=self.run_name)
            self._client, self.run_id = client, run.info.run_id
        return self._client

    def write(self, step: int, metrics: dict[str, float]) -> None:
        client = self._open()  # first: a missing mlflow is its ConfigError, not an ImportError
        import time

        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        client.log_batch(
            self.run_id,
            metrics=[Metric(k, float(v), now, int(step)) for k, v in metrics.items()],
        )

    def log_config(self, config: dict[str, Any]) -> None:
        """The flattened config as params (values longer than MLflow allows are cut)."""
        client = self._open()
        from mlflow.entities import Param

        from ._config import flatten

        params = [Param(_key(k), str(v)[:_MAX_PARAM]) for k, v in flatten(config).items()]
        for i in range(0, len(params), _PER_BATCH):
            client.log_batch(self.run_id, params=params[i : i + _PER_BATCH])

    def log_info(self, info: dict[str, Any]) -> None:
        """Run facts as ``pipekit.<key>`` tags (a later value replaces an earlier one)."""
        client = self._open()
        from mlflow.entities import RunTag

        from ._config import flatten

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
        config: dict[str, Any] = {
            "kind": "mlflow",
            "tracking_uri": self.tracking_uri,
            "experiment": self.experiment,
            "run_name": self.run_name,
        }
        if self.artifact_location is not None:
            config["artifact_location"] = self.artifact_location
        return config

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MlflowWriter) and other.to_config() == self.to_config()
