"""``run(loop)``: train a ``TrainingLoop`` with PyTorch Lightning's ``Trainer.fit``.

Everything a user can get wrong is checked before ``fit`` (``PipekitError``
naming the field): backend options against the Trainer's signature, the
optimiser against ``torch.optim``, the model type, the loss, the datasets (the
model and loss run on one batch under ``torch.no_grad()``), and the checkpoint
folder with its resume guard.

A user ``LightningModule`` (``task=``, or given as ``model_op``) keeps its own
``training_step``, ``configure_optimizers`` and ``validation_step``; ``_own`` refuses the
loop fields that would contradict them.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
import torch

import lightning.pytorch as pl
from lightning.pytorch.utilities.exceptions import SIGTERMException
from pipekit_train._signals import StopSignals
from pipekit_train.errors import CheckpointError, ConfigError, DataError
from pipekit_train.fingerprint import fingerprint as core_fingerprint
from pipekit_train.loop import non_default_features

from ._bridge import Bridge
from ._checkpoint import CheckpointStore, Saved
from ._data import Arrays, StepBatches, eval_batches, normalize_dataset
from ._datamodule import StepDataModule
from ._ema import WeightEMA
from ._evaluate import array_batches, loader_batches, make_evaluate, make_validation
from ._features import apply_loop_features
from ._loaders import Records, from_datamodule, from_loader
from ._losses import resolve_loss
from ._module import SupervisedModule, attach_optimizer, resolve_task
from ._ops import TorchModelOp, module_structure_digest
from ._optim import check_optimizer, parse_spec
from ._options import Options, parse_options
from ._own import LogRecorder, check_own_loss, overrides, uses_own_optimizer
from ._versions import library_versions, pipekit_versions

__all__ = ["run", "fingerprint"]


def _unwrap_model(model_op: Any) -> tuple[TorchModelOp | None, torch.nn.Module]:
    if isinstance(model_op, TorchModelOp):
        return model_op, model_op.module
    if isinstance(model_op, torch.nn.Module):
        return None, model_op
    module = getattr(model_op, "module", None)
    if isinstance(module, torch.nn.Module):
        return None, module
    raise ConfigError(
        "TrainingLoop.model_op must be a torch.nn.Module or a "
        "pipekit_train.adapters.lightning.TorchModelOp for the lightning backend; got "
        f"{type(model_op).__name__}. (Or give task= a LightningModule.)",
        field="model_op",
    )


def _resolve_module(
    loop: Any,
) -> tuple[TorchModelOp | None, torch.nn.Module, pl.LightningModule, Any, str]:
    """(op, the trained nn.Module, the LightningModule fit gets, loss_fn or None, its field).

    ``loss_fn`` is None when the user's module computes the loss in its own
    ``training_step`` (``task=``, or a ``LightningModule`` overriding it as ``model_op``).
    """
    if loop.task is not None:
        module = resolve_task(loop.task)
        if overrides(module, "training_step"):
            check_own_loss(loop, module, "task")
        return None, module, module, None, "task"
    op, net = _unwrap_model(loop.model_op)
    if overrides(net, "training_step"):
        assert isinstance(net, pl.LightningModule)
        check_own_loss(loop, net, "model_op")
        return op, net, net, None, "model_op"
    if loop.loss is None:
        raise ConfigError(
            f"TrainingLoop.model_op is a {type(net).__name__} without a training_step of its "
            "own, so the loop needs loss= (a name such as 'cross_entropy' or a callable); or "
            "give a LightningModule that defines training_step (as model_op or task=)",
            field="loss",
        )
    loss_fn = resolve_loss(loop.loss)
    module = SupervisedModule(net, loss_fn)
    if overrides(net, "configure_optimizers"):  # a LightningModule trained on loss=
        own: Any = net
        module.configure_optimizers = own.configure_optimizers  # type: ignore[method-assign]
    return op, net, module, loss_fn, "model_op"


def _default_collate_only(collate: Any, field: str) -> None:
    """The loop's own module reads ``{"x", "y"}`` arrays: a custom ``collate_fn`` is not used."""
    if collate is not torch.utils.data.default_collate:
        raise DataError(
            f"{field} is a DataLoader with a custom collate_fn, and model_op + loss= train on "
            "the records' 'x' and 'y' (or (x, y)) fields, not on its batches; give a "
            "LightningModule whose training_step takes your batches (task= or model_op), or "
            "drop collate_fn"
        )


