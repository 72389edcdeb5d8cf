"""The evaluation pass over ``val_dataset``: mean loss (and accuracy for classification)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ._data import Arrays, eval_batches
from ._losses import LossFn, accuracy

__all__ = ["make_evaluate"]


def make_evaluate(
    val: Arrays,
    batch_size: int,
    loss_name: Any,
    loss_fn: LossFn | None,
    step_fn: Callable[[dict[str, torch.Tensor]], Any] | None = None,
) -> Callable[[torch.nn.Module], dict[str, float]]:
    """``evaluate(net) -> {"loss": …, "accuracy": …}`` over every row of ``val`` (eval mode).

    Batch means are weighted by batch size, so a short last batch counts by its rows.
    ``step_fn`` (a user task's ``training_step``) replaces ``loss(net(x), y)``.
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
                    if step_fn is not None:
                        out = step_fn(batch)
                        loss = out["loss"] if isinstance(out, dict) else out
                        values = {"loss": loss}
                    else:
                        assert loss_fn is not None
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
