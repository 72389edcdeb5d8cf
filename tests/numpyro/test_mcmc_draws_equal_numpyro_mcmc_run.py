"""numpyro-mcmc's chunked draws are bit-identical to NumPyro's own ``MCMC.run``, given the
same starts.

Same model, seed (``TrainingLoop.seed``) and settings; chunk sizes that cut the
warmup and the sampling at odd places (``steps_per_call`` and a checkpoint
cadence), one chain, vectorised chains and sequential chains. At the default
``init_strategy: "screened"`` the starts are the backend's (``backend_info["starts"]``,
handed to ``MCMC.run(..., init_params=...)``); with ``"uniform"`` they are NumPyro's own
default, and ``MCMC.run`` is called as it comes.
"""

import jax
import numpy as np
import pytest
from _npy_helpers import pdb
from numpyro.infer import MCMC, NUTS

from pipekit_train import Checkpoint, TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

NAME = "eight_schools-eight_schools_noncentered"
W, S = 40, 30


@pytest.mark.parametrize(
    ("chains", "method", "steps_per_call", "init"),
    [
        (1, "vectorized", 7, "screened"),
        (3, "vectorized", 100, "screened"),
        (3, "vectorized", 100, "uniform"),
        (2, "sequential", 11, "screened"),
    ],
)
def test_same_bits_as_mcmc_run(tmp_path, chains, method, steps_per_call, init) -> None:
    x, y = (a.astype(np.float32) for a in pdb.load_data(NAME))
    loop = TrainingLoop(
        task=NumpyroTask(model=pdb.eight_schools, num_warmup=W, num_samples=S, num_chains=chains),
        dataset=(x, y),
        backend="numpyro-mcmc",
        seed=5,
        backend_options={
            "target_accept": 0.9,
            "x64": False,  # MCMC.run below runs in the process default, float32
            "chain_method": method,
            "steps_per_call": steps_per_call,
            **({} if init == "screened" else {"init_strategy": init}),
        },
        checkpoint_dir=str(tmp_path / "ckpt"),
        callbacks=[Checkpoint(every_n_steps=13)],
        log_every_n_steps=9,
    )
    with pytest.warns(UserWarning):  # so few draws: the ESS warning
        op, info = loop.run()
    assert info["final_step"] == W + S and info["draws_collected"] == S
    ref = MCMC(
        NUTS(pdb.eight_schools, target_accept_prob=0.9),
        num_warmup=W,
        num_samples=S,
        num_chains=chains,
        chain_method=method,
        progress_bar=False,
    )
    starts = info["starts"]
    assert (starts is None) == (init == "uniform")
    if starts is not None and chains == 1:
        starts = {k: v[0] for k, v in starts.items()}
    ref.run(jax.random.PRNGKey(5), x, y, extra_fields=("diverging",), init_params=starts)
    want = ref.get_samples(group_by_chain=True)
    assert set(want) == set(op.samples_by_chain) == {"mu", "tau", "theta_trans", "theta"}
    for site, value in want.items():
        got = op.samples_by_chain[site]
        assert got.tobytes() == np.asarray(value).tobytes(), site
    div = np.asarray(ref.get_extra_fields(group_by_chain=True)["diverging"])
    np.testing.assert_array_equal(op.sample_stats["diverging"], div)
