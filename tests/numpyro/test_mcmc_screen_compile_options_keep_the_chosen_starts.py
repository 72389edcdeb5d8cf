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

import pipekit_train.adapters.numpyro_mcmc._screened as screened
from pipekit_train.adapters.bayes import SCREEN_COMPILER_OPTIONS

MODELS = {
    "eight_schools-eight_schools_noncentered": pdb.eight_schools,
    "arma-arma11": pdb.arma11,
    "garch-garch11": pdb.garch,
}


def _starts(name: str, seed: int) -> dict[str, np.ndarray]:
    x, y = pdb.load_data(name)
    args = (jnp.asarray(x, jnp.float64), jnp.asarray(y, jnp.float64))
    out = screened.screened_starts(MODELS[name], args, {}, seed, 4)
    assert out.starts is not None, out.reason
    return {k: np.asarray(v) for k, v in out.starts.items()}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_screened_starts_equal_a_default_compile(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert SCREEN_COMPILER_OPTIONS["xla_cpu_use_fusion_emitters"] is False
    with jax.enable_x64(True):
        for seed in (0, 7):
            ours = _starts(name, seed)
            with monkeypatch.context() as m:
                m.setattr(screened, "SCREEN_COMPILER_OPTIONS", None)  # XLA's defaults
                default = _starts(name, seed)
            assert sorted(ours) == sorted(default)
            for site, value in ours.items():
                assert value.dtype == np.float64
                assert value.tobytes() == default[site].tobytes(), (name, seed, site)
