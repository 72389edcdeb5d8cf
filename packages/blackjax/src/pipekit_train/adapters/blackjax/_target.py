"""The task as what a sampler needs: a log density (or gradient estimator), starts, draws.

Checks that need no compilation come first (``check_target``): the shape of
``init_position`` against ``logdensity_fn`` (``jax.eval_shape``), MCLMC's
dimension floor, the stochastic-gradient samplers' dataset. Only then
``build_target`` makes arrays (the NumPyro bridge's ``initialize_model``
compiles the model).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipekit_train.adapters.bayes import (
    SCREEN_SALT,
    bind_data_size,
    check_init_values,
    check_task_on_args,
    check_task_on_data,
    init_to_value_jittered,
    log_density_from_model,
    minibatch_log_density_from_model,
    refuse_local_latents,
    screened_positions,
    starts_from,
)
from pipekit_train.errors import ConfigError

from ._mclmc import MIN_DIMENSIONS
from ._task import BlackjaxTask

__all__ = ["Target", "check_target", "build_target", "POSITION_SITE", "SG_SAMPLERS"]

#: The site name of a raw array position in the draws and the predictive op.
POSITION_SITE = "position"
SG_SAMPLERS = ("sgld", "sghmc")
#: The samplers whose NumPyro-task starts are screened by default (``init_strategy``).
SCREENED_SAMPLERS = ("nuts", "hmc", "mclmc")


@dataclass
class Target:
    """What the sampler runs on.

    Attributes:
        positions: the chains' starts, stacked on a leading chain axis.
        logdensity_fn: the full-data log density (``None`` for sgld / sghmc).
        grad_fn: the minibatch gradient estimator (sgld / sghmc only).
        postprocess: one chain's position → ``{site: draw}`` (constrained, deterministic
            sites included, for a NumPyro model).
    """

    positions: Any
    logdensity_fn: Callable[[Any], Any] | None
    grad_fn: Callable[[Any, Any], Any] | None
    postprocess: Callable[[Any], dict[str, Any]]


def _size(tree: Any) -> int:
    import jax

    return int(sum(np.prod(np.shape(leaf)) for leaf in jax.tree_util.tree_leaves(tree)))


def _scalar_of(fn: Callable[..., Any], args: tuple[Any, ...], name: str, hint: str) -> None:
    import jax

    try:
        # Through a fresh wrapper: JAX keeps eval_shape's trace keyed on the function, and one
        # made under this run's float64 broke the user's own later float32 calls of ``fn``
        # (a lax.mul dtype TypeError); the wrapper's trace dies with it.
        out = jax.eval_shape(lambda *a: fn(*a), *args)
    except Exception as exc:  # the user's function does not fit the position
        raise ConfigError(
            f"task.init_position does not fit task.{name}: calling it on a position of "
            f"shape {jax.tree_util.tree_map(np.shape, args[0])} failed with "
            f"{type(exc).__name__}: {exc}; {hint}",
            field="task.init_position",
        ) from exc
    if getattr(out, "shape", None) != ():
        raise ConfigError(
            f"task.{name} must return a scalar log density, got shape "
            f"{getattr(out, 'shape', type(out).__name__)} for task.init_position",
            field=f"task.{name}",
        )


def _check_init_values(sites: dict[str, Any] | None, values: Any) -> None:
    """``backend_options.init_values`` names latent sites of the NumPyro model, in their shapes
    and supports (bayes' ``check_init_values``, shared with numpyro-mcmc)."""
    if not values:
        return
    if sites is None:
        raise ConfigError(
            "backend_options.init_values starts the sites of a numpyro_task; a raw target "
            "starts at task.init_position",
            field="backend_options.init_values",
        )
    check_init_values(sites, values)


def _check_sg(
    task: BlackjaxTask,
    sampler: str,
    x: Any,
    y: Any,
    batch_size: int,
    extras: dict[str, Any],
    num_data: int | None = None,
) -> dict[str, Any] | None:
    """sgld / sghmc: a dataset to draw minibatches from, and a target split over its rows;
    the NumPyro model's sites (``None`` on the raw path). ``num_data``: the size of a
    streamed dataset, of which ``x`` / ``y`` are the first batch (``None``: ``x``'s rows)."""
    nt = task.numpyro_task
    if x is None:
        raise ConfigError(
            f"sampler {sampler!r} draws minibatches from TrainingLoop.dataset, which is "
            "missing; give dataset=(X, Y) or {'x': X, 'y': Y}",
            field="dataset",
        )
    n = int(np.shape(x)[0]) if num_data is None else num_data
    if batch_size > n:
        raise ConfigError(
            f"TrainingLoop.batch_size ({batch_size}) is larger than the dataset's {n} "
            f"rows: {sampler}'s minibatches are drawn from it; use batch_size <= {n}",
            field="batch_size",
        )
    if nt is not None:
        model = bind_data_size(
            nt.bound_model(),
            n,
            batch_size,
            backend=f"blackjax {sampler}",
            ordered=nt.ordered,
            streaming=num_data is not None,
        )
        sites = check_task_on_data(nt, x, y, model=model, extras=extras)
        refuse_local_latents(
            sites,
            n,
            batch_size,
            rows=int(np.shape(x)[0]),
            backend=f"blackjax {sampler}",
            streaming=num_data is not None,
        )
        return sites
    if task.logprior_fn is None or task.loglik_fn is None:
        raise ConfigError(
            f"sampler {sampler!r} needs BlackjaxTask(logprior_fn=..., loglik_fn=..., "
            "init_position=...): the prior and one datum's log-likelihood, which BlackJAX's "
            "grad_estimator scales by N over the minibatch (or a numpyro_task whose model "
            "takes N)",
            field="task.loglik_fn",
        )
    datum = {"x": np.asarray(x)[0], "y": None if y is None else np.asarray(y)[0]}
    _scalar_of(task.logprior_fn, (task.init_position,), "logprior_fn", "fix its shape")
    _scalar_of(
        task.loglik_fn,
        (task.init_position, datum),
        "loglik_fn",
        "loglik_fn(params, datum) gets one row {'x': x_i, 'y': y_i}",
    )
    return None


def check_target(
    task: BlackjaxTask,
    sampler: str,
    x: Any,
    y: Any,
    batch_size: int,
    init_values: dict[str, Any] | None = None,
    extras: dict[str, Any] | None = None,
    num_data: int | None = None,
    *,
    by_name: bool = False,
) -> dict[str, Any] | None:
    """Every check of the task against the sampler and data that compiles nothing; the
    NumPyro model's sites (``None`` on the raw path). ``num_data`` is a streamed dataset's
    size (``x`` / ``y`` then hold its first batch). ``by_name``: ``extras`` is all the data,
    given by the model's own argument names (``{}``: a model without data; no ``x`` / ``y``)."""
    nt = task.numpyro_task
    extras = dict(extras or {})
    if sampler in SG_SAMPLERS:
        sg_sites = _check_sg(task, sampler, x, y, batch_size, extras, num_data)
        _check_init_values(sg_sites, init_values)
        return sg_sites
    sites = None
    if nt is not None:
        if by_name:
            sites = check_task_on_args(nt, (), extras)
        elif x is None:
            raise ConfigError(
                "a numpyro_task is conditioned on TrainingLoop.dataset, which is missing; "
                "give the model's data by its argument names, dataset={'name': array, ...}, "
                "or dataset=(X, Y) for a model(x, y=None)",
                field="dataset",
            )
        else:
            sites = check_task_on_data(nt, x, y, extras=extras)
        dim = sum(
            int(np.prod(s["shape"]))
            for s in sites.values()
            if s["type"] == "sample" and not s["is_observed"]
        )
    else:
        if task.logdensity_fn is None:
            raise ConfigError(
                f"sampler {sampler!r} needs task.logdensity_fn (logprior_fn / loglik_fn serve "
                "only sgld and sghmc)",
                field="task.logdensity_fn",
            )
        _scalar_of(
            task.logdensity_fn,
            (task.init_position,),
            "logdensity_fn",
            "give one chain's start with the shape logdensity_fn expects",
        )
        dim = _size(task.init_position)
    _check_init_values(sites, init_values)
    if sampler == "mclmc" and dim < MIN_DIMENSIONS:
        raise ConfigError(
            f"sampler 'mclmc' needs a target of at least {MIN_DIMENSIONS} dimensions, this one "
            f"has {dim}; use sampler 'nuts' for a one-dimensional target",
            field="task.init_position" if nt is None else "task.numpyro_task",
        )
    return sites


def _as_sites(position: Any) -> dict[str, Any]:
    return dict(position) if isinstance(position, dict) else {POSITION_SITE: position}


def build_target(
    task: BlackjaxTask,
    sampler: str,
    x: Any,
    y: Any,
    num_chains: int,
    init_key: Any,
    batch_size: int,
    init_values: dict[str, Any] | None = None,
    extras: dict[str, Any] | None = None,
    *,
    init_jitter: float = 0.0,
    num_data: int | None = None,
    by_name: bool = False,
    screened: bool = False,
) -> Target:
    """The arrays and functions the sampler runs on (``check_target`` has passed).

    A NumPyro task's chains start from ``init_to_uniform`` draws, or at ``init_values``
    for the sites it names (``init_to_value``, uniform for the rest); on nuts / hmc with
    ``screened`` and no ``init_values``, each chain at the best of its draw and 16 more
    (``bayes.screened_positions``). With a streamed
    dataset ``x`` / ``y`` are its first batch and ``num_data`` its size N (the gradient's
    scale); the deterministic sites of the draws are then computed on that batch. With
    ``by_name`` the model takes no positional data, only ``extras`` as its keywords."""
    import jax
    import jax.numpy as jnp
    from numpyro.infer import init_to_value

    dtype = jnp.result_type(float)

    def stack(position: Any) -> Any:
        def leaf(a: Any) -> Any:
            a = jnp.asarray(a)
            a = a.astype(dtype) if jnp.issubdtype(a.dtype, jnp.floating) else a
            return jnp.broadcast_to(a, (num_chains, *a.shape))

        return jax.tree_util.tree_map(leaf, position)

    nt = task.numpyro_task
    kwargs = {k: jnp.asarray(v) for k, v in (extras or {}).items()}
    init_strategy = None
    if init_values:
        values = {k: jnp.asarray(v, dtype) for k, v in init_values.items()}
        init_strategy = (
            init_to_value_jittered(values=values, scale=init_jitter)
            if init_jitter > 0
            else init_to_value(values=values)
        )
    if nt is not None and sampler in SG_SAMPLERS:
        n = int(np.shape(x)[0]) if num_data is None else num_data
        model = bind_data_size(nt.bound_model(), n, batch_size, ordered=nt.ordered)
        with starts_from(init_values):
            minibatch = minibatch_log_density_from_model(
                model,
                jnp.asarray(x),
                None if y is None else jnp.asarray(y),
                batch_size,
                rng_key=init_key,
                num_chains=num_chains,
                init_strategy=init_strategy,
                kwargs=kwargs,
            )
        return Target(
            minibatch.init_position,
            None,
            jax.grad(minibatch.logdensity_fn),
            minibatch.postprocess_fn,
        )
    if nt is not None:
        with starts_from(init_values):
            bridge = log_density_from_model(
                nt.bound_model(),
                rng_key=init_key,
                num_chains=num_chains,
                init_strategy=init_strategy,
                model_kwargs=kwargs,
                model_args=()
                if by_name
                else (jnp.asarray(x), None if y is None else jnp.asarray(y)),
            )
        positions = bridge.init_position
        if screened and not init_values and sampler in SCREENED_SAMPLERS:
            positions, _ = screened_positions(
                bridge.logdensity_fn, positions, jax.random.fold_in(init_key, SCREEN_SALT)
            )
        return Target(positions, bridge.logdensity_fn, None, bridge.postprocess_fn)
    grad_fn = None
    if sampler in SG_SAMPLERS:
        from blackjax.sgmcmc.gradients import grad_estimator

        n = int(np.shape(x)[0]) if num_data is None else num_data
        grad_fn = grad_estimator(task.logprior_fn, task.loglik_fn, n)
    return Target(stack(task.init_position), task.logdensity_fn, grad_fn, _as_sites)
