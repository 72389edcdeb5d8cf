"""The model's potential, built at the screened starts without NumPyro's own search.

Given starts, ``kernel.init(key, …, init_params=starts)`` (what ``MCMC.run(...,
init_params=starts)`` calls) still runs ``initialize_model``: an eager prototype trace under
``init_to_uniform`` and ``find_valid_initial_params``'s search for a start of its own, which
it then discards for the one given. Only the potential and the postprocessing it builds on
the way are kept. This module builds those two the way ``initialize_model`` does — its model
preparation (``param`` sites substituted, a default key, the plate check) and
``get_potential_fn`` on the transforms of a trace — from a trace taken *at* the first chain's
start, and the kernel takes the potential as its ``potential_fn``. The ``HMCState`` is the
same bits (the potential, the sampler's key stream and ``init_kernel`` are the same; tests
compare with ``MCMC.run``), without the search's eager operations and their compilations
(the uniform draws, a second evaluation of the potential: ~0.25 s of a cold eight-schools
run, and for vectorised chains the search's compiled ``lax.map``).

Both the trace here and ``kernel.init`` at the screened starts run with NumPyro's argument
and support checks off (``checked_by_the_screen``). Eagerly, each check is one more compiled
operation (~0.4 s of the same run); they cannot fail at these starts: the screen traced the
model with its data concrete, so the data's checks ran there (a failure makes the screen
give up, and NumPyro's own path runs with its checks), and kept a start only where the
potential energy and its gradient are finite, where every latent site's value is inside its
support (the check's ``where`` then returns the log density unchanged, to the bit). The NUTS
program itself is traced with the checks on, as ``MCMC.run``'s is.

``initialize_model``'s trace only feeds the potential through what is the same at any start:
the sites' supports (a support that depends on another site's value makes NumPyro replay
the model at every evaluation) and the values of ``param``/``mutable`` sites. A model with
those sites, an enumerated or a ``Delta`` latent site, or one that fails to trace here keeps
NumPyro's own path (``None``), whose errors and warnings are NumPyro's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

__all__ = ["ModelPotential", "checked_by_the_screen", "model_potential"]


@contextmanager
def checked_by_the_screen(active: bool = True) -> Iterator[None]:
    """NumPyro's distribution checks off for the block where ``active`` (the screen has made
    them at these starts, see the module's docstring); as they were afterwards."""
    if not active:
        yield
        return
    import numpyro

    with numpyro.validation_enabled(False):
        yield


class ModelPotential(NamedTuple):
    """The potential energy of the unconstrained sites and their postprocessing (constrained
    values and deterministic sites), both bound to the model's data."""

    potential_fn: Callable[[dict[str, Any]], Any]
    postprocess_fn: Callable[[dict[str, Any]], dict[str, Any]]
    #: the latent sites, by name: ``dense_mass=True`` is one block of all of them
    sites: tuple[str, ...]

    def dense_mass(self, dense_mass: Any) -> Any:
        """``dense_mass`` in the structural form ``HMC.init`` gives a bool for a model (one
        block of every site, sorted by name, or none); site groups as given."""
        if isinstance(dense_mass, bool):
            return [tuple(sorted(self.sites))] if dense_mass else []
        return dense_mass


def model_potential(
    model: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    start: dict[str, Any],
    key: Any,
) -> ModelPotential | None:
    """The potential and postprocessing ``initialize_model(key, model, ...)`` would build,
    traced at ``start`` (unconstrained values by site); None where NumPyro's path must run.

    ``key``: the key ``HMC.init`` hands ``initialize_model`` (its split of the chain's key),
    so a site the trace draws itself (a ``prng_key``, a plate's subsample) is drawn alike.
    """
    from numpyro import distributions as dist
    from numpyro.distributions.transforms import biject_to
    from numpyro.handlers import seed, substitute
    from numpyro.infer.util import (
        _get_model_transforms,
        _prepare_model_for_potential,
        get_potential_fn,
    )

    def at_start(site: dict[str, Any]) -> Any:
        if site["type"] == "sample" and not site["is_observed"] and site["name"] in start:
            return biject_to(site["fn"].support)(start[site["name"]])
        return None

    try:
        with checked_by_the_screen():
            traced = _get_model_transforms(
                substitute(seed(model, key), substitute_fn=at_start), args, kwargs
            )
    except Exception:  # noqa: BLE001 - NumPyro's own path then raises or warns as it would
        return None
    inv_transforms, replay_model, has_enumerate_support, trace = traced
    latent = {
        name for name, site in trace.items() if site["type"] == "sample" and not site["is_observed"]
    }
    if (
        has_enumerate_support
        or latent != set(start)
        or any(site["type"] in ("param", "mutable") for site in trace.values())
        or any(isinstance(trace[name]["fn"], dist.Delta) for name in latent)
    ):
        return None
    prepared = _prepare_model_for_potential(model, trace, enum=False)
    potential_gen, postprocess_gen = get_potential_fn(
        prepared,
        inv_transforms,
        replay_model=replay_model,
        enum=False,
        dynamic_args=True,
        model_args=args,
        model_kwargs=kwargs,
    )
    return ModelPotential(
        potential_gen(*args, **kwargs), postprocess_gen(*args, **kwargs), tuple(sorted(latent))
    )
