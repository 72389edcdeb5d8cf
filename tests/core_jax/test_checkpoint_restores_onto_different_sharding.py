"""A checkpoint written from an 8-device mesh restores onto a 2-device mesh (and one device).

Each side runs in its own interpreter, since the CPU device count is fixed at JAX start-up
(``XLA_FLAGS=--xla_force_host_platform_device_count``).
"""

from __future__ import annotations

import subprocess
import textwrap

import pytest
from _ckpt_helpers import PYTHON, child_env
from xla_env import xla_flags_with_devices

PRELUDE = """
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from _ckpt_helpers import FINGERPRINT, data_iterator
from pipekit_train.jax.checkpoint import Checkpointer

def values():
    return {"w": jnp.arange(16 * 6, dtype=jnp.float32).reshape(16, 6), "b": jnp.arange(8.0),
            "step": jnp.asarray(7, jnp.int32), "rng": jax.random.key(3)}

def place(tree, n):
    mesh = Mesh(np.array(jax.devices()[:n]), ("data",))
    row = NamedSharding(mesh, P("data"))
    rep = NamedSharding(mesh, P())
    return {"w": jax.device_put(tree["w"], row), "b": jax.device_put(tree["b"], row),
            "step": jax.device_put(tree["step"], rep), "rng": jax.device_put(tree["rng"], rep)}
"""

SAVE = (
    PRELUDE
    + """
assert jax.device_count() == 8
state = place(values(), 8)
assert len(state["w"].sharding.device_set) == 8
with Checkpointer(DIR, keep_last=2, fingerprint=FINGERPRINT) as ck:
    ck.save(7, state, {})
print("SAVED")
"""
)

RESTORE = (
    PRELUDE
    + """
assert jax.device_count() == 2
for n in (2, 1):
    target = place(values(), n)
    tmpl = jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding), target
    )
    with Checkpointer(DIR, keep_last=2, fingerprint=FINGERPRINT) as ck:
        result = ck.restore(tmpl)
    assert result.step == 7
    for k in ("w", "b", "step"):
        assert result.state[k].sharding == target[k].sharding, (k, result.state[k].sharding)
        np.testing.assert_array_equal(np.asarray(result.state[k]), np.asarray(target[k]))
    assert (jax.random.key_data(result.state["rng"]) == jax.random.key_data(target["rng"])).all()
    print("RESTORED", n, len(result.state["w"].sharding.device_set))
"""
)


def _run(code: str, devices: int, directory) -> str:
    env = child_env(XLA_FLAGS=xla_flags_with_devices(devices), JAX_PLATFORMS="cpu")
    proc = subprocess.run(
        [PYTHON, "-c", f"DIR = {str(directory)!r}\n" + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


@pytest.mark.slow
def test_eight_devices_to_two(tmp_path):
    assert "SAVED" in _run(SAVE, 8, tmp_path)
    out = _run(RESTORE, 2, tmp_path)
    assert "RESTORED 2 2" in out and "RESTORED 1 1" in out
