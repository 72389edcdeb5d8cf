"""One timed Bayesian run in a fresh interpreter, for the first/repeated-run cases 10b-11c.

Usage: python _bayes_worker.py MODE CACHE_DIR

MODE is ``svi-backend``, ``svi-run``, ``mcmc-backend``, ``mcmc-backend-ckpt`` or
``mcmc-run``; CACHE_DIR is the backend's persistent compilation cache (``off`` for none;
the raw NumPyro references never get one: JAX's default). Prints one JSON line with
``seconds``: the wall time of the run itself (model set-up, compilation, sampling or
optimisation, results on the host), imports and data loading excluded.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import warnings

sys.path.insert(0, __file__.rsplit("/", 1)[0])

from _bayes_common import (  # noqa: E402
    MCMC_SETTINGS,
    SVI_SETTINGS,
    mcmc_loop,
    raw_mcmc_run,
    raw_svi_run,
    regression,
    schools,
    svi_loop,
)


def main() -> None:
    mode, cache = sys.argv[1], sys.argv[2]
    warnings.simplefilter("ignore")
    cache_dir = None if cache == "off" else cache
    if mode.startswith("svi"):
        data = regression()
        start = time.perf_counter()
        if mode == "svi-backend":
            svi_loop(data, SVI_SETTINGS.steps, cache_dir=cache_dir, batch=SVI_SETTINGS.rows).run()
        else:
            raw_svi_run(data, SVI_SETTINGS.steps)
    else:
        x, y = schools()
        with tempfile.TemporaryDirectory(prefix="pipekit-bench-mcmc-") as tmp:
            start = time.perf_counter()
            if mode == "mcmc-run":
                raw_mcmc_run(x, y)
            else:
                ckpt = tmp if mode == "mcmc-backend-ckpt" else None
                mcmc_loop(x, y, cache_dir=cache_dir, checkpoint_dir=ckpt).run()
            seconds = time.perf_counter() - start
        print(json.dumps({"seconds": seconds, "draws": MCMC_SETTINGS.num_samples}))
        return
    print(json.dumps({"seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main()
