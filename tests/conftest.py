"""Makes ``tests/`` importable so every suite can share its helpers (``posterior_checks``,
``resume_killer``)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


# The tests a `lowest` cell of the nox matrix runs (`pytest -m lowest`; see noxfile.py): per
# backend folder, at least the README example and the backend contract kit
# (`pipekit_train.testing`: a real-SIGKILL bit-identical resume, bad options refused before
# compiling, an operator saved and loaded as data, ...). Folders not named here (core,
# core_jax, bayes) run whole in their lowest cells. A name that matches no file fails the run.
LOWEST: dict[str, tuple[str, ...]] = {
    "equinox": (
        "test_eqx_yaml_example_runs_through_the_cli.py",
        "test_eqx_passes_the_backend_contract.py",
        "test_eqx_trained_op_calls_saves_and_loads.py",
    ),
    "numpyro": (
        "test_examples_run_as_python_and_yaml.py",
        "test_numpyro_backends_pass_the_backend_contract.py",
        "test_numpyro_bad_inputs_refused_before_compiling.py",
    ),
    "blackjax": (
        "test_blackjax_eight_schools_example_runs_through_the_cli_and_its_op_reloads.py",
        "test_blackjax_passes_the_backend_contract.py",
        "test_blackjax_bad_inputs_refused_before_compiling.py",
    ),
    "lightning": (
        "test_lightning_yaml_example_runs_through_the_cli.py",
        "test_lightning_passes_the_backend_contract.py",
        "test_lightning_unknown_trainer_option_is_config_error.py",
    ),
    "keras": (
        "test_keras_digits_example_reaches_096_test_accuracy.py",
        "test_keras_passes_the_backend_contract.py",
        "test_keras_bad_inputs_refused_before_compiling.py",
        "test_keras_import_failure_names_the_missing_module.py",
    ),
}

_HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "lowest: runs in the `lowest` cell of the nox matrix too (tests/conftest.py)"
    )
    for folder, names in LOWEST.items():
        missing = [n for n in names if not (_HERE / folder / n).is_file()]
        if missing:
            raise pytest.UsageError(
                f"tests/conftest.py LOWEST[{folder!r}] names no file: {missing}"
            )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.fspath)).resolve()
        folder = path.parent.name
        if path.parent.parent == _HERE and (folder not in LOWEST or path.name in LOWEST[folder]):
            item.add_marker(pytest.mark.lowest)
