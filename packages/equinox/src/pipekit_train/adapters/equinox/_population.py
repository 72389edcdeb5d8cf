"""``run_population(loop, members)``: N trials of one Equinox loop as one vmapped program.

The members differ only in run-time hyper-parameters (``_population_members``). Each
member's ``TrainState`` is built as its solo run builds it — its own optimiser from its
own ``optimizer_config``, so ``inject_hyperparams`` holds its learning rate, weight
decay, ``b1`` … in its optimiser *state* — and the N states are stacked along a
leading member axis. One step function ``jax.vmap``s the solo step (``step_impl``) over
that axis; it goes through core's program builder and the engine's driver like any
run, so fusion, logging, evaluation, the checkpoint (one Orbax checkpoint of the
stacked carry under ``loop.checkpoint_dir``), SIGTERM and resume are the engine's.

- **Keys**: member ``i``'s step ``s`` uses ``fold_in(base_key_i, s)`` and its evaluation
  ``eval_key_i``, from ``split(PRNGKey(seed_i))`` as in its solo run.
- **Batches**: members sharing one seed read the same batches (one stream, broadcast to
  every member, as issue 23 measured); members with their own seeds read their own solo
  batch order (``MemberBatches``), stacked along the member axis.
- **Schedules**: a schedule's value is not state in optax (it is recomputed from a
  closure), so with a schedule ``lr`` the update's learning rate is every member's
  schedule evaluated at the step count, picked by the member's index (N scalars).
- **Metrics** are logged per member as ``<name>/member_<i>`` (``loss/member_0``,
  ``val_loss/member_3``); each member's ``backend_info["final_metrics"]`` carries them
  under their solo names.
"""

from __future__ import annotations

import dataclasses
import inspect
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from pipekit_train.engine import eval_batches, normalize_dataset
from pipekit_train.errors import ConfigError
from pipekit_train.jax.compile_cache import use_compilation_cache
from pipekit_train.jax.data import GrainBatchIterator
from pipekit_train.jax.optim import resolve_optimizer, resolve_schedule, with_accumulation
from pipekit_train.jax.precision import storage_tree
from pipekit_train.jax.program import Program, run_program
from pipekit_train.jax.report import jax_backend_info
from pipekit_train.loop import FEATURE_DEFAULTS, require_features
from pipekit_train.operator import Operator
from pipekit_train.optimizers import (
    DECOUPLED_WEIGHT_DECAY,
    is_transformation,
    parse_optimizer_config,
)

from ._options import parse_options
from ._placement import Placement
from ._population_data import MemberBatches
from ._population_members import LR_KEY, OPT_PREFIX, check_members
from ._population_rule import population_pays
from ._program import deployed_model, evaluation_step
from ._run import (
    _batch_source,
    _check_eval,
    _check_labels,
    _check_loss_shape,
    _resolve_task,
    _unwrap_model,
    _wrap,
    fingerprint,
    run_extras,
)
from ._state import TrainState
from ._step import StepFeatures, step_impl

__all__ = ["run_population", "MEMBER_SUFFIX"]

#: Per-member metric names are ``<name>`` + this + the member's index.
MEMBER_SUFFIX = "/member_"

_INJECT_STATES: tuple[type, ...] = tuple(
    cls
    for cls in (
        getattr(optax, "InjectStatefulHyperparamsState", None),
        getattr(optax, "InjectHyperparamsState", None),
    )
    if cls is not None
)


def _inject_states(opt_state: Any) -> list[Any]:
    leaves = jax.tree_util.tree_leaves(opt_state, is_leaf=lambda x: isinstance(x, _INJECT_STATES))
    return [leaf for leaf in leaves if isinstance(leaf, _INJECT_STATES)]


