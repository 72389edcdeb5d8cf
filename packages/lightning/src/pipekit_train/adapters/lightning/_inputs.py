"""What a run trains and on what: the module, the loss, the data and the evaluation pass.

Resolved from the loop before ``Trainer.fit``, each misfit a ``PipekitError`` naming the
field: ``model_op`` (an ``nn.Module``, a ``TorchModelOp``, or a ``LightningModule`` with
its own ``training_step``) or ``task``; the data (arrays, records, a ``grain.MapDataset``
read in its own order, a ``DataLoader`` or a ``LightningDataModule``, ``_loaders``), run
through the model and the loss on one batch under ``torch.no_grad()`` when the loop owns the
loss; and the evaluation pass (the user's ``validation_step``, or the loss and accuracy on
``val_dataset``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import lightning.pytorch as pl
from pipekit_train.engine import check_labels, dataset_rows, output_width
from pipekit_train.errors import ConfigError, DataError

from ._data import Arrays, StepBatches, TrainData, eval_batches, normalize_dataset, training_data
from ._datamodule import own_transfer_hooks
from ._evaluate import array_batches, loader_batches, make_evaluate, make_validation
from ._loaders import Records, from_datamodule, from_loader
from ._losses import resolve_loss
from ._module import SupervisedModule, resolve_task
from ._ops import TorchModelOp
from ._options import Options
from ._own import LogRecorder, check_own_loss, overrides

__all__ = ["resolve_module", "data_and_evaluate"]


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


def resolve_module(
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


def _no_transfer_hooks(ds: Any) -> None:
    """``model_op`` + ``loss=`` read ``{"x", "y"}`` batches, not a datamodule's own."""
    hooks = own_transfer_hooks(ds) if isinstance(ds, pl.LightningDataModule) else []
    if hooks:
        raise ConfigError(
            f"TrainingLoop.dataset is a {type(ds).__name__} with its own {', '.join(hooks)}, "
            "written for the batches its train_dataloader makes; model_op + loss= train on "
            "the records' 'x' and 'y' as {'x', 'y'} batches, so those hooks would get batches "
            "of another form. Give a LightningModule whose training_step takes the "
            "datamodule's batches (task= or model_op, without loss=): then the hooks run as "
            "under Trainer.fit",
            field="dataset",
        )


