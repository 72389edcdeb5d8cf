"""Shared pieces of the NumPyro benchmarks (cases 10-11): data, models, the references.

SVI: posteriordb's ``sblrc`` Bayesian linear regression (``examples/posteriordb_models.py``)
on 1,000 synthetic rows of 5 features, AutoNormal guide, Adam (lr 0.01), minibatches of
100 (the model's ``N`` is bound, so each batch is scaled by N/B). MCMC: eight schools
noncentered, NUTS (target_accept 0.9), 1 chain, 500 warmup + 1,000 draws; the backend runs
``steps_per_call`` = 250 and logs every 250 steps, so only two chunk shapes compile (the
250-step warmup scan and the 250-step sampling scan).
"""

from __future__ import annotations

import functools
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "examples") not in sys.path:
    sys.path.insert(0, str(ROOT / "examples"))

import posteriordb_models as pdb  # noqa: E402

from pipekit_train import Callback, Checkpoint, TrainingLoop  # noqa: E402
from pipekit_train.adapters.bayes import NumpyroTask  # noqa: E402


@dataclass(frozen=True)
class SviSettings:
    rows: int = 1000
    batch: int = 100
    lr: float = 0.01
    steps: int = 2000  # first/repeated-run cases
    steps_per_call: int = 50
    log_every: int = 50


@dataclass(frozen=True)
class McmcSettings:
    num_warmup: int = 500
    num_samples: int = 1000
    chains: int = 1
    target_accept: float = 0.9
    steps_per_call: int = 250
    checkpoint_every: int = 250
    seed: int = 0


SVI_SETTINGS = SviSettings()
MCMC_SETTINGS = McmcSettings()


def regression(seed: int = 0) -> dict[str, np.ndarray]:
    """``{"x": float32 [rows, 5], "y": float32 [rows]}``: y = x @ (1..5) + N(0, 0.5²)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(SVI_SETTINGS.rows, 5)).astype(np.float32)
    y = (x @ np.arange(1.0, 6.0) + 0.5 * rng.normal(size=SVI_SETTINGS.rows)).astype(np.float32)
    return {"x": x, "y": y}


def schools() -> tuple[np.ndarray, np.ndarray]:
    """Eight schools' ``(sigma, y)`` as float32."""
    x, y = pdb.load_data("eight_schools-eight_schools_noncentered")
    return x.astype(np.float32), y.astype(np.float32)


class Stamps(Callback):
    """``perf_counter`` at every host event (after the driver fetched the window: synced)."""

    def __init__(self) -> None:
        self.at: dict[int, float] = {}

    def on_step_end(self, loop: Any, state: Any) -> None:
        self.at[int(state.step)] = time.perf_counter()


def svi_loop(
    data: dict[str, np.ndarray],
    max_steps: int,
    *,
    cache_dir: str | None = None,
    callbacks: list[Any] | None = None,
    batch: int | None = None,
) -> TrainingLoop:
    """The ``numpyro-svi`` run of the benchmarks, log every 50, no checkpoint.

    ``batch`` defaults to the minibatch of 100; the ``svi.run`` comparisons pass the whole
    data set, since ``svi.run`` has no minibatching and both sides must do the same work.
    """
    options: dict[str, Any] = {"steps_per_call": SVI_SETTINGS.steps_per_call}
    if cache_dir is not None:
        options["compilation_cache"] = cache_dir
    return TrainingLoop(
        task=NumpyroTask(model=pdb.sblrc, guide="AutoNormal", predictive_samples=10),
        dataset=(data["x"], data["y"]),
        backend="numpyro-svi",
        batch_size=batch or SVI_SETTINGS.batch,
        max_steps=max_steps,
        seed=0,
        optimizer_config={"name": "adam", "lr": SVI_SETTINGS.lr},
        log_every_n_steps=SVI_SETTINGS.log_every,
        callbacks=callbacks or [],
        backend_options=options,
    )


