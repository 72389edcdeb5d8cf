"""Metric writers: where logged metrics go.

Every writer implements the ``MetricWriter`` protocol. JSON lines and CSV need
nothing beyond the standard library; TensorBoard needs the ``[tensorboard]``
extra (tensorboardX) and MLflow the ``[mlflow]`` extra, imported only when such
a writer is built.
"""

from ._base import MetricWriter, resolve_writer, writer_to_config
from .csv import CsvWriter
from .jsonl import JsonlWriter
from .mlflow import MlflowWriter
from .tensorboard import TensorBoardWriter

__all__ = [
    "MetricWriter",
    "JsonlWriter",
    "CsvWriter",
    "TensorBoardWriter",
    "MlflowWriter",
    "resolve_writer",
    "writer_to_config",
]