def _data_and_evaluate(
    loop: Any,
    options: Options,
    net: torch.nn.Module,
    pl_module: pl.LightningModule,
    loss_fn: Any,
    recorder: LogRecorder | None,
    accumulate: int,
) -> tuple[Arrays, Records | None, int, Any, int]:
    """(training arrays, a loader's records or None, n, the evaluation pass, num_workers).

    Arrays, a ``DataLoader`` or a ``LightningDataModule`` (``_loaders``). A loader's records
    keep its ``collate_fn`` for a user module (its ``training_step`` reads its batches);
    the loop's own module reads them as ``{"x", "y"}`` arrays. Every misfit is raised here,
    before ``fit``.
    """
    ds, vds = loop.dataset, loop.val_dataset
    records: Records | None = None
    if isinstance(ds, pl.LightningDataModule):
        records, dm_val = from_datamodule(ds, loop.batch_size)
        if dm_val is not None and vds is not None:
            raise ConfigError(
                f"TrainingLoop.val_dataset is set and the LightningDataModule in dataset "
                f"({type(ds).__name__}) defines val_dataloader; drop one of the two",
                field="val_dataset",
            )
        vds = vds if dm_val is None else dm_val
    elif isinstance(ds, torch.utils.data.DataLoader):
        records = from_loader(ds, "TrainingLoop.dataset", loop.batch_size)
    own_workers = "num_workers" in loop.backend_options
    workers = options.num_workers if own_workers or records is None else records.num_workers
    if records is not None and loss_fn is not None:
        _default_collate_only(records.collate, records.field)
        train = normalize_dataset(records.dataset, records.field)
        records = None
    elif records is not None:
        train = {"_row": np.arange(len(records))}
    else:
        train = normalize_dataset(ds, "TrainingLoop.dataset")
    n = int(next(iter(train.values())).shape[0])
    first = StepBatches(train, loop.batch_size, loop.seed, count=1, accumulate=accumulate)[0]
    val_loader = vds if isinstance(vds, torch.utils.data.DataLoader) else None
    val: Arrays | None = None
    if val_loader is not None and loss_fn is not None:
        _default_collate_only(val_loader.collate_fn, "TrainingLoop.val_dataset")
        val, val_loader = normalize_dataset(val_loader.dataset, "TrainingLoop.val_dataset"), None
    elif val_loader is None and vds is not None:
        val = normalize_dataset(vds, "TrainingLoop.val_dataset")
    if loss_fn is not None:
        _check_batch(net, loss_fn, first, "TrainingLoop.dataset")
        if val is not None:
            _check_batch(
                net, loss_fn, next(eval_batches(val, loop.batch_size)), "TrainingLoop.val_dataset"
            )
    evaluate = None
    if recorder is not None and (val is not None or val_loader is not None):
        batches = (
            loader_batches(val_loader)
            if val_loader is not None
            else array_batches(val, loop.batch_size)  # type: ignore[arg-type]
        )
        own_step = overrides(pl_module, "validation_step")
        evaluate = make_validation(batches, pl_module, recorder, own_step=own_step)
    elif val is not None:
        evaluate = make_evaluate(val, loop.batch_size, loop.loss, loss_fn)
    return train, records, n, evaluate, workers


def _describe(batch: dict[str, torch.Tensor]) -> str:
    return "{" + ", ".join(f"{k!r}: {v.dtype} {list(v.shape)}" for k, v in batch.items()) + "}"


