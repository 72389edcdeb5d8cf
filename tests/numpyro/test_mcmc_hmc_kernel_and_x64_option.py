"""``backend_options``: ``kernel="hmc"`` runs HMC (bit-identical to ``MCMC.run`` with HMC),
and ``x64=True`` makes the run float64 without leaking float64 into the rest of the process."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _npy_helpers import mcmc_run_starts, pdb
from numpyro.infer import HMC, MCMC

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

NAME = "eight_schools-eight_schools_noncentered"


def _loop(**options) -> TrainingLoop:
    x, y = pdb.load_data(NAME)
    return TrainingLoop(
        task=NumpyroTask(model=pdb.eight_schools, num_warmup=30, num_samples=20, num_chains=2),
        dataset=(x, y),
        backend="numpyro-mcmc",
        seed=2,
        backend_options=options,
        log_every_n_steps=10,
    )


def test_hmc_kernel_equals_mcmc_run_with_hmc() -> None:
    with pytest.warns(UserWarning):
        # float32 explicitly: MCMC.run below runs in the process default, float32.
        op, info = _loop(kernel="hmc", num_steps=8, x64=False).run()
    assert info["kernel"] == "hmc"
    x, y = (a.astype(np.float32) for a in pdb.load_data(NAME))
    ref = MCMC(
        HMC(pdb.eight_schools, num_steps=8),
        num_warmup=30,
        num_samples=20,
        num_chains=2,
        chain_method="vectorized",
        progress_bar=False,
    )
    ref.run(jax.random.PRNGKey(2), x, y, init_params=mcmc_run_starts(info))
    for site, value in ref.get_samples(group_by_chain=True).items():
        assert op.samples_by_chain[site].tobytes() == np.asarray(value).tobytes(), site


def test_x64_samples_in_float64_only_inside_the_run() -> None:
    with pytest.warns(UserWarning):
        op, info = _loop(x64=True).run()
    assert info["x64"] is True
    with pytest.warns(UserWarning):
        default_op, default_info = _loop().run()  # float64 is the default (issue 25)
    assert default_info["x64"] is True
    assert all(v.dtype == np.float64 for v in default_op.samples.values())
    assert info["x64"] is True
    assert all(v.dtype == np.float64 for v in op.samples.values())
    assert jnp.zeros(()).dtype == jnp.float32  # the process default is unchanged
