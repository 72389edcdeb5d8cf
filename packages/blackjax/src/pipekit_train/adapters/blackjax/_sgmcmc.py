"""SGLD and SGHMC on minibatches from the driver's shared batch source.

The gradient is BlackJAX's ``grad_estimator(logprior_fn, loglik_fn, N)``: the
prior plus ``N`` times the minibatch mean of the per-datum log-likelihood. Every
chain sees the same minibatch at a step. The step size follows
``step_size * (1 + t) ** -step_size_power`` over the step count ``t`` (Welling &
Teh's polynomial decay; power 0 keeps it constant); for SGHMC it is the
integrator's time step. ``num_warmup`` steps of burn-in come first (not kept).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from pipekit_train.engine import Phase

from ._sampler import Sampler, chain_count, over_chains

__all__ = ["sgmcmc"]


def sgmcmc(
    name: str,
    grad_fn: Any,
    positions: Any,
    params: dict[str, Any],
    num_warmup: int,
    num_samples: int,
) -> Sampler:
    """The ``sgld`` or ``sghmc`` sampler on ``positions`` (chains stacked on axis 0)."""
    import blackjax

    num_chains = chain_count(positions)
    dtype = jnp.result_type(float)
    base, power, temperature = params["step_size"], params["step_size_power"], params["temperature"]
    if name == "sgld":
        kernel = blackjax.sgmcmc.sgld.build_kernel()

        def move(k: Any, p: Any, batch: Any, eps: Any) -> Any:
            return kernel(k, p, grad_fn, batch, eps, temperature)

    else:
        kernel = blackjax.sgmcmc.sghmc.build_kernel(alpha=params["alpha"], beta=params["beta"])
        n_steps = params["num_integration_steps"]

        def move(k: Any, p: Any, batch: Any, eps: Any) -> Any:
            return kernel(k, p, grad_fn, batch, eps, n_steps, temperature)

    carry = {"position": positions, "i": jnp.zeros((), jnp.int32)}

    def step(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        t = carry["i"].astype(dtype)
        eps = (base * (1.0 + t) ** (-power)).astype(dtype)
        keys = jax.random.split(key, num_chains)
        position = over_chains(move, num_chains, (0, 0, None, None))(
            keys, carry["position"], batch, eps
        )
        metrics = {"step_size": jnp.broadcast_to(eps, (num_chains,))}
        return {"position": position, "i": carry["i"] + 1}, metrics, position

    phases = [Phase("warmup", num_warmup, collect=False)] if num_warmup else []
    phases.append(Phase("sampling", num_samples, collect=True))
    return Sampler(
        num_chains=num_chains,
        carry=carry,
        phases=phases,
        steps={"warmup": step, "sampling": step},
        step_meaning=f"one {name.upper()} update of every chain on one minibatch",
        uses_batches=True,
    )
