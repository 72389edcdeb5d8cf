"""The JAX compilation cache the commands turn on by default: where it lives, and which
backends take it.

``pipekit-train run`` and ``pipekit-train sweep`` both set ``backend_options.compilation_cache``
to :func:`default_compilation_cache_dir` (unless ``--compilation-cache`` says otherwise) for a
backend that :func:`runs_on_jax`. Nothing here imports JAX or a backend.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["default_compilation_cache_dir", "runs_on_jax"]


def default_compilation_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/pipekit-train/jax``, or ``~/.cache/pipekit-train/jax``.

    ``XDG_CACHE_HOME`` is honoured only when it is an absolute path, as the XDG
    base-directory specification asks.
    """
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "pipekit-train" / "jax"


def runs_on_jax(backend: str) -> bool:
    """Whether ``backend``'s distribution depends on JAX (read from metadata; nothing imported).

    The JAX compilation cache is a JAX backend's option; a backend on another library (torch
    for Lightning) would refuse it as an unknown ``backend_options`` key. A backend that is not
    installed keeps the option, so its own error (the ``pip install`` hint) is what shows.
    """
    from .registry import backend_states

    state = next((s for s in backend_states() if s.name == backend), None)
    return state is None or state.state != "installed" or "jax" in state.libraries
