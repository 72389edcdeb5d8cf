"""``run(loop)``: stochastic variational inference on a ``NumpyroTask`` through core's driver."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from pipekit_train.adapters.bayes import (
    NumpyroPredictiveOp,
    bind_data_size,
    check_task_on_args,
    check_task_on_data,
    elbo_convergence,
    make_guide,
    model_data,
    model_import_string,
    model_subsamples,
    named_data,
    precision,
    predictive_site_of,
    refuse_local_latents,
    require_task,
    variational_summary,
    variational_warnings,
    warn_diagnostics,
)
from pipekit_train.errors import ConfigError, DataError, warn_user
from pipekit_train.fingerprint import fingerprint as core_fingerprint
from pipekit_train.jax.compile_cache import use_compilation_cache
from pipekit_train.jax.program import run_program
from pipekit_train.jax.report import jax_backend_info
from pipekit_train.loop import TrainingLoop, require_features

from ._compiled_init import compiled_init
from ._guide_choice import STANDARDIZED, default_schedule, guide_choice, laplace_record
from ._importance import guide_importance
from ._options import SviOptions, parse_options
from ._standardized import laplace_fit, standardized_guide

BACKEND = "numpyro-svi"

__all__ = ["run", "BACKEND", "bind_data_size"]


def _require_y(has_y: bool, site: str) -> None:
    if not has_y:
        raise DataError(
            "TrainingLoop.dataset has no 'y': numpyro-svi conditions the model's "
            f"{site!r} site on it; give {{'x': X, 'y': Y}} or (X, Y) (a stream: examples of "
            "that form)"
        )


#: ``TrainingLoop.batch_size``'s default: left there, data given by name ignores it.
_DEFAULT_BATCH_SIZE = TrainingLoop.__dataclass_fields__["batch_size"].default


def _rows(arrays: dict[str, np.ndarray]) -> int:
    """The data's size for the report and the batch check: the longest leading axis."""
    return max((int(a.shape[0]) for a in arrays.values() if a.ndim), default=1)


def run(loop: Any) -> tuple[NumpyroPredictiveOp, dict[str, Any]]:
    """Fit the guide of ``loop.task`` by SVI; return the predictive op and ``backend_info``.

    ``max_steps`` SVI steps on minibatches of ``batch_size`` from core's
    ``BatchSource``; ``optimizer_config`` resolves to optax (as for Equinox) and
    is wrapped with ``numpyro.optim.optax_to_numpyro``. Checkpoints hold the
    ``SVIState``; evaluation is the ELBO on ``val_dataset``.
    """
    started = time.perf_counter()
    # Accumulation, EMA and precision are not mapped onto this backend yet: refuse them.
    require_features(loop, supported=(), backend="numpyro-svi")
    options = parse_options(loop.backend_options)
    cache = use_compilation_cache(options.compilation_cache)
    task = require_task(loop, BACKEND)
    with precision(options.x64):
        result = _run(loop, task, options, started)
    cache.prune()  # only after a run that passed validation and finished (compile_cache)
    return result


