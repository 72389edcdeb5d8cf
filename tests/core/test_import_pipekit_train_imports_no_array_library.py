"""`import pipekit_train` (and its pure modules, the CLI included) imports no array library.

DESIGN §2: core depends on pyyaml and tqdm only. Checked in a fresh interpreter, so
that modules imported by other tests in this process cannot hide a regression.
"""

from __future__ import annotations

import json

from _core_helpers import run_python

ARRAY_LIBRARIES = [
    "jax",
    "jaxlib",
    "torch",
    "keras",
    "numpyro",
    "numpy",
    "tensorflow",
    "blackjax",
    "lightning",
    "equinox",
    "optax",
    "grain",
    "orbax",
    "tensorboardX",
    "tensorboard",
    "matplotlib",
    "mlflow",
]

MODULES = [
    "pipekit_train",
    "pipekit_train.sharding",
    "pipekit_train.loop",
    "pipekit_train.config",
    "pipekit_train.engine",
    "pipekit_train.callbacks",
    "pipekit_train.writers",
    "pipekit_train.registry",
    "pipekit_train.cli",
    "pipekit_train.plot",
]


def test_importing_core_modules_and_building_a_loop_loads_no_array_library() -> None:
    result = run_python(
        f"""
        import importlib, json, sys
        for name in {MODULES!r}:
            importlib.import_module(name)
        import pipekit_train
        from pipekit_train.cli import build_parser
        build_parser()
        # Building (and serialising) a loop stays array-free as well.
        loop = pipekit_train.TrainingLoop(
            dataset="_core_factories:make_dataset", loss="mse", backend="keras",
            callbacks=[pipekit_train.EarlyStopping(), pipekit_train.ProgressBar()],
            metric_writer="jsonl:/tmp/unused.jsonl",
        )
        loop.to_yaml()
        # Building the optional writers opens nothing: tensorboardX / mlflow stay unimported.
        from pipekit_train.writers import resolve_writer
        resolve_writer("tensorboard:/tmp/unused-tb")
        resolve_writer({{"kind": "mlflow", "tracking_uri": "file:/tmp/unused-mlruns"}})
        top = {{m.split(".")[0] for m in sys.modules}}
        print(json.dumps(sorted(m for m in {ARRAY_LIBRARIES!r} if m in top)))
        """
    )
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded == [], f"import pipekit_train pulled in {loaded}"


def test_a_loop_built_in_python_imports_yaml_only_to_read_or_write_it() -> None:
    """PyYAML (~9 ms of a cold run's imports) loads when a loop is read or written as YAML."""
    result = run_python(
        """
        import json, sys
        import pipekit_train
        loop = pipekit_train.TrainingLoop(
            dataset="_core_factories:make_dataset", loss="mse", backend="keras"
        )
        before = "yaml" in sys.modules
        loop.to_yaml()
        print(json.dumps([before, "yaml" in sys.modules]))
        """
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [False, True]
