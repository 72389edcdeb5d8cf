"""The Lightning backend passes every check of the backend contract (``pipekit_train.testing``)."""

from __future__ import annotations

import pytest
from _lightning_contract import CASE

from pipekit_train.testing import backend_checks


@pytest.mark.parametrize("check", backend_checks(CASE), ids=str)
def test_lightning_keeps_the_backend_contract(check, tmp_path) -> None:
    check(tmp_path)
