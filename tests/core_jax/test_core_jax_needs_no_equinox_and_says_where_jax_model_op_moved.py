"""core[jax] imports no equinox: ``JaxModelOp`` lives in pipekit-train-equinox now, and the
old name says where it went."""

from __future__ import annotations


def test_jax_helpers_load_without_equinox_and_the_old_name_points_to_the_new(python_without):
    result = python_without(
        """
        import sys  # equinox is blocked: importing it would fail
        import pipekit_train.jax as pj
        import pipekit_train.jax.checkpoint, pipekit_train.jax.optim, pipekit_train.jax.program
        assert "JaxModelOp" not in dir(pj)
        try:
            pj.JaxModelOp
        except AttributeError as exc:
            print("ERR", exc)
        """,
        "equinox",
    )
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("ERR")]
    assert "from pipekit_train.adapters.equinox import JaxModelOp" in line
    assert "pip install pipekit-train-equinox" in line
