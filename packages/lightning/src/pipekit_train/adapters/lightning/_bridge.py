"""The bridge: one ``lightning.pytorch.Callback`` driving pipekit's ``CallbackRunner``.

It follows the bridge contract in ``docs/architecture.md``: per batch it
collects the loss (``state.window``) and seeds torch from ``(seed, batch
index)``; at the steps the run's ``Schedule`` names (and at a stop signal) it
fetches the window and calls core's ``host_event``, the driver's own routine:
``step_end`` → the evaluation pass and ``eval_end`` → a pipekit checkpoint and
``checkpoint_done``; its stop decision becomes ``trainer.should_stop``. The
bridge supplies only Lightning's mechanics (the evaluation with the EMA weights
swapped in, the epoch-interval schedulers, the torch-file save).
Under DDP the window is averaged over ranks (each rank sees its slice of the
global batch) and the stop decision is shared, so every rank takes the same path;
there a stop signal is honoured at the next scheduled event. With ``ema_decay``
the average (``_ema.WeightEMA``) moves after each optimiser step,
evaluation runs on it, and it is saved in every checkpoint.

With the user's own ``configure_optimizers`` (``read_lr``) the ``lr`` metric is the
optimiser's ``param_groups[0]["lr"]`` read just before each optimiser step, so it follows
the user's schedulers; every optimiser and scheduler is checkpointed. A scheduler with
``interval="epoch"`` is stepped here at the end of every pipekit data epoch (``n //
(batch_size * accumulate)`` updates, every ``frequency`` epochs; ``ReduceLROnPlateau`` with
the newest value of its ``monitor``): pipekit serves the whole run as one Lightning epoch,
so that a resumed run reads the same batches, and Lightning would step it only at the end.
The module's ``self.log`` values (``_own.LogRecorder``) join ``state.window`` per step.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

import torch

import lightning.pytorch as pl
from pipekit_train.carry import TrainerCarryState
from pipekit_train.engine import (
    CallbackRunner,
    EventSite,
    SaveClock,
    Schedule,
    host_event,
    record_window,
)
from pipekit_train.errors import ConfigError

from ._checkpoint import Saved, TorchFileStore
from ._ema import WeightEMA
from ._own import LogRecorder

__all__ = ["Bridge", "step_seed"]

_MASK = 2**63 - 1

#: The interval a user scheduler of ``interval="epoch"`` gets for the run, so that Lightning
#: (which steps only ``"step"`` and ``"epoch"``) leaves it to the bridge's data epochs.
PIPEKIT_EPOCH = "pipekit-data-epoch"
_SEVERAL = "pipekit_several"


def pack_states(states: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The checkpoint entry of the run's optimisers (or schedulers): None, one, or several."""
    if not states:
        return None
    return states[0] if len(states) == 1 else {_SEVERAL: states}


def unpack_states(entry: dict[str, Any] | None) -> list[dict[str, Any]]:
    """:func:`pack_states` undone."""
    if entry is None:
        return []
    several = entry.get(_SEVERAL)
    return list(several) if isinstance(several, list) else [entry]


def step_seed(seed: int, index: int) -> int:
    """The torch seed of batch ``index``: a pure function of ``(seed, index)``."""
    return ((seed + 1) * 0x9E3779B97F4A7C15 + index * 0xBF58476D1CE4E5B9) & _MASK


def transfer_seed(seed: int, index: int) -> int:
    """The torch seed the batch-transfer hooks of batch ``index`` run under (another stream)."""
    return (step_seed(seed, index) ^ 0x94D049BB133111EB) & _MASK


