"""NUTS and HMC with Stan's window adaptation as the driver's ``warmup`` phase.

``blackjax.window_adaptation(...).run`` runs the whole warmup in one call, so a
kill during it would redo all of it. This module builds the same warmup from
BlackJAX's pieces — ``window_adaptation.base`` (the init / update / final of
the dual-averaging step size and the Welford mass matrix) and
``build_schedule`` (Stan's fast / slow windows) — one warmup iteration per driver
step, so warmup is chunked, checkpointed and resumed like sampling. Each chain
adapts its own step size and mass matrix (chains are vmapped). The adapted
values sit in the carry (traced), in warmup and in sampling alike.
"""

from __future__ import annotations

import warnings
from typing import Any

import jax
import jax.numpy as jnp

from pipekit_train.engine import Phase

from ._pathfinder import pathfinder_restart
from ._sampler import Sampler, chain_count, over_chains

__all__ = ["hmc_family"]


def _adaptation(dense: bool, target: float) -> tuple[Any, Any, Any]:
    from blackjax.adaptation import window_adaptation

    with warnings.catch_warnings():
        # base() is deprecated in favour of the one-call run(); it is the only public
        # form of the per-step update (pinned: blackjax < 1.8, see
        # docs/decisions/0137-blackjax-warmup-from-pieces.md).
        warnings.simplefilter("ignore", DeprecationWarning)
        return window_adaptation.base(not dense, target_acceptance_rate=target)


def hmc_family(
    name: str,
    logdensity_fn: Any,
    positions: Any,
    params: dict[str, Any],
    num_warmup: int,
    num_samples: int,
) -> Sampler:
    """The ``nuts`` or ``hmc`` sampler on ``positions`` (chains stacked on axis 0)."""
    import blackjax
    from blackjax.adaptation.window_adaptation import build_schedule

    if name == "nuts":
        kernel = blackjax.nuts.build_kernel()
        extra = {"max_num_doublings": params["max_tree_depth"]}
    else:
        kernel = blackjax.hmc.build_kernel()
        extra = {"num_integration_steps": params["num_integration_steps"]}
    adapt_init, adapt_update, adapt_final = _adaptation(
        params["dense_mass"], params["target_accept"]
    )
    step_size0 = params["step_size"]
    num_chains = chain_count(positions)

    def start(p: Any) -> tuple[Any, Any]:
        return blackjax.mcmc.hmc.init(p, logdensity_fn), adapt_init(p, step_size0)

    # One compiled program: run eagerly, the density's value and gradient at the start are
    # dispatched op by op, each op compiled on its own (~2 s of a cold run's ~6 s, measured).
    states, adapt = jax.jit(jax.vmap(start))(positions)
    carry = {
        "state": states,
        "adapt": adapt,
        "step_size": jnp.asarray(adapt.step_size),
        "inverse_mass_matrix": adapt.inverse_mass_matrix,
        "i": jnp.zeros((), jnp.int32),
    }
    schedule = build_schedule(num_warmup) if num_warmup > 0 else None

    def chains(fn: Any) -> Any:
        return over_chains(fn, num_chains)

    def move(key: Any, state: Any, step_size: Any, imm: Any) -> tuple[Any, Any]:
        return kernel(key, state, logdensity_fn, step_size, imm, **extra)

    def stats(info: Any, step_size: Any) -> dict[str, Any]:
        out = {
            "acceptance_rate": info.acceptance_rate,
            "diverging": info.is_divergent,
            "energy": info.energy,
            "step_size": step_size,
            "num_integration_steps": info.num_integration_steps,
        }
        if name == "nuts":
            out["tree_depth"] = info.num_trajectory_expansions
        return out

    def warmup(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        keys = jax.random.split(key, num_chains)
        a = carry["adapt"]
        state, info = chains(move)(keys, carry["state"], a.step_size, a.inverse_mass_matrix)
        stage = schedule[carry["i"]]  # type: ignore[index]
        new_a = chains(lambda s, p, r: adapt_update(s, (stage[0], stage[1]), p, r))(
            a, state.position, info.acceptance_rate
        )
        step_size, imm = chains(adapt_final)(new_a)
        new = {
            "state": state,
            "adapt": new_a,
            # The final (averaged) step size and mass matrix, in force from sampling on.
            "step_size": step_size,
            "inverse_mass_matrix": imm,
            "i": carry["i"] + 1,
        }
        return new, stats(info, a.step_size), state.position

    def sample(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        keys = jax.random.split(key, num_chains)
        step_size = carry["step_size"]
        state, info = chains(move)(keys, carry["state"], step_size, carry["inverse_mass_matrix"])
        new = dict(carry, state=state, i=carry["i"] + 1)
        return new, stats(info, step_size), state.position

    phases = [Phase("warmup", num_warmup, collect=False)] if num_warmup else []
    phases.append(Phase("sampling", num_samples, collect=True))
    steps: dict[str, Any] = {"warmup": warmup, "sampling": sample}
    if params["warm_start"] == "pathfinder":
        phases.insert(0, Phase("pathfinder", 1, collect=False))
        steps["pathfinder"] = _pathfinder_start(logdensity_fn, num_chains, stats)
    return Sampler(
        num_chains=num_chains,
        carry=carry,
        phases=phases,
        steps=steps,
        step_meaning=(
            f"one {name.upper()} transition of every chain (warmup: plus one window-adaptation "
            "update of its step size and mass matrix)"
        ),
    )


def _pathfinder_start(logdensity_fn: Any, num_chains: int, stats: Any) -> Any:
    """The ``pathfinder`` phase (one step): each chain restarts from one draw of its own
    Pathfinder approximation (``approximate`` from the chain's start, then ``sample``; the
    start kept where the fit fails, ``pathfinder_restart``)."""
    import blackjax

    def restart(key: Any, state: Any) -> Any:
        position, _, _ = pathfinder_restart(logdensity_fn, key, state.position)
        return blackjax.mcmc.hmc.init(position, logdensity_fn)

    def step(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        state = over_chains(restart, num_chains)(jax.random.split(key, num_chains), carry["state"])
        metrics = {"logdensity": state.logdensity}
        return dict(carry, state=state), metrics, state.position

    return step
