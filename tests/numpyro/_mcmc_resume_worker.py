"""A numpyro-mcmc job run in a subprocess by the SIGKILL resume test.

Usage: python _mcmc_resume_worker.py CKPT_DIR OUT_NPZ STEPS_PER_CALL KILL_AT HOOK

Eight schools, 2 vectorised chains, 30 warmup + 30 draws, a checkpoint every 10
steps. With KILL_AT > 0 the process SIGKILLs itself at that step ("step": at its
host event; "checkpoint": right after its checkpoint was written; "sigterm": sends itself
SIGTERM there, which must checkpoint that step and return normally). Otherwise it
writes the draws to OUT_NPZ and prints backend_info's summary as JSON. HOOK
"numpyro" runs NumPyro's own MCMC.run with the same settings instead.
"""

from __future__ import annotations

import json
import sys
import warnings

import numpy as np
from _npy_helpers import pdb
from resume_killer import Killer

from pipekit_train import Checkpoint, TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

W, S, CHAINS, SEED = 30, 30, 2, 11


def main() -> None:
    ckpt_dir, out, k, kill_at, hook = sys.argv[1:6]
    warnings.simplefilter("ignore")
    x, y = (a.astype(np.float32) for a in pdb.load_data("eight_schools-eight_schools_noncentered"))
    if hook == "numpyro":
        import jax
        from numpyro.infer import MCMC, NUTS

        mcmc = MCMC(
            NUTS(pdb.eight_schools, target_accept_prob=0.9),
            num_warmup=W,
            num_samples=S,
            num_chains=CHAINS,
            chain_method="vectorized",
            progress_bar=False,
        )
        mcmc.run(jax.random.PRNGKey(SEED), x, y)
        np.savez(out, **{k2: np.asarray(v) for k2, v in mcmc.get_samples(True).items()})
        print(json.dumps({"numpyro": True}))
        return
    loop = TrainingLoop(
        task=NumpyroTask(model=pdb.eight_schools, num_warmup=W, num_samples=S, num_chains=CHAINS),
        dataset=(x, y),
        backend="numpyro-mcmc",
        seed=SEED,
        # float32 explicitly: the hook above runs MCMC.run in the process default, float32.
        backend_options={"target_accept": 0.9, "steps_per_call": int(k), "x64": False},
        checkpoint_dir=ckpt_dir,
        callbacks=[Checkpoint(every_n_steps=10), Killer(int(kill_at), hook)],
        log_every_n_steps=5,
    )
    op, info = loop.run()
    if info["interrupted"] is None:
        np.savez(out, **op.samples_by_chain)
    keys = ("final_step", "resumed_from_step", "interrupted", "draws_collected")
    print(json.dumps({k2: info[k2] for k2 in keys}))


if __name__ == "__main__":
    main()
