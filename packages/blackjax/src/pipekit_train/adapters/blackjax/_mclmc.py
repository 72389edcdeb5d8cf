"""MCLMC that tunes itself: a Pathfinder start, BlackJAX's L / step-size tuner as the
driver's ``warmup`` phase, and draws a decoherence length apart.

Three phases, each a driver step or steps, so a kill anywhere resumes bit-identically:

- ``pathfinder`` (one step, ``warm_start: "pathfinder"``, the default): each chain moves from
  its (screened) start to one draw of its own Pathfinder approximation, and takes that
  approximation's covariance diagonal as its first preconditioner (``pathfinder_restart``).
  BlackJAX's tuner otherwise starts every chain with a unit preconditioner and a step of
  ``0.25 sqrt(d)``: on a posterior whose sds span 1e-3..1 (posteriordb's sblrc) its first
  stage spent its steps in transit and one chain came out with a preconditioner 1e4 too
  wide (decision 0214).
- ``warmup`` (one step): ``blackjax.mclmc_find_L_and_step_size`` from there, given
  ``num_steps = num_warmup / (frac_tune1 + frac_tune2 + frac_tune3)`` so it spends about
  ``num_warmup`` integrator steps; with ``num_warmup = 0`` the sampler starts from BlackJAX's
  own initial guesses (``L = sqrt(d)``, ``step_size = 0.25 sqrt(d)``). Then, with a dense
  metric (``dense_mass``; unset: up to ``DENSE_MAX_DIM`` dimensions), ``DENSE_ROUNDS``
  rounds of: ``num_warmup`` integrator steps measuring the chain's covariance
  (``._mclmc_metric``), and the tuner's step-size and L stages again with it as the
  preconditioner — a diagonal cannot undo a regression's -0.99 intercept-slope correlation,
  and seven posteriordb posteriors failed for that alone (decision 0214, amended). A kill
  during tuning redoes the tuning from its start, with the same key.
- ``sampling``: each draw is ``steps_per_draw`` MCLMC integrator steps of every chain; at
  the default (``None``) that is the tuned ``L / step_size`` rounded, at least 1 and at most
  ``MAX_STEPS_PER_DRAW``: one momentum decoherence length, so a draw costs about what a
  NUTS draw costs and ``num_samples`` draws are not one integrator step apart.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from pipekit_train.engine import Phase

from ._mclmc_metric import dense_metric, diagonal_metric
from ._pathfinder import pathfinder_restart
from ._sampler import Sampler, chain_count, over_chains

__all__ = [
    "mclmc",
    "bias_warnings",
    "MIN_DIMENSIONS",
    "MAX_STEPS_PER_DRAW",
    "ENERGY_ERROR_FACTOR",
    "DENSE_ROUNDS",
    "DENSE_MAX_DIM",
]

#: MCLMC's isokinetic dynamics need a target of at least two dimensions.
MIN_DIMENSIONS = 2
#: The most integrator steps one draw takes at ``steps_per_draw: None``.
MAX_STEPS_PER_DRAW = 64
#: Rounds of measuring each chain's covariance and tuning again with it (``dense_mass``).
DENSE_ROUNDS = 3
#: ``dense_mass`` unset: a dense metric up to this many dimensions, the diagonal above (the
#: kernel's ``O(d²)`` step, and a covariance ``num_warmup`` steps can estimate).
DENSE_MAX_DIM = 100


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
    from blackjax.adaptation.mclmc_adaptation import MCLMCAdaptationState
    from blackjax.util import pytree_size

    kernel = blackjax.mcmc.mclmc.build_kernel(desired_energy_var=params["desired_energy_var"])
    num_chains = chain_count(positions)
    one = jax.tree_util.tree_map(lambda a: a[0], positions)
    dim = pytree_size(one)
    dtype = jnp.result_type(float)
    keys = jax.random.split(init_key, num_chains)

    def init(p: Any, k: Any) -> Any:
        return blackjax.mcmc.mclmc.init(position=p, logdensity_fn=logdensity_fn, rng_key=k)

    # One compiled program, as the HMC family's start (._hmc): eager, each op of the density's
    # value and gradient would be compiled on its own.
    states = jax.jit(jax.vmap(init))(positions, keys)
    ones = jnp.ones((num_chains,), dtype)
    fixed = params["steps_per_draw"]
    carry = {
        "state": states,
        "L": ones * jnp.sqrt(dim).astype(dtype),
        "step_size": ones * (jnp.sqrt(dim) * 0.25).astype(dtype),
        "inverse_mass_matrix": jnp.ones((num_chains, dim), dtype),
        "steps_per_draw": jnp.full((num_chains,), fixed or 1, jnp.int32),
    }
    # no warmup, nothing measured: the unit diagonal as before
    dense = num_warmup > 0 and (
        dim <= DENSE_MAX_DIM if params["dense_mass"] is None else params["dense_mass"]
    )
    measure_steps = max(2 * dim, num_warmup)
    if dense:  # the sampling step's metric; without it, the tuned diagonal as before
        carry["metric"] = jax.vmap(diagonal_metric)(carry["inverse_mass_matrix"])
    fracs = params["frac_tune1"] + params["frac_tune2"] + params["frac_tune3"]
    tuner_steps = max(1, round(num_warmup / fracs)) if fracs > 0 else 1

    def restart(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        def one_chain(k: Any, state: Any) -> tuple[Any, Any, Any]:
            move_key, init_key = jax.random.split(k)
            position, diagonal, ok = pathfinder_restart(logdensity_fn, move_key, state.position)
            return init(position, init_key), jnp.asarray(diagonal, dtype), ok

        state, imm, ok = over_chains(one_chain, num_chains)(
            jax.random.split(key, num_chains), carry["state"]
        )
        metrics = {"logdensity": state.logdensity, "pathfinder_ok": ok}
        return dict(carry, state=state, inverse_mass_matrix=imm), metrics, state.position

    def find(state: Any, k: Any, start: Any, diagonal: bool) -> tuple[Any, Any, Any, Any]:
        """BlackJAX's tuner from ``start``; on a measured dense metric (``diagonal``
        False) without its stage 2, which would replace the metric by a diagonal."""
        new, p, _ = blackjax.mclmc_find_L_and_step_size(
            mclmc_kernel=kernel,
            num_steps=tuner_steps,
            state=state,
            rng_key=k,
            logdensity_fn=logdensity_fn,
            frac_tune1=params["frac_tune1"],
            frac_tune2=params["frac_tune2"] if diagonal else 0.0,
            frac_tune3=params["frac_tune3"],
            desired_energy_var=params["desired_energy_var"],
            diagonal_preconditioning=params["diagonal_preconditioning"] and diagonal,
            params=start,
        )
        L, eps = jnp.asarray(p.L, dtype), jnp.asarray(p.step_size, dtype)
        return new, L, eps, p.inverse_mass_matrix

    def tune(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        def one_chain(state: Any, k: Any, imm: Any) -> tuple[Any, Any]:
            sqrt_d = jnp.sqrt(dim).astype(dtype)
            start = MCLMCAdaptationState(sqrt_d, sqrt_d * 0.25, imm)
            state, L, eps, imm = find(state, k, start, diagonal=True)
            imm = jnp.broadcast_to(jnp.asarray(imm, dtype), (dim,))
            metric = None
            if dense:
                metric = diagonal_metric(imm)

                # measure the chain's covariance with what was tuned, then tune again with
                # it (L back to its first guess, in the metric's units). A chain still in
                # transit along a ridge measures only the part it crossed, so a round's
                # metric travels further than the last's (earn_height: R-hat 2.4 after two
                # rounds, 1.0003 after three). One compiled round, looped: unrolled, the
                # tuner would be compiled four times.
                def again(r: Any, acc: Any) -> Any:
                    state, metric, L, eps = acc
                    k_measure, k_tune = jax.random.split(jax.random.fold_in(k, r + 1))
                    metric, state = dense_metric(
                        kernel, logdensity_fn, state, k_measure, metric, L, eps, measure_steps
                    )
                    start = MCLMCAdaptationState(sqrt_d, eps, metric)
                    state, L, eps, _ = find(state, k_tune, start, diagonal=False)
                    return state, metric, L, eps

                state, metric, L, eps = jax.lax.fori_loop(
                    0, DENSE_ROUNDS, again, (state, metric, L, eps)
                )
            return state, (L, eps, imm, metric)

        state, (L, step_size, imm, metric) = over_chains(one_chain, num_chains)(
            carry["state"], jax.random.split(key, num_chains), carry["inverse_mass_matrix"]
        )
        n = _steps_per_draw(fixed, L, step_size)
        new = dict(
            carry, state=state, L=L, step_size=step_size, inverse_mass_matrix=imm, steps_per_draw=n
        )
        if dense:
            new["metric"] = metric
        metrics = {"L": L, "step_size": step_size, "logdensity": state.logdensity}
        return new, metrics, state.position

    def sample(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        def one_chain(k: Any, state: Any, L: Any, eps: Any, imm: Any, n: Any) -> tuple[Any, Any]:
            def move(i: Any, acc: Any) -> Any:
                s, e2, _ = acc
                s, info = kernel(jax.random.fold_in(k, i), s, logdensity_fn, imm, L, eps)
                return s, e2 + jnp.square(info.energy_change), info.energy_change

            zero = jnp.zeros((), dtype)
            s, e2, last = jax.lax.fori_loop(0, n, move, (state, zero, zero))
            return s, (e2 / n, last)

        state, (energy_sq, energy_change) = over_chains(one_chain, num_chains)(
            jax.random.split(key, num_chains),
            carry["state"],
            carry["L"],
            carry["step_size"],
            carry["metric"] if dense else carry["inverse_mass_matrix"],
            carry["steps_per_draw"],
        )
        metrics = {
            # the mean squared energy error per integrator step, per dimension: what the tuner
            # aimed at desired_energy_var; far above it, the draws are biased (the health line)
            "energy_error": energy_sq / dim,
            "energy_change": energy_change,
            "logdensity": state.logdensity,
            "step_size": carry["step_size"],
            "L": carry["L"],
            "steps_per_draw": carry["steps_per_draw"],
        }
        return dict(carry, state=state), metrics, state.position

    phases: list[Phase] = []
    steps: dict[str, Any] = {"warmup": tune, "sampling": sample}
    if params["warm_start"] == "pathfinder":
        phases.append(Phase("pathfinder", 1, collect=False))
        steps["pathfinder"] = restart
    if num_warmup:
        phases.append(Phase("warmup", 1, collect=False))
    phases.append(Phase("sampling", num_samples, collect=True))
    return Sampler(
        num_chains=num_chains,
        carry=carry,
        phases=phases,
        steps=steps,
        step_meaning=(
            "pathfinder: one step moving every chain to a draw of its Pathfinder "
            "approximation; warmup: one step running BlackJAX's whole L / step-size tuner "
            "(and, with a dense metric, the covariance rounds); "
            "sampling: steps_per_draw MCLMC integrator steps of every chain"
        ),
        info={
            "tuner_num_steps": tuner_steps if num_warmup else 0,
            # what dense_mass resolved to (unset: dense up to DENSE_MAX_DIM dimensions)
            "preconditioner": "dense" if dense else "diagonal",
        },
    )


def _steps_per_draw(fixed: int | None, L: Any, step_size: Any) -> Any:
    """Integrator steps per draw: ``fixed``, or ``L / step_size`` rounded into
    ``[1, MAX_STEPS_PER_DRAW]`` per chain."""
    if fixed:
        return jnp.full(jnp.shape(L), fixed, jnp.int32)
    n = jnp.round(L / step_size)
    n = jnp.where(jnp.isfinite(n), n, 1.0)
    return jnp.clip(n, 1, MAX_STEPS_PER_DRAW).astype(jnp.int32)


#: Mean energy error per dimension above this many times ``desired_energy_var``: the step
#: the tuner chose no longer holds where the chains sample, and the bias it was tuned to bound
#: is not bounded.
ENERGY_ERROR_FACTOR = 3.0


def bias_warnings(
    energy_error: Any, desired_energy_var: float, problems: list[str]
) -> tuple[list[str], str]:
    """What the health line says of unadjusted MCLMC's draws: warnings that they are biased,
    and the check's one-line summary for a clean run.

    MCLMC has no Metropolis correction: its draws follow the discretised dynamics, whose
    stationary law differs from the posterior by a bias the tuner bounds through the energy
    error per dimension (``desired_energy_var``). Two ways that bound fails, each named:
    the energy error measured over the draws (``energy_error``, chains × draws; the median
    draw's) far above the target, or chains that do not agree (``problems``: the R-hat / ESS
    / divergence warnings of the shared diagnostics), which for an unadjusted sampler means
    the draws are not the posterior's, not merely too few.
    """
    import numpy as np

    e = np.asarray(energy_error, dtype=float)
    # the median draw: a few draws' large errors (a funnel's neck) do not bias the rest, and
    # the tuner's own average down-weights them too
    measured = float(np.median(e)) if e.size else float("nan")
    ratio = measured / desired_energy_var
    out = []
    if not np.isfinite(measured) or ratio > ENERGY_ERROR_FACTOR:
        out.append(
            f"mclmc's draws are biased: the median draw's energy error per dimension is "
            f"{measured:.3g}, {ratio:.3g}x the desired_energy_var {desired_energy_var:g} the "
            "step size was tuned for (MCLMC is unadjusted: no Metropolis correction removes "
            "it) — fix: more num_warmup, a smaller desired_energy_var, or sampler 'nuts'"
        )
    if problems:
        out.append(
            "mclmc's draws are biased: the chains do not agree (the problems above), and an "
            "unadjusted sampler that does not mix samples the wrong distribution, not just "
            "too few draws of the right one — fix: sampler 'nuts' (Metropolis-adjusted), or "
            "more num_warmup and num_samples"
        )
    summary = (
        f"unadjusted MCLMC's energy error per dimension {measured:.2g} <= "
        f"{ENERGY_ERROR_FACTOR:g}x the desired {desired_energy_var:g}"
    )
    return out, summary
