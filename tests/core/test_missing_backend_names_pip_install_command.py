"""`run()` on a backend whose distribution is missing raises BackendNotInstalledError (an
ImportError) carrying the exact `pip install pipekit-train-…` command.

Whether a backend is present is read from the `pipekit_train.backends` entry points, so
the test asserts the right thing in the core-only venv (nothing registered: every
backend raises) and in a full venv (a registered backend loads and exposes `run`).
"""

from __future__ import annotations

import pytest
from _core_helpers import registered_backends

from pipekit_train import BackendNotInstalledError, PipekitError, TrainingLoop
from pipekit_train.registry import load_backend

DATA = {"x": [0.0, 1.0], "y": [0.0, 1.0]}

EXPECTED_DISTRIBUTION = {
    "keras": "pipekit-train-keras",
    "lightning": "pipekit-train-lightning",
    "numpyro-svi": "pipekit-train-numpyro",
    "numpyro-mcmc": "pipekit-train-numpyro",
    "blackjax": "pipekit-train-blackjax",
    "equinox": "pipekit-train-equinox",
}


@pytest.mark.parametrize("backend", sorted(EXPECTED_DISTRIBUTION))
def test_missing_backend_raises_with_pip_install_command(backend: str) -> None:
    loop = TrainingLoop(dataset=DATA, loss="mse", backend=backend)
    if backend in registered_backends():
        # Installed here (a full venv): the registry loads the adapter module.
        module = load_backend(backend)
        assert callable(module.run)
        return
    with pytest.raises(BackendNotInstalledError) as info:
        loop.run()
    exc = info.value
    assert isinstance(exc, ImportError) and isinstance(exc, PipekitError)
    assert f"pip install {EXPECTED_DISTRIBUTION[backend]}" in str(exc)
    assert repr(backend) in str(exc)


def test_run_checks_the_backend_before_building_any_factory() -> None:
    """Factories are only imported once the backend is found: a missing backend is
    reported even when the loop's factory references are broken."""
    missing = [b for b in EXPECTED_DISTRIBUTION if b not in registered_backends()]
    if not missing:
        pytest.skip("every backend is installed here")
    loop = TrainingLoop(dataset="no_such_module_anywhere:make", loss="mse", backend=missing[0])
    with pytest.raises(BackendNotInstalledError):
        loop.run()
