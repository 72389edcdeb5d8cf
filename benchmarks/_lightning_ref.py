"""Case 9: the lightning backend against a plain Lightning script and a plain torch loop.

All three train the same torch MLP 64-256-256-10 (ReLU) on digits, batch 128,
``torch.optim.AdamW(lr=1e-3, weight_decay=1e-4)`` (optax's default decay, which the
backend uses for ``{"name": "adamw", "lr": 1e-3}``), cross-entropy, on CPU, in this
process with the same torch thread count. Only steady-state steps are timed: steps
``start … start + window`` (set-up, the first steps and Trainer start-up outside).

- backend: ``TrainingLoop(backend="lightning")`` with log every 50, no checkpoint; a
  pipekit callback records ``perf_counter`` at the host events of the window's ends;
- plain Lightning: the script a user writes — a ``LightningModule`` whose
  ``training_step`` returns the loss, ``DataLoader(TensorDataset, batch_size=128,
  shuffle=True, drop_last=True)``, ``Trainer(logger=False, enable_checkpointing=False,
  enable_progress_bar=False, enable_model_summary=False)``; a Lightning callback
  times the same steps;
- plain torch: ``for`` over a per-epoch ``torch.randperm`` with tensor indexing,
  ``zero_grad``/``backward``/``step``, no ``.item()`` per step.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

#: The clock of every timed window. ``time.perf_counter`` (wall time) by default; under
#: other load on the machine, ``time.process_time`` with one torch thread measures the
#: work each path does instead (``run.py --cases 9 --cpu-time``).
CLOCK = time.perf_counter


def _model() -> Any:
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(64, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 10),
    )


def backend_loop(
    data: dict[str, np.ndarray], max_steps: int, callbacks: list[Any], **features: Any
) -> Any:
    """The lightning backend's run of these cases: log every 50, no checkpoint."""
    from pipekit_train import TrainingLoop

    return TrainingLoop(
        backend="lightning",
        model_op=_model(),
        dataset={"x": data["x"], "y": data["y"].astype(np.int64)},
        loss="cross_entropy",
        batch_size=128,
        max_steps=max_steps,
        log_every_n_steps=50,
        optimizer_config={"name": "adamw", "lr": 1e-3},
        callbacks=callbacks,
        backend_options={"accelerator": "cpu"},
        **features,
    )


def backend_seconds_per_step(
    data: dict[str, np.ndarray], start: int, window: int, **features: Any
) -> float:
    """Steps ``(start, start + window]`` of the lightning backend (optimiser updates).

    ``features`` are ``TrainingLoop`` feature fields (cases 16a-16d).
    """
    from pipekit_train import Callback

    class Clock(Callback):
        def __init__(self) -> None:
            self.t: dict[int, float] = {}

        def on_step_end(self, loop: Any, state: Any) -> None:
            self.t[state.step] = CLOCK()

    clock = Clock()
    backend_loop(data, start + window, [clock], **features).run()
    return (clock.t[start + window] - clock.t[start]) / window


def plain_fit(
    data: dict[str, np.ndarray], max_steps: int, on_step: Callable[[int], None] | None = None
) -> None:
    """The plain Lightning script: ``max_steps`` steps; ``on_step(global_step)`` per batch."""
    import lightning.pytorch as pl
    import torch
    import torch.nn.functional as F

    class Module(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = _model()

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            x, y = batch
            return F.cross_entropy(self.net(x), y)

        def configure_optimizers(self) -> Any:
            return torch.optim.AdamW(self.parameters(), lr=1e-3, weight_decay=1e-4)

    class Hook(pl.Callback):
        def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
            if on_step is not None:
                on_step(trainer.global_step)

    ds = torch.utils.data.TensorDataset(
        torch.from_numpy(data["x"]), torch.from_numpy(data["y"].astype(np.int64))
    )
    loader = torch.utils.data.DataLoader(ds, batch_size=128, shuffle=True, drop_last=True)
    trainer = pl.Trainer(
        max_steps=max_steps,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[Hook()],
    )
    trainer.fit(Module(), loader)


def lightning_seconds_per_step(data: dict[str, np.ndarray], start: int, window: int) -> float:
    t: dict[int, float] = {}

    def on_step(step: int) -> None:
        if step in (start, start + window):
            t[step] = CLOCK()

    plain_fit(data, start + window, on_step)
    return (t[start + window] - t[start]) / window


def torch_seconds_per_step(data: dict[str, np.ndarray], start: int, window: int) -> float:
    import torch
    import torch.nn.functional as F

    model = _model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    x = torch.from_numpy(data["x"])
    y = torch.from_numpy(data["y"].astype(np.int64))
    spe = len(x) // 128
    step, t0 = 0, 0.0
    while step < start + window:
        perm = torch.randperm(len(x))
        for j in range(spe):
            if step == start:
                t0 = CLOCK()
            idx = perm[j * 128 : (j + 1) * 128]
            loss = F.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step == start + window:
                break
    return (CLOCK() - t0) / window
