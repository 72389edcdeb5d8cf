"""A whole numpyro-mcmc and numpyro-svi run, diagnostics included, leaves ArviZ, xarray,
pandas and Grain unimported: their import costs seconds in a fresh process, more than a
small run. Each run in its own fresh interpreter; ArviZ stays for ``to_inference_data``,
summaries on request and plots."""

import subprocess
import sys

import pytest

RUNS = {
    "numpyro-mcmc": (
        "task = NumpyroTask(model=model, num_warmup=20, num_samples=30, num_chains=2)\n"
        "loop = TrainingLoop(task=task, dataset=(x, y), backend='numpyro-mcmc', seed=0,"
        " backend_options={'compilation_cache': 'off'})\n"
    ),
    "numpyro-svi": (
        "task = NumpyroTask(model=model, guide='AutoNormal', predictive_samples=20)\n"
        "loop = TrainingLoop(task=task, dataset=(x, y), backend='numpyro-svi', seed=0,"
        " max_steps=20, batch_size=50, optimizer_config={'name': 'adam', 'lr': 0.01},"
        " backend_options={'compilation_cache': 'off'})\n"
    ),
}

CODE = """
import sys, warnings
import numpy as np
import numpyro, numpyro.distributions as dist
from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

def model(x, y=None):
    w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([2]).to_event(1))
    s = numpyro.sample("s", dist.HalfNormal(1.0))
    numpyro.sample("obs", dist.Normal(x @ w, s), obs=y)

rng = np.random.default_rng(0)
x = rng.normal(size=(50, 2)).astype(np.float32)
y = (x @ np.array([1.0, -1.0]) + 0.3 * rng.normal(size=50)).astype(np.float32)
{run}warnings.simplefilter("ignore")
op, info = loop.run()
assert info["diagnostics"]["sites"]["w"]["mean"], info["diagnostics"]
print(sorted(m for m in ("arviz", "xarray", "pandas", "grain") if m in sys.modules))
"""


@pytest.mark.parametrize("backend", list(RUNS))
def test_a_whole_run_imports_none_of_them(backend: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CODE.format(run=RUNS[backend])],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout
