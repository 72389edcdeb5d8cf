"""Bayesian linear regression on scikit-learn's diabetes data, posterior-predictive intervals.

``numpyro-svi`` fits a full-rank Gaussian guide on minibatches (the model takes
``N`` and scales each batch by N/B); ``numpyro-mcmc`` samples the same task with
NUTS. Both return a ``NumpyroPredictiveOp``: ``op(x)`` is the predictive mean,
``op(x, draws=True)`` the draws, from which the 90 % intervals and their test-set
coverage are printed. Run ``python examples/diabetes_blr.py [svi|mcmc]`` or
``pipekit-train run examples/diabetes_blr.yaml``. The data ships inside scikit-learn.
"""

from __future__ import annotations

import sys

import numpy as np
import numpyro
import numpyro.distributions as dist
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask


def model(x, y=None, N=None):
    """y ~ Normal(b + x @ w, sigma) on standardised features and target."""
    w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([x.shape[1]]).to_event(1))
    b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    n = x.shape[0]
    with numpyro.plate("data", n if N is None else N, subsample_size=n):
        numpyro.sample("obs", dist.Normal(b + x @ w, sigma), obs=y)


def load_split(split: str = "train", seed: int = 0) -> dict:
    """Standardised diabetes data (442 rows, 10 features), an 80/20 split."""
    x, y = load_diabetes(return_X_y=True)
    x = (x - x.mean(0)) / x.std(0)
    y = (y - y.mean()) / y.std()
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.2, random_state=seed)
    x_out, y_out = (x_tr, y_tr) if split == "train" else (x_te, y_te)
    return {"x": x_out.astype(np.float32), "y": y_out.astype(np.float32)}


def make_task(guide: str = "AutoMultivariateNormal") -> NumpyroTask:
    return NumpyroTask(model="diabetes_blr:model", guide=guide, predictive_samples=1000)


def intervals(op, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """90 % posterior-predictive intervals at ``x`` and the fraction of ``y`` inside."""
    draws = np.asarray(op(x, draws=True))
    lo, hi = np.quantile(draws, [0.05, 0.95], axis=0)
    return np.stack([lo, hi], 1), float(np.mean((y >= lo) & (y <= hi)))


def main(backend: str = "svi") -> None:
    train, test = load_split("train"), load_split("test")
    # metric_writer: the ELBO (or the per-draw sampler statistics) in runs/<backend>-<time>/logs.
    common = dict(task=make_task(), dataset=train, val_dataset=test, seed=0, metric_writer="jsonl")
    if backend == "svi":
        loop = TrainingLoop(
            **common,
            backend="numpyro-svi",
            batch_size=64,
            max_steps=5000,
            optimizer_config={"name": "adam", "lr": 0.01},
            log_every_n_steps=500,
        )
    else:
        loop = TrainingLoop(**common, backend="numpyro-mcmc", log_every_n_steps=500)
    op, info = loop.run()
    band, coverage = intervals(op, test["x"], test["y"])
    rmse = float(np.sqrt(np.mean((np.asarray(op(test["x"])) - test["y"]) ** 2)))
    print(f"{backend}: test RMSE (standardised) {rmse:.3f}; 90% interval coverage {coverage:.2f}")
    for i in range(3):
        print(f"  y={test['y'][i]:+.2f}  90% interval [{band[i, 0]:+.2f}, {band[i, 1]:+.2f}]")
    print(f"metrics in {info['run_dir']}; plot them with: pipekit-train plot {info['run_dir']}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "svi")