def data_and_evaluate(
    loop: Any,
    options: Options,
    net: torch.nn.Module,
    pl_module: pl.LightningModule,
    loss_fn: Any,
    recorder: LogRecorder | None,
    accumulate: int,
) -> tuple[TrainData, Records | None, int, Any, int]:
    """(training data, a loader's records or None, n, the evaluation pass, num_workers).

    Arrays, a ``grain.MapDataset`` (kept as core's ``RecordSource``, read by index in its
    own order; ``run`` has refused ``backend_options.shuffle=True`` beside it), a ``DataLoader``
    or a ``LightningDataModule`` (``_loaders``). A loader's records keep its ``collate_fn``
    for a user module (its ``training_step`` reads its batches); the loop's own module reads
    them as ``{"x", "y"}`` arrays. Every misfit is raised here, before ``fit``.
    """
    ds, vds = loop.dataset, loop.val_dataset
    records: Records | None = None
    if isinstance(ds, pl.LightningDataModule):
        records, dm_val = from_datamodule(ds, loop.batch_size)
        if vds is ds:  # "evaluate on the datamodule": its val_dataloader, at the eval cadence
            if dm_val is None:
                raise ConfigError(
                    f"TrainingLoop.val_dataset is the LightningDataModule in dataset "
                    f"({type(ds).__name__}), which defines no val_dataloader; define one, "
                    "or give the validation data itself as val_dataset",
                    field="val_dataset",
                )
            vds = None
        elif dm_val is not None and vds is not None:
            raise ConfigError(
                f"TrainingLoop.val_dataset is set and the LightningDataModule in dataset "
                f"({type(ds).__name__}) defines val_dataloader; drop val_dataset (the "
                "val_dataloader is then evaluated at eval_every_n_steps, or at the end of "
                "the run without it), or give val_dataset=<the same datamodule>",
                field="val_dataset",
            )
        if vds is None and dm_val is None and loop.eval_every_n_steps is not None:
            raise ConfigError(
                f"TrainingLoop.eval_every_n_steps is set, val_dataset is None and the "
                f"LightningDataModule in dataset ({type(ds).__name__}) defines no "
                "val_dataloader; define one (it is then evaluated at eval_every_n_steps, as "
                "Trainer(val_check_interval=...) does), give val_dataset=, or drop "
                "eval_every_n_steps",
                field="eval_every_n_steps",
            )
        vds = vds if dm_val is None else dm_val
    elif isinstance(ds, torch.utils.data.DataLoader):
        records = from_loader(ds, "TrainingLoop.dataset", loop.batch_size)
    own_workers = "num_workers" in loop.backend_options
    workers = options.num_workers if own_workers or records is None else records.num_workers
    if records is not None and loss_fn is not None:
        _default_collate_only(records.collate, records.field)
        _no_transfer_hooks(ds)
        train: TrainData = normalize_dataset(records.dataset, records.field)
        records = None
    elif records is not None:
        train = {"x": np.arange(len(records))}  # row numbers: the order over the records
    else:
        train = training_data(ds, "TrainingLoop.dataset")
    n = dataset_rows(train)
    first = StepBatches(train, loop.batch_size, loop.seed, count=1, accumulate=accumulate)[0]
    # The whole label column when the data is in memory; the first batch of a MapDataset
    # (read by index, perhaps endless), as on the JAX backends.
    labels = train.get("y") if isinstance(train, dict) else first.get("y")
    val_loader = vds if isinstance(vds, torch.utils.data.DataLoader) else None
    val: Arrays | None = None
    if val_loader is not None and loss_fn is not None:
        _default_collate_only(val_loader.collate_fn, "TrainingLoop.val_dataset")
        val, val_loader = normalize_dataset(val_loader.dataset, "TrainingLoop.val_dataset"), None
    elif val_loader is None and vds is not None:
        val = normalize_dataset(vds, "TrainingLoop.val_dataset")
    if loss_fn is not None:
        # The one forward on a real batch (no gradients) that checks the data fits also
        # gives the head's width for the label checks: no meta-device pass, no guess
        # from the module's last Linear (which a custom forward may not end with).
        # The labels are checked between that forward and the loss, so a label out of
        # range anywhere in the data is reported as such, not as torch's IndexError.
        _check_batch(net, loss_fn, first, "TrainingLoop.dataset", loop.loss, labels)
        if val is not None:
            val_first = next(eval_batches(val, loop.batch_size))
            _check_batch(
                net, loss_fn, val_first, "TrainingLoop.val_dataset", loop.loss, val.get("y")
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
    net: torch.nn.Module,
    loss_fn: Any,
    batch: dict[str, torch.Tensor],
    field: str,
    loss: Any,
    labels: Any,
) -> None:
    """Run the model and the loss on one batch (no gradients) so a misfit fails before ``fit``.

    A prediction/target pair the loss would broadcast is the loss's ``ConfigError`` (core's
    ``align_shapes``), raised here, before any hook runs or any file is written.

    Between the two, ``labels`` (the dataset's whole label column) are checked against
    the width of the output (``pipekit_train.engine.check_labels`` for the loss name
    ``loss``).
    """
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
            if isinstance(pred, torch.Tensor):
                check_labels(labels, output_width(pred.shape), loss, field=field)
            try:
                value = loss_fn(pred, batch["y"])
            except ConfigError as exc:  # a pair of shapes the loss refuses (it would broadcast)
                raise ConfigError(
                    f"{exc}; seen on one batch of {field}, before training. Make the model's "
                    "output and the targets agree (e.g. reshape y, or the model's last layer)",
                    field=exc.field,
                ) from None
            except Exception as exc:
                raise DataError(
                    f"{field}: the loss fails on the model's output {list(pred.shape)} and the "
                    f"targets {batch['y'].dtype} {list(batch['y'].shape)}: "
                    f"{type(exc).__name__}: {exc}. Check TrainingLoop.loss against the "
                    f"targets (cross_entropy takes logits and integer labels)"
                ) from exc
    finally:
        net.train(was_training)
    if not isinstance(value, torch.Tensor) or value.ndim != 0:
        raise ConfigError(
            f"TrainingLoop.loss must return a scalar tensor; it returns "
            f"{getattr(value, 'shape', type(value).__name__)}; reduce it (e.g. with .mean())",
            field="loss",
        )
