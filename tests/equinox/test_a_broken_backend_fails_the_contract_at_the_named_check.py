"""The contract kit can fail: two deliberately broken backends (``_broken_backends``) each
fail the check that names their fault, with a message saying what was wrong, while the real
Equinox backend passes the same checks (``test_eqx_passes_the_backend_contract.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _broken_backends import registered

from pipekit_train.testing import BackendCase, ContractFailure, check_backend


@pytest.mark.parametrize(
    ("backend", "factory", "check", "why"),
    [
        (
            "eqx-trusting-load",
            "_broken_backends:trusting_loop",
            "operator_saves_and_loads_without_importing_recorded_code",
            "loading ran code that an edited op folder named",
        ),
        (
            "eqx-late-option-check",
            "_broken_backends:late_loop",
            "bad_options_are_refused_before_anything_compiles",
            "hooks ran before the refusal",
        ),
    ],
)
def test_broken_backend_fails_the_named_check(
    backend: str, factory: str, check: str, why: str, tmp_path: Path
) -> None:
    with registered(tmp_path / "entry_points"):
        case = BackendCase(backend=backend, make_loop=factory)
        with pytest.raises(ContractFailure) as failure:
            check_backend(case, tmp_path / "checks", only=[check])
    assert failure.value.check == check
    assert f"backend {backend!r} fails check {check!r}" in str(failure.value)
    assert why in str(failure.value), failure.value
