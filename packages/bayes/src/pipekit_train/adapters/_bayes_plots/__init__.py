"""The ``posterior`` plotter's entry point, importing no framework until it draws.

``pipekit-train plot RUN_DIR`` loads every registered plotter to ask whether it applies.
The drawing code (``pipekit_train.adapters.bayes._plots``) imports jax, numpy and ArviZ
through the bayes package; this light face answers :meth:`PosteriorPlots.applies` from
the checkpoint files alone (core's store reader), so plotting an Equinox, Keras or
Lightning run folder never imports them, and imports the drawing code only to render.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["PosteriorPlots"]


def _has_trace(run_dir: Path) -> bool:
    """Whether ``run_dir`` (or a sub-folder) holds an Orbax step with a ``trace`` item."""
    from pipekit_train.engine import find_checkpoint_files

    files = find_checkpoint_files(run_dir)
    if files is None or files.kind != "orbax":
        return False
    return any((files.directory / str(s) / "trace").is_dir() for s in files.steps())


class PosteriorPlots:
    """ArviZ trace and rank plots of the draws in a sampler run's newest checkpoint."""

    name = "posterior"

    def applies(self, run: Any) -> bool:
        return _has_trace(Path(run.run_dir))

    def render(self, run: Any) -> list[Path]:
        from pipekit_train.adapters.bayes._plots import PosteriorPlots as Drawing

        out: list[Path] = Drawing().render(run)
        return out
