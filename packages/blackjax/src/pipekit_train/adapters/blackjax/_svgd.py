"""Stein variational gradient descent: a set of particles pushed toward the target.

``blackjax.vi.svgd(grad_logdensity, optax.adam(learning_rate))`` with BlackJAX's RBF kernel
and median-heuristic length scale. The particles are ``num_samples`` points drawn around
``init_position`` (``init_position + init_scale · N(0, 1)``, from the run's init key); the
optimiser is this sampler's own (``learning_rate``), not ``TrainingLoop.optimizer_config``,
which the Bayesian backends ignore (and warn about).

Step meaning: the ``updates`` phase is ``num_updates`` driver steps, each **one** SVGD update
of every particle (BlackJAX's ``step`` is keyless: the driver's key is not used, so the run
is deterministic given the start). The ``sampling`` phase then emits the final particles,
step ``i`` giving particle ``i`` of every chain, so the draws are exactly the final
particles (equally weighted; a variational answer, judged like SVI's). Each chain is an
independent particle set.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from pipekit_train.engine import Phase

from ._sampler import Sampler, around, chain_count, over_chains

__all__ = ["svgd"]


def svgd(
    logdensity_fn: Any,
    positions: Any,
    params: dict[str, Any],
    num_samples: int,
    init_key: Any,
) -> Sampler:
    """The ``svgd`` sampler from ``positions`` (chains stacked on axis 0)."""
    import optax

    import blackjax

    num_chains = chain_count(positions)
    dtype = jnp.result_type(float)
    algorithm = blackjax.svgd(jax.grad(logdensity_fn), optax.adam(params["learning_rate"]))

    def init_one(key: Any, center: Any) -> Any:
        particles = around(key, center, params["init_scale"], num_samples)
        return algorithm.init(particles, {"length_scale": jnp.asarray(1.0, dtype)})

    keys = jax.random.split(jax.random.fold_in(init_key, 2), num_chains)
    carry = {"state": jax.vmap(init_one)(keys, positions), "index": jnp.asarray(0, jnp.int32)}

    def update(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        def one_chain(state: Any) -> tuple[Any, dict[str, Any]]:
            new = algorithm.step(state)
            logdensity = jax.vmap(logdensity_fn)(new.particles)
            return new, {
                "length_scale": jnp.asarray(new.kernel_parameters["length_scale"], dtype),
                "mean_logdensity": jnp.mean(logdensity).astype(dtype),
            }

        state, metrics = over_chains(one_chain, num_chains)(carry["state"])
        mean = jax.tree_util.tree_map(lambda a: jnp.mean(a, axis=1), state.particles)
        return dict(carry, state=state), metrics, mean

    def sample(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        i = carry["index"]
        particles = carry["state"].particles
        position = jax.tree_util.tree_map(lambda a: a[:, i], particles)
        scale = carry["state"].kernel_parameters["length_scale"]
        return dict(carry, index=i + 1), {"length_scale": scale}, position

    return Sampler(
        num_chains=num_chains,
        carry=carry,
        phases=[
            Phase("updates", params["num_updates"], collect=False),
            Phase("sampling", num_samples, collect=True),
        ],
        steps={"updates": update, "sampling": sample},
        step_meaning=(
            "updates: one SVGD update of every chain's num_samples particles (keyless); "
            "sampling: one final particle per chain and step"
        ),
        info={"num_particles": num_samples},
    )
