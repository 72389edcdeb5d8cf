"""One name per sampler concept across ``numpyro-mcmc`` and ``blackjax``, the libraries'
own spellings accepted as aliases.

The canonical names are the ones both backends already shared or that Stan, PyMC and
NumPyro's NUTS agree on: ``target_accept`` (PyMC; NumPyro's ``target_accept_prob``),
``max_tree_depth`` (NumPyro and Stan's ``max_treedepth``; BlackJAX's ``max_num_doublings``).
An alias given alone is renamed; an alias and its canonical name both given, with
different values, is a ``ConfigError`` naming both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipekit_train.errors import ConfigError

__all__ = ["SAMPLER_ALIASES", "resolve_aliases"]

#: alias → canonical name, for every MCMC backend.
SAMPLER_ALIASES: dict[str, str] = {
    "target_accept_prob": "target_accept",
    "max_num_doublings": "max_tree_depth",
}


def resolve_aliases(
    raw: Mapping[str, Any], aliases: Mapping[str, str], backend: str
) -> dict[str, Any]:
    """``raw`` with every alias renamed to its canonical name (a new dict)."""
    out = dict(raw)
    for alias, canonical in aliases.items():
        if alias not in out:
            continue
        value = out.pop(alias)
        if canonical in out and out[canonical] != value:
            raise ConfigError(
                f"backend_options.{alias} ({value!r}) and backend_options.{canonical} "
                f"({out[canonical]!r}) are one option of {backend} under two names, with "
                f"different values; give only {canonical}",
                field=f"backend_options.{canonical}",
            )
        out[canonical] = value
    return out