def _run(
    loop: Any, task: Any, options: SviOptions, started: float
) -> tuple[NumpyroPredictiveOp, dict[str, Any]]:
    import jax
    import jax.numpy as jnp
    from numpyro.infer import SVI, Predictive, Trace_ELBO
    from numpyro.optim import optax_to_numpyro

    from pipekit_train.engine import BatchSource, data_size, finishing, sized_stream
    from pipekit_train.jax import own_optimizer
    from pipekit_train.jax.data import GrainBatchIterator
    from pipekit_train.jax.optim import resolve_optimizer
    from pipekit_train.jax.structure import tree_structure_digest

    dtype = jnp.result_type(float)
    cast = lambda a: a.astype(dtype) if a.dtype.kind == "f" else a  # noqa: E731
    # The user's own stream (issue 20): N is declared, batches are read as they come.
    streamed = sized_stream(
        loop,
        options.num_data,
        backend=BACKEND,
        cast=lambda batch: {k: cast(v) for k, v in batch.items()},
    )
    batches: Any
    named = (
        None
        if streamed is not None
        else named_data(task.bound_model(), loop.dataset, "TrainingLoop.dataset")
    )
    if named is not None:  # by the model's own argument names: the whole data every step
        # Left at its default, batch_size means nothing here (SVI.run has no batches);
        # set below the rows, it asks for minibatches this form cannot give.
        if loop.batch_size != _DEFAULT_BATCH_SIZE and loop.batch_size < _rows(named):
            raise ConfigError(
                f"TrainingLoop.batch_size ({loop.batch_size}) is smaller than the data "
                f"({_rows(named)} rows), but a dataset given by the model's argument names "
                "is fitted whole at every step (its arrays need not share rows); leave "
                f"batch_size at least {_rows(named)}, or give minibatches in the (x, y) form, "
                "{'x': X, 'y': Y}, to a model(x, y=None, N=None)",
                field="batch_size",
            )
        n, shuffle, names, batches = _rows(named), False, tuple(named), None
        data = first = {k: cast(v) for k, v in named.items()}
    elif streamed is not None:
        first = streamed.first
        _require_y("y" in first, task.predictive_site)
        n, shuffle, data = streamed.num_data, False, first  # predictions on the first batch
        names = tuple(k for k in first if k not in ("x", "y"))
        batches = streamed.iterator
    else:
        x, y, extras = model_data(loop.dataset, "TrainingLoop.dataset")
        _require_y(y is not None, task.predictive_site)
        data = {
            "x": cast(np.asarray(x)),
            "y": cast(np.asarray(y)),
            **{k: cast(v) for k, v in extras.items()},
        }
        n = data_size(options.num_data, int(data["x"].shape[0]), BACKEND)
        # A full batch is never shuffled: every step sees the rows in the dataset's order, so
        # an order-dependent likelihood (a time series, an HMM) sees its series (issue 25).
        shuffle = options.shuffle and loop.batch_size < n
        source = BatchSource(data, loop.batch_size, loop.seed, shuffle=shuffle)
        names = tuple(extras)
        first = source[0]
        batches = GrainBatchIterator(source, worker_count=options.worker_count)
    val: tuple[Any, Any, dict[str, Any]] | None = None
    named_val = None
    if loop.val_dataset is not None and named is not None:
        named_val = named_data(task.bound_model(), loop.val_dataset, "TrainingLoop.val_dataset")
        if named_val is None:
            raise ConfigError(
                "TrainingLoop.val_dataset is in the (x, y) form but TrainingLoop.dataset gives "
                "the model its arguments by name; give val_dataset by the same names, "
                f"{{{', '.join(f'{k!r}: ...' for k in named)}}}",
                field="val_dataset",
            )
        val = (None, None, {k: jnp.asarray(cast(v)) for k, v in named_val.items()})
    elif loop.val_dataset is not None:
        xv, yv, extras_v = model_data(loop.val_dataset, "TrainingLoop.val_dataset")
        if yv is None:
            raise DataError("TrainingLoop.val_dataset has no 'y'; the validation ELBO needs it")
        val = (
            jnp.asarray(xv),
            jnp.asarray(yv),
            {k: jnp.asarray(cast(v)) for k, v in extras_v.items()},
        )
    base_model = task.bound_model()
    rows: int | None = None  # the rows the model was traced on (x's), None for data by name
    if named is not None:
        model = base_model
        sites = check_task_on_args(task, (), first, model=model)
    else:
        model = bind_data_size(
            base_model, n, loop.batch_size, ordered=task.ordered, streaming=streamed is not None
        )
        sites = check_task_on_data(
            task, first["x"], first["y"], model=model, extras={k: first[k] for k in names}
        )
        rows = int(np.shape(first["x"])[0])
        refuse_local_latents(
            sites,
            n,
            loop.batch_size,
            rows=rows,
            backend=BACKEND,
            streaming=streamed is not None,
        )
    # The model's positional arguments: (x, y) in the (x, y) form, none by name.
    positional: tuple[str, ...] = () if named is not None else ("x", "y")
    if named_val is not None:
        check_task_on_args(task, (), named_val)
    elif val is not None:
        check_task_on_data(task, val[0], val[1], extras=val[2])

    # Left at the loop's default, the optimiser is SVI's own schedule (decision 0215).
    schedule = default_schedule(loop.optimizer_config, loop.max_steps)
    tx = resolve_optimizer(schedule or loop.optimizer_config, max_steps=loop.max_steps)
    loss = task.loss if task.loss is not None else Trace_ELBO()
    first_kw = {k: jnp.asarray(first[k]) for k in names}
    first_args = tuple(jnp.asarray(first[k]) for k in positional)
    root = jax.random.PRNGKey(loop.seed)
    init_key, eval_key, predict_key = jax.random.split(root, 3)
    choice, guide_name = guide_choice(task.guide, sites)

    def start(choice: Any) -> tuple[Any, Any, Any]:
        standardized = isinstance(choice, str) and choice == STANDARDIZED
        guide: Any = standardized_guide(model) if standardized else make_guide(choice, model)
        svi = SVI(model, guide, optax_to_numpyro(tx), loss)
        if options.init == "eager":  # NumPyro's own, op by op: SVI.run's start to the bit
            state = svi.init(init_key, *first_args, **first_kw)
        else:
            state = compiled_init(svi, init_key, first_args, first_kw)
        if standardized:  # the Laplace fit the guide's parameters are in units of
            guide.laplace = laplace_fit(guide, model, first_args, first_kw)
        return guide, svi, state

    try:
        try:
            guide, svi, state = start(choice)
        except Exception:
            if task.guide is not None or choice != STANDARDIZED:
                raise
            # The default's full-rank guide cannot take every model (a local latent in a
            # subsampled plate, a discrete site): AutoNormal, as before it, takes those.
            choice = guide_name = "AutoNormal"
            guide, svi, state = start(choice)
    except Exception as exc:  # the guide does not fit the model, or the model's density
        # is not finite where the guide starts (e.g. an ARMA recursion overflowing float32)
        x64 = "" if options.x64 else ' backend_options={"x64": True} (float32 may overflow), '
        raise ConfigError(
            f"task.guide: initialising SVI failed: {type(exc).__name__}: {exc}. Either the "
            "guide does not fit the model (check task.guide), or the model's log density is "
            f"not finite where the guide starts: try{x64 or ' '}a start nearer the posterior "
            "(an autoguide's init_loc_fn), or check the model at the prior's draws",
            field="task.guide",
        ) from exc

    # The user's own optax object (issue 20): used as given, identity derived for the guard.
    own = own_optimizer(loop, svi.get_params(state), optimizer_id=options.optimizer_id)

    def val_elbo(carry: Any, xv: Any, yv: Any, kv: Any) -> Any:
        args = () if xv is None else (xv, yv)
        return loss.loss(eval_key, svi.get_params(carry), base_model, guide, *args, **kv)

    fp = core_fingerprint(
        loop,
        backend=BACKEND,
        model_structure=tree_structure_digest(svi.get_params(state)),
        dataset_length=n if streamed is None else None,
        extra={
            "model": model_import_string(task.model)
            or getattr(task.model, "__qualname__", "model"),
            "guide": guide_name,
            "loss": type(loss).__name__,
            "num_particles": getattr(loss, "num_particles", 1),
            "x64": options.x64,
            **({"init": "eager"} if options.init == "eager" else {}),
            **({"model_kwargs": task.model_kwargs} if task.model_kwargs else {}),
            **({"data_keywords": list(names)} if names else {}),
            **(streamed.record if streamed is not None else {}),
        },
        optimizer_identity=own.identity if own is not None else None,
    )
    from pipekit_train.jax.checkpoint import checkpointer_for

    checkpointer = checkpointer_for(loop, fp, resume=options.resume)
    from ._program import build_svi_program

    program = build_svi_program(
        svi,
        state,
        seed=loop.seed,
        val=val,
        val_elbo=val_elbo,
        keywords=names,
        whole={k: jnp.asarray(v) for k, v in data.items()} if named is not None else None,
    )
    result = run_program(
        loop,
        program,
        data=batches,
        checkpointer=checkpointer,
        steps_per_call=options.steps_per_call,
        fingerprint=fp,
    )
    final_state = program.tree(result.carry)
    params = svi.get_params(final_state)
    # Draws from the fitted guide, with the model's deterministic sites, on the full data;
    # through Predictive so that every guide (autoguides and callables) works the same way.
    deterministic = [k for k, v in sites.items() if v["type"] == "deterministic"]
    latent = [k for k, v in sites.items() if v["type"] == "sample" and not v["is_observed"]]

    # One jitted, vectorised call (parallel=True): Predictive's default lax.map would compile
    # a second scan as costly as the training chunk's, and eager vmap dozens of small ops.
    @jax.jit
    def guide_draws(key: Any, p: Any, xs: Any, kw: dict[str, Any]) -> Any:
        return Predictive(
            base_model,
            guide=guide,
            params=p,
            num_samples=task.predictive_samples,
            return_sites=latent + deterministic,
            parallel=True,
        )(key, *xs, **kw)

    # (x,) in the (x, y) form; by name, all of it (the latent and deterministic sites
    # drawn do not depend on whether the observations are given).
    # After the last step: a failure here is core's FinishError naming the call, and the
    # final checkpoint stays for a rerun (engine.finishing).
    with finishing("operator", "numpyro.infer.Predictive drawing from the fitted guide"):
        draws = guide_draws(
            predict_key,
            params,
            tuple(jnp.asarray(data[k]) for k in positional[:1]),
            {k: jnp.asarray(data[k]) for k in names},
        )
        samples = {k: np.asarray(v)[None] for k, v in draws.items() if k in latent + deterministic}
        op = NumpyroPredictiveOp(
            base_model,
            samples,
            predictive_site=predictive_site_of(task, sites),
            predictive_samples=task.predictive_samples,
            seed=loop.seed,
        )
    final_loss = result.state.metrics.get("loss")
    with finishing("report", "the posterior summary of the guide's draws"):
        summary = variational_summary(samples) if samples else None
        msgs = warn_diagnostics(summary, BACKEND) if summary is not None else []
    if summary is not None:
        # Whether the guide can be trusted (bayes._variational_health): the ELBO stopped
        # moving, PSIS k-hat of its draws' importance weights, and its spread.
        # The autoguide's class (the fix for a high k-hat depends on it); None: the user's own.
        kind = type(guide)
        autoguide = kind.__module__.startswith("numpyro.") or guide_name == STANDARDIZED
        summary["guide"] = kind.__name__ if autoguide else None
        summary["elbo_convergence"] = elbo_convergence(result.history.get("loss", []))
        subsampled = model_subsamples(sites, rows)
        if streamed is not None:
            summary["importance"] = {"skipped": "a stream: the full data is not in memory"}
        elif subsampled is not None:
            # Each evaluation of the density draws its own indices: the weights would be
            # noise (k-hat 28 measured, a plate of 20 in 100 rows), not the guide's fit.
            plate, size, k = subsampled
            summary["importance"] = {
                "skipped": f"the model subsamples plate {plate!r} ({k} of {size}), so its "
                "density at a draw is a random estimate that PSIS cannot weigh"
            }
        else:
            summary["importance"] = guide_importance(
                base_model,
                guide,
                params,
                tuple(jnp.asarray(data[k]) for k in positional),
                {k: jnp.asarray(data[k]) for k in names},
                jax.random.fold_in(predict_key, 1),
                latent,
            )
        for msg in variational_warnings(summary):
            msgs.append(msg)
            warn_user(f"{BACKEND}: {msg}")
    if final_loss is not None and not np.isfinite(final_loss):
        msgs.append(
            f"the final ELBO is {-float(final_loss)}: the fit diverged; lower the learning "
            "rate (optimizer_config.lr) or start the guide nearer the posterior "
            "(task.guide's init_scale)"
        )
        warn_user(f"{BACKEND}: {msgs[-1]}")
    own_keys: dict[str, Any] = {
        "x64": bool(options.x64),
        "init": options.init,
        "guide": guide_name,
        **({"laplace": laplace_record(guide.laplace)} if guide_name == STANDARDIZED else {}),
        "final_elbo": -float(final_loss) if final_loss is not None else None,
        "final_loss": float(final_loss) if final_loss is not None else None,
        "val_elbo": result.eval_metrics.get("val_elbo"),
        "params": {k: np.asarray(v) for k, v in params.items()},
        "eval_metrics": dict(result.eval_metrics),
        "steps_per_call": options.steps_per_call,
        "shuffled": shuffle,
        "num_data": n,
        "stream": streamed.record["data"] if streamed is not None else None,
    }
    if own is not None:
        own_keys["optimizer"] = own.info()
    elif schedule is not None:
        own_keys["optimizer"] = {"default_schedule": schedule}
    info = jax_backend_info(
        BACKEND,
        "pipekit-train-numpyro",
        result.outcome(),
        started=started,
        diagnostics=summary,
        warnings=msgs,
        extras=own_keys,
    )
    return op, info
