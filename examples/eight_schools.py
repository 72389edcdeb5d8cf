"""Eight schools (non-centred) with the numpyro-mcmc backend: 4 chains of NUTS.

Run the Python version with ``python examples/eight_schools.py``, or the YAML one
with ``pipekit-train run examples/eight_schools.yaml``. Prints ArviZ's summary
(rank-normalised R-hat, bulk/tail ESS) and the partially pooled school effects.
Data: Rubin (1981), BDA3 §5.5.
"""

from __future__ import annotations

import numpy as np
import numpyro
import numpyro.distributions as dist

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

Y = [28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0]
SIGMA = [15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0]


def model(x, y=None):
    """x: the known standard error of each school's estimate; y: the estimates."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    tau = numpyro.sample("tau", dist.HalfCauchy(5.0))
    with numpyro.plate("school", x.shape[0]):
        theta_trans = numpyro.sample("theta_trans", dist.Normal(0.0, 1.0))
        theta = numpyro.deterministic("theta", mu + tau * theta_trans)
        numpyro.sample("obs", dist.Normal(theta, x), obs=y)


def load_data() -> dict:
    return {"x": np.asarray(SIGMA, np.float32), "y": np.asarray(Y, np.float32)}


def make_task(num_warmup: int = 1000, num_samples: int = 1000, num_chains: int = 4) -> NumpyroTask:
    return NumpyroTask(
        model="eight_schools:model",
        num_warmup=num_warmup,
        num_samples=num_samples,
        num_chains=num_chains,
    )


def main() -> None:
    loop = TrainingLoop(
        task=NumpyroTask(model=model, num_warmup=1000, num_samples=1000, num_chains=4),
        dataset=load_data(),
        backend="numpyro-mcmc",
        backend_options={"target_accept": 0.95},
        log_every_n_steps=500,
        metric_writer="jsonl",  # per-draw sampler statistics in runs/numpyro-mcmc-<time>/logs
    )
    op, info = loop.run()
    # to_string(): every column, however narrow the terminal (pandas would elide the middle).
    print(op.summary(var_names=["mu", "tau", "theta"]).to_string())
    print("divergences:", info["divergences"], " warnings:", info["warnings"] or "none")
    print(f"metrics in {info['run_dir']}; plot them with: pipekit-train plot {info['run_dir']}")


if __name__ == "__main__":
    main()
