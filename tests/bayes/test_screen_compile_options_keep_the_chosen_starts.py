"""The screen compiles with options for a program run once (``SCREEN_COMPILER_OPTIONS``:
LLVM's optimisation off, XLA's older emitters), which makes its compile cheaper; the
positions it keeps are the same bits as the same screen compiled with XLA's defaults.

Only the choice among the candidates rests on the program's arithmetic (the candidates are
PRNG draws), so a rounding difference would show as another candidate kept. Three posteriordb
models (eight schools, the ARMA whose flat tail the screen exists for, GARCH), two seeds,
four chains, in float64 as blackjax samples, ``bayes.screened_positions`` (blackjax's
screen); both programs in this process.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from posterior_checks import SCREEN_POSTERIORS, assert_screen_keeps_its_bits, pdb

import pipekit_train.adapters.bayes._starts as starts
from pipekit_train.adapters.bayes import (
    SCREEN_COMPILER_OPTIONS,
    SCREEN_SALT,
    log_density_from_model,
    screened_positions,
)

pytestmark = pytest.mark.skipif(
    not all(pdb.folder(name).is_dir() for name in SCREEN_POSTERIORS), reason="no posteriordb copy"
)


def _kept(name: str, seed: int) -> list[np.ndarray]:
    x, y = pdb.load_data(name)
    key = jax.random.PRNGKey(seed)
    bridge = log_density_from_model(
        pdb.MODELS[name],
        jnp.asarray(x, jnp.float64),
        jnp.asarray(y, jnp.float64),
        rng_key=key,
        num_chains=4,
    )
    kept, found = screened_positions(
        bridge.logdensity_fn, bridge.init_position, jax.random.fold_in(key, SCREEN_SALT)
    )
    assert bool(np.all(found))  # every chain found a valid start
    leaves = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(kept)]
    assert all(leaf.dtype == np.float64 for leaf in leaves)
    return leaves


@pytest.mark.parametrize("name", SCREEN_POSTERIORS)
def test_screened_positions_equal_a_default_compile(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert SCREEN_COMPILER_OPTIONS["xla_backend_optimization_level"] == 0
    with jax.enable_x64(True):
        assert_screen_keeps_its_bits(lambda seed: _kept(name, seed), starts, monkeypatch)
