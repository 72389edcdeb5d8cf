"""``run(loop)``: train a ``TrainingLoop`` with Keras 3 ``compile`` + ``fit`` on JAX.

Order: validate everything (options, model, data on one batch, loss, optimiser,
cadence) → compile → restore the newest checkpoint (every model and optimiser
variable, the step) → ``fit`` over a ``PyDataset`` of exactly the remaining steps,
with the bridge driving pipekit callbacks, evaluation and checkpoints.

A model the user ``compile()``d keeps its optimiser, loss, metrics and loss weights
(``_own``); a subclassed model's ``train_step`` / ``compute_loss`` run inside ``fit``.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace
from typing import Any

from pipekit_train.carry import TrainerCarryState
from pipekit_train.engine import (
    BatchSource,
    CallbackRunner,
    RunOutcome,
    StopSignals,
    check_labels,
    close_checkpointer,
    eval_batches,
    normalize_dataset,
    refuse_stream,
    training_ended,
)
from pipekit_train.errors import CheckpointError, ConfigError
from pipekit_train.fingerprint import fingerprint as core_fingerprint
from pipekit_train.jax.report import jax_backend_info
from pipekit_train.loop import non_default_features

from ._bridge import make_bridge, make_last_value_metric
from ._checks import (
    check_fits,
    check_steps_per_execution,
    compile_loss,
    resolve_crossentropy,
    unwrap_model,
)
from ._data import flatten_nested, make_step_dataset, micro_batch, to_xy
from ._distribute import data_parallel, relayout
from ._env import import_keras
from ._eval import make_evaluator
from ._features import check_features, ema_values, finalize_ema, install_ema, precision_scope
from ._losses import (
    KerasTask,
    classification_kind,
    elementwise_loss_name,
    is_auto_crossentropy,
)
from ._op import KerasModelOp
from ._optim import make_rate_of_steps, resolve_keras_optimizer
from ._options import KerasOptions, parse_options
from ._own import (
    OwnCompile,
    loss_callable,
    mark_compiled_by_pipekit,
    overrides,
    own_compile,
    own_rates,
    own_steps_per_execution,
)
from ._private import set_loss_tracker, symbolic_build
from ._state import restore_metrics, restore_state, state_template, structure_digest

__all__ = ["run", "fingerprint"]


def fingerprint(loop: Any, model: Any, dataset_length: int) -> dict[str, Any]:
    """The resume guard stored in every checkpoint (core's, with the variables' digest)."""
    return core_fingerprint(
        loop,
        backend="keras",
        model_structure=structure_digest(model),
        dataset_length=dataset_length,
        extra=non_default_features(loop),
    )


def run(loop: Any) -> tuple[KerasModelOp, dict[str, Any]]:
    """Train ``loop`` with Keras ``fit`` for exactly ``max_steps`` steps (resuming if possible).

    Every user mistake is a ``PipekitError`` raised before ``fit`` starts. Returns a
    ``KerasModelOp`` over the trained model (the given op when one was given) and
    ``backend_info``.
    """
    started = time.perf_counter()
    options = parse_options(loop.backend_options)
    keras = import_keras()
    from pipekit_train.jax.compile_cache import use_compilation_cache

    cache = use_compilation_cache(options.compilation_cache)
    model = unwrap_model(keras, loop.model_op)
    own = own_compile(keras, loop, model)
    if own is not None:
        options = replace(options, steps_per_execution=own_steps_per_execution(loop, own, options))
    check_features(loop, model, options.steps_per_execution)
    k = int(loop.accumulate_steps)
    op = loop.model_op if isinstance(loop.model_op, KerasModelOp) else KerasModelOp(model)
    # Keras' fit reads pipekit's step-indexed batch source: a stream is refused by name.
    refuse_stream(loop.dataset, "TrainingLoop.dataset", "the keras backend")
    train = normalize_dataset(flatten_nested(loop.dataset), "TrainingLoop.dataset")
    val = (
        normalize_dataset(flatten_nested(loop.val_dataset), "TrainingLoop.val_dataset")
        if loop.val_dataset is not None
        else None
    )
    # One record per optimiser update: k micro-batches of batch_size rows (see _data).
    source = BatchSource(train, loop.batch_size * k, loop.seed)
    first = micro_batch(source[0], 0, k)
    loss, loss_fn = _resolve_loss(keras, loop, model, own, first)
    if own is not None:
        optimizer = own.optimizer
    else:
        optimizer = resolve_keras_optimizer(
            keras,
            loop.optimizer_config,
            loop.max_steps,
            accumulate_steps=k,
            ema_decay=loop.ema_decay,
        )
    if val is not None and loss_fn is None:
        raise ConfigError(
            "TrainingLoop.val_dataset is evaluated with one loss fn(y_true, y_pred), and "
            f"model_op ({type(model).__name__}) brings none (its loss is per output, or its "
            "own train_step computes it); give loss= or compile(loss=...), or drop val_dataset",
            field="val_dataset",
        )
    user_callbacks = list(options.callbacks)  # checked by parse_options
    check_steps_per_execution(loop, options.steps_per_execution)
    kind = classification_kind(loop) if loss_fn is not None else None
    named = _loss_label(keras, loop, own, loss_fn)
    width = check_fits(model, loss_fn, first, "dataset", **named)
    train_y = train.get("y") if isinstance(train, dict) else first.get("y")
    check_labels(train_y, width, kind, field="TrainingLoop.dataset")
    if val is not None:
        val_first = next(iter(eval_batches(val, loop.batch_size)))
        val_width = check_fits(model, loss_fn, val_first, "val_dataset", **named)
        val_y = val.get("y") if isinstance(val, dict) else val_first.get("y")
        check_labels(val_y, val_width, kind, field="TrainingLoop.val_dataset")
    distribution = data_parallel(keras, options.data_parallel, loop.batch_size)
    scope = distribution.scope() if distribution is not None else contextlib.nullcontext()
    with scope, precision_scope(model, loop.precision):
        if distribution is not None:
            relayout(model.variables, distribution)
        model.compile(
            optimizer=optimizer,
            loss=loss,
            steps_per_execution=options.steps_per_execution,
            **(dict(loop.task.compile_kwargs) if isinstance(loop.task, KerasTask) else {}),
            **(own.extra if own is not None else {}),
        )
        if own is None:  # the loop's compile; a user's compile stays the user's next run too
            mark_compiled_by_pipekit(model)
        # The per-step loss, not the epoch's running mean (after compile made the tracker).
        keras_tracker = set_loss_tracker(model, make_last_value_metric(keras))
        if not optimizer.built:
            optimizer.build(model.trainable_variables)
        # The compiled metrics' variables exist before a checkpoint is restored into them.
        symbolic_build(model, *to_xy(first))
        if distribution is not None:
            relayout(optimizer.variables, distribution)
        if loop.ema_decay is not None:
            install_ema(keras, optimizer, loop.ema_decay, k)
        rates = (
            own_rates(keras, optimizer)
            if own is not None
            else make_rate_of_steps(keras, loop.optimizer_config, loop.max_steps)
        )
        try:
            outcome, history = _fit(
                keras, loop, options, model, source, val, loss_fn, rates, user_callbacks
            )
        finally:  # the user's model.evaluate() afterwards reports the mean loss again
            if keras_tracker is not None:
                set_loss_tracker(model, keras_tracker)
    info = jax_backend_info(
        "keras",
        "pipekit-train-keras",
        outcome,
        started=started,
        extras={
            "steps_per_execution": options.steps_per_execution,
            "features": {
                "accumulate_steps": k,
                "ema_decay": loop.ema_decay,
                "precision": loop.precision,
            },
            "history": history,
            "distribution": type(distribution).__name__ if distribution is not None else None,
        },
    )
    cache.prune()  # only now: a run refused by validation deletes nothing (compile_cache)
    return op, info


def _resolve_loss(
    keras: Any, loop: Any, model: Any, own: OwnCompile | None, first: dict[str, Any]
) -> tuple[Any, Any]:
    """(what ``compile(loss=…)`` gets, the same as ``fn(y_true, y_pred)`` or None).

    The compiled loss of the user's own compile; else the loop's ``loss`` / ``KerasTask``;
    else none, for a subclassed model whose own ``train_step`` or ``compute_loss`` computes
    it; else the missing-loss ``ConfigError``. ``"crossentropy"`` / ``"ce"`` (compiled or a
    ``KerasTask``'s) is resolved from the first batch as Keras resolves it; ``compile``
    still gets the name, so the user's compile stays the user's.
    """
    named = _loss_label(keras, loop, own, None)
    user = own.loss if own is not None and own.loss is not None else None
    if user is None and isinstance(loop.task, KerasTask):
        user = loop.task.loss
    if isinstance(user, str) and is_auto_crossentropy(user):
        fn = resolve_crossentropy(
            keras, model, first, user, label=named["label"], loss_field=named["loss_field"]
        )
        return user, fn
    if own is not None and own.loss is not None:
        if isinstance(to_xy(first)[1], (dict, list, tuple)):
            return own.loss, None  # several outputs: Keras applies the one loss to each
        return own.loss, loss_callable(keras, own.loss)
    if loop.loss is None and loop.task is None:
        if overrides(keras, model, "train_step") or overrides(keras, model, "compute_loss"):
            return None, None
        raise ConfigError(
            f"TrainingLoop.model_op ({type(model).__name__}) says no loss: it is not "
            "compile()d with one and has no train_step or compute_loss of its own; give "
            "loss= (a name such as 'cross_entropy' or a callable), compile(loss=...) it, or "
            "task=KerasTask(...)",
            field="loss",
        )
    return compile_loss(keras, loop, to_xy(first)[1])


def _loss_label(keras: Any, loop: Any, own: OwnCompile | None, loss_fn: Any) -> dict[str, Any]:
    """How the checks name the loss (the one the user set) and whether it is elementwise
    (for ``"crossentropy"``, whether the function it resolved to, ``loss_fn``, is)."""

    def elementwise(user: Any) -> str | None:
        return elementwise_loss_name(keras, loss_fn if is_auto_crossentropy(user) else user)

    if own is not None and own.loss is not None:
        return {
            "label": f"The loss model_op was compile()d with ({own.loss!r})",
            "loss_field": "model_op",
            "elementwise": elementwise(own.loss),
        }
    if isinstance(loop.task, KerasTask):
        return {
            "label": f"TrainingLoop.task.loss ({loop.task.loss!r})"
            if is_auto_crossentropy(loop.task.loss)
            else "TrainingLoop.task.loss",
            "loss_field": "task.loss",
            "elementwise": elementwise(loop.task.loss),
        }
    return {
        "label": "TrainingLoop.loss",
        "loss_field": "loss",
        "elementwise": elementwise_loss_name(keras, loop.loss),
    }


def _checkpointer(loop: Any, options: KerasOptions, print_: dict[str, Any]) -> Any:
    from pipekit_train.jax.checkpoint import checkpointer_for

    return checkpointer_for(
        loop, print_, resume=options.resume, async_save=options.async_checkpointing
    )


def _data_state(source: BatchSource) -> Any:
    """The data position in pipekit's form (``{position, source}``): the step itself."""
    described = repr(source)
    return lambda step: {"position": int(step), "source": described}


def _restore(
    checkpointer: Any, model: Any, runner: CallbackRunner, state: Any, src: str
) -> tuple[int | None, Any]:
    """(the step resumed from, the restored arrays), or (None, None) with no checkpoint."""
    restored = checkpointer.restore(state_template(model))
    if restored is None:
        return None, None
    meta = restored.meta or {}
    data = meta.get("data") or {}
    if data.get("source", src) != src or int(data.get("position", restored.step)) != restored.step:
        raise CheckpointError(
            f"The checkpoint at step {restored.step} in {checkpointer.directory} reads its data "
            f"at {data!r}, not at step {restored.step} of this run's {src}; the dataset, "
            'batch_size or seed changed. Use a new checkpoint_dir or backend_options={"resume": '
            '"never"}.'
        )
    restore_state(model, restored.state)
    state.step = int(restored.step)
    runner.restore(state, meta)
    return int(restored.step), restored.state


def _fit(
    keras: Any,
    loop: Any,
    options: KerasOptions,
    model: Any,
    source: BatchSource,
    val: Any,
    loss_fn: Any,
    rates: Any,
    user_callbacks: list[Any],
) -> tuple[RunOutcome, dict[str, Any] | None]:
    """Resume, ``fit`` with the bridge; how the run ended and Keras' ``History`` dict
    (inside the distribution scope)."""
    checkpointer = _checkpointer(loop, options, fingerprint(loop, model, source.n))
    state = TrainerCarryState(step=0, rng=None, opt_state=model)
    runner = CallbackRunner(loop, is_primary=True)
    k = int(loop.accumulate_steps)
    ema = loop.ema_decay is not None
    evaluate = (
        make_evaluator(
            model,
            loss_fn,
            classification_kind(loop),
            val,
            loop.batch_size,
            weights=(lambda: ema_values(model.optimizer)) if ema else None,
        )
        if val is not None
        else None
    )
    resumed_from: int | None = None
    train_seconds = 0.0
    history: Any = None
    try:
        with runner.guard(state):
            restored: Any = None
            if checkpointer is not None:
                resumed_from, restored = _restore(checkpointer, model, runner, state, repr(source))
            start = state.step
            runner.run_start(state)
            with StopSignals() as signals:
                bridge = make_bridge(
                    keras,
                    loop=loop,
                    model=model,
                    state=state,
                    runner=runner,
                    evaluate=evaluate,
                    checkpointer=checkpointer,
                    fingerprint=checkpointer.fingerprint if checkpointer is not None else {},
                    signals=signals,
                    start_step=start,
                    data_state=_data_state(source),
                    rates=rates,
                    accumulate=k,
                    user_callbacks=user_callbacks,
                    steps_per_epoch=source.steps_per_epoch,
                    # fit resets the metrics when its epoch begins: the restored ones after
                    on_epoch_begin=(
                        (lambda: restore_metrics(model, restored)) if restored is not None else None
                    ),
                )
                t0 = time.perf_counter()
                if start < loop.max_steps:
                    data = make_step_dataset(keras, source, start, loop.max_steps - start, k)
                    history = model.fit(data, epochs=1, shuffle=False, verbose=0, callbacks=bridge)
                train_seconds = time.perf_counter() - t0
            if ema:  # the trained op is the average (fit did it too; not when no step ran)
                finalize_ema(model)
            if checkpointer is not None:
                checkpointer.wait()
            last_checkpoint = bridge.last_checkpoint or resumed_from
            # committed: what fails from here on is a FinishError that keeps the run
            training_ended(
                state.step,
                last_checkpoint,
                steps_run=state.step - (resumed_from or 0),
                total_steps=loop.max_steps,
            )
            runner.run_end(
                state,
                {
                    "final_step": state.step,
                    "resumed_from_step": resumed_from,
                    "last_checkpoint_step": last_checkpoint,
                },
            )
    finally:
        close_checkpointer(checkpointer)
    outcome = RunOutcome(
        final_step=state.step,
        resumed_from_step=resumed_from,
        last_checkpoint_step=last_checkpoint,
        stop_reason=state.stop_reason,
        interrupted=signals.received,
        train_seconds=train_seconds,
        steps_run=state.step - (resumed_from or 0),
        final_metrics=state.metrics,
        run_dir=None if runner.run_dir is None else str(runner.run_dir),
    )
    return outcome, getattr(history, "history", None)
