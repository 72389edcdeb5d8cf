"""A model_op that is not an nn.Module (nor a TorchModelOp) → ConfigError before fit."""

from __future__ import annotations

import pytest
from _lightning_helpers import loop

from pipekit_train.errors import ConfigError


@pytest.mark.parametrize("model", [object(), lambda x: x, [1, 2]])
def test_model_that_is_not_a_torch_module_is_config_error(no_fit, model) -> None:
    with pytest.raises(ConfigError, match=r"model_op must be a torch\.nn\.Module") as err:
        loop(model_op=model).run()
    assert err.value.field == "model_op"
