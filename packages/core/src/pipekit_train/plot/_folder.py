"""What a plotter is handed: the folder being plotted and the folder its PNGs go to.

The lowest layer of ``pipekit_train.plot``: the registry (``_registry``) and every
plotter (the metric curves here, the sweep plots in ``_sweep``, a backend's own)
take a :class:`RunFolder`, so it lives apart from both.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["RunFolder"]


@dataclass(frozen=True)
class RunFolder:
    """The folder being plotted and the folder PNGs go to."""

    run_dir: Path
    out_dir: Path
