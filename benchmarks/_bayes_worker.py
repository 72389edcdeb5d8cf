"""One timed Bayesian run in a fresh interpreter, for the first/repeated-run cases 10b-11c.

Usage: python _bayes_worker.py MODE CACHE_DIR

MODE is ``svi-backend``, ``svi-run``, ``mcmc-backend``, ``mcmc-backend-ckpt`` or
``mcmc-run``; CACHE_DIR is the backend's persistent compilation cache (``off`` for none;
the raw NumPyro references never get one: JAX's default). Prints one JSON line with
``seconds``: the wall time of the run itself (model set-up, compilation, sampling or
optimisation, results on the host), imports and data loading excluded; and ``marks``: the
``time.monotonic()`` of each host event of a backend run (``_spawn.Marks``; ``svi.run`` and
``MCMC.run`` are one compiled call each, with nothing to observe inside).
"""

from __future__ import annotations

import sys
import tempfile
import time
import warnings
from typing import Any

sys.path.insert(0, __file__.rsplit("/", 1)[0])

from _bayes_common import (  # noqa: E402
    MCMC_SETTINGS,
    SVI_SETTINGS,
    Stamps,
    mcmc_loop,
    raw_mcmc_run,
    raw_svi_run,
    regression,
    schools,
    svi_loop,
)
from _spawn import Marks, emit  # noqa: E402


class _Marks(Stamps):
    """The host events of a backend run, as ``_spawn`` marks."""

    def __init__(self, marks: Marks) -> None:
        super().__init__()
        self.marks = marks

    def on_step_end(self, loop: Any, state: Any) -> None:
        self.marks.step(int(state.step))


def main() -> None:
    mode, cache = sys.argv[1], sys.argv[2]
    warnings.simplefilter("ignore")
    cache_dir = None if cache == "off" else cache
    marks = Marks()
    callbacks = [_Marks(marks)]
    if mode.startswith("svi"):
        data = regression()
        marks.start()
        if mode == "svi-backend":
            loop = svi_loop(
                data,
                SVI_SETTINGS.steps,
                cache_dir=cache_dir,
                batch=SVI_SETTINGS.rows,
                callbacks=callbacks,
            )
            loop.run()
        else:
            raw_svi_run(data, SVI_SETTINGS.steps)
        emit(marks)
        return
    x, y = schools()
    with tempfile.TemporaryDirectory(prefix="pipekit-bench-mcmc-") as tmp:
        marks.start()
        if mode == "mcmc-run":
            raw_mcmc_run(x, y)
        else:
            ckpt = tmp if mode == "mcmc-backend-ckpt" else None
            mcmc_loop(x, y, cache_dir=cache_dir, checkpoint_dir=ckpt, callbacks=callbacks).run()
        seconds = time.perf_counter() - (marks.started or 0.0)
    emit(marks, draws=MCMC_SETTINGS.num_samples, seconds=seconds)


if __name__ == "__main__":
    main()
