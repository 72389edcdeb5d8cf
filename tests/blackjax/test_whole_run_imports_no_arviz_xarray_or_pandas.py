"""A whole blackjax NUTS run, diagnostics included (the shared ``bayes`` code), leaves
ArviZ, xarray, pandas and Grain unimported (seconds of import in a fresh process)."""

import subprocess
import sys

CODE = """
import sys, warnings
import numpy as np
import jax.numpy as jnp
from pipekit_train import TrainingLoop
from pipekit_train.adapters.blackjax import BlackjaxTask

def logdensity(p):
    return -0.5 * jnp.sum(p ** 2)

task = BlackjaxTask(logdensity_fn=logdensity, init_position=np.zeros(2), num_warmup=20,
                    num_samples=30, num_chains=2)
loop = TrainingLoop(task=task, backend="blackjax", seed=0, dataset=None,
                    backend_options={"sampler": "nuts", "compilation_cache": "off"})
warnings.simplefilter("ignore")
op, info = loop.run()
assert info["diagnostics"]["sites"], info["diagnostics"]
print(sorted(m for m in ("arviz", "xarray", "pandas", "grain") if m in sys.modules))
"""


def test_a_whole_nuts_run_imports_none_of_them() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=600, check=False
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout
