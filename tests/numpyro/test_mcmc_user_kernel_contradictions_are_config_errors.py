"""A user-built kernel is used as built; what contradicts it is a ``ConfigError`` naming both.

Raised before anything compiles: a backend option that repeats a kernel setting
with another value (``target_accept`` against the kernel's ``target_accept_prob``),
an init option next to a kernel with its own ``init_strategy``, a kernel built on
another model than ``task.model``, and a kernel numpyro-mcmc cannot run (``SA``).
"""

import numpy as np
import pytest
from _npy_helpers import pdb
from numpyro.infer import NUTS, SA

from pipekit_train import ConfigError, TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

X, Y = (a.astype(np.float32) for a in pdb.load_data("eight_schools-eight_schools_noncentered"))


def _loop(**options) -> TrainingLoop:
    return TrainingLoop(
        task=NumpyroTask(model=pdb.eight_schools, num_warmup=5, num_samples=5),
        dataset=(X, Y),
        backend="numpyro-mcmc",
        backend_options=options,
    )


def test_option_contradicting_the_kernel_names_both() -> None:
    kernel = NUTS(pdb.eight_schools, target_accept_prob=0.9)
    with pytest.raises(ConfigError, match="target_accept=0.7 contradicts") as info:
        _loop(kernel=kernel, target_accept=0.7).run()
    assert "target_accept_prob=0.9" in str(info.value)
    assert info.value.field == "backend_options.target_accept"


def test_init_option_next_to_a_kernel_names_both() -> None:
    with pytest.raises(ConfigError, match="init_strategy contradicts backend_options.kernel"):
        _loop(kernel=NUTS(pdb.eight_schools), init_strategy="median").run()


def test_kernel_on_another_model_is_refused() -> None:
    def other(x, y=None):
        return None

    with pytest.raises(ConfigError, match="another model") as info:
        _loop(kernel=NUTS(other)).run()
    assert info.value.field == "backend_options.kernel"


def test_kernel_that_is_not_hmc_or_nuts_is_refused() -> None:
    with pytest.raises(ConfigError, match="runs HMC and NUTS kernel objects"):
        _loop(kernel=SA(pdb.eight_schools)).run()