def _svi() -> Any:
    import numpyro.optim
    from numpyro.infer import SVI, Trace_ELBO
    from numpyro.infer.autoguide import AutoNormal

    model = functools.partial(pdb.sblrc, N=SVI_SETTINGS.rows)
    return SVI(model, AutoNormal(model), numpyro.optim.Adam(SVI_SETTINGS.lr), Trace_ELBO())


class HandSvi:
    """The SVI loop a user writes by hand: ``jax.jit(svi.update)``, one call per step.

    Minibatches come from a per-epoch ``np.random`` permutation by numpy fancy indexing;
    nothing is fetched per step, the only sync is at the end of a timed window.
    """

    def __init__(self, data: dict[str, np.ndarray], seed: int = 0) -> None:
        import jax

        self.x, self.y = data["x"], data["y"]
        self.n, self.b = len(self.x), SVI_SETTINGS.batch
        self.svi = _svi()
        self.update = jax.jit(self.svi.update)
        self.state = self.svi.init(jax.random.PRNGKey(seed), self.x[: self.b], self.y[: self.b])
        self.rng = np.random.default_rng(seed)
        self.perm, self.j = self.rng.permutation(self.n), 0

    def run(self, steps: int) -> float:
        """Run ``steps`` SVI steps; return their wall time (synced at the end)."""
        import jax

        start = time.perf_counter()
        state, loss = self.state, None
        for _ in range(steps):
            if (self.j + 1) * self.b > self.n:
                self.perm, self.j = self.rng.permutation(self.n), 0
            idx = self.perm[self.j * self.b : (self.j + 1) * self.b]
            self.j += 1
            state, loss = self.update(state, self.x[idx], self.y[idx])
        jax.block_until_ready((state, loss))
        self.state = state
        return time.perf_counter() - start


def raw_svi_run(data: dict[str, np.ndarray], steps: int) -> Any:
    """NumPyro's own ``svi.run`` for ``steps`` steps (full data: it has no minibatching)."""
    import jax

    result = _svi().run(jax.random.PRNGKey(0), steps, data["x"], data["y"], progress_bar=False)
    jax.block_until_ready(result.params)
    return result


def mcmc_loop(
    x: np.ndarray,
    y: np.ndarray,
    *,
    cache_dir: str | None = None,
    checkpoint_dir: str | None = None,
    callbacks: list[Any] | None = None,
) -> TrainingLoop:
    """The ``numpyro-mcmc`` run of the benchmarks (a checkpoint every 250 with a folder)."""
    m = MCMC_SETTINGS
    options: dict[str, Any] = {"target_accept": m.target_accept, "steps_per_call": m.steps_per_call}
    if cache_dir is not None:
        options["compilation_cache"] = cache_dir
    return TrainingLoop(
        task=NumpyroTask(
            model=pdb.eight_schools,
            num_warmup=m.num_warmup,
            num_samples=m.num_samples,
            num_chains=m.chains,
        ),
        dataset=(x, y),
        backend="numpyro-mcmc",
        seed=m.seed,
        backend_options=options,
        log_every_n_steps=m.steps_per_call,
        checkpoint_dir=checkpoint_dir,
        callbacks=list(callbacks or [])
        + ([Checkpoint(every_n_steps=m.checkpoint_every)] if checkpoint_dir else []),
    )


def raw_mcmc_run(x: np.ndarray, y: np.ndarray) -> Any:
    """NumPyro's own ``MCMC.run`` with the same sampler settings; draws fetched to the host."""
    import jax
    from numpyro.infer import MCMC, NUTS

    m = MCMC_SETTINGS
    mcmc = MCMC(
        NUTS(pdb.eight_schools, target_accept_prob=m.target_accept),
        num_warmup=m.num_warmup,
        num_samples=m.num_samples,
        num_chains=m.chains,
        progress_bar=False,
    )
    mcmc.run(jax.random.PRNGKey(m.seed), x, y)
    return jax.device_get(mcmc.get_samples(group_by_chain=True))
