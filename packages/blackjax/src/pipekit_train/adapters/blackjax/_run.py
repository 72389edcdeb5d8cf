"""``run(loop)``: a BlackJAX sampler on a ``BlackjaxTask``, chunked and checkpointed by core."""

from __future__ import annotations

import hashlib
import time
from typing import Any

import numpy as np

from pipekit_train.adapters.bayes import (
    NumpyroPredictiveOp,
    WarmupCheck,
    diagnostics,
    draws_by_chain,
    is_named_form,
    model_data,
    model_import_string,
    named_data,
    precision,
    predictive_site_of,
    warn_diagnostics,
    warn_unused_fields,
)
from pipekit_train.engine import SizedStream, data_size, refuse_stream, sized_stream
from pipekit_train.errors import ConfigError, warn_user
from pipekit_train.fingerprint import fingerprint as core_fingerprint
from pipekit_train.jax.compile_cache import use_compilation_cache
from pipekit_train.jax.program import run_program
from pipekit_train.jax.report import jax_backend_info
from pipekit_train.loop import require_features

from ._options import BlackjaxOptions, check_counts, parse_options
from ._sampler import Sampler
from ._target import SG_SAMPLERS, Target, build_target, check_target
from ._task import BlackjaxTask, as_blackjax_task

BACKEND = "blackjax"

__all__ = ["run", "BACKEND"]


