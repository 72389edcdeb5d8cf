"""``NumpyroTask``: one description of a Bayesian job, run unchanged by every Bayesian backend."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pipekit_train.errors import ConfigError

from ._data import takes_no_data
from ._guides import check_guide
from ._model import resolve_model

__all__ = ["NumpyroTask", "require_task", "check_model_keywords"]

_RESERVED = ("x", "y", "N")


def check_model_keywords(model: Callable[..., Any], names: Iterable[str], source: str) -> None:
    """``ConfigError`` unless ``model`` takes every keyword in ``names`` (or ``**kwargs``).

    ``source`` says where the names come from (``"TrainingLoop.dataset"``,
    ``"NumpyroTask.model_kwargs"``), for the message and the field.
    """
    names = sorted(names)
    if not names:
        return
    target = model.func if isinstance(model, functools.partial) else model
    try:
        params = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return
    missing = [n for n in names if n not in params]
    if missing:
        what = "named arrays" if source.endswith("dataset") else "keywords"
        raise ConfigError(
            f"{source} has the {what} {missing}, which task.model "
            f"{getattr(target, '__name__', 'model')}{inspect.signature(target)} does not take: "
            "every named array of the dataset and every model_kwargs entry reaches the model "
            f"as a keyword; add {', '.join(f'{n}=None' for n in missing)} to its signature "
            "(or drop them from the data)",
            field="dataset" if source.endswith("dataset") else "task.model_kwargs",
        )


def _int_at_least(value: Any, low: int, name: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ConfigError(
            f"NumpyroTask.{name} must be an integer >= {low}, got {value!r}",
            field=f"task.{name}",
        )


@dataclass(kw_only=True, eq=False)
class NumpyroTask:
    """A NumPyro model plus the inference settings the Bayesian backends read.

    There is no ``method`` field: ``numpyro-svi`` reads ``guide`` and ``loss``;
    ``numpyro-mcmc`` (and later ``blackjax``) read ``num_warmup``,
    ``num_samples`` and ``num_chains``; all read ``predictive_site`` and
    ``predictive_samples`` for the returned ``NumpyroPredictiveOp``.

    Args:
        model: a NumPyro model, or a ``'module:function'`` import string. The dataset
            reaches it by the model's own argument names (``{'at_bats': a, 'hits': h}`` →
            ``model(at_bats=a, hits=h)``; none for a model without data), or as
            ``model(x, y=None)`` from ``(X, Y)`` / ``{'x': X, 'y': Y}`` (see
            ``pipekit_train.adapters.bayes`` for the minibatch form with ``N``).
        guide: SVI guide: ``None`` (up to 200 latent values a full-rank Gaussian whose
            parameters are standardised by a Laplace fit at the mode,
            ``"AutoStandardizedMultivariateNormal"``; above, ``AutoNormal``), an autoguide
            name (``"AutoNormal"``, ``"AutoMultivariateNormal"``,
            ``"AutoLowRankMultivariateNormal"``, ``"AutoDelta"``,
            ``"AutoLaplaceApproximation"``) or a guide callable.
        loss: SVI objective, a ``numpyro.infer`` ELBO instance; ``None`` → ``Trace_ELBO()``.
        num_warmup: MCMC warmup (adaptation) iterations per chain.
        num_samples: MCMC draws kept per chain.
        num_chains: MCMC chains.
        predictive_site: the observed site the predictive op returns draws of; ``None``
            (default): the model's own (its one ``numpyro.sample(..., obs=...)`` site).
        predictive_samples: posterior draws used for predictions (SVI draws them
            from the guide; MCMC thins its draws to at most this many).
    """

    model: Callable[..., Any] | str
    guide: Any = None
    loss: Any = None
    num_warmup: int = 1000
    num_samples: int = 1000
    num_chains: int = 1
    predictive_site: str | None = None
    predictive_samples: int = 200
    model_kwargs: dict[str, Any] = field(default_factory=dict)
    ordered: bool = False

    def bound_model(self) -> Callable[..., Any]:
        """``model`` with ``model_kwargs`` bound (``functools.partial``; the model itself
        when there are none)."""
        model: Callable[..., Any] = self.model  # type: ignore[assignment]
        return functools.partial(model, **self.model_kwargs) if self.model_kwargs else model

    @property
    def needs_dataset(self) -> bool:
        """Whether the model needs data: false for one whose every argument has a default
        (the funnel, a prior predictive check), so ``TrainingLoop`` may omit ``dataset``."""
        return not takes_no_data(self.bound_model())

    def __post_init__(self) -> None:
        self.model = resolve_model(self.model, "task.model")
        check_guide(self.guide)
        _int_at_least(self.num_warmup, 0, "num_warmup")
        _int_at_least(self.num_samples, 1, "num_samples")
        _int_at_least(self.num_chains, 1, "num_chains")
        _int_at_least(self.predictive_samples, 1, "predictive_samples")
        if self.predictive_site is not None and (
            not isinstance(self.predictive_site, str) or not self.predictive_site
        ):
            raise ConfigError(
                "NumpyroTask.predictive_site must be the name of the model's observed site "
                f"(e.g. 'obs') or None (the model's own), got {self.predictive_site!r}",
                field="task.predictive_site",
            )
        if not isinstance(self.ordered, bool):
            raise ConfigError(
                f"NumpyroTask.ordered must be true or false, got {self.ordered!r}",
                field="task.ordered",
            )
        self._check_model_kwargs()
        if self.loss is not None and not callable(getattr(self.loss, "loss", None)):
            raise ConfigError(
                "NumpyroTask.loss must be a numpyro.infer ELBO (Trace_ELBO(), "
                f"TraceMeanField_ELBO(), …) or None; got {type(self.loss).__name__}",
                field="task.loss",
            )

    def _check_model_kwargs(self) -> None:
        kw = self.model_kwargs
        if not isinstance(kw, dict) or not all(isinstance(k, str) for k in kw):
            raise ConfigError(
                "NumpyroTask.model_kwargs must map keyword names to values, e.g. "
                f"{{'prior_scale': 2.5}}; got {kw!r}",
                field="task.model_kwargs",
            )
        clash = sorted(set(kw) & set(_RESERVED))
        if clash:
            raise ConfigError(
                f"NumpyroTask.model_kwargs names {clash}, which the backends pass themselves "
                "(x, y: the data; N: the minibatch size); drop them from model_kwargs",
                field="task.model_kwargs",
            )
        try:
            json.dumps(kw)
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"NumpyroTask.model_kwargs must hold JSON values (numbers, strings, lists, "
                f"dicts), so YAML can give them and a saved op records them; {exc}. Give "
                "per-row arrays as named arrays of the dataset instead",
                field="task.model_kwargs",
            ) from exc
        check_model_keywords(self.model, kw, "NumpyroTask.model_kwargs")  # type: ignore[arg-type]


def require_task(loop: Any, backend: str) -> NumpyroTask:
    """The loop's ``NumpyroTask``, or a ``ConfigError`` saying how to give one.

    The Bayesian backends are task-first: ``loss=`` alone names no model.
    """
    task = loop.task
    if isinstance(task, NumpyroTask):
        return task
    if task is None:
        given = f" (loss={loop.loss!r} was given)" if loop.loss is not None else ""
        raise ConfigError(
            f"the {backend} backend needs task=NumpyroTask(model=...){given}; a loss names no "
            "probabilistic model. Write model(x, y=None) with NumPyro primitives and pass "
            "TrainingLoop(task=NumpyroTask(model=model), ...)",
            field="task",
        )
    raise ConfigError(
        f"the {backend} backend needs TrainingLoop.task to be a "
        f"pipekit_train.adapters.bayes.NumpyroTask; got {type(task).__name__}",
        field="task",
    )
