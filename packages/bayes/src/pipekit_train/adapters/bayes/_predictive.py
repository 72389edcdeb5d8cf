"""``NumpyroPredictiveOp``: the posterior-predictive Operator every Bayesian backend returns.

Saved layout (a directory; nothing is pickled)::

    samples.npz       posterior draws per site, grouped by chain: (chains, draws, ...)
    sample_stats.npz  per-draw sampler statistics (``diverging``, ``tree_depth``, ``energy``,
                      ``step_size``, ``n_steps``, ``acceptance_rate``, ``lp``), when any
    op.json           format version, the model's import string ('module:attr') and the
                      keywords a functools.partial bound, predictive settings, versions

``load`` takes the model as ``model=`` (or a raw path's ``predict_fn=``). It imports
the string recorded in ``op.json`` only with ``trusted=True`` (or a list of module
prefixes covering it): the folder is data anyone could have edited, and importing a
module runs its code (``pipekit_train._trust``, ``docs/security.md``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pipekit_train.errors import CheckpointError, ConfigError
from pipekit_train.operator import check_trust, resolve_recorded

from ._diagnostics import diagnostics, to_inference_data
from ._model import model_import_string, partial_kwargs

__all__ = ["NumpyroPredictiveOp"]

FORMAT_VERSION = 1
SAMPLES_FILE = "samples.npz"
STATS_FILE = "sample_stats.npz"
META_FILE = "op.json"


class NumpyroPredictiveOp:
    """Posterior predictions of a NumPyro model from a set of posterior draws.

    ``op(x)`` returns the posterior-predictive mean of ``predictive_site`` at
    ``x`` (averaged over ``predictive_samples`` draws spread evenly over the
    posterior); ``op(x, draws=True)`` returns the draws themselves,
    ``(predictive_samples, len(x), …)``.

    Without a NumPyro model (BlackJAX's raw log-density path) ``predict_fn(params, x)``
    makes the predictions instead: ``params`` is one draw, the sites as a dict (or the
    array itself when the only site is ``"position"``, a raw array position).

    Args:
        model: the NumPyro model (``model(x, y=None)``, or one taking its data by its own
            argument names), or ``None`` with ``predict_fn``.
        samples: constrained posterior draws per site, grouped by chain
            ``(chains, draws, …)``, deterministic sites included.
        predictive_site: the observed site to predict; ``None`` when the model has none
            (a ``numpyro.factor`` likelihood): the op then holds the posterior but
            ``op(x)`` raises ``ConfigError`` saying why it cannot predict.
        predictive_samples: how many posterior draws predictions use.
        sample_stats: per-draw sampler statistics (``diverging``), ``(chains, draws)``.
        seed: seed of the predictive noise (``op(x)`` is deterministic given it).
        model_ref: the model's ``'module:attr'`` import string, when it cannot be
            derived from the function itself.
        predict_fn: ``predict_fn(params, x) -> prediction``, used when ``model`` is None.
    """

    def __init__(
        self,
        model: Callable[..., Any] | None,
        samples: Mapping[str, Any],
        *,
        predictive_site: str | None = "obs",
        predictive_samples: int = 200,
        sample_stats: Mapping[str, Any] | None = None,
        seed: int = 0,
        model_ref: str | None = None,
        predict_fn: Callable[[Any, Any], Any] | None = None,
    ) -> None:
        if not samples:
            raise ConfigError("NumpyroPredictiveOp needs at least one posterior site")
        self.model = model
        self.predict_fn = predict_fn
        self._by_chain = {k: np.asarray(v) for k, v in samples.items()}
        shapes = {v.shape[:2] for v in self._by_chain.values()}
        if len(shapes) != 1:
            raise ConfigError(
                f"NumpyroPredictiveOp: every site needs the same (chains, draws); got {shapes}"
            )
        self.sample_stats = {k: np.asarray(v) for k, v in (sample_stats or {}).items()}
        self.predictive_site = predictive_site
        self.predictive_samples = int(predictive_samples)
        self.seed = int(seed)
        self.model_ref = model_ref
        self._predict: Any = None

    # -- the posterior ------------------------------------------------------------------------
    @property
    def num_chains(self) -> int:
        return int(next(iter(self._by_chain.values())).shape[0])

    @property
    def num_draws(self) -> int:
        return int(next(iter(self._by_chain.values())).shape[1])

    @property
    def samples(self) -> dict[str, np.ndarray]:
        """Constrained draws per site, chains concatenated: ``(chains * draws, …)``."""
        return {
            k: v.reshape((v.shape[0] * v.shape[1],) + v.shape[2:])
            for k, v in self._by_chain.items()
        }

    @property
    def samples_by_chain(self) -> dict[str, np.ndarray]:
        """Constrained draws per site, ``(chains, draws, …)``."""
        return dict(self._by_chain)

    def diagnostics(self) -> dict[str, Any]:
        """JSON-able per-site moments, R-hat, bulk/tail ESS, MCSE, the divergence count and
        the health figures the sampler statistics allow (E-BFMI, stuck chains, …)."""
        stats = {k: v for k, v in self.sample_stats.items() if k != "diverging"}
        return diagnostics(self._by_chain, self.sample_stats.get("diverging"), sample_stats=stats)

    def to_inference_data(self) -> Any:
        """The draws as an ``arviz.InferenceData`` (posterior + sample_stats groups)."""
        stats = {k: v for k, v in self.sample_stats.items() if k != "diverging"}
        return to_inference_data(
            self._by_chain, diverging=self.sample_stats.get("diverging"), sample_stats=stats
        )

    def summary(self, **kwargs: Any) -> Any:
        """``arviz.summary`` of the draws (a pandas DataFrame): mean, sd, HDI, MCSE,
        bulk/tail ESS and rank-normalised R-hat; ``kwargs`` go to ``arviz.summary``."""
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import arviz as az

            return az.summary(self.to_inference_data(), **kwargs)

    # -- predictions --------------------------------------------------------------------------
    def _thinned(self) -> dict[str, np.ndarray]:
        flat = self.samples
        total = next(iter(flat.values())).shape[0]
        idx = np.linspace(0, total - 1, min(self.predictive_samples, total)).round()
        idx = idx.astype(np.int64)
        return {k: v[idx] for k, v in flat.items()}

    def __call__(
        self, x: Any = None, *, draws: bool = False, seed: int | None = None, **data: Any
    ) -> Any:
        """Posterior-predictive mean of ``predictive_site`` at ``x`` (draws if ``draws``).

        ``data`` are the model's keyword arrays at the new rows: the named arrays the
        dataset gave it beyond ``x`` / ``y`` (a group index, say), or, for a model given its
        data by its own argument names, those arguments without the observations
        (``op(at_bats=new_at_bats)``; ``x`` is then omitted). A model whose likelihood is a
        ``numpyro.factor``, or that observes nothing, has no distribution to draw
        ``predictive_site`` from: the op then raises ``ConfigError`` saying so (its draws,
        summary and diagnostics still work).
        """
        import jax
        import jax.numpy as jnp

        if self._predict is None and self.model is None:
            self._predict = self._raw_predictor()
        if self.model is not None and self.predictive_site is None:
            raise ConfigError(
                "NumpyroPredictiveOp cannot draw predictions: the model observes no site "
                "with a distribution (its likelihood is a numpyro.factor, or it was given no "
                "observations), so there is nothing to draw new observations of. The op still "
                "holds the posterior (op.samples, op.summary(), op.diagnostics()); to "
                "predict, write the likelihood as numpyro.sample('obs', <distribution>, obs=y)",
                field="task.predictive_site",
            )
        if self._predict is None:
            from numpyro.infer import Predictive

            predictive = Predictive(
                self.model,
                posterior_samples={k: jnp.asarray(v) for k, v in self._thinned().items()},
                return_sites=[self.predictive_site],
            )
            site = self.predictive_site

            def predict(key: Any, args: tuple[Any, ...], data: dict[str, Any]) -> Any:
                out = predictive(key, *args, **data)
                if site not in out:
                    raise ConfigError(
                        f"NumpyroPredictiveOp cannot draw predictions: the model has no "
                        f"sample site {site!r} (NumpyroTask.predictive_site). A likelihood "
                        "written with numpyro.factor has no distribution to draw new "
                        "observations from; the op still holds the posterior (op.samples, "
                        "op.summary(), op.diagnostics()). To predict, write the likelihood as "
                        f"numpyro.sample({site!r}, <distribution>, obs=y)",
                        field="task.predictive_site",
                    )
                return out[site]

            self._predict = jax.jit(predict)
        key = jax.random.PRNGKey(self.seed if seed is None else seed)
        if self.model is None:
            out = self._predict(key, jnp.asarray(x))
        else:
            args = () if x is None else (jnp.asarray(x),)
            out = self._predict(key, args, {k: jnp.asarray(v) for k, v in data.items()})
        return out if draws else out.mean(axis=0)

    def _raw_predictor(self) -> Any:
        import jax
        import jax.numpy as jnp

        if self.predict_fn is None:
            raise ConfigError(
                "NumpyroPredictiveOp: no model and no predict_fn, so it cannot predict; give "
                "BlackjaxTask(predict_fn=...) (predict_fn(params, x)) for a raw log density",
                field="task.predict_fn",
            )
        sites = {k: jnp.asarray(v) for k, v in self._thinned().items()}
        # A raw array position is passed as the array itself, as the user's function saw it.
        params: Any = sites["position"] if set(sites) == {"position"} else sites
        fn = self.predict_fn
        return jax.jit(lambda key, x: jax.vmap(lambda p: fn(p, x))(params))

    # -- saving -------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the draws (npz) and ``op.json`` to the directory ``path``."""
        if self.model is None:
            self._write(Path(path), {"model": None, "predict_fn": self._predict_fn_ref()})
            return
        ref = self.model_ref or model_import_string(self.model)
        if ref is None:
            raise ConfigError(
                "NumpyroPredictiveOp.save: the model cannot be named by an import string "
                f"({getattr(self.model, '__qualname__', self.model)!r} is a lambda, a local "
                "function or lives in __main__); define it at module level in an importable "
                "module, or pass model_ref='package.module:model' when creating the op",
                field="model_ref",
            )
        kwargs = partial_kwargs(self.model)
        try:
            kwargs_json = json.loads(json.dumps(kwargs))
        except TypeError as exc:
            raise ConfigError(
                f"NumpyroPredictiveOp.save: the model's bound keywords {sorted(kwargs)} are "
                "not JSON values; bind only numbers, strings, lists or dicts",
                field="model",
            ) from exc
        self._write(Path(path), {"model": ref, "model_kwargs": kwargs_json})

    def _predict_fn_ref(self) -> str | None:
        """The raw path's ``predict_fn`` as an import string (``None`` without one)."""
        if self.predict_fn is None:
            return None
        ref = model_import_string(self.predict_fn)
        if ref is None:
            raise ConfigError(
                "NumpyroPredictiveOp.save: predict_fn cannot be named by an import string; "
                "define it at module level in an importable module",
                field="task.predict_fn",
            )
        return ref

    def _write(self, out: Path, source: dict[str, Any]) -> None:
        """The saved layout; ``source`` names what predicts (the model, or ``predict_fn``)."""
        out.mkdir(parents=True, exist_ok=True)
        np.savez(out / SAMPLES_FILE, **self._by_chain)  # type: ignore[arg-type]
        if self.sample_stats:
            np.savez(out / STATS_FILE, **self.sample_stats)  # type: ignore[arg-type]
        meta = {
            "format_version": FORMAT_VERSION,
            "op_class": "pipekit_train.adapters.bayes:NumpyroPredictiveOp",
            **source,
            "predictive_site": self.predictive_site,
            "predictive_samples": self.predictive_samples,
            "seed": self.seed,
            "sites": {k: [list(v.shape), str(v.dtype)] for k, v in self._by_chain.items()},
            "versions": _versions(),
        }
        (out / META_FILE).write_text(json.dumps(meta, indent=2))

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        model: Callable[..., Any] | None = None,
        predict_fn: Callable[[Any, Any], Any] | None = None,
        trusted: bool | Sequence[str] = False,
    ) -> NumpyroPredictiveOp:
        """Rebuild an op written by :meth:`save`.

        The model is ``model`` (used as given: the recorded ``model_kwargs`` are bound only
        to a model imported from ``op.json``); a raw log-density op's function is
        ``predict_fn``. Without them, the import string recorded in ``op.json`` is imported
        only with ``trusted=True`` or a list of module prefixes covering it; otherwise
        :class:`~pipekit_train.errors.UntrustedCodeError` is raised and nothing is imported.
        """
        trusted = check_trust(trusted)
        src = Path(path)
        try:
            meta = json.loads((src / META_FILE).read_text())
        except (OSError, ValueError) as exc:
            raise CheckpointError(
                f"{src} is not a saved NumpyroPredictiveOp: cannot read {META_FILE} ({exc})"
            ) from exc
        if not isinstance(meta, dict) or meta.get("format_version") != FORMAT_VERSION:
            version = meta.get("format_version") if isinstance(meta, dict) else None
            raise CheckpointError(
                f"{src / META_FILE}: format_version {version!r} is not "
                f"{FORMAT_VERSION}; save it again with this version of pipekit-train-bayes"
            )
        if meta.get("model") is None:
            if predict_fn is None and meta.get("predict_fn"):
                predict_fn = resolve_recorded(
                    meta["predict_fn"],
                    trusted=trusted,
                    field="predict_fn",
                    source=src / META_FILE,
                    instead="NumpyroPredictiveOp.load(path, predict_fn=<your function>)",
                )
        elif model is None:
            model = resolve_recorded(
                meta["model"],
                trusted=trusted,
                field="model",
                source=src / META_FILE,
                instead="NumpyroPredictiveOp.load(path, model=<your NumPyro model>)",
            )
            if meta.get("model_kwargs"):
                import functools

                model = functools.partial(model, **meta["model_kwargs"])
        with np.load(src / SAMPLES_FILE, allow_pickle=False) as npz:
            samples = {k: npz[k] for k in npz.files}
        stats: dict[str, np.ndarray] = {}
        if (src / STATS_FILE).exists():
            with np.load(src / STATS_FILE, allow_pickle=False) as npz:
                stats = {k: npz[k] for k in npz.files}
        return cls(
            model,
            samples,
            predictive_site=meta["predictive_site"],
            predictive_samples=meta["predictive_samples"],
            sample_stats=stats,
            seed=meta.get("seed", 0),
            model_ref=meta["model"],
            predict_fn=predict_fn,
        )

    def __repr__(self) -> str:
        sites = ", ".join(f"{k}{list(v.shape[2:])}" for k, v in self._by_chain.items())
        return (
            f"NumpyroPredictiveOp({self.num_chains} chain(s) x {self.num_draws} draws; "
            f"sites: {sites}; predicts {self.predictive_site!r})"
        )


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for dist in ("numpyro", "jax", "pipekit-train-bayes"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out
