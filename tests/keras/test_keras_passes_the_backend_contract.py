"""The Keras backend passes every check of the backend contract (``pipekit_train.testing``)."""

from __future__ import annotations

import pytest
from _keras_contract import CASE

from pipekit_train.testing import backend_checks


@pytest.mark.parametrize("check", backend_checks(CASE), ids=str)
def test_keras_keeps_the_backend_contract(check, tmp_path) -> None:
    check(tmp_path)
