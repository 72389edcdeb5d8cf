"""The option specs and names the two MCMC backends share, importing no framework.

Kept outside ``pipekit_train.adapters.bayes`` (whose ``__init__`` imports NumPyro and JAX) so
that the light spec modules of ``numpyro-mcmc`` and ``blackjax``, which core's preflight
reads before a backend is imported, can declare them; ``bayes`` re-exports both.
"""

from __future__ import annotations

from pipekit_train.engine import OptionSpec

__all__ = ["SAMPLER_ALIASES", "INIT_JITTER_OPTION"]

#: alias → canonical name, for every MCMC backend.
SAMPLER_ALIASES: dict[str, str] = {
    "target_accept_prob": "target_accept",
    "max_num_doublings": "max_tree_depth",
}

#: ``init_jitter`` of both MCMC backends (``init_to_value_jittered``).
INIT_JITTER_OPTION = OptionSpec(
    "init_jitter",
    "float",
    0.0,
    "sd of each chain's own Normal jitter around init_values (unconstrained space)",
    low=0,
    what="a number >= 0 (0: every chain exactly at init_values)",
)
