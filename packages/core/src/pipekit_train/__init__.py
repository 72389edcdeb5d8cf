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

if TYPE_CHECKING:  # the real imports, for type checkers (name as name: a re-export)
    from .callbacks import Callback as Callback
    from .callbacks import Checkpoint as Checkpoint
    from .callbacks import EarlyStopping as EarlyStopping
    from .callbacks import LogToExperiment as LogToExperiment
    from .callbacks import ProgressBar as ProgressBar
    from .callbacks import TerminateOnNaN as TerminateOnNaN
    from .carry import TrainerCarryState as TrainerCarryState
    from .errors import BackendNotInstalledError as BackendNotInstalledError
    from .errors import CheckpointError as CheckpointError
    from .errors import ConfigError as ConfigError
    from .errors import DataError as DataError
    from .errors import ExtraNotInstalledError as ExtraNotInstalledError
    from .errors import LogsNotFoundError as LogsNotFoundError
    from .errors import PipekitError as PipekitError
    from .errors import TrainingError as TrainingError
    from .errors import UntrustedCodeError as UntrustedCodeError
    from .loop import TrainingLoop as TrainingLoop
    from .losses import LOSS_NAMES as LOSS_NAMES
    from .operator import Operator as Operator
    from .registry import installed_backends as installed_backends
    from .sharding import ShardingSpec as ShardingSpec
    from .writers import CsvWriter as CsvWriter
    from .writers import JsonlWriter as JsonlWriter
    from .writers import MetricWriter as MetricWriter
    from .writers import MlflowWriter as MlflowWriter
    from .writers import TensorBoardWriter as TensorBoardWriter


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

__all__ = [*_LAZY, "__version__"]


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
