"""Plots of a Bayesian run through ArviZ: trace and rank plots, and the posterior predictive.

``PosteriorPlots`` is a core plotter (the ``pipekit_train.plotters`` entry point
``posterior``), so ``pipekit-train plot RUN_DIR`` draws it for any sampler run
whose checkpoints hold a trace of draws: it reads the newest checkpoint's trace
(the draws so far, also of an interrupted run) and writes ``trace.png`` and
``rank.png``. ``plot_posterior_predictive`` draws ArviZ's posterior-predictive
check from a trained ``NumpyroPredictiveOp`` and observed data.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ._diagnostics import to_inference_data

__all__ = ["PosteriorPlots", "plot_posterior_predictive"]

#: Trace entries that are draws of a site (the sampler backends' naming).
SAMPLE_PREFIX = "sample__"


def _agg_pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _az() -> Any:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az
    return az


def _newest_trace_step(run_dir: Path) -> Path | None:
    """The newest step folder holding a trace, in ``run_dir`` (a checkpoint_dir) or in one of
    its sub-folders (a run folder whose checkpoint_dir is ``run_dir/checkpoints``, say).

    Found through core's checkpoint store (the kind told from the folder's files); only
    Orbax stores hold a trace, so a Lightning or Keras folder has none and is skipped.
    """
    from pipekit_train.engine import find_checkpoint_files

    files = find_checkpoint_files(run_dir)
    if files is None or files.kind != "orbax":
        return None
    steps = [s for s in files.steps() if (files.directory / str(s) / "trace").is_dir()]
    return files.directory / str(steps[-1]) if steps else None


def _run_name(run_dir: Path) -> str:
    """The run's name for a title: the folder, or its parent for a bare ``checkpoints``."""
    run_dir = run_dir.resolve()
    return run_dir.parent.name if run_dir.name == "checkpoints" else run_dir.name


def _read_trace(step_dir: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    from pipekit_train.engine import StepUnreadable, open_checkpoint_files
    from pipekit_train.errors import CheckpointError
    from pipekit_train.jax.checkpoint import read_trace

    files = open_checkpoint_files(step_dir.parent)
    assert files is not None
    try:
        meta = files.read_meta(int(step_dir.name))
    except StepUnreadable as e:
        raise CheckpointError(f"checkpoint step folder {str(step_dir)!r}: {e}") from None
    trace = read_trace(step_dir) or {}  # checked against the step's checksums
    return {k: np.asarray(v) for k, v in trace.items()}, meta


def _by_chain(trace: dict[str, np.ndarray], chains: int) -> tuple[dict[str, Any], Any]:
    """Trace arrays ``(draws, [chains,] …)`` → samples ``(chains, draws, …)`` and divergences."""

    def regroup(a: np.ndarray) -> np.ndarray:
        return np.swapaxes(a, 0, 1) if chains > 1 else a[None]

    samples = {
        k[len(SAMPLE_PREFIX) :]: regroup(v) for k, v in trace.items() if k.startswith(SAMPLE_PREFIX)
    }
    diverging = regroup(trace["diverging"]) if "diverging" in trace else None
    return samples, diverging


def _save(figure: Any, path: Path) -> Path:
    figure.savefig(path, dpi=90)
    _agg_pyplot().close(figure)
    return path


class PosteriorPlots:
    """ArviZ trace and rank plots of the draws in a sampler run's newest checkpoint."""

    name = "posterior"

    def applies(self, run: Any) -> bool:
        return _newest_trace_step(Path(run.run_dir)) is not None

    def render(self, run: Any) -> list[Path]:
        step_dir = _newest_trace_step(Path(run.run_dir))
        assert step_dir is not None
        trace, meta = _read_trace(step_dir)
        chains = int((meta.get("fingerprint") or {}).get("num_chains", 1) or 1)
        samples, diverging = _by_chain(trace, chains)
        if not samples:
            return []
        idata = to_inference_data(samples, diverging=diverging)
        az, plt = _az(), _agg_pyplot()
        out = Path(run.out_dir)
        out.mkdir(parents=True, exist_ok=True)
        draws = next(iter(samples.values())).shape[1]
        about = f"{chains} chain(s) × {draws} draws, step {step_dir.name}"
        written = []
        axes = np.atleast_1d(az.plot_trace(idata, compact=True, show=False))
        written.append(_titled(axes, f"{_run_name(Path(run.run_dir))}: trace ({about})"))
        written[-1] = _save(written[-1], out / "trace.png")
        axes = np.atleast_1d(az.plot_rank(idata, show=False))
        written.append(_titled(axes, f"{_run_name(Path(run.run_dir))}: rank ({about})"))
        written[-1] = _save(written[-1], out / "rank.png")
        plt.close("all")
        return written


def _titled(axes: Any, title: str) -> Any:
    """The figure of ArviZ's ``axes`` with ``title`` above its panels (each panel keeps the
    site's name as ArviZ titles it), laid out so that the title overlaps no panel."""
    figure = axes.ravel()[0].figure
    rows = max(1, axes.shape[0] if axes.ndim > 1 else int(np.ceil(axes.size / 3)))
    inches = figure.get_size_inches()[1]
    top = 1.0 - min(0.12, 0.45 / max(inches, 1.0))  # ~0.45 in for the title at any height
    figure.suptitle(title, fontsize="x-large")
    figure.tight_layout(rect=(0.0, 0.0, 1.0, top), h_pad=0.8 if rows > 1 else None)
    return figure


def plot_posterior_predictive(
    op: Any, x: Any, y: Any, out: str | os.PathLike[str], *, seed: int = 0
) -> Path:
    """ArviZ's posterior-predictive check of ``op`` (a ``NumpyroPredictiveOp``) at ``x``
    against the observed ``y``; writes ``out`` (a PNG path) and returns it."""
    az = _az()
    _agg_pyplot()  # headless: ArviZ draws through pyplot
    site = op.predictive_site
    draws = np.asarray(op(x, draws=True, seed=seed))
    idata = az.from_dict(
        posterior_predictive={site: draws[None]}, observed_data={site: np.asarray(y)}
    )
    ax = az.plot_ppc(idata, num_pp_samples=min(100, draws.shape[0]), show=False)
    figure = np.atleast_1d(ax).ravel()[0].figure
    figure.suptitle(f"posterior predictive: {site}")
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    return _save(figure, path)
