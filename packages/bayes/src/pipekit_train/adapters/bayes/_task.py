"""``NumpyroTask``: one description of a Bayesian job, run unchanged by every Bayesian backend."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pipekit_train.errors import ConfigError

from ._guides import check_guide
from ._model import check_model_signature, resolve_model

__all__ = ["NumpyroTask", "require_task"]


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
        model: ``model(x, y=None)`` (see ``pipekit_train.adapters.bayes`` for the
            minibatch form with ``N``), or a ``'module:function'`` import string.
        guide: SVI guide: ``None`` (AutoNormal), an autoguide name
            (``"AutoNormal"``, ``"AutoMultivariateNormal"``,
            ``"AutoLowRankMultivariateNormal"``, ``"AutoDelta"``,
            ``"AutoLaplaceApproximation"``) or a guide callable.
        loss: SVI objective, a ``numpyro.infer`` ELBO instance; ``None`` → ``Trace_ELBO()``.
        num_warmup: MCMC warmup (adaptation) iterations per chain.
        num_samples: MCMC draws kept per chain.
        num_chains: MCMC chains.
        predictive_site: the observed site; the predictive op returns its draws.
        predictive_samples: posterior draws used for predictions (SVI draws them
            from the guide; MCMC thins its draws to at most this many).
    """

    model: Callable[..., Any] | str
    guide: Any = None
    loss: Any = None
    num_warmup: int = 1000
    num_samples: int = 1000
    num_chains: int = 1
    predictive_site: str = "obs"
    predictive_samples: int = 200

    def __post_init__(self) -> None:
        self.model = resolve_model(self.model, "task.model")
        check_model_signature(self.model, "task.model")
        check_guide(self.guide)
        _int_at_least(self.num_warmup, 0, "num_warmup")
        _int_at_least(self.num_samples, 1, "num_samples")
        _int_at_least(self.num_chains, 1, "num_chains")
        _int_at_least(self.predictive_samples, 1, "predictive_samples")
        if not isinstance(self.predictive_site, str) or not self.predictive_site:
            raise ConfigError(
                "NumpyroTask.predictive_site must be the name of the model's observed site "
                f"(e.g. 'obs'), got {self.predictive_site!r}",
                field="task.predictive_site",
            )
        if self.loss is not None and not callable(getattr(self.loss, "loss", None)):
            raise ConfigError(
                "NumpyroTask.loss must be a numpyro.infer ELBO (Trace_ELBO(), "
                f"TraceMeanField_ELBO(), …) or None; got {type(self.loss).__name__}",
                field="task.loss",
            )


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
