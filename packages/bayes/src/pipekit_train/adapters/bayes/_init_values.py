"""``backend_options.init_values`` of the MCMC backends (``numpyro-mcmc``, ``blackjax``),
checked once for both before anything compiles.

``parse_init_values`` wants ``{site: number or array}``, finite. ``check_init_values`` holds
it against the model's traced sites (``model_sites``, abstract): every key a latent sample
site, each value in the site's shape and inside its support (a scale > 0, a probability in
[0, 1], a simplex, an ordered vector …). The support test runs in NumPy on the constraint
the trace recorded, so nothing compiles; a support whose bounds depend on another latent
value (``Uniform(0, tau)``) cannot be judged there, and ``starts_from`` turns NumPyro's
failure to start into the same ``ConfigError`` instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from pipekit_train.adapters._bayes_options import INIT_JITTER_OPTION
from pipekit_train.errors import ConfigError

__all__ = [
    "parse_init_values",
    "check_init_values",
    "starts_from",
    "outside_support",
    "INIT_JITTER_OPTION",
]


_FIELD = "backend_options.init_values"


def parse_init_values(value: Any, *, allow_empty: bool = False) -> dict[str, np.ndarray]:
    """``{site: value}`` with numeric, finite values (as float64 NumPy arrays)."""
    if not isinstance(value, Mapping) or (not value and not allow_empty):
        what = "a mapping" if allow_empty else "a non-empty mapping"
        raise ConfigError(
            f"{_FIELD} must be {what} of site names to starting values, got {value!r}",
            field=_FIELD,
        )
    out = {}
    for site, v in value.items():
        where = f"{_FIELD}.{site}"
        try:
            a = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            raise ConfigError(
                f"{where} must be a number or an array of numbers, got {v!r}", field=where
            ) from None
        if not isinstance(site, str) or not np.all(np.isfinite(a)):
            raise ConfigError(
                f"{where} must be finite numbers under a site name, got {v!r}", field=where
            )
        out[site] = a
    return out


def _concrete(value: Any) -> np.ndarray | None:
    """A constraint's bound as NumPy, or ``None`` when it is a traced (latent-dependent) one."""
    try:
        return np.asarray(value, dtype=float)
    except Exception:  # noqa: BLE001 - a tracer left over from the abstract trace
        return None


def _lower_tri_positive_diag(a: np.ndarray) -> bool:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        return False
    upper = np.triu(a, k=1)
    diag = np.diagonal(a, axis1=-2, axis2=-1)
    return bool(np.all(upper == 0) and np.all(diag > 0))


def _symmetric_pd(a: np.ndarray) -> bool:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or not np.allclose(a, np.swapaxes(a, -1, -2)):
        return False
    return bool(np.all(np.linalg.eigvalsh(a) > 0))


