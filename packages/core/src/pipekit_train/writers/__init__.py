"""Metric writers: where logged metrics go.

Every writer implements the ``MetricWriter`` protocol. JSON lines and CSV need
nothing beyond the standard library; TensorBoard needs the ``[tensorboard]``
extra (tensorboardX) and MLflow the ``[mlflow]`` extra, imported only when such
a writer is opened.

``metric_writer`` names writers (``"tensorboard"``, ``["jsonl", "mlflow"]``),
placed in the run folder (``checkpoint_dir``, else ``runs/<backend>-<time>``)
under ``logs/<kind>``; see ``writers_for_loop`` and ``docs/writers.md``.
``viewing_hints`` says how to open what they wrote (``tensorboard --logdir …``,
``mlflow ui --backend-store-uri …``, ``pipekit-train plot …``).
"""

from ._base import MetricWriter, writer_to_config
from ._config import flatten
from ._hints import viewing_hints
from ._multi import MultiWriter
from ._resolve import (
    LOGS_DIR,
    MLFLOW_DB,
    WRITER_KINDS,
    check_writer_spec,
    default_location,
    resolve_writer,
    resolve_writers,
    run_dir_for,
    writers_for_loop,
)
from .csv import CsvWriter
from .jsonl import JsonlWriter
from .mlflow import MlflowWriter
from .tensorboard import TensorBoardWriter

__all__ = [
    "MetricWriter",
    "MultiWriter",
    "JsonlWriter",
    "CsvWriter",
    "TensorBoardWriter",
    "MlflowWriter",
    "WRITER_KINDS",
    "LOGS_DIR",
    "MLFLOW_DB",
    "check_writer_spec",
    "default_location",
    "resolve_writer",
    "resolve_writers",
    "run_dir_for",
    "writers_for_loop",
    "writer_to_config",
    "flatten",
    "viewing_hints",
]
