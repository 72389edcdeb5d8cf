"""``run(loop)``: NUTS/HMC on a ``NumpyroTask``, chunked and checkpointed by core's driver."""

from __future__ import annotations

import hashlib
import time
from typing import Any

import numpy as np

from pipekit_train.adapters.bayes import (
    NumpyroPredictiveOp,
    WarmupCheck,
    check_init_values,
    check_task_on_args,
    check_task_on_data,
    diagnostics,
    draws_by_chain,
    model_data,
    model_import_string,
    named_data,
    precision,
    predictive_site_of,
    require_task,
    starts_from,
    warn_diagnostics,
    warn_unused_fields,
)
from pipekit_train.errors import warn_user
from pipekit_train.fingerprint import fingerprint as core_fingerprint
from pipekit_train.jax.compile_cache import use_compilation_cache
from pipekit_train.jax.program import run_program
from pipekit_train.jax.report import jax_backend_info
from pipekit_train.loop import require_features

from ._options import McmcOptions, parse_options
from ._program import STAT_NAMES

BACKEND = "numpyro-mcmc"

__all__ = ["run", "BACKEND"]


def _data_digest(args: tuple[np.ndarray, ...], kwargs: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name, a in (*zip(("x", "y"), args, strict=False), *sorted(kwargs.items())):
        if name not in ("x", "y") or not args:
            h.update(name.encode())  # only named arrays add to the digest (x / y as before)
        h.update(f"{a.shape}{a.dtype}".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def _jsonable(value: Any) -> Any:
    """Arrays (and tuple-keyed blocks) as lists, for the fingerprint."""
    if isinstance(value, dict):
        return {",".join(k): np.asarray(v).tolist() for k, v in value.items()}
    return None if value is None else np.asarray(value).tolist()


def _model_name(model: Any) -> str:
    return model_import_string(model) or str(getattr(model, "__qualname__", type(model).__name__))


def _fingerprint(
    loop: Any, task: Any, options: McmcOptions, state: Any, args: Any, kwargs: Any
) -> Any:
    from pipekit_train.jax.structure import tree_structure_digest

    return core_fingerprint(
        loop,
        backend=BACKEND,
        model_structure=tree_structure_digest(state.z),
        optimizer=False,
        extra={
            "model": _model_name(task.model),
            "data": _data_digest(args, kwargs),
            **({"model_kwargs": task.model_kwargs} if task.model_kwargs else {}),
            "num_warmup": task.num_warmup,
            "num_samples": task.num_samples,
            "num_chains": task.num_chains,
            "sampler": _sampler_record(options),
        },
    )


def _sampler_record(options: McmcOptions) -> dict[str, Any]:
    """The sampler's settings for the resume guard: the options, or a user kernel's own."""
    if options.kernel_object is not None:
        from ._user_kernel import kernel_settings

        return {
            "user_kernel": kernel_settings(options.kernel_object),
            "chain_method": options.chain_method,
            "x64": options.x64,
        }
    return {
        "kernel": options.kernel,
        "chain_method": options.chain_method,
        "dense_mass": options.dense_mass,
        "target_accept": options.target_accept,
        "max_tree_depth": options.max_tree_depth,
        "num_steps": options.num_steps,
        "trajectory_length": options.trajectory_length,
        "regularize_mass_matrix": options.regularize_mass_matrix,
        "init_strategy": options.init_strategy,
        "init_values": options.init_values,
        "step_size": options.step_size,
        "adapt_step_size": options.adapt_step_size,
        "adapt_mass_matrix": options.adapt_mass_matrix,
        "inverse_mass_matrix": _jsonable(options.inverse_mass_matrix),
        "forward_mode_differentiation": options.forward_mode_differentiation,
        "init_jitter": options.init_jitter,
        "x64": options.x64,
    }


def run(loop: Any) -> tuple[NumpyroPredictiveOp | None, dict[str, Any]]:
    """Sample the posterior of ``loop.task`` and return its predictive op and ``backend_info``.

    Every user mistake is raised before anything compiles. The run has two
    phases, ``warmup`` (``num_warmup`` steps) and ``sampling`` (``num_samples``
    draws); core's driver chunks them, checkpoints after warmup and every
    ``Checkpoint.every_n_steps`` steps (state, adaptation, draws so far), and
    resumes bit-identically after a kill.
    """
    started = time.perf_counter()
    # Accumulation, EMA and precision are not mapped onto this backend yet: refuse them.
    require_features(loop, supported=(), backend="numpyro-mcmc")
    options = parse_options(loop.backend_options)
    cache = use_compilation_cache(options.compilation_cache)
    task = require_task(loop, BACKEND)
    unused = warn_unused_fields(loop, BACKEND, ("max_steps", "batch_size", "optimizer_config"))
    with precision(options.x64):
        result = _run(loop, task, options, unused, started)
    cache.prune()  # only after a run that passed validation and finished (compile_cache)
    return result


def _run(
    loop: Any, task: Any, options: McmcOptions, unused: list[str], started: float
) -> tuple[NumpyroPredictiveOp | None, dict[str, Any]]:
    import jax.numpy as jnp

    from ._chain import ChainStep, init_model_key, make_kernel
    from ._potential import checked_by_the_screen, model_potential
    from ._program import build_sampler_program
    from ._screened import screened_starts

    dtype = jnp.result_type(float)
    cast = lambda a: np.asarray(a, dtype=dtype) if a.dtype.kind == "f" else a  # noqa: E731
    named = named_data(task.bound_model(), loop.dataset, "TrainingLoop.dataset")
    args: tuple[Any, ...]
    if named is None:  # the (x, y) form: model(x, y, **extras)
        x, y, extras = model_data(loop.dataset, "TrainingLoop.dataset")
        x, y = cast(np.asarray(x)), None if y is None else cast(np.asarray(y))
        args, kwargs_np = (x,) if y is None else (x, y), {k: cast(v) for k, v in extras.items()}
        sites = check_task_on_data(task, x, y, extras=kwargs_np)
    else:  # by the model's own argument names (none for a model without data)
        args, kwargs_np = (), {k: cast(v) for k, v in named.items()}
        sites = check_task_on_args(task, args, kwargs_np)
    if options.init_values:  # latent sites, their shapes and supports (bayes, as blackjax)
        check_init_values(sites, options.init_values)
    # None: a factor likelihood, no site to draw predictions from (the op says so).
    site = predictive_site_of(task, sites)
    if options.kernel_object is not None:
        from ._user_kernel import check_user_kernel

        check_user_kernel(options.kernel_object, task, options, dict(loop.backend_options))

    model = task.bound_model()
    kwargs = {k: jnp.asarray(v) for k, v in kwargs_np.items()}
    jargs = tuple(jnp.asarray(a) for a in args)
    starts = None
    if options.init_strategy == "screened" and options.kernel_object is None:
        # init_values set every chain's start themselves (the rest: uniform, as before).
        if not options.init_values:
            starts = _screened(screened_starts(model, jargs, kwargs, loop.seed, task.num_chains))
    potential = None
    if starts is not None:  # NumPyro's search for a start of its own is skipped (._potential)
        first = {k: v[0] for k, v in starts.items()}
        potential = model_potential(model, jargs, kwargs, first, init_model_key(loop.seed, task))
    kernel = make_kernel(model, options, potential)
    chain = ChainStep(
        kernel,
        task,
        jargs,
        options.chain_method,
        kwargs,
        postprocess=None if potential is None else potential.postprocess_fn,
    )
    # starts_from: a support depending on another site's value (init_values); checked: the
    # screen has checked the model at these starts (._potential.checked_by_the_screen).
    with starts_from(options.init_values), checked_by_the_screen(potential is not None):
        state = chain.init(loop.seed, starts)
    fp = _fingerprint(loop, task, options, state, args, kwargs_np)

    from pipekit_train.jax.checkpoint import checkpointer_for

    checkpointer = checkpointer_for(loop, fp, resume=options.resume, async_save=False)
    program = build_sampler_program(chain, state, loop.seed, fixed_chunk=options.steps_per_call)
    result = run_program(
        loop,
        program,
        data=None,
        checkpointer=checkpointer,
        steps_per_call=options.steps_per_call,
        fingerprint=fp,
        # A chain warmup left stuck, named before its draws are taken (bayes.WarmupCheck).
        hooks=[WarmupCheck(BACKEND, task.num_warmup, _adapted)],
    )
    from pipekit_train.engine import finishing

    # After the last step: a failure here is core's FinishError naming the call, and the
    # final checkpoint stays for a rerun (engine.finishing).
    with finishing("operator", "the draws of the trace, by chain"):
        samples, stats = draws_by_chain(result.trace, task.num_chains)
    op = None
    diag: dict[str, Any] | None = None
    msgs: list[str] = []
    if samples and next(iter(samples.values())).shape[1] > 0:
        with finishing("report", "the posterior diagnostics (R-hat, ESS, divergences)"):
            diag = diagnostics(
                samples,
                stats.get("diverging"),
                sample_stats={k: v for k, v in stats.items() if k != "diverging"},
                max_tree_depth=options.max_tree_depth if options.kernel == "nuts" else None,
            )
            msgs = warn_diagnostics(diag, BACKEND)
        with finishing("operator", "NumpyroPredictiveOp"):
            op = NumpyroPredictiveOp(
                model,
                samples,
                predictive_site=site,
                predictive_samples=task.predictive_samples,
                sample_stats=stats,
                seed=loop.seed,
            )
    info = jax_backend_info(
        BACKEND,
        "pipekit-train-numpyro",
        result.outcome(),
        started=started,
        diagnostics=diag,
        warnings=msgs,
        extras={
            "x64": bool(options.x64),
            "kernel": options.kernel,
            "user_kernel": options.kernel_object is not None,
            "num_warmup": task.num_warmup,
            "num_samples": task.num_samples,
            "num_chains": task.num_chains,
            "chain_method": options.chain_method,
            "draws_collected": int(next(iter(samples.values())).shape[1]) if samples else 0,
            "divergences": diag["divergences"] if diag else None,
            "ignored_fields": unused,
            "stat_names": list(STAT_NAMES),
            # Each chain's unconstrained start where the screen chose it (None: NumPyro's own
            # init strategy did): MCMC.run(..., init_params=starts) draws the same bits.
            "starts": None if starts is None else {k: np.asarray(v) for k, v in starts.items()},
        },
    )
    return op, info


def _adapted(state: Any) -> tuple[Any, Any]:
    """Each chain's adapted step size and log density from an ``HMCState`` (None, None for a
    user kernel's state without them)."""
    adapt = getattr(state, "adapt_state", None)
    step = getattr(adapt, "step_size", None)
    energy = getattr(state, "potential_energy", None)
    return step, None if energy is None else -np.asarray(energy)


def _screened(screened: Any) -> dict[str, Any] | None:
    """The screen's starts; where it could not weigh the model for a reason other than a
    discrete latent site (by design), a warning naming why, before anything samples."""
    from ._screened import DISCRETE

    if screened.starts is None and screened.reason not in (None, DISCRETE):
        warn_user(
            f"{BACKEND}: init_strategy 'screened' could not weigh this model's starts "
            f"({screened.reason}), so every chain starts as NumPyro's init_to_uniform would, "
            "which can leave a chain stuck in a flat tail — check the model traces with "
            "zeros for its latent sites, or set backend_options.init_values"
        )
    return screened.starts
