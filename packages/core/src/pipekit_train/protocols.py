"""What the layers below ``TrainingLoop`` know of a loop: :class:`LoopView`.

The engine, the callbacks, the writers and the run facts read a loop's fields; they are
typed with this protocol instead of importing ``pipekit_train.loop`` (which imports them),
so every dependency points one way: down. ``TrainingLoop`` satisfies it structurally.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

__all__ = ["LoopView"]


class LoopView(Protocol):
    """A ``TrainingLoop`` as read by the layers below it: its fields, the ``Checkpoint``
    callback in effect, and its YAML form."""

    __dataclass_fields__: ClassVar[dict[str, Any]]  # a dataclass: ``dataclasses.fields`` reads it
    model_op: Any
    dataset: Any
    val_dataset: Any
    loss: Any
    task: Any
    batch_size: int
    max_steps: int
    optimizer_config: Any
    callbacks: list[Any]
    checkpoint_dir: str | None
    log_every_n_steps: int
    eval_every_n_steps: int | None
    metric_writer: Any
    seed: int
    backend: str
    sharding: Any
    backend_options: dict[str, Any]
    accumulate_steps: int
    ema_decay: float | None
    precision: str

    @property
    def checkpoint_callback(self) -> Any:
        """The ``Checkpoint`` callback in effect (``None`` without a ``checkpoint_dir``)."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """The loop's YAML form; ``ConfigError`` naming a field that has none."""
        ...
