"""BlackJAX run directly, as its quickstart writes it, and the MCSE yardstick the examples'
tests compare pipekit's draws with.

``direct_nuts`` is the quickstart's own code: ``blackjax.window_adaptation(blackjax.nuts,
logdensity).run`` from the initial position, then its ``inference_loop`` (a ``lax.scan`` of
``blackjax.nuts(logdensity, **parameters).step``), in float64 as pipekit's default, with one
adaptation and one loop per chain (vmapped, as BlackJAX's multiple-chains how-to does).
Pipekit draws its keys its own way (``fold_in(PRNGKey(seed), step)``), so the two runs are
independent chains on one posterior: they agree in MCSE units, not in bits.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

import jax
import numpy as np

from pipekit_train.adapters.bayes import diagnostics


def inference_loop(rng_key: Any, kernel: Any, initial_state: Any, num_samples: int) -> Any:
    """The quickstart's loop: ``lax.scan`` of the kernel over ``num_samples`` keys."""

    def one_step(state: Any, key: Any) -> tuple[Any, Any]:
        state, _ = kernel(key, state)
        return state, state

    keys = jax.random.split(rng_key, num_samples)
    _, states = jax.lax.scan(one_step, initial_state, keys)
    return states


def direct_nuts(
    logdensity: Any,
    initial_position: Any,
    *,
    seed: int,
    num_warmup: int,
    num_samples: int,
    num_chains: int = 1,
    x64: bool = True,
) -> dict[str, np.ndarray]:
    """Draws ``{site: (chains, draws, ...)}`` of the quickstart's window adaptation + NUTS
    (a non-dict position is the site ``"position"``)."""
    import blackjax

    def one_chain(key: Any) -> Any:
        warmup = blackjax.window_adaptation(blackjax.nuts, logdensity)
        warmup_key, sample_key = jax.random.split(key)
        (state, parameters), _ = warmup.run(warmup_key, initial_position, num_steps=num_warmup)
        kernel = blackjax.nuts(logdensity, **parameters).step
        return inference_loop(sample_key, kernel, state, num_samples).position

    with jax.enable_x64(True) if x64 else contextlib.nullcontext():
        keys = jax.random.split(jax.random.key(seed), num_chains)
        positions = jax.jit(jax.vmap(one_chain))(keys)
        out = jax.tree_util.tree_map(np.asarray, positions)
    return out if isinstance(out, dict) else {"position": out}


def mcse_gaps(
    ours: dict[str, np.ndarray], theirs: dict[str, np.ndarray]
) -> dict[str, dict[str, float]]:
    """Per scalar parameter (``site`` or ``site[i]``): the difference of the two posterior
    means in units of their combined MCSE, ``|m1 - m2| / sqrt(mcse1^2 + mcse2^2)`` (MCSE as
    ArviZ computes it, in NumPy), and the ratio of their sds."""
    out: dict[str, dict[str, float]] = {}
    for site, a in theirs.items():
        mine = np.asarray(ours[site])
        a = np.asarray(a)
        flat_a = a.reshape(a.shape[:2] + (-1,))
        flat_b = mine.reshape(mine.shape[:2] + (-1,))
        for i in range(flat_a.shape[-1]):
            name = site if flat_a.shape[-1] == 1 and a.ndim == 2 else f"{site}[{i}]"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # R-hat of one chain
                d = diagnostics({"a": flat_a[..., i], "b": flat_b[..., i]})["sites"]
            gap = abs(d["a"]["mean"] - d["b"]["mean"])
            out[name] = {
                "z": float(gap / np.hypot(d["a"]["mcse_mean"], d["b"]["mcse_mean"])),
                "sd_ratio": float(d["b"]["sd"] / d["a"]["sd"]),
            }
    return out
