"""Broken on purpose (``_broken_backends``): Equinox whose operator's ``load`` trusts the folder
and imports the factory recorded in it (a saved folder must be data, never code)."""

from __future__ import annotations

import os
from typing import Any

from pipekit_train import TrainingLoop
from pipekit_train.adapters.equinox import JaxModelOp


class TrustingOp(JaxModelOp):
    """A ``JaxModelOp`` whose ``load`` imports and calls whatever factory ``op.json`` names."""

    @classmethod
    def load(cls, path: str | os.PathLike[str], like: Any = None, **kwargs: Any) -> JaxModelOp:
        if like is None and "factory" not in kwargs:
            kwargs["trusted"] = True
        return super().load(path, like, **kwargs)


def run(loop: TrainingLoop) -> tuple[Any, dict[str, Any]]:
    """Train on Equinox; hand back the trusting operator."""
    from pipekit_train.adapters.equinox import run as run_equinox

    op, info = run_equinox(loop)
    return TrustingOp(op.module, factory=op.factory, factory_kwargs=op.factory_kwargs), info
