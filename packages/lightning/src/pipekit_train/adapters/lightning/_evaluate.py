"""The evaluation pass over ``val_dataset``: mean loss (and accuracy for classification)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch

from ._data import Arrays, eval_batches
from ._losses import LossFn, accuracy

__all__ = ["array_batches", "loader_batches", "make_evaluate", "make_validation"]


def make_evaluate(
    val: Arrays,
    batch_size: int,
    loss_name: Any,
    loss_fn: LossFn,
) -> Callable[[torch.nn.Module], dict[str, float]]:
    """``evaluate(net) -> {"loss": …, "accuracy": …}`` over every row of ``val`` (eval mode).

    Batch means are weighted by batch size, so a short last batch counts by its rows. (A
    user module is evaluated by :func:`make_validation`.)
    """

    def evaluate(net: torch.nn.Module) -> dict[str, float]:
        device = next(iter(net.parameters())).device
        was_training = net.training
        net.eval()
        totals: dict[str, float] = {}
        rows = 0
        try:
            with torch.no_grad():
                for batch in eval_batches(val, batch_size):
                    batch = {k: v.to(device) for k, v in batch.items()}
                    m = int(next(iter(batch.values())).shape[0])
                    pred = net(batch["x"])
                    values = {"loss": loss_fn(pred, batch["y"])}
                    acc = accuracy(loss_name, pred, batch["y"])
                    if acc is not None:
                        values["accuracy"] = acc
                    for k, v in values.items():
                        totals[k] = totals.get(k, 0.0) + float(v) * m
                    rows += m
        finally:
            net.train(was_training)
        return {k: v / rows for k, v in totals.items()}

    return evaluate


def _val_name(name: str) -> str:
    """``val_loss`` / ``val/loss`` / ``loss`` → ``loss`` (the bridge writes ``val_<name>``)."""
    for prefix in ("val_", "val/", "validation_", "validation/"):
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :]
    return name


def array_batches(val: Arrays, batch_size: int) -> Callable[[], Iterable[tuple[Any, int]]]:
    """``val``'s batches in order, each with its row count."""

    def batches() -> Iterator[tuple[Any, int]]:
        for batch in eval_batches(val, batch_size):
            yield batch, int(next(iter(batch.values())).shape[0])

    return batches


def loader_batches(loader: Any) -> Callable[[], Iterable[tuple[Any, int]]]:
    """A validation ``DataLoader``'s batches (its own order: a mean needs none), with sizes."""
    from lightning.pytorch.utilities.data import extract_batch_size

    def batches() -> Iterator[tuple[Any, int]]:
        for batch in loader:
            yield batch, int(extract_batch_size(batch))

    return batches


def make_validation(
    batches: Callable[[], Iterable[tuple[Any, int]]],
    module: Any,
    recorder: Any,
    *,
    own_step: bool = True,
) -> Callable[[torch.nn.Module], dict[str, float]]:
    """``evaluate(net)`` running the user module's own ``validation_step`` on every batch.

    What the step passes to ``self.log`` / ``self.log_dict`` is the result: the mean over
    all rows, each batch weighted by its ``batch_size`` (the one given to ``log``, else its
    rows) — Lightning's epoch-level reduction. ``val_x``, ``val/x`` and ``x`` all become
    ``val_x`` in the writers. Without a ``validation_step`` (``own_step=False``) the loss
    its ``training_step`` returns is ``loss`` and what it logs is dropped.

    Each batch reaches the device as in Lightning's own validation loop: through
    ``on_before_batch_transfer``, ``transfer_batch_to_device`` and ``on_after_batch_transfer``
    (the datamodule's where it defines them, else the module's; ``dataloader_idx=0``), with
    the trainer in its validating stage (``self.trainer.validating`` is true in them).
    """

    def evaluate(net: torch.nn.Module) -> dict[str, float]:
        device = next(iter(net.parameters())).device
        trainer = getattr(module, "_trainer", None)
        stage = trainer.state.stage if trainer is not None else None
        was_training = net.training
        totals: dict[str, float] = {}
        weights: dict[str, float] = {}
        rows = 0

        def add(name: str, value: Any, size: int | None) -> None:
            weight = float(size if size is not None else rows)
            totals[name] = totals.get(name, 0.0) + float(torch.as_tensor(value).float()) * weight
            weights[name] = weights.get(name, 0.0) + weight

        def sink(name: str, value: Any, size: int | None) -> None:
            if own_step:
                add(_val_name(name), value, size)

        def to_device(batch: Any) -> Any:  # Lightning's evaluation loop, step for step
            if trainer is None:
                batch = module._on_before_batch_transfer(batch, 0)
                return module._apply_batch_transfer_handler(batch, device, 0)
            batch = trainer.precision_plugin.convert_input(batch)
            batch = module._on_before_batch_transfer(batch, 0)
            return trainer.strategy.batch_to_device(batch, dataloader_idx=0)

        net.eval()
        recorder.sink = sink
        if trainer is not None:
            trainer.validating = True
        try:
            with torch.no_grad():
                for i, (batch, rows) in enumerate(batches()):
                    batch = to_device(batch)
                    if own_step:
                        module.validation_step(batch, i)
                    else:
                        out = module.training_step(batch, i)
                        add("loss", out["loss"] if isinstance(out, dict) else out, rows)
        finally:
            if trainer is not None:
                trainer.state.stage = stage
            recorder.sink = None
            net.train(was_training)
        return {k: totals[k] / weights[k] for k in totals if weights[k]}

    return evaluate
