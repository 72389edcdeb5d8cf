__path__ = __import__("pkgutil").extend_path(__path__, __name__)

__doc__ = """pipekit-train: one ``TrainingLoop``, many training backends.

Describe a job once — model, data, loss or task, optimiser, budget, callbacks,
checkpointing, sharding — and ``loop.run()`` trains it on the backend named by
``backend=``, returning ``(trained_op, backend_info)``. This package holds the
backend-agnostic core and imports no array library; backends live in the
``pipekit-train-*`` distributions under ``pipekit_train.adapters``.

The names below are loaded on first use (PEP 562), so importing one part of the
package (``pipekit_train.writers``, ``pipekit_train.errors``) does not import the
rest (the loop, the registry): each part imports only what it needs.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
    from .sharding import ShardingSpec
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


#: Each public name and the submodule it is loaded from on first use.
_LAZY: dict[str, str] = {
    **dict.fromkeys(
        (
            "Callback",
            "Checkpoint",
            "EarlyStopping",
            "LogToExperiment",
            "ProgressBar",
            "TerminateOnNaN",
        ),
        "callbacks",
    ),
    "TrainerCarryState": "carry",
    **dict.fromkeys(
        (
            "BackendNotInstalledError",
            "CheckpointError",
            "ConfigError",
            "DataError",
            "ExtraNotInstalledError",
            "LogsNotFoundError",
            "PipekitError",
            "TrainingError",
            "UntrustedCodeError",
        ),
        "errors",
    ),
    "TrainingLoop": "loop",
    "LOSS_NAMES": "losses",
    "Operator": "operator",
    "installed_backends": "registry",
    **dict.fromkeys(
        ("CsvWriter", "JsonlWriter", "MetricWriter", "MlflowWriter", "TensorBoardWriter"),
        "writers",
    ),
    # ShardingSpec imports jax only when a spec is built.
    "ShardingSpec": "sharding",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is not None:
        import importlib

        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value
    if name == "__version__":
        from .registry import distribution_version

        return distribution_version("pipekit-train-core") or "0.0.0"
    raise AttributeError(f"module 'pipekit_train' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
