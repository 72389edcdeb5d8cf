"""An Equinox run without ``checkpoint_dir`` never imports Orbax (~0.11 s of a cold run's
imports, measured after JAX, Equinox and Optax); with one, it does. Fresh interpreters, so modules
other tests imported cannot hide a regression: the backend's ``save_state`` /
``restore_state`` import Orbax when called, not with the package.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from _eqx_helpers import child_json

_RUN = """
import json, sys
import equinox as eqx, jax, numpy as np
from pipekit_train import TrainingLoop
rng = np.random.default_rng(0)
data = {{"x": rng.normal(size=(64, 4)).astype(np.float32), "y": rng.integers(0, 3, 64)}}
loop = TrainingLoop(
    model_op=eqx.nn.MLP(4, 3, 8, 1, key=jax.random.PRNGKey(0)), dataset=data,
    loss="cross_entropy", batch_size=16, max_steps=8, log_every_n_steps=4,
    backend="equinox", checkpoint_dir={checkpoint_dir!r},
)
loop.run()
heavy = ("orbax", "orbax.checkpoint", "tensorstore")
print(json.dumps(sorted(m for m in heavy if m in sys.modules)))
"""


def _orbax_modules(checkpoint_dir: str | None) -> list[str]:
    modules: list[str] = child_json(textwrap.dedent(_RUN.format(checkpoint_dir=checkpoint_dir)))
    return modules


def test_a_run_without_checkpoint_dir_imports_no_orbax() -> None:
    assert _orbax_modules(None) == []


def test_a_run_with_checkpoint_dir_imports_orbax(tmp_path: Path) -> None:
    assert "orbax.checkpoint" in _orbax_modules(str(tmp_path / "ckpt"))
