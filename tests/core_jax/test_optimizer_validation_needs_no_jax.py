"""``validate_optimizer_config`` works in an install without jax or optax."""

from __future__ import annotations

BLOCKED = ("jax", "jaxlib", "optax", "equinox", "numpy")


def test_validation_runs_with_jax_blocked(python_without):
    result = python_without(
        """
        from pipekit_train.optimizers import validate_optimizer_config
        from pipekit_train.errors import ConfigError

        validate_optimizer_config(
            {"name": "adamw", "lr": {"schedule": "warmup_cosine_decay", "init_value": 0.0,
                                     "peak_value": 1e-3, "warmup_steps": 10},
             "clip_norm": 1.0, "weight_decay": 0.01, "b2": 0.98},
            max_steps=100,
        )
        try:
            validate_optimizer_config({"name": "adam", "lr": {"schedule": "cosine_decay"}},
                                      max_steps=100)
        except ConfigError as exc:
            print("FIELD", exc.field)
        heavy = {"jax", "jaxlib", "optax", "equinox", "numpy"}
        loaded = sorted(
            m for m in sys.modules if m.split(".")[0] in heavy and sys.modules[m] is not None
        )
        print("LOADED", loaded)
        """,
        *BLOCKED,
    )
    assert result.returncode == 0, result.stderr
    assert "FIELD optimizer_config.lr.init_value" in result.stdout
    assert "LOADED []" in result.stdout
