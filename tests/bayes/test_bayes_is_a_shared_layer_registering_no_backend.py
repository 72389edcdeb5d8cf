"""pipekit-train-bayes installs, exports its public names, and registers no backend itself."""

from importlib import metadata

import pipekit_train.adapters.bayes as bayes


def test_distribution_is_installed() -> None:
    assert metadata.distribution("pipekit-train-bayes").version


def test_public_names_are_exported() -> None:
    for name in ("NumpyroTask", "NumpyroPredictiveOp", "log_density_from_model", "diagnostics"):
        assert name in bayes.__all__ and hasattr(bayes, name)


def test_registers_no_backend_entry_point() -> None:
    eps = metadata.distribution("pipekit-train-bayes").entry_points
    assert [ep for ep in eps if ep.group == "pipekit_train.backends"] == []
