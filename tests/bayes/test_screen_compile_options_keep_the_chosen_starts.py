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

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples"))
import posteriordb_models as pdb  # noqa: E402

import pipekit_train.adapters.bayes._starts as starts  # noqa: E402
from pipekit_train.adapters.bayes import (  # noqa: E402
    SCREEN_COMPILER_OPTIONS,
    SCREEN_SALT,
    log_density_from_model,
    screened_positions,
)

MODELS = {
    "eight_schools-eight_schools_noncentered": pdb.eight_schools,
    "arma-arma11": pdb.arma11,
    "garch-garch11": pdb.garch,
}
pytestmark = pytest.mark.skipif(
    not all(pdb.folder(name).is_dir() for name in MODELS), reason="no posteriordb copy"
)


def _kept(name: str, seed: int) -> list[np.ndarray]:
    x, y = pdb.load_data(name)
    key = jax.random.PRNGKey(seed)
    bridge = log_density_from_model(
        MODELS[name],
        jnp.asarray(x, jnp.float64),
        jnp.asarray(y, jnp.float64),
        rng_key=key,
        num_chains=4,
    )
    kept, found = screened_positions(
        bridge.logdensity_fn, bridge.init_position, jax.random.fold_in(key, SCREEN_SALT)
    )
    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves((kept, found))]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_screened_positions_equal_a_default_compile(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert SCREEN_COMPILER_OPTIONS["xla_backend_optimization_level"] == 0
    with jax.enable_x64(True):
        for seed in (0, 7):
            ours = _kept(name, seed)
            with monkeypatch.context() as m:
                m.setattr(starts, "SCREEN_COMPILER_OPTIONS", None)  # XLA's defaults
                default = _kept(name, seed)
            assert len(ours) == len(default)
            for a, b in zip(ours, default, strict=True):
                assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (name, seed)
            assert ours[0].dtype == np.float64 and np.all(ours[-1])  # every chain valid
