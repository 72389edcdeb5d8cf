"""``optimizer_config`` → optax, with the live learning rate readable for logging.

The backend-neutral vocabulary (optimiser names, schedules, ``clip_norm``,
``weight_decay``) and its validation live in the JAX-free module
:mod:`pipekit_train.optimizers`; see its docstring for the config format. This
module maps a validated spec onto optax and builds the transformation::

    optax.chain(
        optax.clip_by_global_norm(clip_norm),        # if clip_norm is set
        optax.add_decayed_weights(weight_decay),     # if weight_decay is set and the
                                                     # optimiser has no own argument
        optax.inject_hyperparams(optax.<name>)(learning_rate=<float or schedule>, **kwargs),
    )

(with a single element, the bare injected optimiser is returned). Because the
optimiser is wrapped in :func:`optax.inject_hyperparams`, its hyper-parameters
live in the optimiser state; :func:`current_learning_rate` reads the learning
rate out of it. After ``k`` updates that is ``schedule(k - 1)``, the rate the
latest update used (``schedule(0)`` right after ``init``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from pipekit_train.errors import ConfigError, closest
from pipekit_train.jax._deps import missing_jax_extra
from pipekit_train.optimizers import (
    DECOUPLED_WEIGHT_DECAY,
    OPTIMIZER_NAMES,
    ROOT,
    SCHEDULES,
    OptimizerSpec,
    is_transformation,
    parse_optimizer_config,
    require_supported,
    validate_optimizer_config,
)

try:
    import jax
    import jax.numpy as jnp
    import optax
except ImportError as _exc:  # pragma: no cover - exercised in a subprocess test
    raise missing_jax_extra(_exc) from _exc

__all__ = [
    "OPTAX_OPTIMIZERS",
    "OPTAX_SCHEDULES",
    "validate_optimizer_config",
    "resolve_optimizer",
    "resolve_schedule",
    "current_learning_rate",
    "optimizer_update",
    "schedule_free_state",
    "with_accumulation",
]

_INJECT_STATES: tuple[type, ...] = tuple(
    cls
    for cls in (
        getattr(optax, "InjectStatefulHyperparamsState", None),
        getattr(optax, "InjectHyperparamsState", None),
    )
    if cls is not None
)


#: Vocabulary name → optax function name (every name of the vocabulary maps).
OPTAX_OPTIMIZERS: dict[str, str] = {name: name for name in OPTIMIZER_NAMES}

#: Schedule name → optax schedule function name.
OPTAX_SCHEDULES: dict[str, str] = {
    "constant": "constant_schedule",
    "cosine_decay": "cosine_decay_schedule",
    "warmup_cosine_decay": "warmup_cosine_decay_schedule",
    "exponential_decay": "exponential_decay",
    "linear": "linear_schedule",
    "piecewise_constant": "piecewise_constant_schedule",
}
assert set(OPTAX_SCHEDULES) == set(SCHEDULES)


def resolve_schedule(lr: Any, *, max_steps: int) -> Any:
    """Turn a validated ``lr`` (number or schedule dict) into a float or optax schedule.

    A callable (the user's own optax schedule, Python only) is returned as given.
    """
    if callable(lr):
        return lr
    if not isinstance(lr, Mapping):
        return float(lr)
    fields = dict(lr)
    name = fields.pop("schedule")
    spec = SCHEDULES[name]
    if spec.max_steps_default and spec.max_steps_default not in fields:
        fields[spec.max_steps_default] = max_steps
    return getattr(optax, OPTAX_SCHEDULES[name])(**fields)


def _static_args(signature: inspect.Signature) -> set[str]:
    """Parameters ``inject_hyperparams`` must not turn into array hyper-parameters.

    It treats every callable as a schedule and every int as a traced array, which
    breaks dtype arguments (``dtype_momentum=jnp.float32`` is callable), masks and
    integer settings used in Python control flow (adafactor's
    ``min_dim_size_to_factor``).
    """
    static = set()
    for pname, param in signature.parameters.items():
        if pname == "learning_rate":
            continue
        default = param.default
        if (
            "dtype" in pname
            or "mask" in pname
            or (default is not inspect.Parameter.empty and callable(default))
            or (isinstance(default, int) and not isinstance(default, bool))
        ):
            static.add(pname)
    return static


def _check_kwargs(spec: OptimizerSpec, signature: inspect.Signature) -> None:
    accepted = [
        p.name
        for p in signature.parameters.values()
        if p.name != "learning_rate"
        and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    for key in spec.kwargs:
        if key not in accepted:
            pool = accepted + ["lr", "clip_norm", "weight_decay"]
            raise ConfigError(
                f"{ROOT}.{key}: optax.{spec.name} has no argument {key!r}{closest(key, pool)}; "
                f"it accepts: {', '.join(accepted) or 'nothing beyond lr'} "
                f"(plus pipekit's lr, clip_norm, weight_decay)",
                field=f"{ROOT}.{key}",
            )


def resolve_optimizer(config: Any, *, max_steps: int, hyperparam_dtype: Any = None) -> Any:
    """Build the optax ``GradientTransformation`` that ``config`` describes.

    ``config`` may also be the user's own ``GradientTransformation``: it is returned
    unchanged (``hyperparam_dtype`` does not apply to it).

    ``hyperparam_dtype`` keeps the injected hyper-parameters in that dtype whatever
    the parameters' dtype. ``precision="bfloat16"`` passes ``float32``: by default
    ``inject_hyperparams`` casts them to the parameters' dtype, and adam's
    ``b2=0.999`` rounds to 1.0 in bfloat16, making its bias correction divide by 0.

    Raises :class:`ConfigError` (field named) for everything
    :func:`validate_optimizer_config` rejects, for keyword arguments the optax
    function does not take, and for values it refuses. No compilation happens:
    the transformation is probed with ``jax.eval_shape`` on a tiny parameter tree.
    """
    if is_transformation(config):
        return config  # the user's own optax object, used as given (_own_optax checks it)
    spec = parse_optimizer_config(config, max_steps=max_steps)
    require_supported(spec, OPTAX_OPTIMIZERS, backend="optax (JAX)", callable_lr=True)
    fn: Callable[..., Any] = getattr(optax, OPTAX_OPTIMIZERS[spec.name])
    signature = inspect.signature(fn)
    _check_kwargs(spec, signature)

    kwargs = dict(spec.kwargs)
    decay: Any = None
    if spec.weight_decay is not None:
        native = DECOUPLED_WEIGHT_DECAY.get(spec.name)
        if native is not None and native in signature.parameters:
            kwargs[native] = spec.weight_decay
        else:
            decay = optax.add_decayed_weights(spec.weight_decay)

    schedule = resolve_schedule(spec.lr_fn or spec.lr, max_steps=max_steps)
    try:
        inject = (
            optax.inject_hyperparams(fn, static_args=_static_args(signature))
            if hyperparam_dtype is None
            else optax.inject_hyperparams(
                fn, static_args=_static_args(signature), hyperparam_dtype=hyperparam_dtype
            )
        )
        inner = inject(learning_rate=schedule, **kwargs)
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"{ROOT}: optax.{spec.name} rejected the config: {type(exc).__name__}: {exc}",
            field=ROOT,
        ) from exc

    parts = []
    if spec.clip_norm is not None:
        parts.append(optax.clip_by_global_norm(spec.clip_norm))
    if decay is not None:
        parts.append(decay)
    parts.append(inner)
    transform = parts[0] if len(parts) == 1 else optax.chain(*parts)
    _probe(transform, spec)
    return transform


def _probe(transform: Any, spec: OptimizerSpec) -> None:
    """Trace init + one update abstractly so bad kwarg values fail here, not mid-run."""
    params = {"w": jax.ShapeDtypeStruct((2, 2), jnp.float32)}

    def one_update(p: Any) -> Any:
        state = transform.init(p)
        return transform.update(p, state, p)

    try:
        jax.eval_shape(one_update, params)
    except Exception as exc:  # noqa: BLE001 - reported in the user's terms
        raise ConfigError(
            f"{ROOT}: optax.{spec.name} could not be built from {dict(spec.kwargs)!r}: "
            f"{type(exc).__name__}: {exc}",
            field=ROOT,
        ) from exc


def current_learning_rate(opt_state: Any) -> Any:
    """The live learning rate held in ``opt_state``, or ``None`` if there is none.

    Finds the first ``inject_hyperparams`` state anywhere in ``opt_state`` (a
    chain's tuple, or any pytree holding the optimiser state) and returns its
    ``hyperparams["learning_rate"]`` (a scalar array; works under ``jit``).
    """
    for leaf in jax.tree_util.tree_leaves(
        opt_state, is_leaf=lambda x: isinstance(x, _INJECT_STATES)
    ):
        if isinstance(leaf, _INJECT_STATES):
            hyperparams = getattr(leaf, "hyperparams", None)
            if isinstance(hyperparams, Mapping) and "learning_rate" in hyperparams:
                return hyperparams["learning_rate"]
    return None


def with_accumulation(transform: Any, accumulate_steps: int) -> Any:
    """``transform`` wrapped in ``optax.MultiSteps`` for ``accumulate_steps > 1``.

    ``TrainingLoop.accumulate_steps``: each optimiser update averages the gradients
    of ``accumulate_steps`` micro-batches; the inner optimiser (and its schedule)
    sees one update per ``accumulate_steps`` calls, so the schedule counts optimiser
    updates (``max_steps``). With 1 the transform is returned unchanged.
    """
    if accumulate_steps == 1:
        return transform
    return optax.MultiSteps(transform, every_k_schedule=accumulate_steps)


def optimizer_update(transform: Any, grads: Any, opt_state: Any, params: Any, *, value: Any) -> Any:
    """``transform.update(grads, opt_state, params)``, passing ``value=`` (the loss) as optax does.

    Transformations that read the objective value (``optax.contrib.reduce_on_plateau``,
    linesearches) take it as the extra argument ``value``, and ``optax.chain`` /
    ``optax.MultiSteps`` forward it to the members that want it and drop it for the rest
    (``optax.GradientTransformationExtraArgs``). So the step passes its loss to every
    extra-args transformation, as optax's own examples do
    (``opt.update(grads, state, params, value=loss)``); a plain
    ``GradientTransformation`` is called without it. Nothing else reads it, so the
    updates of a transformation that ignores it are unchanged.
    """
    if isinstance(transform, optax.GradientTransformationExtraArgs):
        return transform.update(grads, opt_state, params, value=value)
    return transform.update(grads, opt_state, params)


def schedule_free_state(opt_state: Any) -> Any:
    """The ``optax.contrib`` schedule-free state inside ``opt_state`` (chained or accumulated),
    or ``None``.

    Schedule-free optimisers train one sequence of parameters and evaluate another:
    ``optax.contrib.schedule_free_eval_params(state, params)``, as optax documents;
    backends use it for evaluation and for the trained model they hand on.
    """
    contrib = getattr(optax, "contrib", None)
    cls = getattr(contrib, "ScheduleFreeState", None)
    if not isinstance(cls, type):
        return None
    leaves = jax.tree_util.tree_leaves(opt_state, is_leaf=lambda x: isinstance(x, cls))
    found = [leaf for leaf in leaves if isinstance(leaf, cls)]
    return found[0] if len(found) == 1 else None