def _digest(*arrays: Any) -> str:
    h = hashlib.sha256()
    for a in arrays:
        if a is None:
            continue
        a = np.asarray(a)
        h.update(f"{a.shape}{a.dtype}".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def _name(fn: Any) -> str | None:
    if fn is None:
        return None
    return model_import_string(fn) or str(getattr(fn, "__qualname__", type(fn).__name__))


def _init_values_json(options: BlackjaxOptions) -> dict[str, Any]:
    """``backend_options.init_values`` as JSON lists (fingerprint and ``backend_info``)."""
    return {k: np.asarray(v).tolist() for k, v in (options.init_values or {}).items()}


def _fingerprint(
    loop: Any,
    task: BlackjaxTask,
    options: BlackjaxOptions,
    carry: Any,
    counts: Any,
    x: Any,
    y: Any,
    extras: dict[str, Any],
    stream: dict[str, Any] | None = None,
) -> Any:
    """The resume guard; ``stream`` is a streamed dataset's record (its kind, ``batch_size``
    and ``num_data``), which replaces the digest of the data a stream does not hold."""
    from pipekit_train.jax.structure import tree_structure_digest

    nt = task.numpyro_task
    return core_fingerprint(
        loop,
        backend=BACKEND,
        model_structure=tree_structure_digest(carry),
        optimizer=False,
        extra={
            "target": _name(nt.model) if nt else _name(task.logdensity_fn or task.loglik_fn),
            "data": _digest(x, y, *(extras[k] for k in sorted(extras))),
            **(stream or {}),
            **({"data_keywords": sorted(extras)} if extras else {}),
            **({"model_kwargs": nt.model_kwargs} if nt is not None and nt.model_kwargs else {}),
            "counts": list(counts),
            "sampler": options.sampler,
            "params": options.params,
            "init_values": _init_values_json(options),
            **({"init_jitter": options.init_jitter} if options.init_jitter else {}),
            "init_strategy": options.init_strategy,
            "x64": options.x64,
        },
    )


def _sampler(options: BlackjaxOptions, target: Target, counts: Any, init_key: Any) -> Sampler:
    from ._hmc import hmc_family
    from ._mclmc import mclmc
    from ._pathfinder import pathfinder
    from ._sgmcmc import sgmcmc
    from ._smc import smc
    from ._svgd import svgd

    warmup, samples, _ = counts
    name, params = options.sampler, options.params
    if name in ("nuts", "hmc"):
        return hmc_family(name, target.logdensity_fn, target.positions, params, warmup, samples)
    if name == "pathfinder":
        return pathfinder(target.logdensity_fn, target.positions, params, samples)
    if name == "smc":
        return smc(target.logdensity_fn, target.positions, params, samples, init_key)
    if name == "svgd":
        return svgd(target.logdensity_fn, target.positions, params, samples, init_key)
    if name == "mclmc":
        return mclmc(target.logdensity_fn, target.positions, params, warmup, samples, init_key)
    return sgmcmc(name, target.grad_fn, target.positions, params, warmup, samples)


def run(loop: Any) -> tuple[NumpyroPredictiveOp | None, dict[str, Any]]:
    """Sample ``loop.task``'s target with ``backend_options.sampler``; return the predictive
    op and ``backend_info``.

    Every user mistake is raised before anything compiles. The run's phases are
    the sampler's (``warmup`` then ``sampling``); core's driver chunks them,
    checkpoints after warmup and every ``Checkpoint.every_n_steps`` steps (sampler
    state, adaptation, step count and draws so far) and resumes bit-identically.
    """
    started = time.perf_counter()
    require_features(loop, supported=(), backend=BACKEND)
    options = parse_options(loop.backend_options)
    cache = use_compilation_cache(options.compilation_cache)
    task = as_blackjax_task(loop)
    sg = options.sampler in SG_SAMPLERS
    ignored = (
        ("max_steps", "optimizer_config") if sg else ("max_steps", "batch_size", "optimizer_config")
    )
    unused = warn_unused_fields(loop, BACKEND, ignored)
    with precision(options.x64):
        result = _run(loop, task, options, unused, started)
    cache.prune()  # only after a run that passed validation and finished (compile_cache)
    return result


def _cast(a: Any) -> Any:
    """``a`` with its floats in the run's precision (``None`` stays ``None``)."""
    import jax.numpy as jnp

    if a is None:
        return None
    a = np.asarray(a)
    return a.astype(jnp.result_type(float)) if a.dtype.kind == "f" else a


def _load(
    loop: Any, task: BlackjaxTask, sampler: str, first: dict[str, Any] | None = None
) -> tuple[Any, Any, dict[str, Any], bool]:
    """``(x, y, extras, by_name)``: the dataset (or ``first``, a stream's first batch), its
    floats in the run's precision; ``extras`` are its named arrays beyond ``x`` / ``y``
    (keywords of a NumPyro model), or with ``by_name`` all of it, bound to the model by its
    own argument names (bayes' ``named_data``, as numpyro-mcmc; ``{}``: a model without
    data). The minibatch samplers keep the ``(x, y)`` form (``_refuse_by_name``)."""
    nt, sg = task.numpyro_task, sampler in SG_SAMPLERS
    if first is not None:
        x, y = first["x"], first.get("y")
        extras = {k: v for k, v in first.items() if k not in ("x", "y")}
    elif nt is not None and not sg:
        named = named_data(nt.bound_model(), loop.dataset, "TrainingLoop.dataset")
        if named is not None:
            return None, None, {k: _cast(v) for k, v in named.items()}, True
        x, y, extras = model_data(loop.dataset, "TrainingLoop.dataset")
    elif loop.dataset is None:
        return None, None, {}, False
    else:
        if nt is not None:
            _refuse_by_name(loop.dataset, sampler)
        x, y, extras = model_data(loop.dataset, "TrainingLoop.dataset")
    if extras and nt is None:
        raise ConfigError(
            f"TrainingLoop.dataset has the named arrays {sorted(extras)} beyond x and y, which "
            "only a numpyro_task's model receives (as keywords); a raw log density sees none "
            "of them: fold them into x, or close over them in logdensity_fn",
            field="dataset",
        )
    return _cast(x), _cast(y), {k: _cast(v) for k, v in extras.items()}, False


def _refuse_by_name(dataset: Any, sampler: str) -> None:
    """sgld / sghmc batch the rows of ``x`` and scale by N/B; a dataset by the model's
    argument names (bayes' ``is_named_form``, no ``'x'`` among them) has no rows to batch."""
    if not is_named_form(dataset) or "x" in dataset:
        return
    raise ConfigError(
        f"sampler {sampler!r} draws minibatches of rows and scales their likelihood by N/B, "
        f"but TrainingLoop.dataset gives the model its arguments by name {sorted(dataset)}, "
        "arrays that need not share rows, so there is nothing to batch; give "
        "dataset={'x': X, 'y': Y} to a model(x, y=None, N=None) whose likelihood is in "
        "numpyro.plate('data', N, subsample_size=x.shape[0]), or keep the data by name with "
        "a sampler that reads it whole (nuts, hmc, mclmc, smc, pathfinder, svgd)",
        field="dataset",
    )


def _stream_of(
    loop: Any, options: BlackjaxOptions, sg: bool
) -> tuple[SizedStream | None, int | None]:
    """A streamed dataset (sgld / sghmc only: core's ``sized_stream``) and its declared N.

    The other samplers read the whole dataset, so a stream or a ``num_data`` next to them
    is refused by name."""
    if not sg:
        refuse_stream(loop.dataset, "TrainingLoop.dataset", f"sampler {options.sampler!r}")
        if options.num_data is not None:
            raise ConfigError(
                "backend_options.num_data is the dataset size that scales sgld / sghmc's "
                f"minibatches; sampler {options.sampler!r} reads the whole dataset: drop it",
                field="backend_options.num_data",
            )
        return None, None
    cast = lambda batch: {k: _cast(v) for k, v in batch.items()}  # noqa: E731
    streamed = sized_stream(
        loop, options.num_data, backend=f"blackjax {options.sampler}", cast=cast
    )
    return streamed, streamed.num_data if streamed is not None else None


def _run(
    loop: Any, task: BlackjaxTask, options: BlackjaxOptions, unused: list[str], started: float
) -> tuple[NumpyroPredictiveOp | None, dict[str, Any]]:
    import jax

    from pipekit_train.jax.checkpoint import checkpointer_for

    from ._program import build_sampler_program, chain_mesh

    sg = options.sampler in SG_SAMPLERS
    streamed, num_data = _stream_of(loop, options, sg)
    first = streamed.first if streamed is not None else None
    x, y, extras, by_name = _load(loop, task, options.sampler, first)
    if sg and streamed is None and x is not None:  # map-style: a declared N must agree
        data_size(options.num_data, int(np.shape(x)[0]), f"blackjax {options.sampler}")
    num_warmup, num_samples, _ = task.counts()
    check_counts(options, num_samples, num_warmup)
    sites = check_target(
        task,
        options.sampler,
        x,
        y,
        loop.batch_size,
        options.init_values,
        extras,
        num_data,
        by_name=by_name,
    )
    data: Any = None
    if streamed is not None:
        data = streamed.iterator
    elif sg:
        from pipekit_train.engine import BatchIterator, BatchSource

        rows = {"x": x, **extras} if y is None else {"x": x, "y": y, **extras}
        data = BatchIterator(BatchSource(rows, loop.batch_size, loop.seed, shuffle=options.shuffle))
    counts = task.counts()
    init_key, run_key = jax.random.split(jax.random.PRNGKey(loop.seed))
    target = build_target(
        task,
        options.sampler,
        x,
        y,
        counts[2],
        init_key,
        loop.batch_size,
        options.init_values,
        extras,
        init_jitter=options.init_jitter,
        num_data=num_data,
        by_name=by_name,
        screened=options.init_strategy == "screened",
    )
    sampler = _sampler(options, target, counts, init_key)
    record = streamed.record if streamed is not None else None
    fp = _fingerprint(loop, task, options, sampler.carry, counts, x, y, extras, record)
    checkpointer = checkpointer_for(loop, fp, resume=options.resume)
    mesh = chain_mesh(counts[2])
    program = build_sampler_program(
        sampler, target.postprocess, run_key, mesh=mesh, fixed_chunk=options.steps_per_call
    )
    # The steps before sampling (a Pathfinder move, warmup): a chain they left stuck is named
    # at their end, before its draws are taken (bayes.WarmupCheck).
    before = sum(p.steps for p in sampler.phases[:-1]) if len(sampler.phases) > 1 else 0
    result = run_program(
        loop,
        program,
        data=data,
        checkpointer=checkpointer,
        steps_per_call=options.steps_per_call,
        fingerprint=fp,
        hooks=[WarmupCheck(BACKEND, before, _adapted)],
    )
    samples, stats = draws_by_chain(result.trace, counts[2])
    final = program.tree(result.carry)
    adapted = {
        k: np.asarray(jax.device_get(final[k])).tolist()
        for k in ("step_size", "inverse_mass_matrix", "L", "lmbda", "tempering_steps")
        if k in final
    }
    if "metric" in final:  # mclmc's measured dense metric, the one its draws used
        from ._mclmc_metric import as_matrix

        adapted["inverse_mass_matrix"] = as_matrix(final["metric"]).tolist()
    lmbda = adapted.get("lmbda")
    op, diag, msgs = None, None, []
    if samples and next(iter(samples.values())).shape[1] > 0:
        diag = diagnostics(
            samples,
            stats.get("diverging"),
            sample_stats={k: v for k, v in stats.items() if k != "diverging"},
            max_tree_depth=options.params.get("max_tree_depth")
            if options.sampler == "nuts"
            else None,
        )
        msgs = warn_diagnostics(diag, BACKEND)
        if options.sampler == "mclmc" and "energy_error" in result.trace:
            msgs = [*msgs, *_mclmc_bias(diag, msgs, result.trace["energy_error"], options)]
        op = _predictive_op(task, samples, stats, loop.seed, sites)
    if lmbda is not None and min(lmbda) < 1.0:
        msgs = [*msgs, _unfinished_tempering(lmbda, options)]
    info = jax_backend_info(
        BACKEND,
        "pipekit-train-blackjax",
        result.outcome(),
        started=started,
        diagnostics=diag,
        warnings=msgs,
        extras={
            "chain_devices": 1 if mesh is None else int(mesh.size),
            "x64": bool(options.x64),
            "sampler": options.sampler,
            "sampler_params": dict(options.params),
            "init_values": _init_values_json(options),
            "step_meaning": sampler.step_meaning,
            "num_warmup": counts[0],
            "num_samples": counts[1],
            "num_chains": counts[2],
            "phases": {p.name: p.steps for p in sampler.phases},
            "adapted": adapted,
            "draws_collected": int(next(iter(samples.values())).shape[1]) if samples else 0,
            "divergences": diag["divergences"] if diag else None,
            "ignored_fields": unused,
            **sampler.info,
        },
    )
    if streamed is not None:
        info["stream"] = streamed.record
    return op, info


def _predictive_op(
    task: BlackjaxTask,
    samples: dict[str, Any],
    stats: dict[str, Any],
    seed: int,
    sites: dict[str, Any] | None,
) -> NumpyroPredictiveOp:
    nt = task.numpyro_task
    if nt is not None:
        # None: a factor likelihood, no site to draw predictions from (the op says so).
        site = nt.predictive_site if sites is None else predictive_site_of(nt, sites)
        return NumpyroPredictiveOp(
            nt.bound_model(),
            samples,
            predictive_site=site,
            predictive_samples=nt.predictive_samples,
            sample_stats=stats,
            seed=seed,
        )
    return NumpyroPredictiveOp(
        None,
        samples,
        predict_fn=task.predict_fn,
        predictive_samples=task.predictive_samples,
        sample_stats=stats,
        seed=seed,
    )


def _unfinished_tempering(lmbda: list[float], options: BlackjaxOptions) -> str:
    """Warn (and return the message) when SMC's tempering budget ended before λ = 1."""

    msg = (
        f"blackjax smc: tempering stopped at λ = {min(lmbda):.4g} < 1 after "
        f"max_tempering_steps = {options.params['max_tempering_steps']}: the draws are from a "
        "tempered target, not the posterior; raise max_tempering_steps or lower target_ess"
    )
    warn_user(msg)
    return msg


def _mclmc_bias(
    diag: dict[str, Any], problems: list[str], energy_error: Any, options: BlackjaxOptions
) -> list[str]:
    """MCLMC's bias check (``_mclmc.bias_warnings``): its warnings, emitted; on a clean run
    its summary joins the health line's OK (``diagnostics["checks"]``)."""
    from ._mclmc import bias_warnings

    extra, summary = bias_warnings(energy_error, options.params["desired_energy_var"], problems)
    for msg in extra:
        warn_user(f"{BACKEND}: {msg}")
    if not extra:
        diag["checks"] = [*diag.get("checks", []), summary]
    return extra


def _adapted(carry: Any) -> tuple[Any, Any]:
    """Each chain's adapted step size and log density from a sampler's carry (None, None for
    a sampler that adapts none per chain: SMC, SG-MCMC)."""
    if not isinstance(carry, dict) or "step_size" not in carry or "state" not in carry:
        return None, None
    return carry["step_size"], getattr(carry["state"], "logdensity", None)
