"""One name per sampler concept across ``numpyro-mcmc`` and ``blackjax``, the libraries'
own spellings accepted as aliases.

The canonical names are the ones both backends already shared or that Stan, PyMC and
NumPyro's NUTS agree on: ``target_accept`` (PyMC; NumPyro's ``target_accept_prob``),
``max_tree_depth`` (NumPyro and Stan's ``max_treedepth``; BlackJAX's ``max_num_doublings``).
An alias given alone is renamed; an alias and its canonical name both given, with
different values, is a ``ConfigError`` naming both (core's ``engine.resolve_aliases``,
re-exported here; the backends declare the aliases on their option specs).
"""

from __future__ import annotations

from pipekit_train.adapters._bayes_options import SAMPLER_ALIASES
from pipekit_train.engine import resolve_aliases

__all__ = ["SAMPLER_ALIASES", "resolve_aliases"]
