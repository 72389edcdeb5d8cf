"""A checkpoint folder written the way earlier versions wrote it (every leaf its own array,
state and trace in OCDBT databases, no layout in the meta) still restores bit for bit, and
a run that resumes into it keeps writing the current format beside it: upgrading the
library never strands a run's checkpoints."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from _ckpt_helpers import FINGERPRINT, assert_state_equal

from pipekit_train.jax.checkpoint import Checkpointer, read_state, read_trace


def _state() -> dict:
    return {
        "w": jnp.arange(12, dtype=jnp.float32).reshape(3, 4),
        "opt": (jnp.ones((2, 2)), {"count": jnp.asarray(7, jnp.int32)}),
        "rng": jax.random.fold_in(jax.random.key(0), 3),
    }


def _template(state: dict) -> dict:
    return jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding), state
    )


TRACE = {
    "sample__mu": np.linspace(0, 1, 30, dtype=np.float32),
    "diverging": np.zeros(30, dtype=bool),
}


def _write_old_format(directory, step: int) -> None:
    """Orbax's defaults as before: OCDBT, one array per leaf, the meta without a layout."""
    import orbax.checkpoint as ocp

    mngr = ocp.CheckpointManager(
        directory,
        options=ocp.CheckpointManagerOptions(max_to_keep=2, create=True),
        item_handlers={
            "state": ocp.StandardCheckpointHandler(),
            "meta": ocp.JsonCheckpointHandler(),
            "trace": ocp.PyTreeCheckpointHandler(),
        },
    )
    meta = {"fingerprint": dict(FINGERPRINT), "step": step}
    mngr.save(
        step,
        args=ocp.args.Composite(
            state=ocp.args.StandardSave(_state()),
            trace=ocp.args.PyTreeSave(dict(TRACE)),
            meta=ocp.args.JsonSave(meta),
        ),
    )
    mngr.wait_until_finished()
    mngr.close()


def test_an_unpacked_ocdbt_checkpoint_restores_and_new_saves_follow(tmp_path):
    _write_old_format(tmp_path, 30)
    assert (tmp_path / "30" / "state" / "manifest.ocdbt").exists()  # the old format indeed
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
        restored = ck.restore(_template(_state()))
        assert restored is not None and restored.step == 30
        assert_state_equal(restored.state, _state())
        assert restored.trace is not None
        for name, want in TRACE.items():
            np.testing.assert_array_equal(restored.trace[name], want, err_msg=name)
            assert restored.trace[name].dtype == want.dtype
        # The resumed run saves in the current format; both steps stay readable.
        ck.save(40, _state(), {}, TRACE)
        ck.wait()
        assert ck.all_steps() == [30, 40]
    assert not (tmp_path / "40" / "trace" / "manifest.ocdbt").exists()
    for step in (30, 40):
        leaves = read_state(tmp_path / str(step))
        assert sorted(leaves) == ["opt.0", "opt.1.count", "rng", "w"], step
        np.testing.assert_array_equal(leaves["w"], np.asarray(_state()["w"]))
        np.testing.assert_array_equal(
            read_trace(tmp_path / str(step))["sample__mu"], TRACE["sample__mu"]
        )
