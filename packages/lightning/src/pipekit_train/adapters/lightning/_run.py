"""``run(loop)``: train a ``TrainingLoop`` with PyTorch Lightning's ``Trainer.fit``.

Everything a user can get wrong is checked before ``fit`` (``PipekitError``
naming the field): backend options against the Trainer's signature, the
optimiser against ``torch.optim``, the model type, the loss, the datasets
(``_inputs``: the model and loss run on one batch under ``torch.no_grad()``), and the
checkpoint folder with its resume guard.

A user ``LightningModule`` (``task=``, or given as ``model_op``) keeps its own
``training_step``, ``configure_optimizers`` and ``validation_step``; ``_own`` refuses the
loop fields that would contradict them.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import torch

import lightning.pytorch as pl
from lightning.pytorch.utilities.exceptions import SIGTERMException
from pipekit_train.engine import (
    STRUCTURE_HINT,
    RunOutcome,
    StopSignals,
    backend_info,
    finishing,
    refuse_shuffle_option,
    resume_from_store,
    training_ended,
)
from pipekit_train.errors import CheckpointError, ConfigError
from pipekit_train.fingerprint import digest_of
from pipekit_train.fingerprint import fingerprint as core_fingerprint
from pipekit_train.loop import non_default_features
from pipekit_train.registry import distribution_versions

from ._bridge import Bridge
from ._checkpoint import Saved, TorchFileStore
from ._data import reads_own_order
from ._datamodule import StepDataModule
from ._ema import WeightEMA
from ._features import apply_loop_features
from ._inputs import data_and_evaluate, resolve_module
from ._module import attach_optimizer
from ._ops import TorchModelOp, module_structure_digest
from ._optim import check_optimizer, parse_spec
from ._options import Options, check_clipping, parse_options
from ._own import LogRecorder, uses_own_optimizer

__all__ = ["run", "fingerprint"]


def fingerprint(
    loop: Any, net: torch.nn.Module, dataset_length: int, accumulate: int, own_order: bool = False
) -> dict[str, Any]:
    """The resume guard stored in every checkpoint (core's, with the state_dict digest).

    ``own_order``: the data is a ``grain.MapDataset`` read in its own order, recorded as
    ``data_order: "own"`` so that a checkpoint written in pipekit's order (an earlier
    version's) is not resumed in the pipeline's; arrays keep the fingerprint they had.
    """
    return core_fingerprint(
        loop,
        backend="lightning",
        model_structure=module_structure_digest(net),
        dataset_length=dataset_length,
        extra={
            **non_default_features(loop),
            **({"accumulate_grad_batches": accumulate} if accumulate != 1 else {}),
            **({"data_order": "own"} if own_order else {}),
        },
    )


def _restore_module(net: torch.nn.Module, saved: Saved) -> None:
    try:
        net.load_state_dict(saved.module, strict=True)
    except RuntimeError as exc:
        raise CheckpointError(
            f"the checkpoint {saved.path} holds another model's weights and cannot be loaded "
            f"into model_op ({exc}). {STRUCTURE_HINT}"
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


def _devices(trainer: Any) -> list[str]:
    """The devices ``fit`` ran on, as ``"cpu:0"``, ``"cuda:1"`` … (all ranks' together)."""
    kind = trainer.strategy.root_device.type
    return [f"{kind}:{i}" for i in trainer.device_ids]


def run(loop: Any) -> tuple[TorchModelOp, dict[str, Any]]:
    """Train ``loop`` with Lightning; return the trained ``TorchModelOp`` and ``backend_info``."""
    started = time.perf_counter()
    # A grain.MapDataset is read in its own order (decision 0198): pipekit's shuffle beside it
    # is core's ConfigError, answered before the options (Lightning has no shuffle option).
    refuse_shuffle_option(loop.dataset, loop.backend_options)
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

    op, net, pl_module, loss_fn, field = resolve_module(loop)
    own_optimizer = uses_own_optimizer(loop, net, field)
    check_clipping(options, own_optimizer)
    schedule = None if own_optimizer else attach_optimizer(pl_module, spec)
    recorder = LogRecorder(pl_module) if loss_fn is None else None

    train, records, n, evaluate, workers = data_and_evaluate(
        loop, options, net, pl_module, loss_fn, recorder, accumulate
    )

    fp = fingerprint(loop, net, n, accumulate, own_order=reads_own_order(train))
    store: TorchFileStore | None = None
    saved: Saved | None = None
    if loop.checkpoint_dir is not None:
        ckpt = loop.checkpoint_callback
        store = TorchFileStore(loop.checkpoint_dir, ckpt.keep_last if ckpt is not None else None)
        store.config_digest = digest_of(loop)
        saved = resume_from_store(store, None, mode=options.resume, fingerprint=fp)
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
            user=records.datamodule if records is not None else None,
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
                    if records is None or records.datamodule is None:
                        # The datamodule is pipekit's, not the user's: their module's
                        # transfer hooks are used, as under fit with a plain DataLoader.
                        warnings.filterwarnings(
                            "ignore", message=r".*but have passed in a `LightningDataModule`"
                        )
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
        devices, world_size = _devices(trainer), int(trainer.world_size)
        if owns_process_group and trainer.world_size > 1:
            _end_process_group()
    else:
        is_primary = True
        devices, world_size = ["cpu"], 1  # no step to run: nothing was placed anywhere
    # the steps are done and their checkpoints written: what fails from here on (the
    # report, on_run_end, the trained op) is a FinishError that keeps the run
    training_ended(
        state.step,
        bridge.last_checkpoint,
        steps_run=state.step - start,
        total_steps=loop.max_steps,
    )
    runner = bridge.runner or bridge.make_runner(is_primary)
    info = backend_info(
        "lightning",
        RunOutcome(
            final_step=state.step,
            resumed_from_step=saved.step if saved is not None else None,
            last_checkpoint_step=bridge.last_checkpoint,
            stop_reason=state.stop_reason,
            interrupted=interrupted,
            train_seconds=bridge.train_seconds,
            steps_run=state.step - start,
            final_metrics=state.metrics,
            run_dir=None if runner.run_dir is None else str(runner.run_dir),
        ),
        versions=distribution_versions("pipekit-train-lightning"),
        started=started,
        devices=devices,
        process_count=world_size,
        extras={
            "features": {
                "accumulate_steps": int(loop.accumulate_steps),
                "ema_decay": loop.ema_decay,
                "precision": loop.precision,
            },
        },
    )
    runner.run_end(state, info)
    with finishing("operator"):
        net = net.cpu()
        if ema is not None:  # the trained op holds the average; the checkpoint the last iterate
            ema.copy_into(net)
        trained = op.with_module(net) if op is not None else TorchModelOp(net)
    return trained, info
