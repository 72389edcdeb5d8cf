"""``TrainingLoop``: the description of one training job, and its ``run()``.

Construction validates types, ranges and the optimiser config (pure Python, no
JAX import) and raises ``ConfigError`` naming the field. Nothing
backend-specific is checked here: ``run()`` resolves the backend by name and the
adapter validates what concerns it, still before any compilation.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from . import _loop_yaml
from ._refs import FactoryRef
from .callbacks import Callback, Checkpoint
from .errors import ConfigError
from .losses import validate_loss
from .registry import check_backend_name, load_backend

__all__ = [
    "TrainingLoop",
    "DEFAULT_OPTIMIZER",
    "FEATURE_DEFAULTS",
    "PRECISIONS",
    "non_default_features",
    "require_features",
]

DEFAULT_OPTIMIZER: dict[str, Any] = {"name": "adam", "lr": 1e-3}

#: The training features a backend must honour or refuse, with their "off" values.
#: A field away from its default on a backend that does not list it in
#: ``require_features(supported=...)`` is a ``ConfigError`` before compiling.
FEATURE_DEFAULTS: dict[str, Any] = {
    "accumulate_steps": 1,
    "ema_decay": None,
    "precision": "float32",
}

#: ``TrainingLoop.precision`` values: parameters and compute in float32; everything in
#: bfloat16; float32 parameters with the forward and backward passes in bfloat16.
PRECISIONS = ("float32", "bfloat16", "mixed-bfloat16")


def _has_val_dataloader(dataset: Any) -> bool:
    """A Lightning datamodule (told by its hook, with no Lightning import): its own
    ``val_dataloader`` is the validation data, as under ``Trainer(val_check_interval=...)``;
    the backend refuses one that defines none."""
    return callable(getattr(dataset, "val_dataloader", None))


def _brings_its_own_training(model_op: Any) -> bool:
    """Whether ``model_op`` may say its own loss, so its backend (not core) decides on ``loss``.

    Duck-typed, without importing a library: a LightningModule (``training_step`` and
    ``configure_optimizers``) or a Keras model (``train_step`` and ``compile``), bare or
    inside a backend's op (``.module`` / ``.model``). The backend raises the missing-loss
    ``ConfigError`` itself when the object turns out to say none (issue 20).
    """
    for obj in (model_op, getattr(model_op, "module", None), getattr(model_op, "model", None)):
        if obj is None:
            continue
        kind = type(obj)
        if hasattr(kind, "training_step") and hasattr(kind, "configure_optimizers"):
            return True
        if hasattr(kind, "train_step") and hasattr(kind, "compile"):
            return True
    return False


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive_int(value: Any, name: str, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if not _is_int(value) or value <= 0:
        hint = " or None" if allow_none else ""
        raise ConfigError(
            f"TrainingLoop.{name} must be a positive integer{hint}, got {value!r}", field=name
        )


def _as_ref(value: Any, field_name: str, *, call: bool = True) -> Any:
    """A ``'module:attr'`` string given for an object field becomes a ``FactoryRef``."""
    if isinstance(value, str) and ":" in value:
        return FactoryRef.from_config(value, field_name, call=call)
    return value


@dataclass(kw_only=True, eq=False)
class TrainingLoop:
    """One training job, runnable on any installed backend.

    Args:
        model_op: the model — a backend model op or bare model (``eqx.Module``,
            ``torch.nn.Module``, ``keras.Model``), or a ``'module:factory'``
            reference. Bayesian backends take the model through ``task``.
        dataset: training data: ``{"x": …, "y": …}`` arrays, ``(x, y)``, an
            indexable of such records, or a ``grain.MapDataset``; on the equinox,
            numpyro-svi and blackjax (sgld / sghmc) backends also a stream of single
            examples: a ``grain.IterDataset`` or a zero-argument function returning an
            iterator (Python only; the last two need ``backend_options.num_data``).
        val_dataset: evaluation data in the same forms, or ``None``.
        loss: a loss name (``"cross_entropy"``, ``"mse"``, …) or a callable
            ``(pred, target) -> scalar`` for the backend's array type.
        task: a backend task object (``TrainTask``, ``NumpyroTask``, …); takes
            precedence over ``loss``.
        batch_size: global batch size (all devices and processes together).
        max_steps: optimisation steps (samples/draws for the Bayesian backends).
        optimizer_config: ``{"name": "adamw", "lr": 3e-4, …}``; ``lr`` may be a
            schedule dict (see ``docs/optimizers.md``) or, in Python, an optax
            schedule. On the JAX backends it may also be the user's own
            ``optax.GradientTransformation``, used as given (Python only).
        callbacks: ``Callback`` instances, run in order at host events.
        checkpoint_dir: where checkpoints go; a run resumes from the newest valid
            one. Without a ``Checkpoint`` callback, one is added with defaults.
        log_every_n_steps: cadence of training-metric logging.
        eval_every_n_steps: cadence of evaluation on ``val_dataset`` (``None``:
            only at the end of the run).
        metric_writer: where metrics go: a writer name (``"jsonl"``, ``"csv"``,
            ``"tensorboard"``, ``"mlflow"``; written under ``<checkpoint_dir>/logs/<kind>``,
            or ``runs/<backend>-<time>/logs/<kind>`` without a ``checkpoint_dir``),
            ``"kind:PATH"`` (``"mlflow:TRACKING_URI"``), ``{"kind": …, …}``, a
            ``MetricWriter`` object, or a list of these.
        seed: the seed of the model-independent randomness (data order, step keys).
        backend: the backend name; resolved at ``run()``.
        sharding: a ``ShardingSpec`` for multi-device / multi-host training.
        backend_options: options only one backend understands (``steps_per_call``,
            ``worker_count``, ``resume``, Lightning trainer kwargs, …).
        accumulate_steps: micro-batches of ``batch_size`` whose gradients are averaged
            into one optimiser update (default 1). ``max_steps`` counts optimiser
            updates, so a run reads ``max_steps * accumulate_steps`` batches
            (``docs/decisions/0078-max-steps-counts-updates.md``).
        ema_decay: ``None`` (off) or ``0 < d < 1``: keep an exponential moving average
            of the trained weights, updated after every optimiser update; evaluation
            and the returned op use the averaged weights (like Keras ``use_ema``).
        precision: ``"float32"`` (default), ``"bfloat16"`` (parameters, optimiser and
            compute in bfloat16) or ``"mixed-bfloat16"`` (float32 parameters, forward
            and backward in bfloat16).
    """

    model_op: Any = None
    dataset: Any = None
    val_dataset: Any = None
    loss: Any = None
    task: Any = None
    batch_size: int = 32
    max_steps: int = 1000
    optimizer_config: Any = field(default_factory=lambda: dict(DEFAULT_OPTIMIZER))
    callbacks: list[Any] = field(default_factory=list)
    checkpoint_dir: str | None = None
    log_every_n_steps: int = 50
    eval_every_n_steps: int | None = None
    metric_writer: Any = None
    seed: int = 0
    backend: str = "equinox"
    sharding: Any = None
    backend_options: dict[str, Any] = field(default_factory=dict)
    accumulate_steps: int = 1
    ema_decay: float | None = None
    precision: str = "float32"

    def __post_init__(self) -> None:
        self.model_op = _as_ref(self.model_op, "model_op")
        self.dataset = _as_ref(self.dataset, "dataset")
        self.val_dataset = _as_ref(self.val_dataset, "val_dataset")
        self.task = _as_ref(self.task, "task")
        self.loss = _as_ref(self.loss, "loss", call=False)
        self._validate()

    # -- validation -------------------------------------------------------------------------
    def _validate(self) -> None:
        # A task that brings its own target (a raw log density) says so with
        # ``needs_dataset = False``; its backend still refuses a sampler that needs data.
        # A task given as an import string (YAML) is asked once it is built (``resolved``).
        task_unknown = isinstance(self.task, FactoryRef)
        if self.dataset is None and not task_unknown and getattr(self.task, "needs_dataset", True):
            raise ConfigError(
                "TrainingLoop.dataset is required: give {'x': X, 'y': Y}, (X, Y), an indexable "
                "of records, or a grain.MapDataset (for a NumPyro model: its data by the "
                "model's argument names, e.g. {'at_bats': ..., 'hits': ...})",
                field="dataset",
            )
        if self.loss is None and self.task is None and not _brings_its_own_training(self.model_op):
            raise ConfigError(
                "TrainingLoop needs either loss= (a name such as 'cross_entropy' or a "
                "callable) or task= (a LightningModule with its own training_step, a "
                "KerasTask, a Bayesian task, ...); a LightningModule or a compile()d Keras "
                "model may also be given as model_op, and its own loss is used",
                field="loss",
            )
        if self.loss is not None and not isinstance(self.loss, FactoryRef):
            validate_loss(self.loss, field="TrainingLoop.loss", error_field="loss")
        _positive_int(self.batch_size, "batch_size")
        _positive_int(self.max_steps, "max_steps")
        _positive_int(self.log_every_n_steps, "log_every_n_steps")
        _positive_int(self.eval_every_n_steps, "eval_every_n_steps", allow_none=True)
        if (
            self.eval_every_n_steps is not None
            and self.val_dataset is None
            and not _has_val_dataloader(self.dataset)
        ):
            raise ConfigError(
                "TrainingLoop.eval_every_n_steps is set but val_dataset is None; give "
                "val_dataset= or drop eval_every_n_steps",
                field="eval_every_n_steps",
            )
        if not _is_int(self.seed):
            raise ConfigError(
                f"TrainingLoop.seed must be an integer, got {self.seed!r}", field="seed"
            )
        if not -(2**63) <= self.seed < 2**63:
            # JAX's PRNGKey and torch's manual_seed take a 64-bit integer; beyond it both
            # raised a bare OverflowError from inside the library, at the run's start.
            raise ConfigError(
                f"TrainingLoop.seed must fit in 64 bits (-2**63 <= seed < 2**63), got "
                f"{self.seed!r}; give a smaller seed",
                field="seed",
            )
        from .optimizers import is_transformation, validate_optimizer_config

        # The user's own optax.GradientTransformation (Python only) is kept as given;
        # the JAX backends use it as is and derive its resume identity (issue 20).
        if not is_transformation(self.optimizer_config):
            if not isinstance(self.optimizer_config, Mapping):
                raise ConfigError(
                    "TrainingLoop.optimizer_config must be a dict like {'name': 'adam', "
                    "'lr': 1e-3}, or (in Python, for equinox / numpyro-svi) an "
                    f"optax.GradientTransformation; got {type(self.optimizer_config).__name__}",
                    field="optimizer_config",
                )
            self.optimizer_config = dict(self.optimizer_config)
            validate_optimizer_config(self.optimizer_config, max_steps=self.max_steps)
        self._validate_callbacks()
        if self.checkpoint_dir is not None:
            if not isinstance(self.checkpoint_dir, (str, os.PathLike)):
                raise ConfigError(
                    "TrainingLoop.checkpoint_dir must be a path or None", field="checkpoint_dir"
                )
            self.checkpoint_dir = os.fspath(self.checkpoint_dir)
        if self.metric_writer is not None:
            from .writers import check_writer_spec

            check_writer_spec(self.metric_writer)
        check_backend_name(self.backend)
        if self.sharding is not None and not all(
            hasattr(self.sharding, a) for a in ("mesh", "model_pspec", "data_pspec")
        ):
            raise ConfigError(
                "TrainingLoop.sharding must be a pipekit_train.ShardingSpec or None",
                field="sharding",
            )
        if not isinstance(self.backend_options, Mapping) or not all(
            isinstance(k, str) for k in self.backend_options
        ):
            raise ConfigError(
                "TrainingLoop.backend_options must be a dict with string keys",
                field="backend_options",
            )
        self.backend_options = dict(self.backend_options)
        self._validate_features()

    def _validate_features(self) -> None:
        _positive_int(self.accumulate_steps, "accumulate_steps")
        d = self.ema_decay
        if d is not None:
            if isinstance(d, bool) or not isinstance(d, (int, float)) or not 0.0 < d < 1.0:
                raise ConfigError(
                    f"TrainingLoop.ema_decay must be None (no averaging) or a number strictly "
                    f"between 0 and 1 such as 0.999, got {d!r}",
                    field="ema_decay",
                )
            self.ema_decay = float(d)
        if self.precision not in PRECISIONS:
            from .errors import closest

            raise ConfigError(
                f"TrainingLoop.precision must be one of {', '.join(map(repr, PRECISIONS))}, got "
                f"{self.precision!r}" + closest(str(self.precision), PRECISIONS),
                field="precision",
            )

    def _validate_callbacks(self) -> None:
        if isinstance(self.callbacks, (str, bytes)) or not isinstance(self.callbacks, Sequence):
            raise ConfigError(
                "TrainingLoop.callbacks must be a list of Callback objects", field="callbacks"
            )
        self.callbacks = [_as_ref(cb, f"callbacks[{i}]") for i, cb in enumerate(self.callbacks)]
        for i, cb in enumerate(self.callbacks):
            if not isinstance(cb, (Callback, FactoryRef)):
                raise ConfigError(
                    f"TrainingLoop.callbacks[{i}] is a {type(cb).__name__}, not a "
                    "pipekit_train.Callback",
                    field="callbacks",
                )
        checkpoints = [cb for cb in self.callbacks if isinstance(cb, Checkpoint)]
        if len(checkpoints) > 1:
            raise ConfigError(
                "TrainingLoop.callbacks holds more than one Checkpoint callback", field="callbacks"
            )
        if checkpoints and self.checkpoint_dir is None:
            raise ConfigError(
                "a Checkpoint callback is given but TrainingLoop.checkpoint_dir is None; set "
                "checkpoint_dir",
                field="checkpoint_dir",
            )

    # -- derived views used by backends ---------------------------------------------------
    @property
    def checkpoint_callback(self) -> Checkpoint | None:
        """The ``Checkpoint`` callback in effect (a default one if only a dir is set)."""
        for cb in self.callbacks:
            if isinstance(cb, Checkpoint):
                return cb
        return Checkpoint() if self.checkpoint_dir is not None else None

    def resolved(self) -> TrainingLoop:
        """A copy with every ``'module:factory'`` reference built into its object."""
        values: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, FactoryRef):
                value = value.resolve(f.name)
            elif f.name == "callbacks":
                value = [
                    cb.resolve(f"callbacks[{i}]") if isinstance(cb, FactoryRef) else cb
                    for i, cb in enumerate(value)
                ]
            values[f.name] = value
        return TrainingLoop(**values)

    # -- running ----------------------------------------------------------------------------
    def run(self) -> tuple[Any, dict[str, Any]]:
        """Train on ``backend`` and return ``(trained_op, backend_info)``.

        Raises ``ConfigError`` for an unknown backend and
        ``BackendNotInstalledError`` (with the ``pip install`` command) when the
        backend's distribution is missing. What fails after the last step (building the
        trained op or the report) raises ``FinishError``, its cause the original error:
        the final checkpoint is kept, and a rerun builds both from it without training.
        """
        from ._config_digest import attach_digest, config_digest
        from ._quiet import quiet_library_noise
        from .engine import after_the_last_step
        from .engine._preflight import preflight

        quiet_library_noise()
        # What the config and the checkpoint files can refuse (a missing backend, a bad
        # option, a foreign checkpoint) is refused before any framework import. A finished
        # run still goes to the backend: the caller gets the trained op, restored.
        preflight(self, config_digest=None)
        digest = config_digest(self)
        backend = load_backend(self.backend)
        resolved = self.resolved()
        attach_digest(resolved, digest)
        # A failure after the last step (building the op or the report) is a FinishError
        # that names its stage and keeps the final checkpoint (engine._report).
        with after_the_last_step(backend=self.backend, checkpoint_dir=self.checkpoint_dir):
            return backend.run(resolved)

    # -- YAML ----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The YAML-able form; raises ``ConfigError`` naming a field that has none."""
        return _loop_yaml.to_dict(self)

    def to_yaml(self) -> str:
        """Serialise with ``yaml.safe_dump``; objects must be given as factory references."""
        return _loop_yaml.to_yaml(self)

    @classmethod
    def from_yaml(cls, path_or_text: str | os.PathLike[str]) -> TrainingLoop:
        """Build a loop from a YAML file path or YAML text (``yaml.safe_load`` only)."""
        loop: TrainingLoop = _loop_yaml.from_yaml(cls, path_or_text)
        return loop

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TrainingLoop):
            return NotImplemented
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if a is b:
                continue
            try:
                if not bool(a == b):
                    return False
            except Exception:
                return False
        return True


