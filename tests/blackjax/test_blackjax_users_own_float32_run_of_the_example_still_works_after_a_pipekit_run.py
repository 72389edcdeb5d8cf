"""The sampling book's logistic regression as the book runs it (float32, ``blackjax.rmh`` and
its ``inference_loop``) still runs in the same process after pipekit sampled the same
``logdensity_fn`` in its default float64.

Before the fix pipekit's shape check (``jax.eval_shape`` of the user's function, under the
run's float64) left a trace keyed on that function, and the user's next float32 call of it
failed: here ``RuntimeProgramInputMismatch`` (an f64[50] buffer for an f32[50] program), in a
plain script ``TypeError: lax.mul requires arguments to have the same dtypes``.
"""

from __future__ import annotations

import blackjax
import jax
import jax.numpy as jnp
import numpy as np
from _bjx_direct import inference_loop
from _bjx_examples import logistic_regression
from _bjx_helpers import compilation_cache_dir

from pipekit_train import TrainingLoop
from pipekit_train.adapters.blackjax import BlackjaxTask


def test_the_books_float32_rmh_run_works_after_pipekit_sampled_its_density() -> None:
    logdensity_fn, w0 = logistic_regression(x64=False)
    assert w0.dtype == jnp.float32  # the book's own precision
    task = BlackjaxTask(
        logdensity_fn=logdensity_fn, init_position=w0, num_warmup=10, num_samples=10
    )
    op, _ = TrainingLoop(
        task=task,
        backend="blackjax",
        seed=0,
        backend_options={"steps_per_call": 10, "compilation_cache": compilation_cache_dir()},
    ).run()
    assert op.samples["position"].dtype == np.float64  # pipekit's default x64

    # The book's own run, after it (50 steps instead of 5,000).
    M = w0.shape[0]
    rmh = blackjax.rmh(logdensity_fn, blackjax.mcmc.random_walk.normal(jnp.ones(M) * 0.05))
    states = inference_loop(jax.random.PRNGKey(314), rmh.step, rmh.init(w0), 50)
    assert states.position.dtype == jnp.float32
    assert states.position.shape == (50, M)
    assert bool(jnp.all(jnp.isfinite(states.position)))
