"""``KerasModelOp``: the trained operator over a ``keras.Model``.

Saving writes Keras' own ``.keras`` archive and loading reads it with
``safe_mode=True``, so no arbitrary pickled code is ever run. A ``Sequential`` or
functional model needs nothing more; a subclassed model must be registered with
``keras.saving.register_keras_serializable``, define ``get_config``, and have its
module imported before ``load``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pipekit_train.errors import ConfigError

from ._env import import_keras

__all__ = ["KerasModelOp"]


def _archive(path: str | os.PathLike[str]) -> Path:
    p = Path(path)
    return p if p.suffix == ".keras" else p / "model.keras"


class KerasModelOp:
    """An ``Operator`` over a ``keras.Model``: ``op(x)``, ``.model``, ``save``, ``load``."""

    def __init__(self, model: Any) -> None:
        keras = import_keras()
        if not isinstance(model, keras.Model):
            raise ConfigError(
                f"KerasModelOp needs a keras.Model, got {type(model).__name__}",
                field="model_op",
            )
        self.model = model

    def __call__(self, inputs: Any) -> Any:
        """The model's output on ``inputs`` (inference mode: no dropout)."""
        return self.model(inputs, training=False)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write ``path`` (a ``.keras`` file, or a folder that gets ``model.keras``)."""
        target = _archive(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        self.model.save(target)
        return target

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> KerasModelOp:
        """Read what ``save`` wrote, with Keras' ``safe_mode`` on."""
        keras = import_keras()
        from ._optim import per_update_schedule_class
        from ._own import mark_compiled_by_pipekit

        per_update_schedule_class(keras)  # registered: an op trained with accumulate_steps
        target = _archive(path)
        if not target.is_file():
            raise ConfigError(f"KerasModelOp.load: no .keras archive at {str(target)!r}")
        try:
            model = keras.saving.load_model(target, safe_mode=True)
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"KerasModelOp.load: {target} cannot be loaded safely ({exc}). A subclassed "
                "model must be decorated with keras.saving.register_keras_serializable, define "
                "get_config, and its module must be imported before load",
                field="model_op",
            ) from exc
        # The archive's compile is the one the loop trained it with, not a user's compile():
        # a next run compiles it from its own loss= / optimizer_config (issue 20, _own).
        mark_compiled_by_pipekit(model)
        return cls(model)

    def __repr__(self) -> str:
        return f"KerasModelOp({self.model.name!r})"