def _check_batch(
    net: torch.nn.Module, loss_fn: Any, batch: dict[str, torch.Tensor], field: str
) -> None:
    """Run the model and the loss on one batch (no gradients) so a misfit fails before ``fit``."""
    if "y" not in batch:
        raise DataError(f"{field} has no 'y' field (it has {sorted(batch)}); name the targets 'y'")
    was_training = net.training
    try:
        with torch.no_grad():
            try:
                pred = net(batch["x"])
            except Exception as exc:
                raise DataError(
                    f"{field} does not fit the model: calling model_op on one batch "
                    f"{_describe(batch)} failed with {type(exc).__name__}: {exc}. Give inputs "
                    f"of the shape and dtype the model takes"
                ) from exc
            try:
                loss = loss_fn(pred, batch["y"])
            except Exception as exc:
                raise DataError(
                    f"{field}: the loss fails on the model's output {list(pred.shape)} and the "
                    f"targets {batch['y'].dtype} {list(batch['y'].shape)}: "
                    f"{type(exc).__name__}: {exc}. Check TrainingLoop.loss against the "
                    f"targets (cross_entropy takes logits and integer labels)"
                ) from exc
    finally:
        net.train(was_training)
    if not isinstance(loss, torch.Tensor) or loss.ndim != 0:
        raise ConfigError(
            f"TrainingLoop.loss must return a scalar tensor; it returns "
            f"{getattr(loss, 'shape', type(loss).__name__)}; reduce it (e.g. with .mean())",
            field="loss",
        )


def fingerprint(
    loop: Any, net: torch.nn.Module, dataset_length: int, accumulate: int
) -> dict[str, Any]:
    """The resume guard stored in every checkpoint (core's, with the state_dict digest)."""
    return core_fingerprint(
        loop,
        backend="lightning",
        model_structure=module_structure_digest(net),
        dataset_length=dataset_length,
        extra={
            **non_default_features(loop),
            **({"accumulate_grad_batches": accumulate} if accumulate != 1 else {}),
        },
    )


def _restore_module(net: torch.nn.Module, saved: Saved) -> None:
    try:
        net.load_state_dict(saved.module, strict=True)
    except RuntimeError as exc:
        raise CheckpointError(
            f"the checkpoint {saved.path} holds another model's weights and cannot be loaded "
            f"into model_op ({exc}); use a new checkpoint_dir or "
            f'backend_options={{"resume": "never"}}'
        ) from exc


def _trainer_kwargs(
    loop: Any, options: Options, spec: Any, start: int, bridge: Bridge
) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "max_steps": loop.max_steps - start,
        "max_epochs": -1,
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "num_sanity_val_steps": 0,
        "limit_val_batches": 0,
        "use_distributed_sampler": False,
    }
    if spec.clip_norm is not None:
        kwargs["gradient_clip_val"] = spec.clip_norm
        kwargs["gradient_clip_algorithm"] = "norm"
    user = dict(options.trainer)
    extra = user.pop("callbacks", None) or []
    kwargs.update(user)
    kwargs["callbacks"] = [bridge, *list(extra)]
    return kwargs


def _process_group_initialized() -> bool:
    import torch.distributed as dist

    return bool(dist.is_available() and dist.is_initialized())


def _end_process_group() -> None:
    """End the process group DDP started for this run, on every rank together.

    Lightning leaves it alive after ``fit``; a gloo group still alive at interpreter
    exit can abort the process ("terminate called without an active exception",
    exit -6) after a run that succeeded. A group the user initialised before the
    run is theirs and is left alone.
    """
    import torch.distributed as dist

    if _process_group_initialized():
        dist.barrier()
        dist.destroy_process_group()


