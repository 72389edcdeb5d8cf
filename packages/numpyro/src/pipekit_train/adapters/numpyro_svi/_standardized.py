"""The default guide: a full-rank Gaussian whose parameters are in the posterior's own units.

Adam moves every parameter by about the learning rate per step, whatever its scale. An
autoguide's parameters are in the model's unconstrained units, so on a badly scaled
posterior (an intercept near 90 with sd 4 beside a slope with sd 0.01, or a slope and
intercept correlated at -0.999 under a raw-scale covariate) no single learning rate suits
them all: 20,000 steps at 0.01 leave the means sd_ref-s off (issue 33; docs/validation.md).

:class:`AutoStandardizedMultivariateNormal` (``task.guide=None`` up to :data:`MAX_DIM`
latent dimensions) standardises them. Before the first step :func:`laplace_fit` finds the
mode of the log joint in the unconstrained space (damped Newton, in float64, from the guide's own
``init_to_median`` start) and the Hessian's inverse there; the guide is then

    loc = mode + L a,    scale_tril = L b,    L = cholesky(inverse Hessian)

with ``a`` (zeros) and ``b`` (the identity) the parameters SVI optimises. The guide starts
at the Laplace approximation, and a step of Adam moves ``a`` by the learning rate in
posterior sds along every direction at once. Where the fit is not a proper mode (Newton
did not converge, the Hessian is not positive definite or not finite: a funnel's mode at
``tau -> 0``), or where one of 64 draws of it has a non-finite density or gradient in the
run's dtype (a GP's kernel in float32), ``L`` is not used: ``loc = start + a`` and
``scale_tril = 0.1 b`` is NumPyro's ``AutoMultivariateNormal`` (``init_scale`` 0.1) from
``init_to_median``, and ``backend_info["laplace"]`` says why.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pipekit_train.adapters.bayes import STANDARDIZED_GUIDE

__all__ = [
    "MAX_DIM",
    "NAME",
    "LaplaceFit",
    "laplace_fit",
    "standardized_guide",
]

#: The default guide's name (``task.guide`` may name it too): bayes declares it, so the task
#: check and the health line's fixes know it without importing this backend.
NAME = STANDARDIZED_GUIDE
#: Up to this many latent dimensions ``task.guide=None`` is the standardised full-rank
#: guide (a d x d Cholesky factor and a d x d Hessian); above, NumPyro's ``AutoNormal``.
MAX_DIM = 200
#: Newton steps at most toward the mode, each the best of ``_HALVINGS`` halved lengths
#: (a regression's converges in a few; one of 2e4 posterior sds from its start in ~20).
NEWTON_STEPS = 100
_HALVINGS = 12
#: Eigenvalues of the Hessian below this (in absolute value) are raised to it in a step.
_EIG_MIN = 1e-8
#: The fitted point is a mode where ``g' H^-1 g`` (twice the log density still to gain,
#: the offset in posterior sds squared) is below this.
DECREMENT_MAX = 1e-4
#: Newton stops early below this decrement (a step of 1e-4 posterior sds).
_DECREMENT_DONE = 1e-8
#: Draws of the fit checked in the run's dtype before it is used.
CHECK_DRAWS = 64
#: ``init_scale`` of the fallback (NumPyro's ``AutoMultivariateNormal`` default).
_FALLBACK_SCALE = 0.1


class LaplaceFit(NamedTuple):
    """The mode and the whitening factor (flat unconstrained latent), or why there is none."""

    center: Any
    whiten: Any
    reason: str | None  # None: fitted; else why the fallback runs
    iterations: int  # Newton steps taken


def standardized_guide(model: Any) -> Any:
    """A fresh :class:`AutoStandardizedMultivariateNormal` for ``model`` (NumPyro imported
    here, not at import time)."""
    return _guide_class()(model)


_CLASS: Any = None


def _guide_class() -> Any:
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    import jax.numpy as jnp
    import numpyro
    from numpyro import distributions as dist
    from numpyro.distributions.transforms import LowerCholeskyAffine
    from numpyro.infer.autoguide import AutoMultivariateNormal
    from numpyro.infer.initialization import init_to_median

    class AutoStandardizedMultivariateNormal(AutoMultivariateNormal):
        """A full-rank Gaussian guide in a Laplace fit's units (see the module's docstring).

        Its parameters are ``{prefix}_standardized_loc`` and
        ``{prefix}_standardized_scale_tril``; :meth:`get_transform` gives the guide in the
        model's unconstrained units, as for ``AutoMultivariateNormal``.
        """

        def __init__(self, model: Any, *, prefix: str = "auto") -> None:
            super().__init__(
                model, prefix=prefix, init_loc_fn=init_to_median, init_scale=_FALLBACK_SCALE
            )
            self.laplace: LaplaceFit | None = None

        def _affine(self, a: Any, b: Any) -> tuple[Any, Any]:
            fit = self.laplace
            if fit is None or fit.reason is not None:
                return self._init_latent + a, self._init_scale * b
            return fit.center + fit.whiten @ a, fit.whiten @ b

        def _get_posterior(self) -> Any:
            a = numpyro.param(f"{self.prefix}_standardized_loc", jnp.zeros(self.latent_dim))
            b = numpyro.param(
                f"{self.prefix}_standardized_scale_tril",
                jnp.identity(self.latent_dim),
                constraint=self.scale_tril_constraint,
            )
            loc, scale_tril = self._affine(a, b)
            return dist.MultivariateNormal(loc, scale_tril=scale_tril)

        def get_transform(self, params: dict[str, Any]) -> Any:
            loc, scale_tril = self._affine(
                params[f"{self.prefix}_standardized_loc"],
                params[f"{self.prefix}_standardized_scale_tril"],
            )
            return LowerCholeskyAffine(loc, scale_tril)

        def median(self, params: dict[str, Any]) -> Any:
            return self._unpack_and_constrain(self.get_transform(params).loc, params)

    AutoStandardizedMultivariateNormal.__module__ = __name__
    _CLASS = AutoStandardizedMultivariateNormal
    return _CLASS


def laplace_fit(
    guide: Any, model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> LaplaceFit:
    """The mode of ``model``'s log joint in the guide's flat unconstrained space and the
    Cholesky factor of the inverse Hessian there, in float64 (one compiled program), cast
    to the guide's dtype; a :class:`LaplaceFit` with ``reason`` where they cannot be used.

    ``guide`` has been initialised (its prototype gives the start and the latent's layout).
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    start = np.asarray(guide._init_latent)
    unpack = guide._unpack_latent

    potential = energy_of(model, unpack)

    def fit(x0: Any, a: tuple[Any, ...], kw: dict[str, Any]) -> Any:
        def energy(v: Any) -> Any:
            return potential(v, a, kw)

        lengths = 0.5 ** jnp.arange(_HALVINGS)

        def newton(carry: Any) -> Any:
            # One damped Newton step: the exact Hessian with |eigenvalues| (a descent
            # direction where it is not convex), the best of halved step lengths.
            i, x, *_ = carry
            e, g = jax.value_and_grad(energy)(x)
            h = jax.hessian(energy)(x)
            h = (h + h.T) / 2
            lam, vec = jnp.linalg.eigh(h)
            step = -vec @ ((vec.T @ g) / jnp.maximum(jnp.abs(lam), _EIG_MIN))
            decrement = -g @ step  # g' H^-1 g where H is positive definite
            tried = jax.vmap(lambda t: energy(x + t * step))(lengths)
            tried = jnp.where(jnp.isfinite(tried), tried, jnp.inf)
            best = jnp.argmin(tried)
            moved = tried[best] < e
            return i + 1, jnp.where(moved, x + lengths[best] * step, x), h, decrement, moved

        def going(carry: Any) -> Any:
            i, _, _, decrement, moved = carry
            return (i < NEWTON_STEPS) & moved & ~(decrement < _DECREMENT_DONE)

        d = x0.shape[0]
        init = (0, x0, jnp.identity(d, x0.dtype), jnp.asarray(jnp.inf, x0.dtype), True)
        nit, x, h, decrement, _ = jax.lax.while_loop(going, newton, init)
        # h and the decrement are at the last point a step started from: the step taken
        # from there is below the decrement's sqrt in posterior sds.
        cov = jnp.linalg.inv(h)
        whiten = jnp.linalg.cholesky((cov + cov.T) / 2)
        return x, energy(x), energy(x0), decrement, nit, whiten

    dtype = start.dtype
    try:
        with jax.enable_x64(True):
            x, at_mode, at_start, decrement, nit, whiten = jax.jit(fit)(
                jnp.asarray(start, jnp.float64), args, kwargs
            )
            x, whiten = np.asarray(x), np.asarray(whiten)
            at_mode, at_start, decrement = float(at_mode), float(at_start), float(decrement)
    except Exception as exc:  # noqa: BLE001 - a model that does not trace in float64
        failed = f"the fit failed: {type(exc).__name__}: {str(exc)[:200]}"
        return LaplaceFit(jnp.asarray(start), jnp.identity(start.size, dtype), failed, 0)
    reason: str | None = None
    if not (np.all(np.isfinite(x)) and np.isfinite(at_mode) and at_mode <= at_start):
        reason = "the log density is not finite at the fitted mode"
    elif not np.all(np.isfinite(whiten)):
        reason = "the Hessian at the fitted point is not positive definite (no proper mode)"
    elif not decrement <= DECREMENT_MAX:
        reason = (
            f"no mode found: {nit} Newton steps leave a decrement of {decrement:.3g} (a "
            "mode at a boundary, e.g. a funnel's)"
        )
    center, whiten = jnp.asarray(x, dtype), jnp.asarray(whiten, dtype)
    if reason is None:
        bad = _bad_draws(center, whiten, energy_of(model, unpack), args, kwargs)
        if bad:
            reason = (
                f"{bad} of {CHECK_DRAWS} draws of the Laplace fit have a non-finite log "
                f"density or gradient in {np.dtype(dtype).name} (backend_options "
                "x64: true may hold them)"
            )
    return LaplaceFit(center=center, whiten=whiten, reason=reason, iterations=int(nit))


def energy_of(model: Any, unpack: Any) -> Any:
    """``model``'s potential energy at a flat unconstrained latent ``v``, given its data."""
    from numpyro.infer.util import potential_energy

    def energy(v: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return potential_energy(model, args, kwargs, unpack(v))

    return energy


def _bad_draws(
    center: Any, whiten: Any, energy: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> int:
    """How many of ``CHECK_DRAWS`` fixed draws of the fit, in the run's own dtype, have a
    non-finite energy or gradient (SVI's first steps would turn them into NaN parameters:
    a GP's kernel Cholesky in float32 at a long length scale, for one)."""
    import jax
    import jax.numpy as jnp

    @jax.jit
    def count(c: Any, w: Any, a: tuple[Any, ...], kw: dict[str, Any]) -> Any:
        eps = jax.random.normal(jax.random.PRNGKey(0), (CHECK_DRAWS, c.shape[0]), c.dtype)
        value, grad = jax.vmap(jax.value_and_grad(energy), in_axes=(0, None, None))(
            c + eps @ w.T, a, kw
        )
        ok = jnp.isfinite(value) & jnp.all(jnp.isfinite(grad), axis=1)
        return jnp.sum(~ok)

    return int(count(center, whiten, args, kwargs))
