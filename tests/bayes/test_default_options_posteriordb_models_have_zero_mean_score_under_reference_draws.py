"""The seventeen posteriordb models that ``nox -s validate`` runs at default options
(arma11, hmm_example, kilpisjarvi and the fourteen of ``MORE``; data in
``examples/posteriordb/``, so this runs without the shared copy) are the posteriors their
reference draws come from: the score of the log density, in unconstrained coordinates,
averages to zero over the draws (the README's score identity; a wrong prior, a missing
Jacobian or a misread recursion shows as |z| > 4)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpyro import handlers
from numpyro.distributions.transforms import biject_to

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples"))
import posteriordb_models as pdb  # noqa: E402

from pipekit_train.adapters.bayes import log_density_from_model  # noqa: E402


def _sites(draws: dict[str, list[float]]) -> dict[str, np.ndarray]:
    """``{"mu[1]": [...], "mu[2]": [...]}`` → ``{"mu": (n, 2)}``; scalar sites stay ``(n,)``."""
    out: dict[str, np.ndarray] = {}
    for base in dict.fromkeys(n.split("[")[0] for n in draws):
        if base in draws:
            out[base] = np.asarray(draws[base], np.float64)
        else:
            cols = [v for n, v in draws.items() if n.split("[")[0] == base]
            out[base] = np.stack(cols, axis=1).astype(np.float64)
    return out


@pytest.mark.parametrize("name", pdb.DEFAULTS)
def test_score_averages_to_zero_over_the_reference_draws(name: str) -> None:
    jax.config.update("jax_enable_x64", True)
    try:
        x, y = pdb.load_data(name)
        kwargs = pdb.task_fields(name).get("model_kwargs", {})
        model = pdb.MODELS[name]
        ld = log_density_from_model(model, x, y, model_kwargs=kwargs)
        raw = json.loads((pdb.folder(name) / "reference_draws.json").read_text())["draws"]
        sites = _sites(raw)
        first = {k: jnp.asarray(v[0]) for k, v in sites.items()}
        trace = handlers.trace(handlers.substitute(model, data=first)).get_trace(x, y, **kwargs)
        assert set(ld.init_position) == set(sites)
        z = {k: biject_to(trace[k]["fn"].support).inv(jnp.asarray(v)) for k, v in sites.items()}
        grads = jax.vmap(jax.grad(ld.logdensity_fn))(z)
    finally:
        jax.config.update("jax_enable_x64", False)
    for site, g in grads.items():
        g = np.asarray(g).reshape(len(raw[next(iter(raw))]), -1)
        zscore = g.mean(0) / (g.std(0, ddof=1) / np.sqrt(len(g)))
        assert np.all(np.abs(zscore) < 4), (site, zscore)
