"""The model → log-density bridge shared by the NumPyro and BlackJAX backends.

``numpyro.infer.util.initialize_model`` turns ``model(x, y)`` into a potential
(negative log density) over the *unconstrained* latent sites, a function that
maps unconstrained values back to constrained ones (with the deterministic
sites), and a valid starting point. BlackJAX samples ``logdensity_fn`` from
``init_position`` and reports ``postprocess_fn(z)``; NumPyro's own kernels are
built from the model directly but agree with this bridge site by site.

The minibatch form (``minibatch_log_density_from_model``) keeps the data an
argument (``initialize_model(dynamic_args=True)``), so a stochastic-gradient
sampler evaluates the log density of one minibatch at a time; the model's
``numpyro.plate("data", N, subsample_size=x.shape[0])`` scales it by N/B.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax

__all__ = [
    "LogDensity",
    "MinibatchLogDensity",
    "log_density_from_model",
    "minibatch_log_density_from_model",
]


@dataclass(frozen=True)
class LogDensity:
    """A model as a log density on unconstrained space.

    Attributes:
        logdensity_fn: ``z -> log p(z | data)`` (up to a constant; includes the
            log-Jacobians of the constraining transforms).
        potential_fn: ``z -> -logdensity_fn(z)`` (NumPyro's convention).
        postprocess_fn: ``z -> {site: constrained value}``, deterministic sites included.
        init_position: a valid unconstrained start, ``{site: array}`` (one chain),
            or with a leading chain axis when ``num_chains`` was given.
    """

    logdensity_fn: Callable[[Any], jax.Array]
    potential_fn: Callable[[Any], jax.Array]
    postprocess_fn: Callable[[Any], dict[str, jax.Array]]
    init_position: Any


def log_density_from_model(
    model: Callable[..., Any],
    x: Any = None,
    y: Any = None,
    *,
    rng_key: jax.Array | None = None,
    num_chains: int | None = None,
    init_strategy: Callable[..., Any] | None = None,
    model_kwargs: dict[str, Any] | None = None,
    model_args: tuple[Any, ...] | None = None,
) -> LogDensity:
    """Build the :class:`LogDensity` of ``model`` conditioned on ``(x, y)``.

    ``num_chains`` gives ``init_position`` a leading chain axis (one start per
    chain, from ``rng_key`` split ``num_chains`` ways). ``model_args`` replaces
    ``(x, y)`` as the model's positional arguments: ``()`` for data given by the model's
    own argument names (all in ``model_kwargs``; none for a model without data, the funnel).
    """
    from numpyro.infer import init_to_uniform
    from numpyro.infer.util import initialize_model

    key = jax.random.PRNGKey(0) if rng_key is None else rng_key
    if num_chains is not None:
        key = jax.random.split(key, num_chains)
    info = initialize_model(
        key,
        model,
        model_args=(x, y) if model_args is None else tuple(model_args),
        model_kwargs=model_kwargs or {},
        init_strategy=init_strategy or init_to_uniform,
        dynamic_args=False,
    )
    potential = info.potential_fn

    def logdensity_fn(z: Any) -> jax.Array:
        return -potential(z)

    return LogDensity(
        logdensity_fn=logdensity_fn,
        potential_fn=potential,
        postprocess_fn=info.postprocess_fn,
        init_position=info.param_info.z,
    )


@dataclass(frozen=True)
class MinibatchLogDensity:
    """A model as a log density on unconstrained space, evaluated one minibatch at a time.

    Attributes:
        logdensity_fn: ``(z, batch) -> log p(z) + N/B * log p(batch | z)`` for a batch
            ``{"x": x_b, "y": y_b}`` of B rows (log-Jacobians included); its expectation
            over uniformly drawn batches is the full-data log density.
        postprocess_fn: ``z -> {site: constrained value}`` on the full data.
        init_position: a valid unconstrained start per chain (leading chain axis).
    """

    logdensity_fn: Callable[[Any, Any], jax.Array]
    postprocess_fn: Callable[[Any], dict[str, jax.Array]]
    init_position: Any


def minibatch_log_density_from_model(
    model: Callable[..., Any],
    x: Any,
    y: Any,
    batch_size: int,
    *,
    rng_key: jax.Array,
    num_chains: int,
    init_strategy: Callable[..., Any] | None = None,
    kwargs: dict[str, Any] | None = None,
) -> MinibatchLogDensity:
    """Build the :class:`MinibatchLogDensity` of ``model`` on the dataset ``(x, y)``.

    ``model`` must scale its likelihood itself (``bind_data_size`` binds ``N``).
    Its data plate asks for a key to draw subsample indices it never uses (the
    batch is already ``x``); a fixed key serves it, hidden from the sample sites
    so every chain still starts from its own point (``init_strategy``, default
    ``init_to_uniform``, as :func:`log_density_from_model`). ``kwargs`` are the dataset's
    named arrays beyond ``x`` / ``y`` (per row: each batch carries its rows of them).
    """
    kwargs = dict(kwargs or {})
    names = tuple(kwargs)
    from numpyro import handlers
    from numpyro.infer import init_to_uniform
    from numpyro.infer.util import initialize_model

    keyed = handlers.seed(model, rng_seed=0, hide_types=["sample"])
    info = initialize_model(
        jax.random.split(rng_key, num_chains),
        keyed,
        model_args=(x[:batch_size], None if y is None else y[:batch_size]),
        model_kwargs={k: v[:batch_size] for k, v in kwargs.items()},
        init_strategy=init_strategy or init_to_uniform,
        dynamic_args=True,
    )
    potential, postprocess = info.potential_fn, info.postprocess_fn

    def logdensity_fn(z: Any, batch: Any) -> jax.Array:
        return -potential(batch["x"], batch.get("y"), **{k: batch[k] for k in names})(z)

    return MinibatchLogDensity(
        logdensity_fn=logdensity_fn,
        postprocess_fn=postprocess(x, y, **kwargs),
        init_position=info.param_info.z,
    )
