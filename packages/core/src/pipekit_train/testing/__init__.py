"""The backend contract as a test kit: what every backend promises, checked by name.

A backend's package (in this repository or not) proves it keeps core's promises by running
the kit against a small loop of its own, the way scikit-learn's ``parametrize_with_checks``
proves an estimator::

    import pytest
    from pipekit_train.testing import BackendCase, backend_checks

    CASE = BackendCase(backend="flax-nnx", make_loop="my_backend.contract:make_loop",
                       op_inputs="my_backend.contract:op_inputs")

    @pytest.mark.parametrize("check", backend_checks(CASE), ids=str)
    def test_backend_contract(check, tmp_path):
        check(tmp_path)

Each check is its own test id; :data:`CHECKS` lists them, each documented by its docstring
(``docs/writing-a-backend.md`` has the table). :func:`check_backend` runs them all outside
pytest and raises one :class:`ContractFailure` naming every check that failed. Importing this
module imports no array library; the checks import what the backend needs when they run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ._callbacks import EventLog, RowLog, SignalAt
from ._case import BackendCase
from ._checks import CHECKS, Check, ContractFailure
from ._compiles import compiles
from ._files import biggest_data_file, flip_bytes, snapshot

__all__ = [
    "CHECKS",
    "BackendCase",
    "BoundCheck",
    "Check",
    "ContractFailure",
    "EventLog",
    "RowLog",
    "SignalAt",
    "backend_checks",
    "biggest_data_file",
    "check_backend",
    "compiles",
    "flip_bytes",
    "snapshot",
]


@dataclass(frozen=True)
class BoundCheck:
    """One check bound to one case: call it with an empty folder; ``str()`` is its name."""

    check: Check
    case: BackendCase

    def __call__(self, tmp_path: str | Path) -> None:
        self.check.run(self.case, Path(tmp_path))

    def __str__(self) -> str:
        return self.check.name


def _select(names: Iterable[str] | None, skip: Iterable[str]) -> list[Check]:
    from ..errors import ConfigError, closest

    chosen = list(CHECKS) if names is None else list(names)
    for name in [*chosen, *skip]:
        if name not in CHECKS:
            hint = closest(name, list(CHECKS))
            raise ConfigError(
                f"no contract check named {name!r}"
                + (f"; did you mean {hint!r}?" if hint else f"; the checks: {list(CHECKS)}"),
                field="checks",
            )
    skipped = set(skip)
    return [CHECKS[n] for n in chosen if n not in skipped]


def backend_checks(
    case: BackendCase, *, only: Iterable[str] | None = None, skip: Iterable[str] = ()
) -> list[BoundCheck]:
    """Every check (or ``only`` those, less ``skip``) bound to ``case``, for
    ``pytest.mark.parametrize(..., ids=str)``."""
    return [BoundCheck(check, case) for check in _select(only, skip)]


def check_backend(
    case: BackendCase,
    tmp_path: str | Path,
    *,
    only: Iterable[str] | None = None,
    skip: Iterable[str] = (),
) -> None:
    """Run the checks on ``case``, each in a folder of its own under ``tmp_path``; raise one
    :class:`ContractFailure` naming every check that failed (``None`` when all pass)."""
    failures: list[ContractFailure] = []
    for bound in backend_checks(case, only=only, skip=skip):
        folder = Path(tmp_path) / bound.check.name
        folder.mkdir(parents=True, exist_ok=True)
        try:
            bound(folder)
        except ContractFailure as exc:
            failures.append(exc)
    if failures:
        names = ", ".join(f.check for f in failures)
        detail = "\n".join(f"- {f}" for f in failures)
        raise ContractFailure(names, case.backend, f"{len(failures)} check(s) failed:\n{detail}")
