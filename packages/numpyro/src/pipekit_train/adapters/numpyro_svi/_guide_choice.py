"""Which guide a run fits: the user's, or for ``task.guide=None`` the default by dimension."""

from __future__ import annotations

from typing import Any

import numpy as np

from pipekit_train.adapters.bayes import model_import_string

from ._standardized import MAX_DIM, LaplaceFit
from ._standardized import NAME as STANDARDIZED

__all__ = ["STANDARDIZED", "guide_choice", "laplace_record", "latent_dim"]


def latent_dim(sites: dict[str, Any]) -> int:
    """The number of scalar latent values among the model's traced ``sites`` (constrained
    shapes: a simplex counts one more than its unconstrained size)."""
    return sum(
        int(np.prod(v["shape"], dtype=np.int64))
        for v in sites.values()
        if v["type"] == "sample" and not v["is_observed"]
    )


def guide_choice(guide: Any, sites: dict[str, Any]) -> tuple[Any, str]:
    """``(what make_guide builds, the name the fingerprint and backend_info record)``.

    ``None``: the standardised full-rank guide up to ``MAX_DIM`` latent values, NumPyro's
    ``AutoNormal`` above (a d x d factor would not fit); a name or callable: itself.
    """
    if guide is None:
        name = STANDARDIZED if latent_dim(sites) <= MAX_DIM else "AutoNormal"
        return name, name
    if isinstance(guide, str):
        return guide, guide
    return guide, model_import_string(guide) or str(
        getattr(guide, "__qualname__", type(guide).__name__)
    )


def laplace_record(fit: LaplaceFit | None) -> dict[str, Any]:
    """``backend_info["laplace"]``: whether the guide's units are a Laplace fit's, and why not."""
    if fit is None:
        return {"fitted": False, "reason": "not run"}
    return {"fitted": fit.reason is None, "reason": fit.reason, "newton_steps": fit.iterations}


#: numpyro-svi's step schedule where ``optimizer_config`` is left at the loop's default:
#: Adam at ``DEFAULT_LR`` for the first half of ``max_steps``, then cosine decay to
#: ``DEFAULT_END_LR`` (the validated recipe, docs/validation.md). In the standardised
#: guide's units a step of 0.01 is a hundredth of a posterior sd on every parameter.
DEFAULT_LR = 0.01
DEFAULT_END_LR = 1e-4


def default_schedule(optimizer_config: Any, max_steps: int) -> dict[str, Any] | None:
    """The optimiser config SVI runs where ``optimizer_config`` is the loop's default
    (``DEFAULT_OPTIMIZER``, Adam at 1e-3 for every backend), else None (the user's own)."""
    from pipekit_train.loop import DEFAULT_OPTIMIZER

    if not isinstance(optimizer_config, dict) or optimizer_config != DEFAULT_OPTIMIZER:
        return None
    return {
        "name": "adam",
        "lr": {
            "schedule": "warmup_cosine_decay",
            "init_value": DEFAULT_LR,
            "peak_value": DEFAULT_LR,
            "warmup_steps": max_steps // 2,
            "decay_steps": max_steps,
            "end_value": DEFAULT_END_LR,
        },
    }
