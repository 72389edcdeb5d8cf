"""Warnings that point at the user's line, not at ours.

A warning about a run (R-hat too high, a field the backend ignores) is about the user's
``loop.run()`` call, so Python should show *that* file and line. ``warnings.warn`` takes a
fixed ``stacklevel``, which is wrong as soon as the call is made from a different depth (a
Lightning hook, a helper); :func:`warn_user` counts the frames instead, past every module of
pipekit-train and of the libraries it drives. (Python 3.12's ``skip_file_prefixes`` does the
same; we support 3.11.)
"""

from __future__ import annotations

import sys
import warnings

__all__ = ["warn_user", "INTERNAL_PREFIXES"]

#: Modules whose frames are never "the user's line".
INTERNAL_PREFIXES: tuple[str, ...] = (
    "pipekit_train",
    "lightning",
    "pytorch_lightning",
    "torch",
    "keras",
    "jax",
    "numpyro",
    "blackjax",
    "optax",
    "orbax",
    "equinox",
    "grain",
)


def _is_internal(module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in INTERNAL_PREFIXES)


def _user_stacklevel() -> int:
    """``stacklevel`` for a ``warnings.warn`` made in :func:`warn_user`: its first caller
    outside :data:`INTERNAL_PREFIXES` (or the outermost frame if every one is internal)."""
    frame = sys._getframe(2)  # warn_user's caller
    level = 2
    while frame is not None:
        if not _is_internal(str(frame.f_globals.get("__name__", ""))):
            return level
        if frame.f_back is None:
            return level
        frame = frame.f_back
        level += 1
    return level


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` attributed to the user's code."""
    warnings.warn(message, category, stacklevel=_user_stacklevel())
