"""MCLMC with BlackJAX's L / step-size tuner as the driver's ``warmup`` phase.

``blackjax.mclmc_find_L_and_step_size`` is three scans and an ESS estimate in one
call, so its tuning is **one driver step** (phase ``warmup`` of length 1): a kill
during tuning redoes the whole tuning from the initial state on resume — with
the same key, so the result is bit-identical — and every draw after it is a
checkpointed, resumable step. The tuner is given ``num_steps = num_warmup /
(frac_tune1 + frac_tune2 + frac_tune3)``, so it spends about ``num_warmup``
integrator steps; with ``num_warmup = 0`` the sampler starts from BlackJAX's
own initial guesses (``L = sqrt(d)``, ``step_size = 0.25 sqrt(d)``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from pipekit_train.engine import Phase

from ._sampler import Sampler, chain_count, over_chains

__all__ = ["mclmc", "MIN_DIMENSIONS"]

#: MCLMC's isokinetic dynamics need a target of at least two dimensions.
MIN_DIMENSIONS = 2


def mclmc(
    logdensity_fn: Any,
    positions: Any,
    params: dict[str, Any],
    num_warmup: int,
    num_samples: int,
    init_key: Any,
) -> Sampler:
    """The ``mclmc`` sampler on ``positions`` (chains stacked on axis 0)."""
    import blackjax
    from blackjax.util import pytree_size

    kernel = blackjax.mcmc.mclmc.build_kernel(desired_energy_var=params["desired_energy_var"])
    num_chains = chain_count(positions)
    one = jax.tree_util.tree_map(lambda a: a[0], positions)
    dim = pytree_size(one)
    dtype = jnp.result_type(float)
    keys = jax.random.split(init_key, num_chains)
    # One compiled program, as the HMC family's start (._hmc): eager, each op of the density's
    # value and gradient would be compiled on its own.
    states = jax.jit(
        jax.vmap(
            lambda p, k: blackjax.mcmc.mclmc.init(
                position=p, logdensity_fn=logdensity_fn, rng_key=k
            )
        )
    )(positions, keys)
    ones = jnp.ones((num_chains,), dtype)
    carry = {
        "state": states,
        "L": ones * jnp.sqrt(dim).astype(dtype),
        "step_size": ones * (jnp.sqrt(dim) * 0.25).astype(dtype),
        "inverse_mass_matrix": jnp.ones((num_chains, dim), dtype),
    }
    fracs = params["frac_tune1"] + params["frac_tune2"] + params["frac_tune3"]
    tuner_steps = max(1, round(num_warmup / fracs)) if fracs > 0 else 1

    def tune(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        def one_chain(state: Any, k: Any) -> tuple[Any, Any]:
            new, p, _ = blackjax.mclmc_find_L_and_step_size(
                mclmc_kernel=kernel,
                num_steps=tuner_steps,
                state=state,
                rng_key=k,
                logdensity_fn=logdensity_fn,
                frac_tune1=params["frac_tune1"],
                frac_tune2=params["frac_tune2"],
                frac_tune3=params["frac_tune3"],
                desired_energy_var=params["desired_energy_var"],
                diagonal_preconditioning=params["diagonal_preconditioning"],
            )
            imm = jnp.broadcast_to(jnp.asarray(p.inverse_mass_matrix, dtype), (dim,))
            return new, (
                jnp.asarray(p.L, dtype),
                jnp.asarray(p.step_size, dtype),
                imm,
            )

        state, (L, step_size, imm) = over_chains(one_chain, num_chains)(
            carry["state"], jax.random.split(key, num_chains)
        )
        new = {"state": state, "L": L, "step_size": step_size, "inverse_mass_matrix": imm}
        metrics = {"L": L, "step_size": step_size, "logdensity": state.logdensity}
        return new, metrics, state.position

    def sample(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        def one_chain(k: Any, state: Any, L: Any, eps: Any, imm: Any) -> tuple[Any, Any]:
            return kernel(k, state, logdensity_fn, imm, L, eps)

        state, info = over_chains(one_chain, num_chains)(
            jax.random.split(key, num_chains),
            carry["state"],
            carry["L"],
            carry["step_size"],
            carry["inverse_mass_matrix"],
        )
        metrics = {
            "energy_change": info.energy_change,
            "logdensity": info.logdensity,
            "step_size": carry["step_size"],
            "L": carry["L"],
        }
        return dict(carry, state=state), metrics, state.position

    phases = [Phase("warmup", 1, collect=False)] if num_warmup else []
    phases.append(Phase("sampling", num_samples, collect=True))
    return Sampler(
        num_chains=num_chains,
        carry=carry,
        phases=phases,
        steps={"warmup": tune, "sampling": sample},
        step_meaning=(
            "warmup: one step running BlackJAX's whole L / step-size tuner; sampling: one "
            "MCLMC transition of every chain"
        ),
        info={"tuner_num_steps": tuner_steps if num_warmup else 0},
    )
