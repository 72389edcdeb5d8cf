"""``run(loop)``: train a ``TrainingLoop`` with Equinox + Optax + Grain + Orbax."""

from __future__ import annotations

import time
from typing import Any

import equinox as eqx
import jax
import numpy as np

from pipekit_train.engine import (
    BatchSource,
    RecordSource,
    StreamIterator,
    as_stream,
    check_labels,
    eval_batches,
    finishing,
    normalize_dataset,
    output_width,
    refuse_shuffle_option,
    refuse_stream_options,
)
from pipekit_train.errors import ConfigError, DataError, PipekitError
from pipekit_train.fingerprint import fingerprint as core_fingerprint
from pipekit_train.jax import own_optimizer
from pipekit_train.jax.compile_cache import use_compilation_cache
from pipekit_train.jax.data import GrainBatchIterator
from pipekit_train.jax.losses import resolve_loss
from pipekit_train.jax.optim import resolve_optimizer, schedule_free_state, with_accumulation
from pipekit_train.jax.precision import storage_tree
from pipekit_train.jax.program import run_program
from pipekit_train.jax.report import jax_backend_info
from pipekit_train.jax.structure import tree_structure_digest
from pipekit_train.loop import FEATURE_DEFAULTS, require_features
from pipekit_train.losses import is_classification

from ._op import JaxModelOp
from ._options import parse_options
from ._placement import Placement
from ._program import EquinoxProgram, deployed_model
from ._state import TrainState
from ._step import StepFeatures
from ._task import StatefulSupervisedTask, SupervisedTask, _apply, apply_stateful

_STATEFUL_SIGNATURE = "loss_fn(model, state, batch, key) -> (loss, (metrics, new_state))"


def _has_state_index(module: Any) -> bool:
    """Whether ``module`` holds an ``eqx.nn.StateIndex`` (it needs an ``eqx.nn.State``)."""
    leaves = jax.tree_util.tree_leaves(module, is_leaf=lambda x: isinstance(x, eqx.nn.StateIndex))
    return any(isinstance(leaf, eqx.nn.StateIndex) for leaf in leaves)


def _unwrap_model(model_op: Any) -> tuple[Any, Any, Any]:
    """``(op, module, model_state)`` for an op, a bare module, or a ``(module, state)`` pair."""
    op, state = None, None
    if (
        isinstance(model_op, tuple)
        and len(model_op) == 2
        and isinstance(model_op[0], eqx.Module)
        and isinstance(model_op[1], eqx.nn.State)
    ):
        module, state = model_op
    elif isinstance(model_op, eqx.Module):
        module = model_op
    elif isinstance(getattr(model_op, "module", None), eqx.Module):
        op, module, state = model_op, model_op.module, getattr(model_op, "state", None)
    else:
        raise ConfigError(
            "TrainingLoop.model_op must be an equinox.Module, a (model, state) pair from "
            "eqx.nn.make_with_state, or a pipekit_train.adapters.equinox.JaxModelOp (anything "
            f"with a .module that is an equinox.Module) for the equinox backend; got "
            f"{type(model_op).__name__}",
            field="model_op",
        )
    if state is None and _has_state_index(module):
        raise ConfigError(
            f"TrainingLoop.model_op: {type(module).__name__} holds stateful layers "
            "(eqx.nn.BatchNorm or another eqx.nn.StateIndex) but no eqx.nn.State was given; "
            "build it with model, state = eqx.nn.make_with_state(Model)(...) and pass "
            "model_op=(model, state) or JaxModelOp(model, state=state)",
            field="model_op",
        )
    return op, module, state


def _resolve_task(loop: Any, stateful: bool) -> Any:
    if loop.task is not None:
        if not callable(getattr(loop.task, "loss_fn", None)):
            signature = (
                _STATEFUL_SIGNATURE if stateful else "loss_fn(model, batch, key) -> (loss, metrics)"
            )
            raise ConfigError(
                f"TrainingLoop.task must provide {signature} for the equinox backend; "
                f"{type(loop.task).__name__} has none",
                field="task",
            )
        return loop.task
    loss = resolve_loss(loop.loss, field="TrainingLoop.loss")
    kind = loop.loss if isinstance(loop.loss, str) and is_classification(loop.loss) else None
    if stateful:
        return StatefulSupervisedTask(loss=loss, classification=kind)
    return SupervisedTask(loss=loss, classification=kind)


