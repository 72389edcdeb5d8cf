"""The JAX-free parts (loss names, Operator, the lazy ``pipekit_train.jax`` package) and
the message a JAX-free install gets when it reaches for a JAX helper."""

from __future__ import annotations

BLOCKED = ("jax", "jaxlib", "optax", "equinox", "numpy")


def test_loss_names_and_operator_need_no_jax(python_without):
    result = python_without(
        """
        from pipekit_train.losses import LOSS_NAMES, CLASSIFICATION_LOSSES, validate_loss
        from pipekit_train.operator import Operator
        import pipekit_train.jax  # the package itself is lazy

        assert "cross_entropy" in LOSS_NAMES and CLASSIFICATION_LOSSES <= set(LOSS_NAMES)
        validate_loss("mse")
        print("DIR", "resolve_optimizer" in dir(pipekit_train.jax))
        """,
        *BLOCKED,
    )
    assert result.returncode == 0, result.stderr
    assert "DIR True" in result.stdout


def test_jax_helpers_say_how_to_install_the_extra(python_without):
    result = python_without(
        """
        from pipekit_train.errors import BackendNotInstalledError
        for name in ("optim", "losses", "structure"):
            try:
                __import__(f"pipekit_train.jax.{name}")
            except BackendNotInstalledError as exc:
                assert isinstance(exc, ImportError)
                print(name, exc)
        try:
            from pipekit_train.jax import resolve_optimizer
        except BackendNotInstalledError as exc:
            print("lazy", exc)
        """,
        "jax",
        "optax",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert [line.split()[0] for line in lines] == ["optim", "losses", "structure", "lazy"]
    assert all("pip install 'pipekit-train-core[jax]'" in line for line in lines)
