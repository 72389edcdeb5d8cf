"""``backend_info`` has one schema on all six backends (``docs/run-report.md``): the same
required keys with the same types, versions as ``{distribution: version}``, after a tiny real
run of each. Here because it needs every distribution installed."""

from __future__ import annotations

import os
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

os.environ.setdefault("KERAS_BACKEND", "jax")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pipekit_train import Checkpoint, TrainingLoop  # noqa: E402
from pipekit_train.engine import REQUIRED_KEYS  # noqa: E402
from pipekit_train.registry import KNOWN_BACKENDS  # noqa: E402

NONE = type(None)

#: The schema as documented, written out here so that the test does not read it from the
#: code it checks.
SCHEMA: dict[str, tuple[type, ...]] = {
    "backend": (str,),
    "versions": (dict,),
    "devices": (list,),
    "process_count": (int,),
    "final_step": (int,),
    "resumed_from_step": (int, NONE),
    "last_checkpoint_step": (int, NONE),
    "stop_reason": (str, NONE),
    "interrupted": (str, NONE),
    "final_metrics": (dict,),
    "total_seconds": (float,),
    "train_seconds": (float,),
    "steps_per_second": (float, NONE),
    "run_dir": (str, NONE),
    "diagnostics": (dict, NONE),
    "warnings": (list,),
}

DISTRIBUTION = KNOWN_BACKENDS  # backend → the distribution that provides it
LIBRARY = {
    "equinox": "equinox",
    "numpyro-svi": "numpyro",
    "numpyro-mcmc": "numpyro",
    "blackjax": "blackjax",
    "lightning": "torch",
    "keras": "keras",
}


def _data(n: int = 48) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    return {"x": x, "y": (x[:, 0] > 0).astype(np.int32)}


def _regression(n: int = 48) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(n, 2)).astype(np.float32)
    return {"x": x, "y": (x @ np.array([1.0, -0.5]) + 0.1 * rng.normal(size=n)).astype(np.float32)}


def linreg(x: Any, y: Any = None) -> None:
    import numpyro
    import numpyro.distributions as dist

    w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([x.shape[1]]).to_event(1))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("obs", dist.Normal(x @ w, 1.0), obs=y)


def _loop(backend: str, tmp_path: Path) -> TrainingLoop:
    common: dict[str, Any] = {
        "backend": backend,
        "checkpoint_dir": str(tmp_path / backend),
        "callbacks": [Checkpoint(every_n_steps=4)],
        "metric_writer": "jsonl",
        "log_every_n_steps": 2,
    }
    if backend == "equinox":
        import equinox as eqx
        import jax

        model = eqx.nn.MLP(4, 2, 8, 1, key=jax.random.PRNGKey(0))
        return TrainingLoop(
            model_op=model, dataset=_data(), loss="cross_entropy", batch_size=16, max_steps=4,
            **common,
        )  # fmt: skip
    if backend == "lightning":
        import torch

        torch.manual_seed(0)
        return TrainingLoop(
            model_op=torch.nn.Sequential(torch.nn.Linear(4, 2)), dataset=_data(),
            loss="cross_entropy", batch_size=16, max_steps=4,
            backend_options={"accelerator": "cpu"}, **common,
        )  # fmt: skip
    if backend == "keras":
        import keras

        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
        return TrainingLoop(
            model_op=model, dataset=_data(), loss="cross_entropy", batch_size=16, max_steps=4,
            **common,
        )  # fmt: skip
    from pipekit_train.adapters.bayes import NumpyroTask

    if backend == "numpyro-svi":
        task = NumpyroTask(model=linreg, predictive_samples=10)
        return TrainingLoop(task=task, dataset=_regression(), batch_size=48, max_steps=4, **common)
    if backend == "numpyro-mcmc":
        task = NumpyroTask(model=linreg, num_warmup=4, num_samples=4, predictive_samples=4)
        return TrainingLoop(task=task, dataset=_regression(), **common)
    from pipekit_train.adapters.blackjax import BlackjaxTask

    task = BlackjaxTask(
        logdensity_fn=_standard_normal, init_position=np.zeros(2), num_warmup=4, num_samples=4
    )
    return TrainingLoop(task=task, **common)


def _standard_normal(p: Any) -> Any:
    import jax.numpy as jnp

    return -0.5 * jnp.sum(p**2)


def test_the_documented_schema_is_the_one_the_builder_makes() -> None:
    assert REQUIRED_KEYS == SCHEMA


@pytest.mark.parametrize("backend", list(DISTRIBUTION))
def test_backend_info_has_the_required_keys_and_types(backend: str, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, info = _loop(backend, tmp_path).run()
    missing = sorted(set(SCHEMA) - set(info))
    assert missing == [], missing
    wrong = {
        k: type(info[k]).__name__ for k, types in SCHEMA.items() if not isinstance(info[k], types)
    }
    assert wrong == {}, wrong

    assert info["backend"] == backend
    versions = info["versions"]
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in versions.items())
    for dist in ("pipekit-train-core", DISTRIBUTION[backend], LIBRARY[backend]):
        assert versions[dist] == metadata.version(dist), dist
    assert info["devices"] and all(isinstance(d, str) for d in info["devices"])
    assert info["process_count"] == 1
    assert info["final_step"] > 0 and info["resumed_from_step"] is None
    assert info["last_checkpoint_step"] == info["final_step"]
    assert info["stop_reason"] is None and info["interrupted"] is None
    assert info["final_metrics"] and all(
        isinstance(k, str) and isinstance(v, float) for k, v in info["final_metrics"].items()
    )
    assert info["total_seconds"] >= info["train_seconds"] > 0
    assert info["steps_per_second"] is not None and info["steps_per_second"] > 0
    assert Path(info["run_dir"]) == tmp_path / backend
    assert all(isinstance(w, str) for w in info["warnings"])
    if backend in ("numpyro-mcmc", "blackjax", "numpyro-svi"):
        assert info["diagnostics"] is not None  # the posterior's, or the fitted guide's
    else:
        assert info["diagnostics"] is None
