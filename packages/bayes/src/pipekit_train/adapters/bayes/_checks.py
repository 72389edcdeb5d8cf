"""Checks of a task against the data, by abstract tracing (nothing compiles)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipekit_train.errors import ConfigError, PipekitError

from ._data import check_binds
from ._model import model_sites
from ._task import NumpyroTask, check_model_keywords

__all__ = ["check_task_on_data", "check_task_on_args", "predictive_site_of", "likelihood_sites"]


def check_task_on_data(
    task: NumpyroTask,
    x: Any,
    y: Any,
    *,
    model: Any = None,
    extras: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Trace ``model(x, y, **extras)`` once (``model(x, **extras)`` when ``y`` is None);
    see :func:`check_task_on_args`.

    ``model`` overrides ``task.bound_model()`` (e.g. the minibatch-bound partial);
    ``extras`` are the dataset's named arrays beyond ``x`` / ``y``. Returns the sites, so
    callers need not trace again.
    """
    extras = dict(extras or {})
    check_model_keywords(task.model, extras, "TrainingLoop.dataset")  # type: ignore[arg-type]
    args = (x,) if y is None else (x, y)
    return check_task_on_args(task, args, extras, model=model)


def likelihood_sites(sites: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The observed sample sites that are distributions (``obs=``), not ``numpyro.factor``."""
    return [
        n
        for n, s in sites.items()
        if s["type"] == "sample" and s["is_observed"] and not s.get("is_factor")
    ]


def predictive_site_of(task: NumpyroTask, sites: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The site the predictive op draws: ``task.predictive_site`` when given, else the
    model's own observed site (its one ``numpyro.sample(..., obs=...)``); ``None`` when it
    observes nothing drawable (a ``numpyro.factor`` likelihood, or no data at all)."""
    if task.predictive_site is not None:
        return task.predictive_site if task.predictive_site in sites else None
    found = likelihood_sites(sites)
    return found[0] if len(found) == 1 else None


def check_task_on_args(
    task: NumpyroTask,
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    *,
    model: Any = None,
) -> dict[str, dict[str, Any]]:
    """Trace ``model(*args, **kwargs)`` once and check the sites against the task.

    ``task.predictive_site``, when given, must be an observed site — unless the likelihood
    is only ``numpyro.factor`` terms, which sample (the predictive op then says it cannot
    draw predictions). Without it the model's own observed site is used; a model observing
    several names one with ``predictive_site``. ``args`` is ``(x, y)`` (or ``(x,)``) in the
    ``(x, y)`` form, ``()`` for data given by the model's own argument names.
    """
    fn: Any = task.bound_model() if model is None else model
    positional = ("x", "y")[: len(args)]
    check_binds(fn, kwargs, "TrainingLoop.dataset", positional=positional)
    try:
        sites = model_sites(fn, None, None, kwargs, args=args)
    except PipekitError:
        raise
    except Exception as exc:  # the user's model fails on this data
        shapes = ", ".join(
            [f"{n} {getattr(a, 'shape', None)}" for n, a in zip(positional, args, strict=True)]
            + [f"{k} {getattr(v, 'shape', None)}" for k, v in kwargs.items()]
        )
        raise ConfigError(
            f"task.model failed when run on TrainingLoop.dataset ({shapes or 'no data'}): "
            f"{type(exc).__name__}: {exc}",
            field="task.model",
        ) from exc
    samples = {n: s for n, s in sites.items() if s["type"] == "sample"}
    observed = sorted(n for n, s in samples.items() if s["is_observed"])
    likelihoods = likelihood_sites(sites)
    site = task.predictive_site
    if site is None:
        if len(likelihoods) > 1:
            raise ConfigError(
                f"task.model observes {len(likelihoods)} sites {sorted(likelihoods)}; the "
                "predictive op draws one: name it with NumpyroTask.predictive_site",
                field="task.predictive_site",
            )
    elif site not in samples and observed and not likelihoods:
        pass  # a factor likelihood: it samples; the predictive op says it cannot draw
    elif site not in samples:
        raise ConfigError(
            f"NumpyroTask.predictive_site = {site!r} is not a sample site of the model; its "
            f"observed site(s): {observed or 'none'}, all sample sites: {sorted(samples)}",
            field="task.predictive_site",
        )
    elif likelihoods and not samples[site]["is_observed"]:
        raise ConfigError(
            f"NumpyroTask.predictive_site = {site!r} is a latent site, not observed: the model "
            f"does not condition it on the data (write numpyro.sample({site!r}, ..., obs=y)); "
            f"observed site(s): {observed or 'none'}",
            field="task.predictive_site",
        )
    if not any(s["type"] == "sample" and not s["is_observed"] for s in sites.values()):
        raise ConfigError(
            "task.model has no latent sample site: there is no posterior to infer",
            field="task.model",
        )
    return sites
