"""A run's optimiser state is built by one compiled program, after every check.

Run eagerly, an optax ``init`` compiles one small program per operation and leaf shape
(~0.17 s of a cold run's start on the digits MLP with AdamW); ``TrainState.create`` builds
it, the step counter and the EMA's copy as one program instead (~0.06 s), with the same
bits as the eager ``init``. What an ``init`` returns that is not an array stays as it was,
and an ``init`` that cannot be traced (it reads its arguments' values) runs eagerly, as
before. The run's checks read the state's shapes only (``TrainState.planned``), so a
mistake found there is refused before the program is compiled. A population keeps the
eager ``init`` (its members' optimisers would each compile their own).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from _eqx_helpers import make_data, make_module, run_loop, tiny_loop
from compile_watch import compiles
from user_files import plant, snapshot

from pipekit_train import TrainingLoop
from pipekit_train.adapters.equinox._state import TrainState
from pipekit_train.errors import DataError


def _xla_compiles(events: list[str]) -> int:
    return sum("backend_compile" in e or "cache_hit" in e for e in events)


def _same(a: Any, b: Any) -> None:
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    for x, y in zip(la, lb, strict=True):
        assert np.asarray(x).dtype == np.asarray(y).dtype
        assert np.asarray(x).tobytes() == np.asarray(y).tobytes()


def test_the_state_is_one_program_with_the_eager_inits_bits() -> None:
    module = make_module()
    params = eqx.filter(module, eqx.is_inexact_array)
    optimizer = optax.inject_hyperparams(optax.adamw)(learning_rate=1e-3, weight_decay=1e-4)
    with compiles() as seen:
        state = TrainState.create(module, optimizer, ema=True)
    assert _xla_compiles(seen) == 1, seen
    _same(state.opt_state, optimizer.init(params))
    _same(state.ema, params)
    assert state.step.dtype == jnp.int32 and int(state.step) == 0
    # The average is a copy, not the parameters' own buffers (the step donates both).
    for p, e in zip(
        jax.tree_util.tree_leaves(params), jax.tree_util.tree_leaves(state.ema), strict=True
    ):
        assert p is not e and p.unsafe_buffer_pointer() != e.unsafe_buffer_pointer()


class _Counted(NamedTuple):
    calls: int  # a Python number: kept as the init returned it
    total: Any


def _value_reading() -> optax.GradientTransformation:
    """An ``init`` that reads its arguments' values (cannot be traced)."""

    def init(params: Any) -> Any:
        total = float(sum(float(jnp.sum(leaf)) for leaf in jax.tree_util.tree_leaves(params)))
        return _Counted(calls=0, total=jnp.float32(total))

    return optax.GradientTransformation(init, lambda u, s, p=None: (u, s))


def _python_leaf() -> optax.GradientTransformation:
    def init(params: Any) -> Any:
        return _Counted(calls=3, total=jnp.zeros(()))

    return optax.GradientTransformation(init, lambda u, s, p=None: (u, s))


def test_an_init_that_reads_values_runs_eagerly_as_before() -> None:
    module = make_module()
    state = TrainState.create(module, _value_reading())
    want = _value_reading().init(eqx.filter(module, eqx.is_inexact_array))
    assert state.opt_state.calls == 0
    assert np.asarray(state.opt_state.total).tobytes() == np.asarray(want.total).tobytes()


def test_what_is_not_an_array_stays_as_the_init_returned_it() -> None:
    state = TrainState.create(make_module(), _python_leaf())
    assert type(state.opt_state.calls) is int and state.opt_state.calls == 3


def test_planned_state_has_the_shapes_and_runs_nothing() -> None:
    module = make_module()
    optimizer = optax.adamw(1e-3)
    with compiles() as seen:
        planned = TrainState.planned(module, optimizer, ema=True)
    assert not seen
    built = TrainState.create(module, optimizer, ema=True)
    assert jax.tree_util.tree_structure(planned.opt_state) == jax.tree_util.tree_structure(
        built.opt_state
    )
    for a, b in zip(
        jax.tree_util.tree_leaves(planned.opt_state),
        jax.tree_util.tree_leaves(built.opt_state),
        strict=True,
    ):
        assert isinstance(a, jax.ShapeDtypeStruct) and (a.shape, a.dtype) == (b.shape, b.dtype)


def test_a_mistake_the_checks_find_is_refused_before_the_state_is_compiled(
    tmp_path: Path,
) -> None:
    """A good run first compiles every eager operation of a run at these shapes; a run whose
    labels its checks refuse then compiles nothing (its state's program, a new one each run,
    would show)."""
    run_loop(tiny_loop())
    data = make_data()
    data["y"] = data["y"].copy()
    data["y"][7] = 5  # a 3-wide head
    run_dir = tmp_path / "run"
    plant(run_dir)
    loop = tiny_loop(dataset=data, checkpoint_dir=str(run_dir))
    before = snapshot(run_dir)
    with compiles() as seen, pytest.raises(DataError, match="row 7"):
        run_loop(loop)
    assert not seen, f"compiled before the error: {seen}"
    assert snapshot(run_dir) == before


def test_a_run_trains_the_same_bits_as_with_the_eager_init(monkeypatch: Any) -> None:
    """The run's result does not depend on how its state was built: a run through the
    compiled start equals one whose state is built eagerly (``compiled=False``)."""
    import pipekit_train.adapters.equinox._run as run_module

    def loop() -> TrainingLoop:
        return TrainingLoop(
            model_op=make_module(),
            dataset=make_data(64),
            loss="cross_entropy",
            batch_size=16,
            max_steps=6,
            optimizer_config={"name": "adamw", "lr": 1e-2},
            ema_decay=0.9,
            seed=0,
        )

    compiled_op, _ = loop().run()
    original = TrainState.create

    def eager(*args: Any, **kwargs: Any) -> TrainState:
        return original(*args, **{**kwargs, "compiled": False})

    monkeypatch.setattr(run_module.TrainState, "create", staticmethod(eager))
    eager_op, _ = loop().run()
    _same(eqx.filter(compiled_op.module, eqx.is_array), eqx.filter(eager_op.module, eqx.is_array))
