"""A model whose `__call__` raises `TypeError` for its own reasons shows that error: the
synthesised task decides from the signature whether to pass `key=`, instead of retrying the
call without a key (which replaced the user's error with a "missing argument" one)."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest
from _eqx_helpers import make_data, run_loop, tiny_loop

from pipekit_train.adapters.equinox._task import takes_key


class BuggyNeedsKey(eqx.Module):
    w: jax.Array

    def __call__(self, x: jax.Array, *, key: jax.Array) -> jax.Array:
        raise TypeError("BuggyNeedsKey: the user's own bug")


class NoKey(eqx.Module):
    w: jax.Array

    def __call__(self, x: jax.Array) -> jax.Array:
        return x @ self.w


class TakesKwargs(eqx.Module):
    w: jax.Array

    def __call__(self, x: jax.Array, **kwargs: object) -> jax.Array:
        return x @ self.w


def test_the_users_type_error_is_the_one_reported() -> None:
    model = BuggyNeedsKey(jnp.ones((4, 3)))
    with pytest.raises(Exception) as info:
        run_loop(tiny_loop(model_op=model, dataset=make_data(40)))
    text = "".join(str(e) for e in _chain(info.value))
    assert "the user's own bug" in text
    assert "missing" not in text and "required keyword-only" not in text


def test_key_passing_is_read_from_the_signature() -> None:
    w = jnp.ones((4, 3))
    assert takes_key(BuggyNeedsKey(w)) and takes_key(TakesKwargs(w))
    assert takes_key(eqx.nn.MLP(4, 3, 8, 1, key=jax.random.PRNGKey(0)))
    assert not takes_key(NoKey(w)) and not takes_key(lambda x: x)


def test_a_model_without_key_trains() -> None:
    op, info = run_loop(tiny_loop(model_op=NoKey(jnp.zeros((4, 3))), dataset=make_data(40)))
    assert info["final_step"] == 10


def _chain(exc: BaseException | None) -> list[BaseException]:
    out = []
    while exc is not None and exc not in out:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out
