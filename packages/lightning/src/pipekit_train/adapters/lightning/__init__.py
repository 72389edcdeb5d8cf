"""The ``lightning`` backend: PyTorch Lightning's ``Trainer.fit`` behind one ``TrainingLoop``.

``TrainingLoop(..., backend="lightning").run()`` lands in :func:`run`. Importing
this package is cheap: torch is imported only for ``TorchModelOp`` and
Lightning (9-11 s to import) only when a run starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._ops import TorchModelOp

__all__ = ["run", "TorchModelOp"]


def run(loop: Any) -> tuple[Any, dict[str, Any]]:
    """Train ``loop`` with Lightning (see ``_run.run``)."""
    from ._run import run as _run

    return _run(loop)


def __getattr__(name: str) -> Any:
    if name == "TorchModelOp":
        from ._ops import TorchModelOp

        return TorchModelOp
    raise AttributeError(name)
