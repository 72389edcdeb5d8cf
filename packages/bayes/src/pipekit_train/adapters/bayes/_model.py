"""What a NumPyro model must look like, and how it is named on disk.

A model is a plain NumPyro function of its data. Given ``TrainingLoop.dataset`` as a dict
(other than ``{'x': X, 'y': Y}``) it is called by its own argument names, as NumPyro's own
examples write ``mcmc.run(key, at_bats, hits=hits)``; a model with no data (the funnel) is
called with none. In the ``(X, Y)`` / ``{'x': X, 'y': Y}`` form it is ``model(x, y=None)``.
The observed site is the model's own ``numpyro.sample(..., obs=...)`` (or
``predictive_site``); called without its observations the model samples that site, which
is how posterior predictions are made.

For minibatch SVI a model may take a third argument ``N`` (the full data size)
and scale its likelihood with ``numpyro.plate("data", N, subsample_size=x.shape[0])``.
Bind ``N`` statically with ``functools.partial(model, N=len(x_train))``; without it
(``N=None``) the plate covers the batch given, which is the full data for MCMC.

Every other named array of the dataset (a group index ``g``, say) reaches the model as
the keyword of its name, ``model(x, y, g=...)``; ``NumpyroTask.model_kwargs`` adds static
keywords (hyper-parameters) the same way.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from pipekit_train.errors import ConfigError
from pipekit_train.operator import is_import_string, resolve_import_string

__all__ = [
    "bind_data_size",
    "refuse_local_latents",
    "model_subsamples",
    "resolve_callable",
    "model_import_string",
    "resolve_model",
    "model_sites",
    "is_factor_site",
]


def resolve_callable(value: Any, field: str, expected: str) -> Any:
    """``value`` itself, or the object a ``'module:attr'`` import string names (``None`` stays).

    How a YAML file gives the Bayesian tasks their functions (a model, a log density):
    core's ``resolve_import_string`` imports the code the user named. ``expected`` says what the
    field takes, for the messages.
    """
    if isinstance(value, str):
        if not is_import_string(value):
            raise ConfigError(
                f"{field} is the string {value!r}; give {expected} or an import string "
                "'package.module:function'",
                field=field,
            )
        try:
            value = resolve_import_string(value)
        except (ImportError, AttributeError, ValueError) as exc:
            raise ConfigError(
                f"{field}: cannot import {value!r} ({type(exc).__name__}: {exc}); is the "
                "module on PYTHONPATH?",
                field=field,
            ) from exc
    if value is not None and not callable(value):
        raise ConfigError(
            f"{field} must be {expected}; got {type(value).__name__}",
            field=field,
        )
    return value


def resolve_model(model: Any, field: str) -> Callable[..., Any]:
    """``model`` itself, or the object a ``'module:attr'`` string names."""
    expected = "a NumPyro model (a function of its data, e.g. model(x, y=None))"
    if model is None:
        raise ConfigError(f"{field} must be {expected}; got None", field=field)
    resolved: Callable[..., Any] = resolve_callable(model, field, expected)
    return resolved


def model_import_string(model: Callable[..., Any]) -> str | None:
    """``'module:qualname'`` that imports back to ``model``, or ``None`` if none does.

    A ``functools.partial`` is named by its function; its bound keywords are
    recorded separately (see ``partial_kwargs``).
    """
    target = model.func if isinstance(model, functools.partial) else model
    module = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", None)
    if not module or not qualname or "<" in qualname or module == "__main__":
        return None
    name = f"{module}:{qualname}"
    try:
        if resolve_import_string(name) is not target:
            return None
    except Exception:  # noqa: BLE001 - any failure means "not importable by name"
        return None
    return name


def partial_kwargs(model: Callable[..., Any]) -> dict[str, Any]:
    """The keywords a ``functools.partial`` model binds (``{}`` for a plain function)."""
    if isinstance(model, functools.partial):
        if model.args:
            raise ConfigError(
                "task.model: bind a model's extra arguments by keyword "
                "(functools.partial(model, N=100)), not by position",
                field="task.model",
            )
        return dict(model.keywords)
    return {}


def bind_data_size(
    model: Callable[..., Any],
    n: int,
    batch_size: int,
    *,
    backend: str = "numpyro-svi",
    ordered: bool = False,
    streaming: bool = False,
) -> Callable[..., Any]:
    """``model`` with ``N=n`` bound when it takes ``N``, so each minibatch counts N/B times.

    Shared by the minibatch backends (``numpyro-svi``, blackjax's ``sgld`` / ``sghmc``):
    the model's ``numpyro.plate("data", N, subsample_size=x.shape[0])`` then scales the
    likelihood of a batch of B rows to the whole dataset. A model without ``N`` is only
    accepted when every batch is the whole dataset; an ``N`` the user bound is kept.
    A model declared ``ordered`` (``NumpyroTask.ordered``: its likelihood depends on the
    order of the rows, a time series or an HMM) is refused minibatches: a subsample of its
    rows is not a smaller version of the same likelihood. ``streaming``: the data is a
    stream of ``n`` examples (``backend_options.num_data``), which only minibatches read,
    so the fixes say to give the data map-style instead of a full batch.
    """
    full = f"give the data map-style with batch_size={n}" if streaming else f"set batch_size={n}"
    if ordered and batch_size < n:
        raise ConfigError(
            f"NumpyroTask.ordered is true (the likelihood depends on the order of the rows) but "
            f"TrainingLoop.batch_size ({batch_size}) is smaller than the dataset ({n} rows): "
            f"{backend} would fit random subsets of rows as if they were the series. "
            f"{full[0].upper()}{full[1:]} (full batch, never shuffled)",
            field="task.ordered",
        )
    try:
        takes_n = "N" in inspect.signature(model).parameters
    except (TypeError, ValueError):
        takes_n = False
    if isinstance(model, functools.partial) and "N" in model.keywords:
        return model
    if takes_n:
        return functools.partial(model, N=n)
    if batch_size < n:
        raise ConfigError(
            f"TrainingLoop.batch_size ({batch_size}) is smaller than the dataset ({n} rows) but "
            f"task.model takes no N, so each {backend} minibatch's likelihood would count only "
            f"{batch_size} points. Write model(x, y=None, N=None) with "
            'numpyro.plate("data", N, subsample_size=x.shape[0]) around the likelihood, or '
            f"{full}",
            field="task.model",
        )
    return model


def refuse_local_latents(
    sites: Mapping[str, Mapping[str, Any]],
    n: int,
    batch_size: int,
    *,
    rows: int,
    backend: str,
    streaming: bool = False,
) -> None:
    """Refuse a latent site inside a plate that the backend's minibatches subsample.

    ``sites`` were traced (:func:`model_sites`) on ``rows`` rows of the data (a batch, or all
    of it); the minibatch plate is the one whose ``subsample_size`` is that row count
    (``subsample_size=x.shape[0]``, the convention :func:`bind_data_size` names).

    With minibatches (``batch_size < n``) the model's ``numpyro.plate("data", N,
    subsample_size=x.shape[0])`` draws its own random row indices, which are not the rows of
    the batch: a latent site inside it (one value per row, a *local* latent) would be fitted
    to other rows' data, and its guide could not be drawn on the full data at the end (the
    guide's plate subsamples the batch's size again; NumPyro's ``Predictive`` then fails on
    the shapes). NumPyro's own form for local latents gives the model the full data and
    indexes it by the plate's indices, which is a full-batch run here.
    """
    if batch_size >= n:
        return
    minibatch = {
        name for name, s in sites.items() if s["type"] == "plate" and s.get("subsample") == rows
    }
    local: dict[str, str] = {}  # latent site -> the minibatch plate it sits in
    for name, s in sorted(sites.items()):
        if s["type"] == "sample" and not s["is_observed"] and not s.get("is_factor"):
            inside = sorted(minibatch.intersection(s.get("plates", ())))
            if inside:
                local[name] = inside[0]
    if not local:
        return
    names = sorted(local)
    plate = local[names[0]]
    full = f"give the data map-style with batch_size={n}" if streaming else f"set batch_size={n}"
    raise ConfigError(
        f"task.model has latent site(s) {names} inside the plate {plate!r}, which {backend}'s "
        f"minibatches subsample (TrainingLoop.batch_size {batch_size} of {n} rows): the plate "
        f"draws its own row indices, not the batch's rows, so each of these local latents "
        f"would be fitted to other rows' data, and the guide could not be drawn on the full "
        f"data at the end. {full[0].upper()}{full[1:]} (the full batch, one value per row; to "
        f"subsample, do it inside the model as NumPyro does: with numpyro.plate({plate!r}, "
        f"len(x), subsample_size=B) as idx: ... obs=y[idx]), or move the site(s) out of the "
        f"plate (a global latent)",
        field="task.model",
    )


def model_subsamples(
    sites: Mapping[str, Mapping[str, Any]], rows: int | None
) -> tuple[str, int, int] | None:
    """``(plate, size, subsample_size)`` of a plate the model subsamples by itself, or None.

    A plate whose ``subsample_size`` is below its size and is not the minibatch convention's
    (``subsample_size`` = the ``rows`` the model was traced on): NumPyro's own subsampling,
    ``with numpyro.plate("data", len(x), subsample_size=B) as idx``, where each evaluation of
    the model's density draws its own indices.
    """
    for name, s in sorted(sites.items()):
        size, subsample = s.get("size"), s.get("subsample")
        if s["type"] != "plate" or size is None or subsample is None:
            continue
        if subsample < size and subsample != rows:
            return name, size, subsample
    return None


def _plate_sizes(site: Mapping[str, Any]) -> dict[str, int | None]:
    """A plate site's ``{"size", "subsample"}`` (its ``subsample_size``) as numbers; None:
    not a plate, none given, or traced, so not a row count the checks can compare."""
    if site["type"] != "plate":
        return {"size": None, "subsample": None}
    args = (*site.get("args", ()), None, None)
    return {"size": _count(args[0]), "subsample": _count(args[1])}


def _count(v: Any) -> int | None:
    """``v`` as an int, or None (none given, or traced)."""
    try:
        return None if v is None else int(v)
    except (TypeError, ValueError):
        return None


def is_factor_site(site: Mapping[str, Any]) -> bool:
    """Whether a traced sample site is a ``numpyro.factor`` (a ``Unit`` distribution)."""
    from numpyro.distributions import Unit

    return isinstance(site.get("fn"), Unit)


def _support(site: Mapping[str, Any]) -> Any:
    """A latent sample site's support constraint (its bounds may be traced values), else None."""
    if site["type"] != "sample" or site.get("is_observed"):
        return None
    try:
        return site["fn"].support
    except Exception:  # noqa: BLE001 - a distribution without one: nothing to check against
        return None


