"""The bridge: one ``lightning.pytorch.Callback`` driving pipekit's ``CallbackRunner``.

It follows the bridge contract in ``docs/architecture.md``: per batch it
collects the loss (``state.window``) and seeds torch from ``(seed, batch
index)``; at the loop's host events (``pipekit_train.runner.event_intervals``,
the last step, a stop signal) it runs, in the driver's order, ``step_end`` →
the evaluation pass (at ``eval_every_n_steps``, the end, or an early stop) and
``eval_end`` → a pipekit checkpoint (``Checkpoint.every_n_steps``, the end, any
stop) and ``checkpoint_done`` → ``trainer.should_stop`` when a callback or a
signal asked for it. Under DDP the window is averaged over ranks (each rank
sees its slice of the global batch) and the stop decision is shared, so every
rank takes the same path; there a stop signal is honoured at the next
scheduled event. With ``ema_decay`` the average (``_ema.WeightEMA``) moves after each
optimiser step, evaluation runs on it, and it is saved in every checkpoint.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

import torch

import lightning.pytorch as pl
from pipekit_train.callbacks import scalar
from pipekit_train.carry import TrainerCarryState
from pipekit_train.runner import CallbackRunner, event_intervals, next_event_step

from ._checkpoint import CheckpointStore, Saved
from ._ema import WeightEMA

__all__ = ["Bridge", "step_seed"]

_MASK = 2**63 - 1


def step_seed(seed: int, index: int) -> int:
    """The torch seed of batch ``index``: a pure function of ``(seed, index)``."""
    return ((seed + 1) * 0x9E3779B97F4A7C15 + index * 0xBF58476D1CE4E5B9) & _MASK


class Bridge(pl.Callback):
    """Pipekit callbacks, evaluation, checkpoints and stop signals inside ``Trainer.fit``."""

    def __init__(
        self,
        loop: Any,
        *,
        net: torch.nn.Module,
        start: int,
        saved: Saved | None,
        store: CheckpointStore | None,
        fingerprint: dict[str, Any],
        evaluate: Callable[[torch.nn.Module], dict[str, float]] | None,
        lr_at: Callable[[int], float],
        accumulate: int,
        ema: WeightEMA | None = None,
    ) -> None:
        self.loop = loop
        self.net = net
        self.start = start
        self.saved = saved
        self.store = store
        self.fingerprint = fingerprint
        self.evaluate = evaluate
        self.lr_at = lr_at
        self.accumulate = accumulate
        self.ema = ema
        self.max_steps = int(loop.max_steps)
        self.intervals = event_intervals(loop, checkpointing=store is not None)
        self.ckpt = loop.checkpoint_callback if store is not None else None
        self.state = TrainerCarryState(step=start, total_steps=self.max_steps)
        self.runner: CallbackRunner | None = None
        self.signals: Any = None
        self.signal_handled = False
        self.last_checkpoint: int | None = saved.step if saved is not None else None
        self.train_seconds = 0.0
        self._started = 0.0
        self._world = 1
        self._pending: list[torch.Tensor] = []
        self._window: list[torch.Tensor] = []
        self._window_steps: list[int] = []
        self._step = start
        self._next_event = next_event_step(start, self.intervals, self.max_steps)

    # ------------------------------------------------------------------ set-up
    def make_runner(self, is_primary: bool) -> CallbackRunner:
        """The run's one ``CallbackRunner``, with the checkpoint's state put back."""
        self.runner = CallbackRunner(self.loop, is_primary=is_primary)
        if self.saved is not None:
            self.runner.restore(self.state, self.saved.meta)
        return self.runner

    def setup(self, trainer: pl.Trainer, pl_module: pl.LightningModule, stage: str) -> None:
        self._world = trainer.world_size
        if self.runner is None:
            self.make_runner(trainer.is_global_zero)

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if self.saved is not None:
            if self.saved.optimizer is not None:
                trainer.optimizers[0].load_state_dict(self.saved.optimizer)
            if self.saved.scheduler is not None and trainer.lr_scheduler_configs:
                trainer.lr_scheduler_configs[0].scheduler.load_state_dict(self.saved.scheduler)
        assert self.runner is not None
        self.runner.run_start(self.state)
        self._started = time.perf_counter()

    # ------------------------------------------------------------ per batch
    def on_train_batch_start(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: Any, batch_idx: int
    ) -> None:
        seed = step_seed(self.loop.seed, self.start * self.accumulate + batch_idx)
        # The generators themselves, not torch.manual_seed: before CUDA is initialised that
        # also queues a CUDA seeding call with a formatted stack trace, on every batch.
        torch.default_generator.manual_seed(seed)
        device = pl_module.device
        if device.type == "cuda":
            torch.cuda.default_generators[device.index or 0].manual_seed(seed)

    def on_train_batch_end(
        self,
        trainer: pl.Trainer,
        pl_module: pl.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
    ) -> None:
        loss = outputs["loss"] if isinstance(outputs, dict) else outputs
        self._pending.append(loss.detach())
        step = self.start + trainer.global_step
        if step == self._step:  # still accumulating gradients
            return
        self._step = step
        if self.ema is not None:  # after the optimiser step, once per update
            self.ema.update(self.net)
        # Lightning hands on each micro-batch's loss divided by accumulate_grad_batches, so
        # the update's loss (the mean over its micro-batches, as on every backend) is the sum.
        value = self._pending[0] if len(self._pending) == 1 else torch.stack(self._pending).sum()
        self._pending = []
        self._window.append(value)
        self._window_steps.append(step)
        signal = self.signals.received if self.signals is not None else None
        if step < self._next_event and (signal is None or self._world > 1):
            return
        self._event(trainer, step, signal)

    # --------------------------------------------------------------- events
    def _event(self, trainer: pl.Trainer, step: int, signal: str | None) -> None:
        state, runner = self.state, self.runner
        assert runner is not None
        values = torch.stack(self._window).float()
        if self._world > 1:
            values = trainer.strategy.reduce(values, reduce_op="mean")
            signal = self._any(trainer, signal is not None, signal)
        losses = values.cpu().tolist()
        state.step = step
        # The rate each update used, as the JAX backends report it per step: the writers log
        # it at the log cadence and `plot` draws its curve.
        rates = [float(self.lr_at(s - 1)) for s in self._window_steps]
        state.window = {"loss": losses, "lr": rates}
        state.window_steps = list(self._window_steps)
        state.metrics["loss"] = scalar(losses[-1])
        state.metrics["lr"] = rates[-1]
        self._window, self._window_steps = [], []
        final = step >= self.max_steps
        runner.step_end(state)
        every = self.loop.eval_every_n_steps
        if self.evaluate is not None and (
            final or (every and step % every == 0) or state.should_stop
        ):
            averaged = self.ema.swapped_into(self.net) if self.ema else contextlib.nullcontext()
            with averaged:
                val_values = self.evaluate(self.net)
            metrics = {f"val_{k}": float(v) for k, v in val_values.items()}
            runner.eval_end(state, metrics)
        if signal is None and self._world == 1 and self.signals is not None:
            signal = self.signals.received  # e.g. SIGTERM during the callbacks above
        if signal is not None and not state.should_stop:
            state.should_stop = True
            state.stop_reason = f"{signal}: checkpointed and stopped"
            self.signal_handled = True
        if self.ckpt is not None and (
            step % self.ckpt.every_n_steps == 0 or final or state.should_stop
        ):
            self.save(trainer, step)
            runner.checkpoint_done(state, step)
        if state.should_stop:
            trainer.should_stop = True
        self._next_event = next_event_step(step, self.intervals, self.max_steps)

    def _any(self, trainer: pl.Trainer, local: bool, signal: str | None) -> str | None:
        if trainer.strategy.reduce_boolean_decision(local, all=False):
            return signal or "SIGTERM"
        return None

    def save(self, trainer: pl.Trainer, step: int) -> None:
        """A pipekit checkpoint of module, optimiser, scheduler, data position and meta."""
        assert self.store is not None and self.runner is not None
        if trainer.is_global_zero:
            meta = self.runner.checkpoint_meta(self.state)
            meta["phase"] = "train"
            meta["fingerprint"] = self.fingerprint
            meta["data"] = {"position": step * self.accumulate}
            scheduler = (
                trainer.lr_scheduler_configs[0].scheduler.state_dict()
                if trainer.lr_scheduler_configs
                else None
            )
            self.store.save(
                step,
                {k: v.detach().cpu() for k, v in self.net.state_dict().items()},
                _to_cpu(trainer.optimizers[0].state_dict()),
                scheduler,
                meta,
                ema=self.ema.state_dict() if self.ema is not None else None,
            )
        self.last_checkpoint = step

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self.finish_timing()

    def finish_timing(self) -> None:
        """Training wall time, once (also after a stop that skipped ``on_train_end``)."""
        if not self.train_seconds and self._started:
            self.train_seconds = time.perf_counter() - self._started


def _to_cpu(tree: Any) -> Any:
    if isinstance(tree, torch.Tensor):
        return tree.detach().cpu()
    if isinstance(tree, dict):
        return {k: _to_cpu(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_to_cpu(v) for v in tree]
    if isinstance(tree, tuple):
        return tuple(_to_cpu(v) for v in tree)
    return tree