def run(loop: Any) -> tuple[TorchModelOp, dict[str, Any]]:
    """Train ``loop`` with Lightning; return the trained ``TorchModelOp`` and ``backend_info``."""
    started = time.perf_counter()
    options = parse_options(loop.backend_options)
    apply_loop_features(loop, options)  # accumulate_steps, precision (ema_decay: the bridge)
    spec = parse_spec(loop.optimizer_config, loop.max_steps)
    check_optimizer(spec)
    accumulate = options.accumulate
    devices = options.trainer.get("devices")
    if isinstance(devices, int) and devices > 1 and loop.batch_size % devices:
        raise ConfigError(
            f"TrainingLoop.batch_size ({loop.batch_size}) must be divisible by "
            f"backend_options.devices ({devices}): it is the global batch, split across ranks",
            field="batch_size",
        )

    op, net, pl_module, loss_fn, field = _resolve_module(loop)
    own_optimizer = uses_own_optimizer(loop, net, field)
    schedule = None if own_optimizer else attach_optimizer(pl_module, spec)
    recorder = LogRecorder(pl_module) if loss_fn is None else None

    train, records, n, evaluate, workers = _data_and_evaluate(
        loop, options, net, pl_module, loss_fn, recorder, accumulate
    )

    fp = fingerprint(loop, net, n, accumulate)
    store: CheckpointStore | None = None
    saved: Saved | None = None
    if loop.checkpoint_dir is not None:
        ckpt = loop.checkpoint_callback
        store = CheckpointStore(loop.checkpoint_dir, ckpt.keep_last if ckpt is not None else None)
        saved = store.resume(fp, options.resume)
        if saved is not None:
            _restore_module(net, saved)
    start = saved.step if saved is not None else 0
    ema: WeightEMA | None = None
    if loop.ema_decay is not None:  # starts at the (restored) weights, or the checkpoint's
        ema = WeightEMA(net, loop.ema_decay)
        if saved is not None and saved.ema is not None:
            ema.load_state_dict(saved.ema, str(saved.path))

    if schedule is not None:
        lr_at = schedule
    else:
        rate = float(spec.lr)  # type: ignore[arg-type]
        lr_at = lambda step: rate  # noqa: E731
    bridge = Bridge(
        loop,
        net=net,
        start=start,
        saved=saved,
        store=store,
        fingerprint=fp,
        evaluate=evaluate,
        lr_at=lr_at,
        accumulate=accumulate,
        ema=ema,
        recorder=recorder,
        read_lr=own_optimizer,
        steps_per_epoch=n // (loop.batch_size * accumulate),
    )
    state = bridge.state
    interrupted: str | None = None
    if start < loop.max_steps:
        trainer = pl.Trainer(**_trainer_kwargs(loop, options, spec, start, bridge))
        if trainer.world_size == 1:
            # One process: build the writers now, so a bad log folder fails before fit.
            # Under DDP each rank builds its runner in Bridge.setup, knowing its rank.
            bridge.make_runner(is_primary=True)
        datamodule = StepDataModule(
            train,
            loop.batch_size,
            loop.seed,
            start=start * accumulate,
            count=(loop.max_steps - start) * accumulate,
            num_workers=workers,
            accumulate=accumulate,
            records=records,
        )
        owns_process_group = not _process_group_initialized()
        with StopSignals() as signals:
            bridge.signals = signals
            if recorder is not None:
                recorder.install()
            try:
                with warnings.catch_warnings():
                    if evaluate is not None:  # pipekit runs the evaluation, not Lightning
                        warnings.filterwarnings("ignore", message=r".*no `val_dataloader`")
                    trainer.fit(pl_module, datamodule=datamodule)
            except SIGTERMException:
                # Lightning's own SIGTERM handler ends fit after the batch; the bridge has
                # already checkpointed and asked to stop, which is the normal end here.
                if not bridge.signal_handled:
                    state.should_stop = True
                    state.stop_reason = "SIGTERM: stopped by Lightning before a checkpoint"
            except BaseException as exc:
                if bridge.runner is not None:
                    bridge.runner.close(exc, state)
                raise
            finally:
                if recorder is not None:
                    recorder.remove()
            interrupted = signals.received
        bridge.finish_timing()
        state.step = start + trainer.global_step
        is_primary = trainer.is_global_zero
        if owns_process_group and trainer.world_size > 1:
            _end_process_group()
    else:
        is_primary = True
    runner = bridge.runner or bridge.make_runner(is_primary)
    info: dict[str, Any] = {
        "backend": "lightning",
        **library_versions(),
        "pipekit_versions": pipekit_versions(),
        "final_step": state.step,
        "resumed_from_step": saved.step if saved is not None else None,
        "last_checkpoint_step": bridge.last_checkpoint,
        "final_metrics": dict(state.metrics),
        "stop_reason": state.stop_reason,
        "interrupted": interrupted,
        "features": {
            "accumulate_steps": int(loop.accumulate_steps),
            "ema_decay": loop.ema_decay,
            "precision": loop.precision,
        },
        "total_seconds": time.perf_counter() - started,
        "train_seconds": bridge.train_seconds,
        "steps_per_second": (
            (state.step - start) / bridge.train_seconds if bridge.train_seconds > 0 else None
        ),
        "run_dir": None if runner.run_dir is None else str(runner.run_dir),
    }
    runner.run_end(state, info)
    net = net.cpu()
    if ema is not None:  # the trained op holds the average; the checkpoint the last iterate
        ema.copy_into(net)
    trained = op.with_module(net) if op is not None else TorchModelOp(net)
    return trained, info
