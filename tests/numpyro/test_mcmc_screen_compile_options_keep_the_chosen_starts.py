"""numpyro-mcmc's screen compiles with bayes' ``SCREEN_COMPILER_OPTIONS`` (a program run
once: LLVM's optimisation off, XLA's older emitters, a cheaper compile) and keeps the same
starts, to the bit, as the same screen compiled with XLA's defaults: eight schools, the
ARMA(1,1) whose flat tail the screen exists for, and GARCH, two seeds, four chains, in
float64 as the backend samples.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _npy_helpers import pdb
from posterior_checks import SCREEN_POSTERIORS, assert_screen_keeps_its_bits

import pipekit_train.adapters.numpyro_mcmc._screened as screened
from pipekit_train.adapters.bayes import SCREEN_COMPILER_OPTIONS


def _starts(name: str, seed: int) -> list[np.ndarray]:
    x, y = pdb.load_data(name)
    args = (jnp.asarray(x, jnp.float64), jnp.asarray(y, jnp.float64))
    out = screened.screened_starts(pdb.MODELS[name], args, {}, seed, 4)
    assert out.starts is not None, out.reason
    leaves = [np.asarray(out.starts[site]) for site in sorted(out.starts)]
    assert all(leaf.dtype == np.float64 for leaf in leaves)
    return leaves


@pytest.mark.parametrize("name", SCREEN_POSTERIORS)
def test_screened_starts_equal_a_default_compile(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert SCREEN_COMPILER_OPTIONS["xla_cpu_use_fusion_emitters"] is False
    with jax.enable_x64(True):
        assert_screen_keeps_its_bits(lambda seed: _starts(name, seed), screened, monkeypatch)
