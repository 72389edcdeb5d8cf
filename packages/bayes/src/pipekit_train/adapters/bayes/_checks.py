"""Checks of a task against the data, by abstract tracing (nothing compiles)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipekit_train.errors import ConfigError, PipekitError

from ._model import model_sites
from ._task import NumpyroTask, check_model_keywords

__all__ = ["check_task_on_data"]


def check_task_on_data(
    task: NumpyroTask,
    x: Any,
    y: Any,
    *,
    model: Any = None,
    extras: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Trace ``model(x, y, **extras)`` once; require ``task.predictive_site`` to be its
    observed site — unless the likelihood is only ``numpyro.factor`` terms, which sample
    (the predictive op then says it cannot draw predictions).

    ``model`` overrides ``task.bound_model()`` (e.g. the minibatch-bound partial);
    ``extras`` are the dataset's named arrays beyond ``x`` / ``y``. Returns the sites, so
    callers need not trace again.
    """
    extras = dict(extras or {})
    check_model_keywords(task.model, extras, "TrainingLoop.dataset")  # type: ignore[arg-type]
    fn: Any = task.bound_model() if model is None else model
    try:
        sites = model_sites(fn, x, y, extras)
    except PipekitError:
        raise
    except Exception as exc:  # the user's model fails on this data
        raise ConfigError(
            f"task.model failed when run on TrainingLoop.dataset (x {getattr(x, 'shape', '?')}"
            f", y {getattr(y, 'shape', None)}): {type(exc).__name__}: {exc}",
            field="task.model",
        ) from exc
    samples = {n: s for n, s in sites.items() if s["type"] == "sample"}
    observed = sorted(n for n, s in samples.items() if s["is_observed"])
    site = task.predictive_site
    likelihoods = [n for n in observed if not samples[n].get("is_factor")]
    if site not in samples and observed and not likelihoods:
        pass  # a factor likelihood: it samples; the predictive op says it cannot draw
    elif site not in samples:
        raise ConfigError(
            f"NumpyroTask.predictive_site = {site!r} is not a sample site of the model; its "
            f"observed site(s): {observed or 'none'}, all sample sites: {sorted(samples)}",
            field="task.predictive_site",
        )
    if y is not None and site in samples and not samples[site]["is_observed"]:
        raise ConfigError(
            f"NumpyroTask.predictive_site = {site!r} is a latent site, not observed: the model "
            f"does not condition it on y (write numpyro.sample({site!r}, ..., obs=y)); "
            f"observed site(s): {observed or 'none'}",
            field="task.predictive_site",
        )
    if not any(s["type"] == "sample" and not s["is_observed"] for s in sites.values()):
        raise ConfigError(
            "task.model has no latent sample site: there is no posterior to infer",
            field="task.model",
        )
    return sites