def _refuse_unsupported(loop: Any) -> None:
    """The loop fields a population does not take (yet), before anything is built."""
    if loop.sharding is not None:
        raise ConfigError(
            "TrainingLoop.sharding: a population runs on one device (its member axis is "
            "vmapped, not sharded); drop sharding or run sequential trials",
            field="sharding",
        )
    if is_transformation(loop.optimizer_config):
        raise ConfigError(
            "TrainingLoop.optimizer_config: a population needs an optimizer_config dict "
            "(each member's optimiser is built from it); the user's own optax object "
            "runs as sequential trials",
            field="optimizer_config",
        )
    if jax.process_count() > 1:
        raise ConfigError(
            "a population runs in one process; run sequential trials under several processes",
            field="members",
        )


def _hyperparam_name(config: Mapping[str, Any], name: str) -> str | None:
    """The optax argument that ``optimizer_config.<name>`` becomes (``None``: not one)."""
    if name == "weight_decay":
        native = DECOUPLED_WEIGHT_DECAY.get(str(config.get("name")))
        if native is None:
            return None  # classic L2 through optax.add_decayed_weights: a constant
        fn = getattr(optax, str(config.get("name")))
        return native if native in inspect.signature(fn).parameters else None
    return name


def _check_injectable(
    member_loops: Sequence[Any], members: Sequence[Mapping[str, Any]], opt_states: Sequence[Any]
) -> None:
    """A varied optimiser key must be held in ``inject_hyperparams``' state, or be shared."""
    for i, member in enumerate(members):
        for key in member:
            if not key.startswith(OPT_PREFIX) or key == LR_KEY or key.startswith(LR_KEY + "."):
                continue
            name = key[len(OPT_PREFIX) :]
            if len({repr(m.optimizer_config.get(name)) for m in member_loops}) == 1:
                continue  # the same for every member: a constant of the program is fine
            config = member_loops[i].optimizer_config
            hp = _hyperparam_name(config, name)
            injected = _inject_states(opt_states[i])
            if hp is not None and injected and hp in injected[0].hyperparams:
                continue
            reason = (
                f"optax.{config.get('name')} applies weight_decay as classic L2 "
                "(optax.add_decayed_weights), a constant of the compiled program"
                if name == "weight_decay"
                else f"optax.{config.get('name')} does not hold {name!r} as a run-time "
                "hyper-parameter (inject_hyperparams keeps only its float arguments)"
            )
            raise ConfigError(
                f"members[{i}].{key}: {reason}; give every member the same value or run "
                "sequential trials",
                field=f"members[{i}].{key}",
            )


def _refuse_partly_set(
    members: Sequence[Mapping[str, Any]], abstract: Sequence[Any], i: int
) -> None:
    """Name the hyper-parameter that members ``0`` and ``i`` do not both hold, if one is."""
    first, other = _inject_states(abstract[0]), _inject_states(abstract[i])
    if not first or not other:
        return
    for name in sorted(set(first[0].hyperparams) ^ set(other[0].hyperparams)):
        key = f"{OPT_PREFIX}{name}"
        j = i if key in members[i] else 0
        raise ConfigError(
            f"members[{j}].{key}: optax holds {name!r} as a run-time hyper-parameter only "
            f"where it is a number, and members[0] and members[{i}] differ in whether they "
            "set one; set it in the loop's optimizer_config so that every member has it",
            field=f"members[{j}].{key}",
        )


class _LearningRates:
    """Every member's schedule at the step count, picked by the member index being traced."""

    def __init__(self, schedules: Sequence[Any]) -> None:
        self._schedules = list(schedules)
        self._index: Any = None

    def __call__(self, count: Any) -> Any:
        values = jnp.stack([jnp.asarray(s(count), jnp.float32) for s in self._schedules])
        return values[0] if self._index is None else values[self._index]

    @contextmanager
    def member(self, index: Any) -> Iterator[None]:
        self._index = index
        try:
            yield
        finally:
            self._index = None