class Bridge(pl.Callback):
    """Pipekit callbacks, evaluation, checkpoints and stop signals inside ``Trainer.fit``."""

    def __init__(
        self,
        loop: Any,
        *,
        net: torch.nn.Module,
        start: int,
        saved: Saved | None,
        store: TorchFileStore | None,
        fingerprint: dict[str, Any],
        evaluate: Callable[[torch.nn.Module], dict[str, float]] | None,
        lr_at: Callable[[int], float],
        accumulate: int,
        ema: WeightEMA | None = None,
        recorder: LogRecorder | None = None,
        read_lr: bool = False,
        steps_per_epoch: int = 0,
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
        self.recorder = recorder
        self.read_lr = read_lr
        self.steps_per_epoch = steps_per_epoch
        self._lr = float("nan")
        self._rates: list[float] = []
        self._logged: list[dict[str, Any]] = []
        self._latest: dict[str, Any] = {}
        self._last_logged: dict[str, Any] = {}
        self.max_steps = int(loop.max_steps)
        self.schedule = Schedule.for_loop(
            loop, checkpointing=store is not None, evaluating=evaluate is not None
        )
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
        self._next_event = self.schedule.next_event(start)
        self.clock = SaveClock(every_seconds=self.schedule.checkpoint_seconds)

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

    def _seed(self, pl_module: pl.LightningModule, seed: int) -> None:
        # The generators themselves, not torch.manual_seed: before CUDA is initialised that
        # also queues a CUDA seeding call with a formatted stack trace, on every batch.
        torch.default_generator.manual_seed(seed)
        device = pl_module.device
        if device.type == "cuda":
            torch.cuda.default_generators[device.index or 0].manual_seed(seed)

    def _seed_transfer(self, pl_module: pl.LightningModule, batch_idx: int) -> None:
        """Seed for the transfer hooks of run batch ``batch_idx`` (they run before its start).

        Lightning calls ``on_before_batch_transfer`` / ``transfer_batch_to_device`` /
        ``on_after_batch_transfer`` before ``on_train_batch_start``; a random augmentation
        there draws from this seed, a function of ``(seed, global batch)``, so a resumed
        run's first batch is augmented as the uninterrupted run's was.
        """
        index = self.start * self.accumulate + batch_idx
        self._seed(pl_module, transfer_seed(self.loop.seed, index))

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._seed_transfer(pl_module, 0)
        if self.read_lr:
            for config in trainer.lr_scheduler_configs:
                if config.interval == "epoch":
                    config.interval = PIPEKIT_EPOCH
        if self.saved is not None:
            optimizers = unpack_states(self.saved.optimizer)
            schedulers = unpack_states(self.saved.scheduler)
            if len(optimizers) != len(trainer.optimizers) or len(schedulers) != len(
                trainer.lr_scheduler_configs
            ):
                raise ConfigError(
                    f"the checkpoint {self.saved.path} holds {len(optimizers)} optimiser(s) and "
                    f"{len(schedulers)} LR scheduler(s), configure_optimizers now makes "
                    f"{len(trainer.optimizers)} and {len(trainer.lr_scheduler_configs)}; use a "
                    'new checkpoint_dir or backend_options={"resume": "never"}',
                    field="checkpoint_dir",
                )
            for optimizer, state in zip(trainer.optimizers, optimizers, strict=True):
                optimizer.load_state_dict(state)
            for config, state in zip(trainer.lr_scheduler_configs, schedulers, strict=True):
                config.scheduler.load_state_dict(state)
        assert self.runner is not None
        self.runner.run_start(self.state)
        self._started = time.perf_counter()
        # The checkpoint clock starts with training; under DDP process 0's decides for all.
        self.clock = SaveClock(
            every_seconds=self.schedule.checkpoint_seconds,
            share=_shared_decision(trainer) if trainer.world_size > 1 else _same,
        )

    # ------------------------------------------------------------ per batch
    def on_train_batch_start(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: Any, batch_idx: int
    ) -> None:
        self._seed(pl_module, step_seed(self.loop.seed, self.start * self.accumulate + batch_idx))

    def on_before_optimizer_step(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, optimizer: Any
    ) -> None:
        if self.read_lr:  # the rate this update uses (the user's schedulers set it)
            self._lr = float(optimizer.param_groups[0]["lr"])

    def on_train_batch_end(
        self,
        trainer: pl.Trainer,
        pl_module: pl.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
    ) -> None:
        self._batch_end(trainer, outputs)
        self._seed_transfer(pl_module, batch_idx + 1)  # the next batch's transfer hooks

    def _batch_end(self, trainer: pl.Trainer, outputs: Any) -> None:
        loss = outputs["loss"] if isinstance(outputs, dict) else outputs
        if loss is not None:
            self._pending.append(loss.detach())
        step = self.start + trainer.global_step
        if step == self._step:  # still accumulating gradients
            return
        self._step = step
        if self.read_lr:
            self._rates.append(self._lr)
        if self.recorder is not None:
            self._logged.append(self.recorder.take())
            self._latest.update(self._logged[-1])
        epoch_end = bool(self.steps_per_epoch) and step % self.steps_per_epoch == 0
        if self.ema is not None:  # after the optimiser step, once per update
            self.ema.update(self.net)
        # Lightning hands on each micro-batch's loss divided by accumulate_grad_batches, so
        # the update's loss (the mean over its micro-batches, as on every backend) is the sum.
        if not self._pending:  # manual optimisation whose training_step returns nothing
            self._pending = [torch.tensor(float("nan"))]
        value = self._pending[0] if len(self._pending) == 1 else torch.stack(self._pending).sum()
        self._pending = []
        self._window.append(value)
        self._window_steps.append(step)
        signal = self.signals.received if self.signals is not None else None
        if step < self._next_event and (signal is None or self._world > 1):
            if epoch_end:
                self._epoch_schedulers(trainer, step // self.steps_per_epoch)
            return
        # At an event the epoch's schedulers step after its evaluation (a plateau scheduler
        # may monitor val_*) and before its checkpoint (which must hold the stepped state).
        self._event(trainer, step, signal, step // self.steps_per_epoch if epoch_end else None)

    def _epoch_schedulers(self, trainer: pl.Trainer, epoch: int) -> None:
        """Step the user's ``interval="epoch"`` schedulers at the end of data epoch ``epoch``."""
        for config in trainer.lr_scheduler_configs:
            if config.interval != PIPEKIT_EPOCH or epoch % config.frequency:
                continue
            if config.reduce_on_plateau:
                monitor = str(config.monitor)
                value = self._latest.get(monitor, trainer.callback_metrics.get(monitor))
                if value is None:
                    if config.strict:
                        raise ConfigError(
                            f"the LR scheduler's monitor {config.monitor!r} was not logged "
                            f"before the end of data epoch {epoch}; logged: "
                            f"{sorted(trainer.callback_metrics)}. self.log it in "
                            "training_step (or validation_step, seen as val_<name>), or "
                            'set "strict": False in its lr_scheduler dict',
                            field="task.configure_optimizers",
                        )
                    continue
                scheduler: Any = config.scheduler
                scheduler.step(value)
            else:
                config.scheduler.step()  # type: ignore[call-arg]

    def _logged_window(self) -> dict[str, list[float]]:
        """The module's logged names, one value per step (the last value carried forward)."""
        entries, self._logged = self._logged, []
        if not entries:
            return {}
        names = sorted({name for entry in entries for name in entry} - {"loss", "lr"})
        out: dict[str, list[float]] = {}
        for name in names:
            seq: list[Any] = []
            last = self._last_logged.get(name)
            for entry in entries:
                last = entry.get(name, last)
                seq.append(last)
            if all(v is not None for v in seq):
                out[name] = [float(v) for v in torch.stack(seq).cpu().tolist()]
                self._last_logged[name] = seq[-1]
        return out

    # --------------------------------------------------------------- events
    def _event(
        self, trainer: pl.Trainer, step: int, signal: str | None, epoch_end: int | None = None
    ) -> None:
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
        if self.read_lr:
            rates, self._rates = self._rates, []
        else:
            rates = [float(self.lr_at(s - 1)) for s in self._window_steps]
        logged = self._logged_window()
        record_window(state, {"loss": losses, "lr": rates, **logged}, self._window_steps)
        self._window, self._window_steps = [], []

        def evaluate() -> dict[str, float]:
            assert self.evaluate is not None
            averaged = self.ema.swapped_into(self.net) if self.ema else contextlib.nullcontext()
            with averaged:
                return self.evaluate(self.net)

        def before_checkpoint(val_metrics: dict[str, float] | None) -> None:
            if val_metrics:  # an epoch-interval ReduceLROnPlateau may monitor them
                trainer.callback_metrics.update(
                    {k: torch.tensor(v) for k, v in val_metrics.items()}
                )
            if epoch_end is not None:  # after the evaluation, before the checkpoint
                self._epoch_schedulers(trainer, epoch_end)

        def stop_signal() -> str | None:
            if signal is None and self._world == 1 and self.signals is not None:
                return self.signals.received  # e.g. SIGTERM during the callbacks
            return signal

        site = EventSite(
            evaluate=evaluate if self.evaluate is not None else None,
            save=(lambda step, meta: self.save(trainer, step, meta))
            if self.store is not None
            else None,
            data_state=lambda step: {"position": step * self.accumulate},
            signal=stop_signal,
            before_checkpoint=before_checkpoint,
            fingerprint=self.fingerprint,
            clock=self.clock,
        )
        outcome = host_event(state, runner, self.schedule, site)
        if outcome.signalled:
            self.signal_handled = True
        if outcome.stop:
            trainer.should_stop = True
        self._next_event = self.schedule.next_event(step)

    def _any(self, trainer: pl.Trainer, local: bool, signal: str | None) -> str | None:
        if trainer.strategy.reduce_boolean_decision(local, all=False):
            return signal or "SIGTERM"
        return None

    def save(self, trainer: pl.Trainer, step: int, meta: dict[str, Any]) -> None:
        """A pipekit checkpoint of module, optimiser, scheduler and ``meta`` (rank 0 writes)."""
        assert self.store is not None
        if trainer.is_global_zero:
            self.store.save(
                step,
                {
                    "module": {k: v.detach().cpu() for k, v in self.net.state_dict().items()},
                    "optimizer": pack_states([_to_cpu(o.state_dict()) for o in trainer.optimizers]),
                    "scheduler": pack_states(
                        [c.scheduler.state_dict() for c in trainer.lr_scheduler_configs]
                    ),
                    "ema": self.ema.state_dict() if self.ema is not None else None,
                },
                meta,
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


def _same(decision: bool) -> bool:
    return decision


def _shared_decision(trainer: pl.Trainer) -> Callable[[bool], bool]:
    """Rank 0's checkpoint decision on every rank (the strategy's broadcast)."""

    def share(decision: bool) -> bool:
        return bool(trainer.strategy.broadcast(bool(decision), src=0))

    return share
