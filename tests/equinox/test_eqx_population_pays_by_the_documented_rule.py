"""``population_pays(loop, n)``: the documented rule for when a population beats n
sequential trials, with its reason; compiles nothing (benchmarks case 17 measures it)."""

from __future__ import annotations

import equinox as eqx
import jax
from _eqx_helpers import tiny_loop
from compile_watch import compiles

from pipekit_train.adapters.equinox import population_pays
from pipekit_train.adapters.equinox._population_rule import CPU_WORK_LIMIT


def _mlp_loop(width: int, depth: int, batch_size: int = 128):
    model = eqx.nn.MLP(64, 10, width, depth, key=jax.random.PRNGKey(0))
    return tiny_loop(model_op=model, batch_size=batch_size)


def test_small_mlp_pays_and_digits_mlp_does_not_on_cpu() -> None:
    small, digits = _mlp_loop(32, 1), _mlp_loop(256, 2)  # 64-32-10 and 64-256-256-10
    with compiles() as seen:
        small_choice, digits_choice = population_pays(small, 16), population_pays(digits, 16)
    assert not seen
    assert small_choice.work == 2_410 * 128 and digits_choice.work == 85_002 * 128
    if jax.default_backend() == "cpu":
        assert small_choice and small_choice.pays
        assert not digits_choice and "above" in digits_choice.reason
        assert "2,000,000" in digits_choice.reason and CPU_WORK_LIMIT == 2_000_000
    else:
        assert small_choice and digits_choice
    assert digits_choice.as_dict()["size"] == 16


def test_one_member_never_pays() -> None:
    choice = population_pays(_mlp_loop(32, 1), 1)
    assert not choice and "solo run" in choice.reason
