"""A blackjax job run in a subprocess by the SIGKILL resume tests.

Usage: python _resume_worker.py CKPT_DIR OUT_NPZ SAMPLER STEPS_PER_CALL KILL_AT HOOK
   or: python _resume_worker.py --references DIR STEPS_PER_CALL SAMPLER...

The second form runs each SAMPLER uninterrupted, one after another in this one process
(``DIR/<sampler>/ckpt``, draws in ``DIR/<sampler>/ref.npz``, a JSON line each): the
references the killed runs are compared with, without a process start per sampler.

- ``nuts``: eight schools (the NumPyro model, bridged), 2 vmapped chains, 30 warmup
  (window adaptation) + 30 draws;
- ``mclmc``: the 3-d Gaussian, 2 chains, the Pathfinder start and the tuning (a step each)
  + 30 draws;
- ``sgld``: the regression on minibatches of 16, 2 chains, 20 burn-in + 30 draws;
- ``sgld-stream``: the same, the rows as the user's own ``grain.IterDataset`` of ``(x, y)``
  examples (shuffled and repeated by Grain) with ``backend_options.num_data`` (issue 20);
- ``smc``: the 3-d Gaussian, 2 chains of 64 particles, a budget of 12 tempering steps (about
  six used at target_ess 0.95) + the resampling step + 30 draws;
- ``svgd``: the 3-d Gaussian, 2 chains of 30 particles, 30 updates + 30 draws.

A checkpoint every 10 steps (every 4 for smc, so one lands among its tempering steps); with
``PIPEKIT_TEST_CKPT_SECONDS`` set, ``Checkpoint(every_n_seconds=…)`` of that many seconds instead.
With KILL_AT > 0 the process SIGKILLs itself at that step ("step": at its host event;
"checkpoint": right after its checkpoint was written).
Otherwise it writes the draws to OUT_NPZ and prints backend_info's summary as JSON.
"""

from __future__ import annotations

import json
import os
import sys
import warnings

import numpy as np
from _bjx_helpers import gauss_task, loop_for, pdb, regression_data, regression_task
from resume_killer import Killer

from pipekit_train import Checkpoint
from pipekit_train.adapters.bayes import NumpyroTask


def main() -> None:
    warnings.simplefilter("ignore")
    if sys.argv[1] == "--references":
        folder, k, samplers = sys.argv[2], sys.argv[3], sys.argv[4:]
        for sampler in samplers:
            base = os.path.join(folder, sampler)
            summary = run(os.path.join(base, "ckpt"), os.path.join(base, "ref.npz"), sampler, k)
            print(json.dumps({"sampler": sampler, **summary}), flush=True)
        return
    ckpt_dir, out, sampler, k, kill_at, hook = sys.argv[1:7]
    print(json.dumps(run(ckpt_dir, out, sampler, k, kill_at, hook)))


def run(ckpt_dir: str, out: str, sampler: str, k: str, kill_at: str = "0", hook: str = "none"):
    """One job: ``sampler`` with a checkpoint cadence and the killer at ``kill_at``; the draws
    go to ``out`` when the run was not interrupted. Returns backend_info's summary."""
    every = 4 if sampler == "smc" else 10
    seconds = os.environ.get("PIPEKIT_TEST_CKPT_SECONDS")
    ckpt = (
        Checkpoint(every_n_seconds=float(seconds)) if seconds else Checkpoint(every_n_steps=every)
    )
    callbacks = [ckpt, Killer(int(kill_at), hook)]
    common = dict(checkpoint_dir=ckpt_dir, callbacks=callbacks, log_every_n_steps=5)
    options = {"steps_per_call": int(k)}
    if sampler == "nuts":
        x, y = pdb.load_data("eight_schools-eight_schools_noncentered")
        task = NumpyroTask(model=pdb.eight_schools, num_warmup=30, num_samples=30, num_chains=2)
        loop = loop_for(
            task, "nuts", options={**options, "target_accept": 0.9}, dataset=(x, y), **common
        )
    elif sampler == "mclmc":
        loop = loop_for(
            gauss_task(num_warmup=40, num_samples=30, num_chains=2),
            "mclmc",
            options=options,
            **common,
        )
    elif sampler == "smc":
        opts = {**options, "target_ess": 0.95, "max_tempering_steps": 12, "num_particles": 64}
        loop = loop_for(gauss_task(num_samples=30, num_chains=2), "smc", options=opts, **common)
    elif sampler == "svgd":
        opts = {**options, "num_updates": 30}
        loop = loop_for(gauss_task(num_samples=30, num_chains=2), "svgd", options=opts, **common)
    else:
        task = regression_task(num_samples=30, num_chains=2)
        opts = {**options, "step_size": 1e-3, "step_size_power": 0.3}
        data: object = regression_data()
        if sampler == "sgld-stream":
            import grain

            x, y = regression_data()
            rows = [(x[i], y[i]) for i in range(len(x))]
            data = grain.MapDataset.source(rows).shuffle(seed=4).repeat().to_iter_dataset()
            opts["num_data"] = len(x)
        loop = loop_for(task, "sgld", options=opts, dataset=data, batch_size=16, **common)
    op, info = loop.run()
    if info["interrupted"] is None:
        np.savez(out, **op.samples_by_chain)
    keys = ("final_step", "resumed_from_step", "interrupted", "draws_collected")
    return {k2: info[k2] for k2 in keys}


if __name__ == "__main__":
    main()
