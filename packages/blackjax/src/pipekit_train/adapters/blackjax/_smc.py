"""Adaptive tempered SMC: particles moved from a Gaussian reference to the target.

BlackJAX's ``adaptive_tempered_smc`` needs a prior to draw the first particles from and a
likelihood to temper; a task gives one log density. So the particles start from a
**reference** ``N(init_position, init_scale²)`` (per leaf, independent) and the tempered
path is ``ref^(1-λ) · target^λ``: ``logprior_fn = log ref`` and ``loglikelihood_fn =
logdensity - log ref``, which at ``λ = 1`` is the target exactly. The inner kernel is HMC
(``step_size``, ``num_integration_steps``), its parameters shared by every particle through
``blackjax.smc.extend_params``, ``num_mcmc_steps`` moves per tempering step. Its diagonal
inverse mass matrix is, by default (``mass_matrix="particles"``), the weighted variance of
the particles at the start of each tempering step, so ``step_size`` is in units of the
particles' own spread as it shrinks from the reference's to the posterior's (a posterior sd
of 0.001 under a reference of scale 1 would otherwise need a step size no fixed value
serves); ``"identity"`` keeps a unit mass.

Step meaning (three phases, all through the driver, all checkpointed and resumable):

- ``tempering`` — ``max_tempering_steps`` driver steps; each is **one** adaptive tempering
  step (the next λ chosen so the weights' ESS is ``target_ess`` × particles, resample, HMC
  moves, reweight) while λ < 1, and a reported no-op (``active = 0``, λ = 1) once λ has
  reached 1. The number of tempering steps is not known before the run, hence the fixed
  budget; ``backend_info["adapted"]`` gives the steps used and the final λ, and a run whose
  budget ended before λ = 1 warns (its draws are from a tempered target, not the posterior).
- ``resample`` — one step: systematic resampling (the step's key) of the final **weighted**
  particles into ``num_samples`` equally weighted draws; the weights are not carried on.
- ``sampling`` — ``num_samples`` steps, step ``i`` emitting resampled draw ``i`` of every
  chain (the trace layout of every sampler here).

Each chain is an independent particle system (``num_particles`` particles, default
``num_samples``), vmapped like the MCMC chains, so R-hat compares independent SMC runs.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from pipekit_train.engine import Phase

from ._sampler import Sampler, around, chain_count, over_chains

__all__ = ["smc"]

#: a λ this close to 1 is 1 (float rounding of the last, clipped increment).
_SNAP = 1e-6


def _reference_logdensity(center: Any, scale: float) -> Any:
    """``log N(p; center, scale²)`` up to a constant (the constant cancels in SMC)."""

    def logref(p: Any) -> Any:
        terms = jax.tree_util.tree_map(lambda a, c: jnp.sum(((a - c) / scale) ** 2), p, center)
        return -0.5 * sum(jax.tree_util.tree_leaves(terms))

    return logref


def smc(
    logdensity_fn: Any,
    positions: Any,
    params: dict[str, Any],
    num_samples: int,
    init_key: Any,
) -> Sampler:
    """The ``smc`` sampler from ``positions`` (chains stacked on axis 0)."""
    from jax.flatten_util import ravel_pytree

    import blackjax
    from blackjax.smc import extend_params, resampling
    from blackjax.smc.tempered import TemperedSMCState
    from blackjax.util import pytree_size

    num_chains = chain_count(positions)
    num_particles = params["num_particles"] or num_samples
    scale = params["init_scale"]
    dtype = jnp.result_type(float)
    dim = pytree_size(jax.tree_util.tree_map(lambda a: a[0], positions))

    def inverse_mass(state: Any) -> Any:
        """The diagonal of the inner HMC's inverse mass: the particles' weighted variance."""
        if params["mass_matrix"] == "identity":
            return jnp.ones((dim,), dtype)
        flat = jax.vmap(lambda p: ravel_pytree(p)[0])(state.particles)
        w = state.weights[:, None]
        mean = jnp.sum(w * flat, axis=0)
        var = jnp.sum(w * (flat - mean) ** 2, axis=0)
        # Particles collapsed onto one value in a dimension: keep the move possible there.
        return jnp.maximum(var, jnp.finfo(dtype).tiny).astype(dtype)

    def one_chain_algorithm(center: Any, imm: Any) -> Any:
        logref = _reference_logdensity(center, scale)
        return blackjax.adaptive_tempered_smc(
            logref,
            lambda p: logdensity_fn(p) - logref(p),
            blackjax.hmc.build_kernel(),
            blackjax.hmc.init,
            extend_params(
                {
                    "step_size": jnp.asarray(params["step_size"], dtype),
                    "inverse_mass_matrix": imm,
                    "num_integration_steps": params["num_integration_steps"],
                }
            ),
            resampling.systematic,
            params["target_ess"],
            num_mcmc_steps=params["num_mcmc_steps"],
        )

    def init_one(key: Any, center: Any) -> Any:
        state = blackjax.smc.tempered.init(around(key, center, scale, num_particles))
        return TemperedSMCState(
            state.particles, state.weights.astype(dtype), jnp.asarray(0.0, dtype)
        )

    keys = jax.random.split(jax.random.fold_in(init_key, 1), num_chains)
    states = jax.vmap(init_one)(keys, positions)
    zero = jnp.zeros((num_chains,), dtype)
    carry = {
        "start": positions,
        "state": states,
        "lmbda": zero,
        "tempering_steps": jnp.zeros((num_chains,), jnp.int32),
        "draws": jax.tree_util.tree_map(
            lambda a: jnp.zeros((num_chains, num_samples, *a.shape[1:]), a.dtype), positions
        ),
        "index": jnp.asarray(0, jnp.int32),
    }

    def temper(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        def one_chain(k: Any, state: Any, center: Any, used: Any) -> tuple[Any, ...]:
            def move(s: Any) -> tuple[Any, dict[str, Any]]:
                new, info = one_chain_algorithm(center, inverse_mass(s)).step(k, s)
                lmbda = jnp.asarray(new.tempering_param, dtype)
                # λ + (1 - λ) can round to 1 - ulp: snap it, or the run would never finish.
                lmbda = jnp.where(lmbda > 1.0 - _SNAP, jnp.asarray(1.0, dtype), lmbda)
                new = TemperedSMCState(new.particles, new.weights.astype(dtype), lmbda)
                return new, {
                    "acceptance_rate": jnp.mean(info.update_info.acceptance_rate).astype(dtype),
                    "log_likelihood_increment": jnp.asarray(info.log_likelihood_increment, dtype),
                    "active": jnp.asarray(1, jnp.int32),
                }

            def stay(s: Any) -> tuple[Any, dict[str, Any]]:
                return s, {
                    "acceptance_rate": jnp.asarray(0.0, dtype),
                    "log_likelihood_increment": jnp.asarray(0.0, dtype),
                    "active": jnp.asarray(0, jnp.int32),
                }

            new, metrics = jax.lax.cond(state.tempering_param < 1.0, move, stay, state)
            metrics["lmbda"] = new.tempering_param
            metrics["ess"] = (1.0 / jnp.sum(new.weights**2)).astype(dtype)
            return new, used + metrics["active"], metrics, new.tempering_param

        state, used, metrics, lmbda = over_chains(one_chain, num_chains)(
            jax.random.split(key, num_chains),
            carry["state"],
            carry["start"],
            carry["tempering_steps"],
        )
        new = dict(carry, state=state, tempering_steps=used, lmbda=lmbda)
        mean = jax.tree_util.tree_map(lambda a: jnp.mean(a, axis=1), state.particles)
        return new, metrics, mean

    def resample(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        def one_chain(k: Any, state: Any) -> Any:
            idx = resampling.systematic(k, state.weights, num_samples)
            return jax.tree_util.tree_map(lambda a: a[idx], state.particles)

        draws = over_chains(one_chain, num_chains)(
            jax.random.split(key, num_chains), carry["state"]
        )
        first = jax.tree_util.tree_map(lambda a: a[:, 0], draws)
        return dict(carry, draws=draws), {"lmbda": carry["lmbda"]}, first

    def sample(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        i = carry["index"]
        position = jax.tree_util.tree_map(lambda a: a[:, i], carry["draws"])
        return dict(carry, index=i + 1), {"lmbda": carry["lmbda"]}, position

    return Sampler(
        num_chains=num_chains,
        carry=carry,
        phases=[
            Phase("tempering", params["max_tempering_steps"], collect=False),
            Phase("resample", 1, collect=False),
            Phase("sampling", num_samples, collect=True),
        ],
        steps={"tempering": temper, "resample": resample, "sampling": sample},
        step_meaning=(
            "tempering: one adaptive tempering step of every chain's particles while λ < 1, "
            "a reported no-op (active = 0) once λ = 1; resample: one step, systematic "
            "resampling of the weighted particles into num_samples draws; sampling: one "
            "resampled draw per chain"
        ),
        info={"num_particles": num_particles},
    )
