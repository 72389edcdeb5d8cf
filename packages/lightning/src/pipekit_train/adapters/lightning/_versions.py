"""Version strings reported in ``backend_info``."""

from __future__ import annotations

from pipekit_train.registry import distribution_version

__all__ = ["library_versions", "pipekit_versions"]


def library_versions() -> dict[str, str]:
    """Versions of the libraries the lightning backend runs on (imports torch and lightning)."""
    import torch

    import lightning

    return {"torch_version": torch.__version__, "lightning_version": lightning.__version__}


def pipekit_versions() -> dict[str, str | None]:
    """Versions of the pipekit distributions in use."""
    return {
        "pipekit-train-core": distribution_version("pipekit-train-core"),
        "pipekit-train-lightning": distribution_version("pipekit-train-lightning"),
    }
