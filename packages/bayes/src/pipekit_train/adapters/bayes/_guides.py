"""Guides for SVI: a callable, or an autoguide named by string (so YAML can name it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipekit_train.errors import ConfigError, closest

__all__ = ["BACKEND_GUIDE_NAMES", "GUIDE_NAMES", "STANDARDIZED_GUIDE", "make_guide", "check_guide"]

GUIDE_NAMES: tuple[str, ...] = (
    "AutoNormal",
    "AutoMultivariateNormal",
    "AutoLowRankMultivariateNormal",
    "AutoDelta",
    "AutoLaplaceApproximation",
)
#: Guides a backend builds itself (numpyro-svi's default, decision 0215): accepted by
#: :func:`check_guide`, not built by :func:`make_guide`.
STANDARDIZED_GUIDE = "AutoStandardizedMultivariateNormal"
BACKEND_GUIDE_NAMES: tuple[str, ...] = (STANDARDIZED_GUIDE,)
#: What ``make_guide(None)`` builds (numpyro-svi's default above 200 latent values).
DEFAULT_GUIDE = "AutoNormal"


def check_guide(guide: Any, field: str = "task.guide") -> None:
    """Reject an unknown guide name or a non-callable guide, without importing NumPyro."""
    if guide is None or (callable(guide) and not isinstance(guide, str)):
        return
    if isinstance(guide, str):
        known = (*BACKEND_GUIDE_NAMES, *GUIDE_NAMES)
        if guide not in known:
            raise ConfigError(
                f"{field} = {guide!r} is not a known guide{closest(guide, known)}; "
                f"name one of {', '.join(known)} or pass a guide callable",
                field=field,
            )
        return
    raise ConfigError(
        f"{field} must be None (the backend's default), a guide name "
        f"({', '.join((*BACKEND_GUIDE_NAMES, *GUIDE_NAMES))}) or a callable "
        f"guide(x, y=None); got {type(guide).__name__}",
        field=field,
    )


def make_guide(guide: Any, model: Callable[..., Any]) -> Callable[..., Any]:
    """The guide object for ``model``: a user callable as is, or a fresh autoguide.

    Autoguides start from ``init_to_median`` (which falls back to a uniform
    start for sites, such as ``ImproperUniform`` flat priors, that cannot be sampled).
    """
    check_guide(guide)
    if guide is not None and not isinstance(guide, str):
        return guide
    if guide in BACKEND_GUIDE_NAMES:
        raise ConfigError(
            f"task.guide = {guide!r} is built by the numpyro-svi backend itself, not by "
            "make_guide; run the task with backend='numpyro-svi', or name a NumPyro autoguide "
            f"({', '.join(GUIDE_NAMES)})",
            field="task.guide",
        )
    from numpyro.infer import autoguide

    cls = getattr(autoguide, guide or DEFAULT_GUIDE)
    return cls(model)