def _check_loss_shape(
    task: Any, state: TrainState, batch: dict[str, Any], key: Any, user_task: bool
) -> None:
    """Trace (no compilation) the loss on one batch and require a scalar."""
    field = "task" if user_task else "loss"
    stateful = state.model_state is not None
    try:
        if stateful:
            out = eqx.filter_eval_shape(task.loss_fn, state.model, state.model_state, batch, key)
        else:
            out = eqx.filter_eval_shape(task.loss_fn, state.model, batch, key)
    except Exception as exc:  # the user's model or loss failed to trace on a real batch
        hint = f" (a stateful model's task is {_STATEFUL_SIGNATURE})" if stateful else ""
        raise ConfigError(
            f"TrainingLoop.{field}: computing the loss on one training batch failed{hint}: "
            f"{type(exc).__name__}: {exc}",
            field=field,
        ) from exc
    if not (isinstance(out, tuple) and len(out) == 2):
        raise ConfigError(
            f"TrainingLoop.{field}: loss_fn must return (loss, metrics_dict), got {out!r}",
            field=field,
        )
    if stateful:
        aux = out[1]
        expected: Any = jax.tree_util.tree_structure(state.model_state)
        if not (
            isinstance(aux, tuple)
            and len(aux) == 2
            and jax.tree_util.tree_structure(aux[1]) == expected
        ):
            raise ConfigError(
                f"TrainingLoop.{field}: the model is stateful, so the task must be "
                f"{_STATEFUL_SIGNATURE}, returning the new eqx.nn.State; got {out[1]!r}",
                field=field,
            )
    loss = out[0]
    if getattr(loss, "shape", None) != ():
        raise ConfigError(
            f"TrainingLoop.{field} must return a scalar, but it returns an array of shape "
            f"{getattr(loss, 'shape', '?')}; reduce it (e.g. with .mean())",
            field=field,
        )


def _head_width(state: TrainState, batch: dict[str, Any], key: Any) -> int | None:
    """The width of the model's output on ``batch`` (last axis), traced, not compiled.

    ``eqx.filter_eval_shape`` of the prediction the synthesised task makes (the model
    vmapped over ``batch["x"]``), so a wrong head is found before anything compiles.
    """
    if state.model_state is not None:
        out = eqx.filter_eval_shape(
            lambda m, s, x, k: apply_stateful(m, s, x, k)[0],
            state.model,
            state.model_state,
            batch["x"],
            key,
        )
    else:
        out = eqx.filter_eval_shape(_apply, state.model, batch["x"], key)
    shape = getattr(out, "shape", None)
    return output_width(shape) if shape is not None else None


def _check_labels(
    loop: Any, state: TrainState, source: Any, first: dict[str, Any], val: Any, key: Any
) -> None:
    """Labels against the head for a classification loss name (engine's ``check_labels``).

    The whole label column when the data is in memory; the first batch of a
    lazily read source or stream.
    """
    if loop.task is not None or not is_classification(loop.loss):
        return
    width = _head_width(state, first, key)
    data = source.data if source is not None else None
    y = data.get("y") if isinstance(data, dict) else first.get("y")
    check_labels(y, width, loop.loss, field="TrainingLoop.dataset")
    if val is not None:
        val_y = val.get("y") if isinstance(val, dict) else next(eval_batches(val, 1)).get("y")
        check_labels(val_y, width, loop.loss, field="TrainingLoop.val_dataset")


def _describe_batch(batch: dict[str, Any]) -> str:
    return (
        "{"
        + ", ".join(
            f"{k!r}: {np.asarray(v).dtype}{list(np.shape(v)[1:])}" for k, v in batch.items()
        )
        + "}"
    )


