"""``run(loop)``: train a ``TrainingLoop`` whose ``model_op`` is a ``flax.nnx.Module``.

Everything but the model is core's: the data order (``BatchSource`` / ``BatchIterator``),
the optimiser from ``optimizer_config`` (``pipekit_train.jax.optim``; the user's own
optax object checked by core's helper), the loss names (``pipekit_train.jax.losses``),
the compiled program and the driver (``pipekit_train.jax.program``), the Orbax
checkpointer with its resume guard, the compilation cache and the run report. Every
user mistake is a ``PipekitError`` before anything compiles and before
``checkpoint_dir`` is touched.
"""

from __future__ import annotations

import time
from typing import Any

import jax
from flax import nnx

from pipekit_train.engine import BatchIterator, BatchSource, normalize_dataset
from pipekit_train.fingerprint import fingerprint as core_fingerprint
from pipekit_train.jax import own_optimizer
from pipekit_train.jax.checkpoint import checkpointer_for
from pipekit_train.jax.compile_cache import use_compilation_cache
from pipekit_train.jax.losses import resolve_accuracy, resolve_loss
from pipekit_train.jax.optim import resolve_optimizer
from pipekit_train.jax.program import run_program
from pipekit_train.jax.report import jax_backend_info
from pipekit_train.jax.structure import tree_structure_digest
from pipekit_train.loop import require_features

from ._checks import check_first_batch, check_labels_fit, check_val_batch, refuse_unsupported_fields
from ._model import ModelParts, split_model, unwrap_model
from ._op import NnxModelOp
from ._options import BACKEND, parse_options
from ._program import nnx_program

__all__ = ["run", "DISTRIBUTION"]

DISTRIBUTION = "pipekit-train-flax"


def _fingerprint(loop: Any, parts: ModelParts, rows: int, own: Any) -> dict[str, Any]:
    """Core's resume guard, with the digest of the carried state's structure."""
    return core_fingerprint(
        loop,
        backend=BACKEND,
        model_structure=tree_structure_digest((parts.params, parts.rest)),
        dataset_length=rows,
        optimizer_identity=own.identity if own is not None else None,
    )


def _trained(model_op: Any, parts: ModelParts, carry: Any, example: Any) -> NnxModelOp:
    """The trained op: the given op's class (its factory record kept), else an NnxModelOp;
    its forward pass exported for inputs shaped like ``example`` (a training batch's x)."""
    params, rest = carry[0], carry[1]
    module = parts.merge(jax.device_get(params), jax.device_get(rest))
    if isinstance(model_op, NnxModelOp):
        return model_op.with_module(module, example_inputs=example)
    return NnxModelOp(module, example_inputs=example)


def run(loop: Any) -> tuple[NnxModelOp, dict[str, Any]]:
    """Train ``loop`` on the flax-nnx backend; return ``(trained NnxModelOp, backend_info)``."""
    started = time.perf_counter()
    require_features(loop, supported=(), backend=BACKEND)
    options = parse_options(loop.backend_options)
    refuse_unsupported_fields(loop)
    cache = use_compilation_cache(options.compilation_cache)
    model_op, module = unwrap_model(loop.model_op)
    parts = split_model(module)

    source = BatchSource(loop.dataset, loop.batch_size, loop.seed, shuffle=options.shuffle)
    val = (
        normalize_dataset(loop.val_dataset, "TrainingLoop.val_dataset")
        if loop.val_dataset is not None
        else None
    )
    optimizer = resolve_optimizer(loop.optimizer_config, max_steps=loop.max_steps)
    own = own_optimizer(loop, parts.params, optimizer_id=options.optimizer_id)
    loss = resolve_loss(loop.loss, field="TrainingLoop.loss")
    accuracy = resolve_accuracy(loop.loss) if isinstance(loop.loss, str) else None

    base_key, _ = jax.random.split(jax.random.PRNGKey(loop.seed))
    first = source[0]
    pred = check_first_batch(parts, loss, first, base_key)
    check_labels_fit(loop, pred, source, val)
    if val is not None:
        check_val_batch(parts, loss, val, first, loop.batch_size)

    checkpointer = checkpointer_for(
        loop,
        _fingerprint(loop, parts, source.n, own),
        resume=options.resume,
        async_save=options.async_checkpointing,
    )
    program = nnx_program(
        parts,
        loss,
        accuracy,
        optimizer,
        base_key=base_key,
        val=val,
        eval_batch_size=loop.batch_size,
    )
    result = run_program(
        loop,
        program,
        data=BatchIterator(source),
        checkpointer=checkpointer,
        steps_per_call=options.steps_per_call,
    )
    trained = _trained(model_op, parts, program.tree(result.carry), first["x"])
    extras: dict[str, Any] = {
        "steps_per_call": options.steps_per_call,
        "model_class": f"{type(module).__module__}:{type(module).__qualname__}",
        "parameter_count": int(sum(x.size for x in jax.tree_util.tree_leaves(parts.params))),
        "rng_streams": len(jax.tree_util.tree_leaves(nnx.state(module, nnx.RngKey))),
    }
    if own is not None:
        extras["optimizer"] = own.info()
    info = jax_backend_info(BACKEND, DISTRIBUTION, result.outcome(), started=started, extras=extras)
    cache.prune()  # only after a run that succeeded: a refused run deletes nothing
    return trained, info