def model_sites(
    model: Callable[..., Any],
    x: Any,
    y: Any,
    kwargs: Mapping[str, Any] | None = None,
    *,
    args: tuple[Any, ...] | None = None,
) -> dict[str, dict[str, Any]]:
    """Site name → ``{"type", "is_observed", "is_factor", "shape", "support", "plates",
    "size", "subsample"}``, traced abstractly (nothing compiles); ``kwargs`` are the model's keyword
    arrays. ``support`` is a latent sample site's NumPyro constraint (``None`` otherwise), for
    ``check_init_values``; ``plates`` the names of the plates a site sits in; ``size`` and
    ``subsample`` a plate site's size and ``subsample_size`` (``None``: none, or not a
    number), for :func:`refuse_local_latents` and :func:`model_subsamples`.
    ``args`` replaces ``(x, y)`` as the positional arguments (``()`` for a model given its
    data by name, or none at all).

    The model is run under ``jax.eval_shape`` with NumPyro's ``trace``, ``seed`` and
    ``substitute`` handlers, so a failure here is the user's model failing on the data.
    """
    import jax
    from numpyro import handlers
    from numpyro.infer import init_to_uniform

    found: dict[str, dict[str, Any]] = {}

    def run(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
        # Latent values from init_to_uniform, as initialize_model does: improper priors
        # (ImproperUniform) cannot be sampled.
        seeded = handlers.seed(model, jax.random.PRNGKey(0))
        fn = handlers.substitute(seeded, substitute_fn=init_to_uniform)
        tr = handlers.trace(fn).get_trace(*args, **kwargs)
        for name, site in tr.items():
            found[name] = {
                "type": site["type"],
                "is_observed": bool(site.get("is_observed", False)),
                "is_factor": site["type"] == "sample" and is_factor_site(site),
                "shape": tuple(getattr(site.get("value"), "shape", ())),
                "support": _support(site),
                "plates": tuple(f.name for f in site.get("cond_indep_stack") or ()),
                **_plate_sizes(site),
            }
        return 0

    jax.eval_shape(run, (x, y) if args is None else tuple(args), dict(kwargs or {}))
    return found