def _check_eval(
    task: Any,
    state: TrainState,
    train_batch: dict[str, Any],
    val: Any,
    batch_size: int,
    key: Any,
    user_task: bool,
) -> None:
    """Trace (no compilation) the evaluation on one ``val_dataset`` batch.

    Without this, a ``val_dataset`` that does not fit the model surfaces as a raw
    JAX error at the first evaluation, after training has already run.
    """
    val_batch = next(iter(eval_batches(val, batch_size)))
    eval_fn = getattr(task, "eval_fn", None)
    fn = eval_fn if eval_fn is not None else task.loss_fn
    model = eqx.nn.inference_mode(state.model)
    args = (model, state.model_state) if state.model_state is not None else (model,)
    try:
        out = eqx.filter_eval_shape(fn, *args, val_batch, key)
    except PipekitError:
        raise
    except Exception as exc:  # the val data does not fit, or the user's eval_fn fails
        differs = set(val_batch) != set(train_batch) or any(
            np.shape(val_batch[k])[1:] != np.shape(train_batch[k])[1:] for k in train_batch
        )
        if differs:
            raise DataError(
                "TrainingLoop.val_dataset does not fit the model: its records are "
                f"{_describe_batch(val_batch)} but TrainingLoop.dataset's are "
                f"{_describe_batch(train_batch)}; give val_dataset the same fields and "
                f"per-example shapes ({type(exc).__name__}: {exc})"
            ) from exc
        field = "task" if user_task else "val_dataset"
        what = "task.eval_fn" if eval_fn is not None and user_task else "the evaluation"
        raise ConfigError(
            f"TrainingLoop.{field}: {what} failed on one validation batch "
            f"{_describe_batch(val_batch)}: {type(exc).__name__}: {exc}",
            field=field,
        ) from exc
    metrics = out if eval_fn is not None else (out[1] if isinstance(out, tuple) else None)
    if eval_fn is None and state.model_state is not None and isinstance(metrics, tuple):
        metrics = metrics[0]
    bad = None
    if not isinstance(metrics, dict):
        bad = f"returns {type(metrics).__name__}, not a dict of scalar metrics"
    else:
        for name, value in metrics.items():
            if getattr(value, "shape", ()) != ():
                bad = f"returns metric {name!r} of shape {value.shape}; metrics must be scalars"
                break
    if bad is not None and eval_fn is not None:
        raise ConfigError(f"TrainingLoop.task: eval_fn {bad}", field="task")


def _batch_source(
    loop: Any, options: Any, rows_per_step: int, processes: tuple[int, int]
) -> BatchSource:
    """The map-style batch source of ``loop.dataset`` (dict, tuple, indexable, MapDataset).

    A ``grain.MapDataset`` is read in its own order (the engine's ``BatchSource``), so an
    explicit ``backend_options.shuffle=True`` with one is a ``ConfigError``.
    """
    refuse_shuffle_option(loop.dataset, loop.backend_options)
    train = normalize_dataset(loop.dataset, "TrainingLoop.dataset")
    rows = len(train) if isinstance(train, RecordSource) else int(np.shape(train["x"])[0])
    if loop.accumulate_steps > 1 and rows_per_step > rows:
        raise DataError(
            f"TrainingLoop.accumulate_steps ({loop.accumulate_steps}) x batch_size "
            f"({loop.batch_size}) = {rows_per_step} rows per optimiser update, more than "
            f"TrainingLoop.dataset's {rows} rows; lower accumulate_steps or batch_size"
        )
    return BatchSource(
        train,
        rows_per_step,
        loop.seed,
        shuffle=options.shuffle,
        process_index=processes[0],
        process_count=processes[1],
    )


def _check_stream_fields(loop: Any, spec: Any) -> None:
    """Refuse the loop fields a stream contradicts (its order and reading are the user's)."""
    refuse_stream_options(loop.backend_options)
    if spec is not None or jax.process_count() > 1:
        raise ConfigError(
            "TrainingLoop.sharding / several processes with a streaming TrainingLoop.dataset "
            "are not supported yet (each process would need its own shard of the stream); "
            "give map-style data (a dict of arrays, an indexable, a grain.MapDataset)",
            field="dataset",
        )


