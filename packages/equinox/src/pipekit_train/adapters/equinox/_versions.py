"""Version strings reported in ``backend_info`` and by ``pipekit-train backends``."""

from __future__ import annotations

from pipekit_train.registry import distribution_version


def library_versions() -> dict[str, str]:
    """Versions of the libraries the Equinox backend runs on."""
    import equinox
    import grain  # noqa: F401
    import jax
    import optax

    return {
        "jax_version": jax.__version__,
        "equinox_version": equinox.__version__,
        "optax_version": optax.__version__,
        "grain_version": distribution_version("grain") or "unknown",
        "orbax_version": distribution_version("orbax-checkpoint") or "unknown",
    }


def pipekit_versions() -> dict[str, str | None]:
    """Versions of the pipekit distributions in use."""
    return {
        "pipekit-train-core": distribution_version("pipekit-train-core"),
        "pipekit-train-equinox": distribution_version("pipekit-train-equinox"),
    }
