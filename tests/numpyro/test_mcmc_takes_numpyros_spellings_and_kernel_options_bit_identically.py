"""numpyro-mcmc accepts NumPyro's spellings (``target_accept_prob``, and BlackJAX's
``max_num_doublings``) and NUTS's own options (``step_size``, ``adapt_step_size``,
``adapt_mass_matrix``, ``inverse_mass_matrix``, ``forward_mode_differentiation``, structured
``dense_mass``), and each reaches the kernel: the draws are bit-identical to NumPyro's
``MCMC.run`` with the same NUTS arguments (issue 25 item 5). One concept under two names
with different values is a ``ConfigError`` naming both."""

from __future__ import annotations

import warnings
from typing import Any

import jax
import numpy as np
import pytest
from _npy_helpers import mcmc_run_starts, pdb
from numpyro.infer import MCMC, NUTS

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.adapters.numpyro_mcmc._options import parse_options
from pipekit_train.errors import ConfigError

NAME = "eight_schools-eight_schools_noncentered"
W, S = 40, 30
IMM = {("mu", "tau"): np.array([1.0, 0.5]), ("theta_trans",): np.ones(8)}

CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    # (backend_options, the same as NUTS keyword arguments)
    ({"target_accept_prob": 0.9}, {"target_accept_prob": 0.9}),
    (
        {"step_size": 0.3, "adapt_step_size": False, "max_num_doublings": 6},
        {"step_size": 0.3, "adapt_step_size": False, "max_tree_depth": 6},
    ),
    (
        {
            "adapt_mass_matrix": False,
            "inverse_mass_matrix": {"mu,tau": [1.0, 0.5], "theta_trans": [1.0] * 8},
            "forward_mode_differentiation": True,
        },
        {
            "adapt_mass_matrix": False,
            "inverse_mass_matrix": IMM,
            "forward_mode_differentiation": True,
        },
    ),
    ({"dense_mass": [["mu", "tau"]]}, {"dense_mass": [("mu", "tau")]}),
    # One chain (and sequential chains) with a full dense matrix: bit-identical; vectorised
    # chains agree to rounding only (docs/decisions/0127-dense-mass-bit-identity.md).
    ({"dense_mass": True}, {"dense_mass": True}),
]


@pytest.mark.parametrize(("options", "nuts"), CASES, ids=lambda v: ",".join(v))
def test_option_reaches_nuts_bit_identically(options: dict[str, Any], nuts: dict[str, Any]) -> None:
    x, y = (a.astype(np.float32) for a in pdb.load_data(NAME))
    loop = TrainingLoop(
        task=NumpyroTask(model=pdb.eight_schools, num_warmup=W, num_samples=S),
        dataset=(x, y),
        backend="numpyro-mcmc",
        seed=3,
        backend_options={**options, "x64": False, "steps_per_call": 50},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = loop.run()
    kw = {k: v for k, v in nuts.items() if k != "inverse_mass_matrix"}
    if "inverse_mass_matrix" in nuts:
        kw["inverse_mass_matrix"] = {k: jax.numpy.asarray(v) for k, v in IMM.items()}
    ref = MCMC(NUTS(pdb.eight_schools, **kw), num_warmup=W, num_samples=S, progress_bar=False)
    ref.run(jax.random.PRNGKey(3), x, y, init_params=mcmc_run_starts(info))
    for site, value in ref.get_samples(group_by_chain=True).items():
        assert op.samples_by_chain[site].tobytes() == np.asarray(value).tobytes(), site


def test_an_alias_and_its_name_with_different_values_name_both() -> None:
    assert parse_options({"target_accept_prob": 0.9, "target_accept": 0.9}).target_accept == 0.9
    with pytest.raises(ConfigError, match="target_accept_prob.*target_accept") as err:
        parse_options({"target_accept_prob": 0.9, "target_accept": 0.8})
    assert err.value.field == "backend_options.target_accept"
    with pytest.raises(ConfigError, match="site groups"):
        parse_options({"dense_mass": ["mu"]})