def fingerprint(
    loop: Any,
    module: Any,
    dataset_length: int | None,
    model_state: Any = None,
    optimizer_identity: dict[str, Any] | None = None,
    *,
    stream: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The resume guard stored in every checkpoint (core's, with the model's array digest).

    A stateful model adds its state's structure digest, and each feature field set
    away from its default (``accumulate_steps``, ``ema_decay``, ``precision``) is
    recorded, so a resume with another one is refused by name. At the defaults the
    fingerprint is the one earlier versions wrote. ``optimizer_identity`` is the derived
    identity of the user's own optax object (``_own_optax``), when there is one;
    ``stream`` the description of a streaming dataset (which has no length).
    """
    extra: dict[str, Any] = {
        name: getattr(loop, name)
        for name, default in FEATURE_DEFAULTS.items()
        if getattr(loop, name) != default
    }
    if model_state is not None:
        extra["model_state_structure"] = tree_structure_digest(model_state)
    if stream is not None:  # a stream has no length: record its kind and the batch size
        extra["data"] = stream
        extra["batch_size"] = loop.batch_size
    return core_fingerprint(
        loop,
        backend="equinox",
        model_structure=tree_structure_digest(eqx.filter(module, eqx.is_array)),
        dataset_length=dataset_length,
        extra=extra or None,
        optimizer_identity=optimizer_identity,
    )


def run(loop: Any) -> tuple[JaxModelOp, dict[str, Any]]:
    """Train ``loop`` end-to-end with the Equinox + Optax + Grain + Orbax stack.

    Every user mistake is raised as a ``PipekitError`` before the first
    compilation. Returns the trained ``JaxModelOp`` (the class of the given op,
    when one was given) and ``backend_info``.
    """
    started = time.perf_counter()
    require_features(loop, supported=tuple(FEATURE_DEFAULTS), backend="equinox")
    options = parse_options(loop.backend_options)
    cache = use_compilation_cache(options.compilation_cache)
    model_op, module, model_state = _unwrap_model(loop.model_op)
    module = storage_tree(module, loop.precision)
    features = StepFeatures.of(loop)
    # accumulate_steps = k: each step reads one record of k * batch_size rows (k
    # micro-batches); max_steps counts optimiser updates
    # (docs/decisions/0078-max-steps-counts-updates.md).
    rows_per_step = loop.batch_size * loop.accumulate_steps
    spec = loop.sharding
    # Without a spec the single-device path is kept even under a distributed JAX.
    # With one, process p reads block r of each global batch, where r is the block of
    # rows its devices hold (r == p for a process-major mesh such as Mesh(jax.devices())).
    placement_processes = (0, 1)
    if spec is not None:
        from ._sharding import validate_sharding

        block = validate_sharding(loop, spec, module)
        placement_processes = (block, jax.process_count())
    stream = as_stream(loop.dataset, "TrainingLoop.dataset")
    source: BatchSource | None = None
    if stream is not None:  # the user's own stream (issue 20): read as it is
        _check_stream_fields(loop, spec)
        stream_data = StreamIterator(stream, rows_per_step)
    else:
        source = _batch_source(loop, options, rows_per_step, placement_processes)
    val = (
        normalize_dataset(loop.val_dataset, "TrainingLoop.val_dataset")
        if loop.val_dataset is not None
        else None
    )
    optimizer = with_accumulation(
        resolve_optimizer(
            loop.optimizer_config,
            max_steps=loop.max_steps,
            hyperparam_dtype=np.float32 if loop.precision == "bfloat16" else None,
        ),
        loop.accumulate_steps,
    )
    own = own_optimizer(
        loop,
        eqx.filter(module, eqx.is_inexact_array),
        optimizer_id=options.optimizer_id,
        passes_value=True,  # the step passes its loss as value= (optimizer_update)
    )
    task = _resolve_task(loop, stateful=model_state is not None)

    root = jax.random.PRNGKey(loop.seed)
    base_key, eval_key = jax.random.split(root)
    # The checks read the state's shapes; it is built (one compiled program) after them.
    state = TrainState.planned(module, optimizer, model_state, ema=loop.ema_decay is not None)
    if loop.ema_decay is not None and schedule_free_state(state.opt_state) is not None:
        raise ConfigError(
            "TrainingLoop.ema_decay contradicts optimizer_config, a schedule-free optimiser "
            "(optax.contrib.schedule_free_*): it already averages its iterates, and its "
            "model for evaluation and for the trained op is "
            "optax.contrib.schedule_free_eval_params(state, params); keep one: drop "
            "ema_decay, or use an optimiser without schedule-free averaging",
            field="ema_decay",
        )
    first_batch = source[0] if source is not None else stream_data.first_batch()
    if spec is not None:
        from ._sharding import validate_batch_spec, validate_model_spec

        validate_model_spec(spec, state)
        validate_batch_spec(spec, first_batch, rows_per_step)
    _check_loss_shape(task, state, first_batch, base_key, user_task=loop.task is not None)
    _check_labels(loop, state, source, first_batch, val, base_key)
    if val is not None:
        _check_eval(
            task,
            state,
            first_batch,
            val,
            loop.batch_size,
            eval_key,
            user_task=loop.task is not None,
        )

    from pipekit_train.jax.checkpoint import checkpointer_for

    checkpointer = checkpointer_for(
        loop,
        fingerprint(
            loop,
            module,
            source.n if source is not None else None,
            model_state,
            own.identity if own is not None else None,
            stream=stream.describe() if stream is not None else None,
        ),
        resume=options.resume,
        async_save=options.async_checkpointing,
    )

    state = TrainState.create(module, optimizer, model_state, ema=loop.ema_decay is not None)
    placement = Placement(spec)
    state = placement.state(state)
    program = EquinoxProgram(
        state,
        task,
        optimizer,
        base_key=base_key,
        eval_key=eval_key,
        val_data=val,
        eval_batch_size=loop.batch_size,
        placement=placement,
        features=features,
    )
    data = (
        GrainBatchIterator(source, worker_count=options.worker_count)
        if source is not None
        else stream_data
    )
    result = run_program(
        loop,
        program,
        data=data,
        checkpointer=checkpointer,
        steps_per_call=options.steps_per_call,
    )
    with finishing("operator"):
        final_state = program.state_of(result.carry)
        final_model = deployed_model(final_state)
        final_model_state = final_state.model_state
        if placement.multiprocess:
            final_model = _process_local(final_model)
            if final_model_state is not None:
                final_model_state = _process_local(final_model_state)
        trained = _wrap(model_op, final_model, final_model_state)
    extras = run_extras(loop, options.steps_per_call, model_state, placement)
    if own is not None:
        extras["optimizer"] = own.info()
    info = jax_backend_info(
        "equinox",
        "pipekit-train-equinox",
        result.outcome(),
        started=started,
        extras=extras,
    )
    cache.prune()  # only now: a run refused by validation deletes nothing (compile_cache)
    return trained, info


def _process_local(module: Any) -> Any:
    """The trained module with every array whole on this process's first device.

    Under several processes the carry's arrays span devices this process cannot
    address; the returned op must be usable (called, saved) on each process alone.
    """
    from jax.experimental import multihost_utils

    dynamic, static = eqx.partition(module, eqx.is_array)
    host = multihost_utils.process_allgather(dynamic, tiled=True)
    device = jax.local_devices()[0]
    local = jax.tree_util.tree_map(lambda a: jax.device_put(np.asarray(a), device), host)
    return eqx.combine(local, static)


def _wrap(model_op: Any, module: Any, model_state: Any = None) -> JaxModelOp:
    """The trained op: the given op's class over the trained module (and state)."""
    if model_op is not None and hasattr(model_op, "with_module"):
        out: JaxModelOp = (
            model_op.with_module(module)
            if model_state is None
            else model_op.with_module(module, model_state)
        )
        return out
    if model_op is not None and isinstance(model_op, JaxModelOp):
        try:
            return type(model_op)(module, state=model_state)
        except TypeError:
            pass
    return JaxModelOp(module, state=model_state)


__all__ = ["run", "fingerprint"]


def run_extras(
    loop: Any, steps_per_call: int, model_state: Any, placement: Placement
) -> dict[str, Any]:
    """The Equinox backend's own ``backend_info`` keys, for a solo run and each member of a
    population alike."""
    return {
        "steps_per_call": steps_per_call,
        "features": {
            "stateful_model": model_state is not None,
            "accumulate_steps": loop.accumulate_steps,
            "ema_decay": loop.ema_decay,
            "precision": loop.precision,
        },
        "sharding": placement.describe(),
    }
