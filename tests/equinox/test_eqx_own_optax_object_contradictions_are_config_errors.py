"""The user's own optax object is used as given; what would contradict it is a ``ConfigError``.

Issue 20's rule: nothing is replaced silently. Each mistake is raised before
anything compiles and names the field(s): ``to_yaml()`` of a loop holding an optax
object (Python only), ``accumulate_steps`` over an object that already accumulates
(``optax.MultiSteps``), an object that cannot update the model's parameters, and
``backend_options.optimizer_id`` next to a dict config (a name that would change
nothing). An object without ``inject_hyperparams`` trains and says why there is no
``lr`` metric.
"""

from __future__ import annotations

import optax
import pytest
from _eqx_helpers import run_loop, tiny_loop

from pipekit_train import ConfigError


def test_to_yaml_names_optimizer_config() -> None:
    loop = tiny_loop(model_op="_eqx_helpers:make_model", optimizer_config=optax.adam(1e-2))
    with pytest.raises(ConfigError, match="optimizer_config is an optax") as info:
        loop.to_yaml()
    assert info.value.field == "optimizer_config"


def test_accumulate_steps_over_multisteps_names_both_fields() -> None:
    tx = optax.MultiSteps(optax.adam(1e-2), every_k_schedule=2).gradient_transformation()
    loop = tiny_loop(optimizer_config=tx, accumulate_steps=2)
    with pytest.raises(ConfigError, match="accumulate_steps=2 contradicts optimizer_config"):
        run_loop(loop)


def test_object_that_cannot_update_the_parameters_names_optimizer_config() -> None:
    mask = {"not": True, "the": False, "model": True}  # a mask tree for another model
    loop = tiny_loop(optimizer_config=optax.masked(optax.adam(1e-2), mask))
    with pytest.raises(ConfigError, match="could not initialise and update") as info:
        run_loop(loop)
    assert info.value.field == "optimizer_config"


def test_optimizer_id_with_a_dict_config_is_refused() -> None:
    loop = tiny_loop(backend_options={"optimizer_id": "mine"})
    with pytest.raises(ConfigError, match="optimizer_id names your own optax object") as info:
        run_loop(loop)
    assert info.value.field == "backend_options.optimizer_id"


def test_object_without_inject_hyperparams_trains_and_says_lr_is_not_logged() -> None:
    _, info = run_loop(tiny_loop(optimizer_config=optax.sgd(1e-2, momentum=0.9)))
    assert "lr" not in info["final_metrics"]
    assert info["optimizer"]["lr_logged"] is False
    assert "inject_hyperparams" in info["optimizer"]["note"]
