"""The model → log-density bridge: the score of eight schools averages to zero over the
posteriordb reference draws (the README's score-identity test), and postprocess_fn
returns the constrained sites with the deterministic one."""

import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples"))
from posteriordb_models import POSTERIORDB, eight_schools, load_data  # noqa: E402

from pipekit_train.adapters.bayes import log_density_from_model  # noqa: E402

NAME = "eight_schools-eight_schools_noncentered"
pytestmark = pytest.mark.skipif(not (POSTERIORDB / NAME).exists(), reason="no posteriordb copy")


def test_score_identity_and_postprocess() -> None:
    x, y = load_data(NAME)
    ld = log_density_from_model(eight_schools, x.astype(np.float32), y.astype(np.float32))
    assert set(ld.init_position) == {"mu", "tau", "theta_trans"}
    draws = json.loads((POSTERIORDB / NAME / "reference_draws.json").read_text())["draws"]
    mu = np.asarray(draws["mu"], np.float32)
    tau = np.asarray(draws["tau"], np.float32)
    theta = np.stack([draws[f"theta[{j}]"] for j in range(1, 9)], axis=1).astype(np.float32)
    z = {"mu": mu, "tau": np.log(tau), "theta_trans": (theta - mu[:, None]) / tau[:, None]}
    grads = jax.vmap(jax.grad(ld.logdensity_fn))(z)
    for name, g in grads.items():
        g = np.asarray(g).reshape(len(mu), -1)
        zscore = g.mean(0) / (g.std(0, ddof=1) / np.sqrt(len(mu)))
        assert np.all(np.abs(zscore) < 4), (name, zscore)
    one = jax.tree.map(lambda a: jnp.asarray(a[0]), z)
    post = ld.postprocess_fn(one)
    np.testing.assert_allclose(post["tau"], tau[0], rtol=1e-5)
    np.testing.assert_allclose(post["theta"], theta[0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ld.potential_fn(one), -ld.logdensity_fn(one))


def test_one_start_per_chain() -> None:
    x, y = load_data(NAME)
    ld = log_density_from_model(eight_schools, x, y, num_chains=3)
    assert ld.init_position["theta_trans"].shape == (3, 8)
    assert np.isfinite(np.asarray(jax.vmap(ld.logdensity_fn)(ld.init_position))).all()
