"""numpyro-svi and numpyro-mcmc pass every check of the backend contract
(``pipekit_train.testing``)."""

from __future__ import annotations

import pytest
from _npy_contract import MCMC, SVI

from pipekit_train.testing import backend_checks


@pytest.mark.parametrize("check", backend_checks(SVI), ids=str)
def test_numpyro_svi_keeps_the_backend_contract(check, tmp_path) -> None:
    check(tmp_path)


@pytest.mark.parametrize("check", backend_checks(MCMC), ids=str)
def test_numpyro_mcmc_keeps_the_backend_contract(check, tmp_path) -> None:
    check(tmp_path)
