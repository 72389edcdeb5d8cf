"""The sweep plotter: Optuna's optimisation history and parallel coordinates of a sweep folder.

A sweep folder (``pipekit_train.sweep``'s, holding ``sweep.json``) is one kind of folder
``pipekit-train plot`` draws; the plotter reads its study through the sweep package, which
knows nothing of plotting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ExtraNotInstalledError
from ._folder import RunFolder

__all__ = ["SweepPlots"]


class SweepPlots:
    """Applies to a sweep folder (it holds ``sweep.json``); needs matplotlib and Optuna."""

    name = "sweep"

    def applies(self, run: RunFolder) -> bool:
        return (run.run_dir / "sweep.json").is_file()

    def render(self, run: RunFolder) -> list[Path]:
        from ..sweep._table import load_study

        study = load_study(run.run_dir)
        try:
            import matplotlib

            matplotlib.use("Agg", force=True)
            import matplotlib.pyplot as plt
            from optuna.visualization import matplotlib as ovm
        except ImportError as exc:
            raise ExtraNotInstalledError(
                "sweep plots need matplotlib: pip install 'pipekit-train-core[plot,sweep]'"
            ) from exc
        import warnings

        run.out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Optuna's "experimental" warnings
            for name, draw in (
                ("history", ovm.plot_optimization_history),
                ("parallel_coordinates", ovm.plot_parallel_coordinate),
            ):
                figure: Any = draw(study).figure
                path = run.out_dir / f"sweep_{name}.png"
                figure.savefig(path, dpi=100, bbox_inches="tight")
                plt.close(figure)
                written.append(path)
        return written