def _member_optimizers(loop: Any, member_loops: Sequence[Any]) -> tuple[list[Any], Any, Any]:
    """Each member's own optimiser (for its initial state), the shared update, the rates."""
    dtype = np.float32 if loop.precision == "bfloat16" else None

    def build(config: Any) -> Any:
        return with_accumulation(
            resolve_optimizer(config, max_steps=loop.max_steps, hyperparam_dtype=dtype),
            loop.accumulate_steps,
        )

    own = [build(m.optimizer_config) for m in member_loops]
    spec = parse_optimizer_config(member_loops[0].optimizer_config, max_steps=loop.max_steps)
    lr = spec.lr_fn or spec.lr
    if not (callable(lr) or isinstance(lr, Mapping)):
        return own, own[0], None  # a numeric lr is read from each member's state
    schedules = []
    for m in member_loops:
        member_spec = parse_optimizer_config(m.optimizer_config, max_steps=loop.max_steps)
        schedules.append(
            resolve_schedule(member_spec.lr_fn or member_spec.lr, max_steps=loop.max_steps)
        )
    rates = _LearningRates(schedules)
    config = dict(member_loops[0].optimizer_config)
    config.pop("learning_rate", None)
    config["lr"] = rates
    return own, build(config), rates


def _stack(trees: Sequence[Any]) -> Any:
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *trees)


def _member(tree: Any, i: int) -> Any:
    return jax.tree_util.tree_map(lambda x: x[i], tree)


class PopulationProgram(Program):
    """The vmapped step and evaluation over a stacked ``TrainState`` carry."""

    def __init__(
        self,
        states: Sequence[TrainState],
        task: Any,
        update: optax.GradientTransformation,
        rates: _LearningRates | None,
        *,
        base_keys: jax.Array,
        eval_keys: jax.Array,
        shared_batches: bool,
        val_data: Any,
        eval_batch_size: int,
        features: StepFeatures,
    ) -> None:
        dynamics = [eqx.filter(s, eqx.is_array) for s in states]
        static = eqx.partition(states[0], eqx.is_array)[1]
        self._static = static
        self.size = n = len(states)
        self._val_data = val_data
        self._eval_batch_size = eval_batch_size
        self._eval_keys = eval_keys
        batch_axis = None if shared_batches else 0

        def member_step(dyn: Any, batch: Any, key: jax.Array, index: Any) -> Any:
            state = eqx.combine(dyn, static)
            step_key = jax.random.fold_in(key, state.step)
            if rates is None:
                new, metrics = step_impl(state, batch, step_key, task, update, features)
            else:
                with rates.member(index):
                    new, metrics = step_impl(state, batch, step_key, task, update, features)
            return eqx.filter(new, eqx.is_array), metrics

        def step(carry: Any, batch: Any, _key: jax.Array) -> tuple[Any, dict[str, jax.Array]]:
            new, metrics = jax.vmap(member_step, in_axes=(0, batch_axis, 0, 0))(
                carry["state"], batch, carry["keys"], jnp.arange(n, dtype=jnp.int32)
            )
            per_member = {
                f"{name}{MEMBER_SUFFIX}{i}": value[i]
                for name, value in metrics.items()
                for i in range(n)
            }
            return {"state": new, "keys": carry["keys"]}, per_member

        evaluate = evaluation_step(
            task, static, stateful=states[0].model_state is not None, precision=features.precision
        )
        self._eval = jax.jit(jax.vmap(evaluate, in_axes=(0, None, 0)))
        super().__init__(
            step,
            {"state": _stack(dynamics), "keys": base_keys},
            base_key=base_keys[0],
            phases=None,
            phase_steps=None,
            evaluate=self._evaluate_on_val,
            fetch=None,
            place_batch=None,
            place_chunk=None,
            carry_shardings=None,
            output_sharding=None,
            donate=True,
            fixed_chunk=None,
        )

    def _evaluate_on_val(self, carry: Any) -> dict[str, float]:
        totals: dict[str, list[float]] = {}
        count = 0
        for batch in eval_batches(self._val_data, self._eval_batch_size):
            rows = int(np.shape(batch["x"])[0])
            out = jax.device_get(self._eval(carry["state"], batch, self._eval_keys))
            for name, values in out.items():
                sums = totals.setdefault(name, [0.0] * self.size)
                for i in range(self.size):
                    sums[i] += float(values[i]) * rows
            count += rows
        return {
            f"{name}{MEMBER_SUFFIX}{i}": sums[i] / count
            for name, sums in totals.items()
            for i in range(self.size)
        }

    def member_state(self, carry: Any, i: int) -> TrainState:
        """Member ``i``'s full ``TrainState`` in a (final) carry."""
        state: TrainState = eqx.combine(_member(self.tree(carry)["state"], i), self._static)
        return state


