"""The flax-nnx backend against core's backend contract kit (``pipekit_train.testing``)."""

import pytest

from pipekit_train.testing import BackendCase, backend_checks

CASE = BackendCase(
    backend="flax-nnx",
    make_loop="pipekit_train_flax.contract:make_loop",
    op_inputs="pipekit_train_flax.contract:op_inputs",
)


@pytest.mark.parametrize("check", backend_checks(CASE), ids=str)
def test_backend_contract(check, tmp_path):
    check(tmp_path)