def outside_support(constraint: Any, value: np.ndarray) -> str | None:
    """Why ``value`` is outside ``constraint`` (a NumPyro constraint), or ``None`` when it is
    inside or cannot be judged without the model's other values."""
    from numpyro.distributions import constraints as c

    if isinstance(constraint, c._IndependentConstraint):
        return outside_support(constraint.base_constraint, value)
    checks: list[tuple[type, Any, str]] = [
        (
            c._Simplex,
            lambda a: np.all(a >= 0) and np.allclose(a.sum(-1), 1, atol=1e-6),
            "a simplex (entries >= 0 summing to 1)",
        ),
        (
            c._PositiveOrderedVector,
            lambda a: np.all(a > 0) and np.all(np.diff(a, axis=-1) > 0),
            "a positive increasing vector",
        ),
        (
            c._OrderedVector,
            lambda a: np.all(np.diff(a, axis=-1) > 0),
            "a strictly increasing vector",
        ),
        (
            c._CorrCholesky,
            lambda a: _lower_tri_positive_diag(a) and np.allclose(np.linalg.norm(a, axis=-1), 1),
            "the Cholesky factor of a correlation matrix",
        ),
        (c._LowerCholesky, _lower_tri_positive_diag, "lower triangular with a positive diagonal"),
        (
            c._CorrMatrix,
            lambda a: _symmetric_pd(a) and np.allclose(np.diagonal(a, axis1=-2, axis2=-1), 1),
            "a correlation matrix",
        ),
        (c._PositiveDefinite, _symmetric_pd, "a symmetric positive-definite matrix"),
        (c._Boolean, lambda a: np.all((a == 0) | (a == 1)), "0 or 1"),
    ]
    for kind, test, what in checks:
        if isinstance(constraint, kind):
            return None if test(value) else f"must be {what}"
    if isinstance(constraint, c._OpenInterval):  # before _Interval, its base class
        low, high = _concrete(constraint.lower_bound), _concrete(constraint.upper_bound)
        if low is None or high is None:
            return None
        ok = np.all((value > low) & (value < high))
        return None if ok else f"must be in ({low.min():g}, {high.max():g})"
    if isinstance(constraint, (c._Interval, c._IntegerInterval)):
        low, high = _concrete(constraint.lower_bound), _concrete(constraint.upper_bound)
        if low is None or high is None:
            return None
        ok = np.all((value >= low) & (value <= high))
        return None if ok else f"must be in [{low.min():g}, {high.max():g}]"
    for kind, strict, sign in (
        (c._GreaterThan, True, ">"),
        (c._GreaterThanEq, False, ">="),
        (c._IntegerGreaterThan, False, ">="),
    ):
        if isinstance(constraint, kind):
            low = _concrete(constraint.lower_bound)
            if low is None:
                return None
            ok = np.all(value > low) if strict else np.all(value >= low)
            return None if ok else f"must be {sign} {low.max():g}"
    for kind, strict, sign in ((c._LessThan, True, "<"), (c._LessThanEq, False, "<=")):
        if isinstance(constraint, kind):
            high = _concrete(constraint.upper_bound)
            if high is None:
                return None
            ok = np.all(value < high) if strict else np.all(value <= high)
            return None if ok else f"must be {sign} {high.min():g}"
    return None  # real, or a support this check does not know: NumPyro's own start decides


def check_init_values(sites: Mapping[str, Mapping[str, Any]], values: Mapping[str, Any]) -> None:
    """Every ``init_values`` key a latent sample site of the traced model, in its shape and
    inside its support (``ConfigError`` naming ``backend_options.init_values.<site>``)."""
    latent = {n: s for n, s in sites.items() if s["type"] == "sample" and not s["is_observed"]}
    for site, value in values.items():
        field = f"{_FIELD}.{site}"
        if site not in latent:
            from pipekit_train.errors import closest

            raise ConfigError(
                f"{field}: {site!r} is not a latent sample site of the model"
                f"{closest(str(site), latent)}; its latent sites: {', '.join(sorted(latent))}",
                field=field,
            )
        shape = tuple(latent[site]["shape"])
        if np.shape(value) != shape:
            raise ConfigError(
                f"{field} has shape {np.shape(value)}, the site has shape {shape}; give one "
                "value per element of the site",
                field=field,
            )
        support = latent[site].get("support")
        why = None if support is None else outside_support(support, np.asarray(value, float))
        if why is not None:
            raise ConfigError(
                f"{field} = {np.asarray(value).tolist()!r} is outside the site's support: it "
                f"{why}; give a value the prior can start from",
                field=field,
            )


@contextlib.contextmanager
def starts_from(init_values: Mapping[str, Any] | None) -> Iterator[None]:
    """NumPyro's failure to start from ``init_values`` as a ``ConfigError``.

    The names, shapes and the supports ``check_init_values`` can judge were checked
    before; what is left is a support depending on another site's value: NumPyro's "Cannot
    find valid initial parameters", or a distribution refusing the value as a parameter
    ("got invalid scale parameter")."""
    try:
        yield
    except (RuntimeError, ValueError) as exc:
        if not init_values or not (
            "valid initial parameters" in str(exc) or "got invalid" in str(exc)
        ):
            raise
        raise ConfigError(
            f"{_FIELD} {sorted(init_values)}: the model cannot start there "
            f"({exc}); give each site a value inside its support (a scale > 0, a probability "
            "in (0, 1), an ordered vector increasing)",
            field=_FIELD,
        ) from exc
