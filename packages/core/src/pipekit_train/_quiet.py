"""Library noise off by default: log lines and warnings a user can do nothing about.

Orbax logs an absl WARNING at every checkpoint ("Skipping merge of OCDBT checkpoints"; the
trace is written without OCDBT on purpose) and when a reader skips a file it does not need;
Lightning advertises its cloud products at every ``fit`` ("💡 Tip: …") and triggers a
``LeafSpec`` deprecation inside its own code; ArviZ logs "Shape validation failed" for a
short trace that pipekit summarises on purpose. None of these is about the user's run, and
each hides the lines that are. They are dropped by exact message, so every other line of
those libraries still shows; ``PIPEKIT_TRAIN_LIBRARY_LOGS=1`` keeps them all.
"""

from __future__ import annotations

import logging
import os
import warnings

__all__ = ["quiet_library_noise", "LIBRARY_LOGS_ENV", "NOISE"]

#: Set to ``1`` (or ``true``) to see every library log line and warning.
LIBRARY_LOGS_ENV = "PIPEKIT_TRAIN_LIBRARY_LOGS"

#: logger name → the message fragments dropped from it.
NOISE: dict[str, tuple[str, ...]] = {
    "absl": (
        "Skipping merge of OCDBT checkpoints",
        "Metadata file does not exist",
    ),
    "lightning.pytorch.utilities.rank_zero": ("💡 Tip",),
    "lightning.fabric.utilities.rank_zero": ("💡 Tip",),
    "arviz": ("Shape validation failed",),
}

#: Warning messages (regular expressions matched at the start) dropped.
NOISY_WARNINGS: tuple[str, ...] = (r"`isinstance\(treespec, LeafSpec\)` is deprecated",)


class _DropNoise(logging.Filter):
    def __init__(self, prefixes: tuple[str, ...]) -> None:
        super().__init__()
        self.prefixes = prefixes

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a record that cannot format is not ours to drop
            return True
        return not any(p in message for p in self.prefixes)


def _wanted() -> bool:
    return os.environ.get(LIBRARY_LOGS_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def quiet_library_noise() -> None:
    """Install the filters (once per process; a no-op with ``PIPEKIT_TRAIN_LIBRARY_LOGS=1``)."""
    if _wanted():
        return
    for name, prefixes in NOISE.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropNoise) for f in logger.filters):
            logger.addFilter(_DropNoise(prefixes))
    for pattern in NOISY_WARNINGS:
        warnings.filterwarnings("ignore", message=pattern)