def require_features(loop: TrainingLoop, *, supported: Sequence[str], backend: str) -> None:
    """Refuse, before compiling, a feature field ``backend`` cannot honour.

    Every backend calls this at the start of ``run()`` with the names of
    :data:`FEATURE_DEFAULTS` it implements. A field set away from its default that
    is not in ``supported`` raises ``ConfigError`` naming the field and the fix,
    instead of being silently ignored.
    """
    for name, default in FEATURE_DEFAULTS.items():
        value = getattr(loop, name)
        if name not in supported and value != default:
            raise ConfigError(
                f"TrainingLoop.{name}={value!r} is not supported by the {backend} backend; "
                f"leave it at {default!r}, or use a backend that supports it (the equinox "
                f"backend supports every feature field)",
                field=name,
            )


def non_default_features(loop: TrainingLoop) -> dict[str, Any]:
    """The feature fields set away from their defaults, ``{name: value}``.

    Backends add these to the resume guard (core's ``fingerprint(extra=...)``), so a
    resume with another ``accumulate_steps``, ``ema_decay`` or ``precision`` is refused
    by name, while a run at the defaults keeps the fingerprint earlier versions wrote.
    """
    return {
        name: getattr(loop, name)
        for name, default in FEATURE_DEFAULTS.items()
        if getattr(loop, name) != default
    }
