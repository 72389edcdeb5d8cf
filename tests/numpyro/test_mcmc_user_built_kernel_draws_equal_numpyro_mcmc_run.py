"""A user-built NUTS kernel runs as built: its draws equal NumPyro's own ``MCMC.run`` (issue 20).

``backend_options={"kernel": NUTS(model, target_accept_prob=0.9, max_tree_depth=5)}``:
the kernel's own settings are used (no backend option repeats them), and the
chunked, checkpointed draws are bit-identical to ``MCMC.run`` with an identical
kernel and the same seed. The resume guard records the kernel's settings: a rerun
with another tree depth is a ``CheckpointError``, the same kernel resumes.
"""

import jax
import numpy as np
import pytest
from _npy_helpers import pdb
from numpyro.infer import MCMC, NUTS

from pipekit_train import Checkpoint, CheckpointError, TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

NAME = "eight_schools-eight_schools_noncentered"
W, S = 40, 30


def _loop(kernel, ckpt, num_samples=S) -> TrainingLoop:
    x, y = (a.astype(np.float32) for a in pdb.load_data(NAME))
    return TrainingLoop(
        task=NumpyroTask(model=pdb.eight_schools, num_warmup=W, num_samples=num_samples),
        dataset=(x, y),
        backend="numpyro-mcmc",
        seed=5,
        # float32, as MCMC.run below runs (x64 is the default on numpyro-mcmc)
        backend_options={"kernel": kernel, "steps_per_call": 7, "x64": False},
        checkpoint_dir=ckpt,
        callbacks=[Checkpoint(every_n_steps=13)],
        log_every_n_steps=9,
    )


def _kernel(depth: int = 5) -> NUTS:
    return NUTS(pdb.eight_schools, target_accept_prob=0.9, max_tree_depth=depth)


def test_user_nuts_draws_equal_mcmc_run_and_its_settings_guard_the_resume(tmp_path) -> None:
    ckpt = str(tmp_path / "ckpt")
    with pytest.warns(UserWarning):  # so few draws: the ESS warning
        op, info = _loop(_kernel(), ckpt).run()
    assert info["user_kernel"] is True and info["kernel"] == "nuts"
    x, y = (a.astype(np.float32) for a in pdb.load_data(NAME))
    ref = MCMC(_kernel(), num_warmup=W, num_samples=S, progress_bar=False)
    ref.run(jax.random.PRNGKey(5), x, y)
    want = ref.get_samples(group_by_chain=True)
    assert set(want) == set(op.samples_by_chain)
    for site, value in want.items():
        assert op.samples_by_chain[site].tobytes() == np.asarray(value).tobytes(), site

    with pytest.raises(CheckpointError, match="max_tree_depth"):
        _loop(_kernel(depth=6), ckpt, num_samples=S).run()
    with pytest.warns(UserWarning):
        _, again = _loop(_kernel(), ckpt).run()
    assert again["resumed_from_step"] == W + S
