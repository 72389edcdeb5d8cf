"""``BlackjaxTask``: a log density to sample, given raw or as a NumPyro model.

Two ways in, exactly one per task:

- **raw**: ``logdensity_fn(position) -> scalar`` plus ``init_position`` (a pytree
  of arrays, one chain's start), and optionally ``predict_fn(params, x)`` for the
  returned predictive op; the stochastic-gradient samplers (``sgld``, ``sghmc``)
  take ``logprior_fn(params)`` and ``loglik_fn(params, datum)`` instead (``datum``
  is one row ``{"x": x_i, "y": y_i}`` of ``TrainingLoop.dataset``);
- **numpyro_task**: a ``NumpyroTask`` bridged through
  ``pipekit_train.adapters.bayes.log_density_from_model`` (a ``NumpyroTask``
  given directly as ``TrainingLoop.task`` is the same thing).

Every function field also accepts a ``'module:function'`` import string, so a
YAML file can build the task (core's ``resolve_import_string``, the code the user named).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipekit_train.adapters.bayes import NumpyroTask, resolve_callable
from pipekit_train.errors import ConfigError

__all__ = ["BlackjaxTask", "as_blackjax_task"]

_FUNCTIONS = ("logdensity_fn", "predict_fn", "logprior_fn", "loglik_fn")
_RAW = ("logdensity_fn", "logprior_fn", "loglik_fn")


def _count(value: Any, low: int, name: str) -> None:
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ConfigError(
            f"BlackjaxTask.{name} must be an integer >= {low}, got {value!r}",
            field=f"task.{name}",
        )


@dataclass(kw_only=True, eq=False)
class BlackjaxTask:
    """What to sample and how many draws; see the module docstring for the two ways in.

    Args:
        logdensity_fn: ``position -> log density`` (up to a constant), raw path.
        init_position: one chain's start for the raw path (every chain starts there;
            a list is turned into an array).
        predict_fn: ``predict_fn(params, x) -> prediction`` for ``op(x)``, raw path.
        logprior_fn: with ``loglik_fn``, the stochastic-gradient samplers' target, raw
            path: ``log p(params)``.
        loglik_fn: one datum's ``log p(datum | params)`` (with ``logprior_fn``).
        numpyro_task: a ``NumpyroTask`` (model, counts, predictive settings).
        num_warmup: warmup steps; ``None`` takes the numpyro_task's value (raw path: 1000).
        num_samples: draws per chain; ``None`` as above (raw path: 1000).
        num_chains: chains; ``None`` as above (raw path: 1).
        predictive_samples: draws the predictive op averages over (raw path).
    """

    # Callables, or import strings resolved to callables in __post_init__.
    logdensity_fn: Any = None
    init_position: Any = None
    predict_fn: Any = None
    logprior_fn: Any = None
    loglik_fn: Any = None
    numpyro_task: NumpyroTask | None = None
    num_warmup: int | None = None
    num_samples: int | None = None
    num_chains: int | None = None
    predictive_samples: int = 200

    def __post_init__(self) -> None:
        for name in _FUNCTIONS:
            setattr(self, name, resolve_callable(getattr(self, name), f"task.{name}", "a function"))
        raw = [n for n in _RAW if getattr(self, n) is not None]
        if self.numpyro_task is not None:
            if not isinstance(self.numpyro_task, NumpyroTask):
                raise ConfigError(
                    "BlackjaxTask.numpyro_task must be a pipekit_train.adapters.bayes."
                    f"NumpyroTask, got {type(self.numpyro_task).__name__}",
                    field="task.numpyro_task",
                )
            extra = raw + [
                n for n in ("init_position", "predict_fn") if getattr(self, n) is not None
            ]
            if extra:
                raise ConfigError(
                    f"BlackjaxTask: give either numpyro_task or the raw {', '.join(extra)}, "
                    "not both (the NumPyro model already defines the log density, start and "
                    "predictions)",
                    field="task.logdensity_fn" if "logdensity_fn" in extra else f"task.{extra[0]}",
                )
        elif not raw:
            raise ConfigError(
                "BlackjaxTask needs exactly one target: logdensity_fn=... with "
                "init_position=... (or logprior_fn + loglik_fn for sgld/sghmc), or "
                "numpyro_task=NumpyroTask(model=...); neither was given",
                field="task.logdensity_fn",
            )
        elif self.init_position is None:
            raise ConfigError(
                "BlackjaxTask.init_position is missing: the raw path needs one chain's start "
                "(a pytree of arrays matching logdensity_fn's argument)",
                field="task.init_position",
            )
        if isinstance(self.init_position, (list, tuple)):
            import numpy as np

            self.init_position = np.asarray(self.init_position, dtype=float)
        _count(self.num_warmup, 0, "num_warmup")
        _count(self.num_samples, 1, "num_samples")
        _count(self.num_chains, 1, "num_chains")
        _count(self.predictive_samples, 1, "predictive_samples")

    @property
    def needs_dataset(self) -> bool:
        """Only the NumPyro path is conditioned on ``TrainingLoop.dataset``, and only for a
        model that takes data (``NumpyroTask.needs_dataset``: not the funnel's ``model(dim=10)``).

        A raw log density closes over its own data, so the loop may omit ``dataset``;
        ``sgld`` / ``sghmc`` still need it (the backend refuses them without one).
        """
        return self.numpyro_task is not None and self.numpyro_task.needs_dataset

    def counts(self) -> tuple[int, int, int]:
        """``(num_warmup, num_samples, num_chains)``, the numpyro_task's where unset here."""
        t = self.numpyro_task
        return (
            self.num_warmup if self.num_warmup is not None else (t.num_warmup if t else 1000),
            self.num_samples if self.num_samples is not None else (t.num_samples if t else 1000),
            self.num_chains if self.num_chains is not None else (t.num_chains if t else 1),
        )


def as_blackjax_task(loop: Any) -> BlackjaxTask:
    """The loop's task as a ``BlackjaxTask`` (a bare ``NumpyroTask`` is wrapped), or a
    ``ConfigError`` saying what to give."""
    task = loop.task
    if isinstance(task, BlackjaxTask):
        return task
    if isinstance(task, NumpyroTask):
        return BlackjaxTask(numpyro_task=task)
    given = f" (loss={loop.loss!r} was given)" if task is None and loop.loss is not None else ""
    raise ConfigError(
        "the blackjax backend needs task=BlackjaxTask(logdensity_fn=..., init_position=...) "
        f"or a NumpyroTask(model=...); got {type(task).__name__}{given}",
        field="task",
    )