def member_metrics(metrics: Mapping[str, Any], i: int) -> dict[str, Any]:
    """Member ``i``'s metrics under their solo names (``loss/member_2`` → ``loss``)."""
    suffix = f"{MEMBER_SUFFIX}{i}"
    return {name[: -len(suffix)]: value for name, value in metrics.items() if name.endswith(suffix)}


def _data(
    loop: Any, member_loops: Sequence[Any], options: Any, rows_per_step: int
) -> tuple[Any, Any, bool]:
    """The stream, the first member's source, and whether all members share the batches."""
    seeds = [m.seed for m in member_loops]
    if len(set(seeds)) == 1:
        source = _batch_source(member_loops[0], options, rows_per_step, (0, 1))
        return GrainBatchIterator(source, worker_count=options.worker_count), source, True
    sources = [_batch_source(m, options, rows_per_step, (0, 1)) for m in member_loops]
    streams = [GrainBatchIterator(s, worker_count=options.worker_count) for s in sources]
    return MemberBatches(streams), sources[0], False


def run_population(
    loop: Any, members: Sequence[Mapping[str, Any]]
) -> list[tuple[Operator, dict[str, Any]]]:
    """Train ``len(members)`` variants of ``loop`` as one vmapped Equinox program.

    ``members[i]`` maps dotted keys to values: ``"seed"``, ``"optimizer_config.lr"``,
    ``"optimizer_config.lr.<schedule field>"``, ``"optimizer_config.weight_decay"`` and
    the optimiser's other float arguments (``"optimizer_config.b1"`` …); a key a member
    leaves out takes the loop's value. Any other key, or a value that is not a number,
    is a ``ConfigError`` naming ``members[i].<key>``, raised before compilation.

    Returns one ``(op, backend_info)`` per member, in order: the member's trained
    ``JaxModelOp`` and a ``backend_info`` like its solo run's (``final_metrics`` under
    the solo names) plus ``population_member``, ``population_size``, ``population``
    (the batches shared or per member, and :func:`population_pays`' verdict) and
    ``population_overrides``. Each member equals ``member_loop(loop, members[i]).run()``
    to float32 rounding (the vmapped matmuls may round differently).
    """
    started = time.perf_counter()
    loop = loop.resolved()  # a loop from YAML holds 'module:factory' references
    member_loops = check_members(loop, members)
    _refuse_unsupported(loop)
    require_features(loop, supported=tuple(FEATURE_DEFAULTS), backend="equinox")
    if as_stream_of(loop.dataset):
        raise ConfigError(
            "TrainingLoop.dataset: a population reads map-style data (a dict of arrays, an "
            "indexable, a grain.MapDataset), not a stream",
            field="dataset",
        )
    options = parse_options(loop.backend_options)
    cache = use_compilation_cache(options.compilation_cache)
    model_op, module, model_state = _unwrap_model(loop.model_op)
    module = storage_tree(module, loop.precision)
    features = StepFeatures.of(loop)
    rows_per_step = loop.batch_size * loop.accumulate_steps
    data, source, shared = _data(loop, member_loops, options, rows_per_step)
    val = (
        normalize_dataset(loop.val_dataset, "TrainingLoop.val_dataset")
        if loop.val_dataset is not None
        else None
    )
    own, update, rates = _member_optimizers(loop, member_loops)
    task = _resolve_task(loop, stateful=model_state is not None)
    # Abstract (eval_shape) optimiser states: the checks below compile nothing.
    params = eqx.filter(module, eqx.is_inexact_array)
    abstract = [jax.eval_shape(opt.init, params) for opt in own]
    _check_injectable(member_loops, members, abstract)
    reference: Any = jax.tree_util.tree_structure(abstract[0])
    for i, opt_state in enumerate(abstract):
        structure: Any = jax.tree_util.tree_structure(opt_state)
        if structure != reference:
            _refuse_partly_set(members, abstract, i)
            raise ConfigError(
                f"members[{i}]: its optimiser state has another structure than members[0]'s "
                "(a different optimiser, schedule or clip); members may differ only in "
                "hyper-parameter values",
                field=f"members[{i}]",
            )
    update_structure: Any = jax.tree_util.tree_structure(jax.eval_shape(update.init, params))
    if update_structure != reference:
        raise RuntimeError(  # pragma: no cover - guards the schedule picker against optax
            "the population's update does not fit its members' optimiser states"
        )
    states = [
        TrainState.create(module, opt, model_state, ema=loop.ema_decay is not None, compiled=False)
        for opt in own
    ]
    keys = [jax.random.split(jax.random.PRNGKey(m.seed)) for m in member_loops]
    first_batch = source[0]
    _check_loss_shape(task, states[0], first_batch, keys[0][0], user_task=loop.task is not None)
    _check_labels(loop, states[0], source, first_batch, val, keys[0][0])
    if val is not None:
        _check_eval(
            task,
            states[0],
            first_batch,
            val,
            loop.batch_size,
            keys[0][1],
            user_task=loop.task is not None,
        )
    choice = population_pays(loop, len(member_loops))

    from pipekit_train.jax.checkpoint import checkpointer_for

    guard = dict(fingerprint(loop, module, source.n, model_state))
    guard["population"] = [{k: member[k] for k in sorted(member)} for member in members]
    checkpointer = checkpointer_for(
        loop, guard, resume=options.resume, async_save=options.async_checkpointing
    )
    program = PopulationProgram(
        states,
        task,
        update,
        rates,
        base_keys=jnp.stack([k[0] for k in keys]),
        eval_keys=jnp.stack([k[1] for k in keys]),
        shared_batches=shared,
        val_data=val,
        eval_batch_size=loop.batch_size,
        features=features,
    )
    result = run_program(
        loop, program, data=data, checkpointer=checkpointer, steps_per_call=options.steps_per_call
    )
    outcome = result.outcome()
    population = {
        "used": True,
        "batches": "shared" if shared else "per-member",
        **choice.as_dict(),
    }
    out: list[tuple[Operator, dict[str, Any]]] = []
    for i, member in enumerate(members):
        final = program.member_state(result.carry, i)
        trained = _wrap(model_op, deployed_model(final), final.model_state)
        extras: dict[str, Any] = {
            **run_extras(loop, options.steps_per_call, model_state, Placement(None)),
            "population_member": i,
            "population_size": len(members),
            "population_overrides": dict(member),
            "population": population,
        }
        member_outcome = dataclasses.replace(
            outcome, final_metrics=member_metrics(outcome.final_metrics, i)
        )
        info = jax_backend_info(
            "equinox", "pipekit-train-equinox", member_outcome, started=started, extras=extras
        )
        out.append((trained, info))
    cache.prune()
    return out


def as_stream_of(dataset: Any) -> bool:
    """Whether ``dataset`` is a user stream (``grain.IterDataset`` or iterator factory)."""
    from pipekit_train.engine import as_stream

    return as_stream(dataset, "TrainingLoop.dataset") is not None
