"""The BlackJAX backend's case for the contract kit (``pipekit_train.testing``).

NUTS on the raw regression posterior of ``_bjx_helpers`` (its log prior plus the
log-likelihood of its 64 rows, as one log density), 8 warmup + 8 draws, one chain, with
``predict_fn`` so the operator predicts. Every object field is an import string, so the kit
can run it through ``pipekit-train run``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _bjx_helpers import loglik, logprior, predict_linear, regression_data
from contract_cases import case

from pipekit_train import TrainingLoop
from pipekit_train.adapters.blackjax import BlackjaxTask

CASE = case(
    "blackjax",
    __name__,
    bad_options={"sampler": "nuts-but-faster", "x64": "maybe"},
    op_load_kwargs=f"{__name__}:load_kwargs",
)


_X, _Y = regression_data()


def log_posterior(params: Any) -> Any:
    """The regression's unnormalised log posterior over its 64 rows."""
    import jax

    datum = {"x": _X, "y": _Y}
    return logprior(params) + jax.numpy.sum(jax.vmap(loglik, (None, 0))(params, datum))


def make_task() -> BlackjaxTask:
    return BlackjaxTask(
        logdensity_fn=log_posterior,
        predict_fn=predict_linear,
        init_position=np.zeros(2),
        num_warmup=8,
        num_samples=8,
    )


def op_inputs() -> np.ndarray:
    return regression_data(5, seed=4)[0]


def load_kwargs() -> dict[str, Any]:
    """What a user passes to the operator's ``load``: their own prediction function."""
    return {"predict_fn": predict_linear}


def make_loop() -> TrainingLoop:
    return TrainingLoop(
        task="_bjx_contract:make_task",
        backend="blackjax",
        seed=3,
        backend_options={"steps_per_call": 4},
    )
