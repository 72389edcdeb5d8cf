"""Count backend compilations of one sampler run in this fresh process (a test's worker).

Usage: python _compile_count_worker.py {backend|mcmc-run} DUMP_DIR

Prints one JSON line: ``compiles``, every XLA backend compilation (JAX's own
``/jax/core/compile/backend_compile_duration`` event, one per compiled program,
eager ops included), and ``loops``, the compiled programs holding a loop that calls
the NUTS transition (modules in DUMP_DIR, JAX's ``jax_dump_ir_to``, containing
``stablehlo.while`` around the ``build_tree`` loop). No persistent cache on either side.
"""

import json
import sys
import warnings
from pathlib import Path

import jax
import numpy as np
from jax import monitoring

mode, dump = sys.argv[1], Path(sys.argv[2])
jax.config.update("jax_dump_ir_to", str(dump))
counts = {"compiles": 0}


def _on(event: str, _secs: float, **_kw: object) -> None:
    if event == "/jax/core/compile/backend_compile_duration":
        counts["compiles"] += 1


monitoring.register_event_duration_secs_listener(_on)

sys.path.insert(0, str(Path(__file__).parent))
from _npy_helpers import pdb  # noqa: E402

W, S = 30, 40
x, y = (a.astype(np.float32) for a in pdb.load_data("eight_schools-eight_schools_noncentered"))
warnings.simplefilter("ignore")
if mode == "mcmc-run":
    from numpyro.infer import MCMC, NUTS

    mcmc = MCMC(NUTS(pdb.eight_schools), num_warmup=W, num_samples=S, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(0), x, y)
    jax.device_get(mcmc.get_samples())
else:
    from pipekit_train import TrainingLoop
    from pipekit_train.adapters.bayes import NumpyroTask

    TrainingLoop(
        task=NumpyroTask(model=pdb.eight_schools, num_warmup=W, num_samples=S),
        dataset=(x, y),
        backend="numpyro-mcmc",
        seed=0,
        # NumPyro's own start, as MCMC.run's; the default screened start compiles one more
        # program (_screened: the candidates' density and gradient, ~0.5 s cold).
        backend_options={
            "steps_per_call": 10,
            "x64": False,
            "compilation_cache": "off",
            "init_strategy": "uniform",
        },
        log_every_n_steps=10,
    ).run()
# A program running NUTS transitions nests >= 3 while loops (the chain's loop, build_tree,
# the iterative subtree); random-number and init helpers hold at most one.
loops = sum(f.read_text().count("stablehlo.while") >= 3 for f in dump.glob("*.mlir"))
print(json.dumps({**counts, "loops": loops}))
