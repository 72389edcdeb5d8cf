"""``run(loop)``: train a ``TrainingLoop`` with Keras 3 ``compile`` + ``fit`` on JAX."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import numpy as np

from pipekit_train.callbacks import Callback
from pipekit_train.carry import TrainerCarryState
from pipekit_train.errors import ConfigError, DataError, PipekitError
from pipekit_train.jax.data import BatchSource, eval_batches, normalize_dataset

from ._bridge import build_callbacks, event_intervals, make_bridge, make_last_value_metric
from ._data import make_step_dataset, to_xy
from ._env import import_keras
from ._eval import make_evaluator
from ._losses import KerasTask, classification_kind, resolve_keras_loss
from ._op import KerasModelOp
from ._optim import make_rate_of_steps, resolve_keras_optimizer
from ._options import KerasOptions, parse_options
from ._signals import SignalFlag
from ._state import restore_state, state_template, structure_digest

__all__ = ["run", "fingerprint"]


def _unwrap(keras: Any, model_op: Any) -> Any:
    model = getattr(model_op, "model", model_op)
    if not isinstance(model, keras.Model):
        raise ConfigError(
            "TrainingLoop.model_op must be a keras.Model or a KerasModelOp for the keras "
            f"backend; got {type(model_op).__name__}",
            field="model_op",
        )
    return model


def _describe(batch: dict[str, Any]) -> str:
    return ", ".join(f"{k}: {np.asarray(v).dtype}{list(np.shape(v))}" for k, v in batch.items())


def _check_fits(model: Any, loss: Any, batch: dict[str, Any], field: str) -> Any:
    """Run the model and the loss on one real batch; a mismatch is a ``PipekitError``."""
    x, y = to_xy(batch)
    try:
        pred = model(x, training=False)
    except Exception as exc:
        raise DataError(
            f"TrainingLoop.{field} does not fit the model: calling it on one batch "
            f"({_describe(batch)}) failed: {type(exc).__name__}: {exc}. Give x with the "
            "shape and dtype the model's input expects"
        ) from exc
    try:
        value = loss(y, pred)
    except PipekitError:
        raise
    except Exception as exc:
        raise ConfigError(
            f"TrainingLoop.loss cannot compare the model's output {tuple(pred.shape)} with "
            f"the targets of {field} ({_describe(batch)}): {type(exc).__name__}: {exc}",
            field="loss",
        ) from exc
    if tuple(getattr(value, "shape", ())) != ():
        raise ConfigError(
            f"TrainingLoop.loss must return a scalar, but it returns shape "
            f"{tuple(value.shape)}; reduce it (e.g. with .mean())",
            field="loss",
        )
    return pred


def fingerprint(loop: Any, model: Any, dataset_length: int) -> dict[str, Any]:
    """The resume guard stored in every checkpoint."""
    return {
        "backend": "keras",
        "model_structure": structure_digest(model),
        "optimizer_config": json.loads(
            json.dumps(loop.optimizer_config, sort_keys=True, default=str)
        ),
        "dataset_length": int(dataset_length),
        "batch_size": int(loop.batch_size),
        "seed": int(loop.seed),
    }


def _check_steps_per_execution(loop: Any, options: KerasOptions) -> None:
    k = options.steps_per_execution
    if k == 1:
        return
    for n in [*event_intervals(loop), loop.max_steps]:
        if n % k:
            raise ConfigError(
                f"backend_options.steps_per_execution={k}: Keras runs callbacks only every "
                f"{k} steps, so every cadence (log/eval/checkpoint every, max_steps) must be "
                f"a multiple of it, and {n} is not",
                field="backend_options.steps_per_execution",
            )


def _compile_loss(keras: Any, loop: Any, first_y: Any) -> tuple[Any, Any]:
    """(what ``compile`` gets, the same as a ``(y_true, y_pred)`` function for eval)."""
    if isinstance(loop.task, KerasTask):
        loss = loop.task.loss
        fn = keras.losses.get(loss) if isinstance(loss, str) else loss
        if fn is None or not callable(fn):
            raise ConfigError(
                f"TrainingLoop.task.loss {loss!r} is not a Keras loss", field="task.loss"
            )
        return loss, fn
    if loop.task is not None:
        raise ConfigError(
            "TrainingLoop.task must be a pipekit_train.adapters.keras.KerasTask for the keras "
            f"backend, got {type(loop.task).__name__}",
            field="task",
        )
    loss = resolve_keras_loss(keras, loop.loss, first_y)
    return loss, loss


def _distribution(keras: Any, options: KerasOptions, batch_size: int) -> Any:
    """``DataParallel`` over every JAX device when asked for (``None`` otherwise)."""
    if not options.data_parallel:
        return None
    import jax

    devices = jax.devices()
    if batch_size % len(devices):
        raise ConfigError(
            f"TrainingLoop.batch_size ({batch_size}) must be divisible by the number of "
            f"devices ({len(devices)}) for backend_options.data_parallel",
            field="batch_size",
        )
    return keras.distribution.DataParallel(devices=devices)


def _relayout(variables: Any, distribution: Any) -> None:
    """Place variables created before the distribution existed as it wants them.

    A model is usually built before ``run()``; Keras lays a variable out only at
    creation or, once it has a layout, on assignment.
    """
    for v in variables:
        if getattr(v, "_layout", None) is None:
            v._layout = distribution.get_variable_layout(v)
            v.assign(np.asarray(v.value))


def run(loop: Any) -> tuple[KerasModelOp, dict[str, Any]]:
    """Train ``loop`` with Keras ``fit`` for exactly ``max_steps`` steps (resuming if possible).

    Every user mistake is a ``PipekitError`` raised before ``fit`` starts. Returns a
    ``KerasModelOp`` over the trained model (the given op when one was given) and
    ``backend_info``.
    """
    started = time.perf_counter()
    options = parse_options(loop.backend_options)
    keras = import_keras()
    if options.compilation_cache not in (None, "off"):
        from pipekit_train.jax.compile_cache import enable_compilation_cache

        try:
            enable_compilation_cache(options.compilation_cache)
        except OSError as exc:
            raise ConfigError(
                "backend_options.compilation_cache: cannot use "
                f"{options.compilation_cache!r} as JAX's compilation cache folder: "
                f"{exc.strerror or exc}; give a writable folder or 'off'",
                field="backend_options.compilation_cache",
            ) from exc

    model = _unwrap(keras, loop.model_op)
    op = loop.model_op if isinstance(loop.model_op, KerasModelOp) else KerasModelOp(model)
    train = normalize_dataset(loop.dataset, "TrainingLoop.dataset")
    val = (
        normalize_dataset(loop.val_dataset, "TrainingLoop.val_dataset")
        if loop.val_dataset is not None
        else None
    )
    source = BatchSource(train, loop.batch_size, loop.seed)
    first = source[0]
    loss, loss_fn = _compile_loss(keras, loop, first["y"])
    optimizer = resolve_keras_optimizer(keras, loop.optimizer_config, loop.max_steps)
    _check_steps_per_execution(loop, options)
    _check_fits(model, loss_fn, first, "dataset")
    if val is not None:
        _check_fits(model, loss_fn, next(iter(eval_batches(val, loop.batch_size))), "val_dataset")

    distribution = _distribution(keras, options, loop.batch_size)
    scope = distribution.scope() if distribution is not None else contextlib.nullcontext()
    with scope:
        if distribution is not None:
            _relayout(model.variables, distribution)
        return _train(
            keras,
            loop,
            options,
            model,
            op,
            source,
            val,
            loss,
            loss_fn,
            optimizer,
            distribution,
            started,
        )


def _train(
    keras: Any,
    loop: Any,
    options: KerasOptions,
    model: Any,
    op: KerasModelOp,
    source: BatchSource,
    val: Any,
    loss: Any,
    loss_fn: Any,
    optimizer: Any,
    distribution: Any,
    started: float,
) -> tuple[KerasModelOp, dict[str, Any]]:
    """Compile, resume, ``fit`` with the bridge, and report (inside the distribution scope)."""
    import jax

    extra = dict(loop.task.compile_kwargs) if isinstance(loop.task, KerasTask) else {}
    model.compile(
        optimizer=optimizer, loss=loss, steps_per_execution=options.steps_per_execution, **extra
    )
    if hasattr(model, "_loss_tracker"):  # per-step loss instead of the epoch's running mean
        # Not through Layer.__setattr__: a built subclassed model refuses new tracked
        # state, and Keras reads the tracker by this attribute, not by tracking.
        object.__setattr__(model, "_loss_tracker", make_last_value_metric(keras))
    optimizer.build(model.trainable_variables)
    if distribution is not None:  # the optimiser was made (and validated) before the scope
        _relayout(optimizer.variables, distribution)

    state = TrainerCarryState(step=0, rng=None, opt_state=model)
    print_fp = fingerprint(loop, model, source.n)
    checkpointer = None
    resumed_from: int | None = None
    if loop.checkpoint_dir is not None:
        from pipekit_train.jax.checkpoint import Checkpointer

        ckpt = loop.checkpoint_callback
        checkpointer = Checkpointer(
            loop.checkpoint_dir,
            keep_last=ckpt.keep_last if ckpt is not None else None,
            fingerprint=print_fp,
            resume=options.resume,
            async_save=options.async_checkpointing,
        )
    callbacks, writer = build_callbacks(loop)
    evaluate = (
        make_evaluator(model, loss_fn, classification_kind(loop), val, loop.batch_size)
        if val is not None
        else None
    )
    history: Any = None
    signals = SignalFlag()
    train_seconds = 0.0
    bridge = None
    try:
        if checkpointer is not None:
            restored = checkpointer.restore(state_template(model), None)
            if restored is not None:
                restore_state(model, restored.state)
                resumed_from = int(restored.step)
                meta = restored.meta or {}
                state.step = resumed_from
                state.metrics = dict(meta.get("metrics", {}))
                state.best = dict(meta.get("best", {}))
                for cb, saved in zip(loop.callbacks, meta.get("callbacks", []), strict=False):
                    if saved and isinstance(cb, Callback):
                        cb.load_state_dict(saved)
        start = state.step
        for cb in callbacks:
            cb.on_run_start(loop, state)
        with signals:
            bridge = make_bridge(
                keras,
                loop=loop,
                model=model,
                state=state,
                callbacks=callbacks,
                evaluate=evaluate,
                checkpointer=checkpointer,
                fingerprint=checkpointer.fingerprint if checkpointer is not None else {},
                signals=signals,
                start_step=start,
                rates=make_rate_of_steps(keras, loop.optimizer_config, loop.max_steps),
            )
            t0 = time.perf_counter()
            if start < loop.max_steps:
                data = make_step_dataset(keras, source, start, loop.max_steps - start)
                history = model.fit(data, epochs=1, shuffle=False, verbose=0, callbacks=bridge)
            train_seconds = time.perf_counter() - t0
        if checkpointer is not None:
            checkpointer.wait()
        info_end = {
            "final_step": state.step,
            "resumed_from_step": resumed_from,
            "last_checkpoint_step": bridge.last_checkpoint if bridge else resumed_from,
        }
        for cb in callbacks:
            cb.on_run_end(loop, state, info_end)
    finally:
        if checkpointer is not None:
            try:
                checkpointer.wait()
            finally:
                checkpointer.close()
        if writer is not None:
            writer.close()
    steps_run = state.step - (resumed_from or 0)
    info: dict[str, Any] = {
        "backend": "keras",
        "keras_version": keras.__version__,
        "jax_version": jax.__version__,
        "devices": [str(d) for d in jax.devices()],
        "distribution": type(distribution).__name__ if distribution is not None else None,
        "total_seconds": time.perf_counter() - started,
        "train_seconds": train_seconds,
        "steps_per_second": steps_run / train_seconds if train_seconds > 0 else None,
        "final_step": state.step,
        "final_metrics": dict(state.metrics),
        "resumed_from_step": resumed_from,
        "stop_reason": state.stop_reason,
        "interrupted": signals.received,
        "steps_per_execution": options.steps_per_execution,
        "history": getattr(history, "history", None),
    }
    return op, info
