__path__ = __import__("pkgutil").extend_path(__path__, __name__)

__doc__ = """pipekit-train: one ``TrainingLoop``, many training backends.

Describe a job once — model, data, loss or task, optimiser, budget, callbacks,
checkpointing, sharding — and ``loop.run()`` trains it on the backend named by
``backend=``, returning ``(trained_op, backend_info)``. This package holds the
backend-agnostic core and imports no array library; backends live in the
``pipekit-train-*`` distributions under ``pipekit_train.adapters``.
"""

from .callbacks import (
    Callback,
    Checkpoint,
    EarlyStopping,
    LogToExperiment,
    ProgressBar,
    TerminateOnNaN,
)
from .carry import TrainerCarryState
from .errors import (
    BackendNotInstalledError,
    CheckpointError,
    ConfigError,
    DataError,
    ExtraNotInstalledError,
    LogsNotFoundError,
    PipekitError,
    TrainingError,
    UntrustedCodeError,
)
from .loop import TrainingLoop
from .losses import LOSS_NAMES
from .operator import Operator
from .registry import installed_backends
from .writers import CsvWriter, JsonlWriter, MetricWriter, MlflowWriter, TensorBoardWriter

__all__ = [
    "TrainingLoop",
    "TrainerCarryState",
    "Callback",
    "Checkpoint",
    "EarlyStopping",
    "LogToExperiment",
    "ProgressBar",
    "TerminateOnNaN",
    "Operator",
    "MetricWriter",
    "JsonlWriter",
    "CsvWriter",
    "TensorBoardWriter",
    "MlflowWriter",
    "LOSS_NAMES",
    "PipekitError",
    "ConfigError",
    "BackendNotInstalledError",
    "CheckpointError",
    "DataError",
    "TrainingError",
    "UntrustedCodeError",
    "LogsNotFoundError",
    "ExtraNotInstalledError",
    "installed_backends",
    "ShardingSpec",
    "__version__",
]


def __getattr__(name: str) -> object:
    # ShardingSpec lives in pipekit_train.sharding; imported on first use so that
    # the module stays light (it imports jax only when a spec is built).
    if name == "ShardingSpec":
        from .sharding import ShardingSpec

        return ShardingSpec
    if name == "__version__":
        from .registry import distribution_version

        return distribution_version("pipekit-train-core") or "0.0.0"
    raise AttributeError(f"module 'pipekit_train' has no attribute {name!r}")
