"""Two deliberately broken backends on top of the Equinox one, to show the contract kit fails.

- ``eqx-trusting-load``: trains like Equinox, but its operator's ``load`` imports and calls
  the factory recorded in the saved folder.
- ``eqx-late-option-check``: refuses an unknown ``backend_options`` key only after it has
  compiled and trained.

Each registers under its name by a throw-away ``*.dist-info`` (:func:`registered`), the way a
third-party distribution's entry point would.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path

from _eqx_contract import make_loop as _equinox_loop

from pipekit_train import TrainingLoop

ENTRY_POINTS = {
    "eqx-trusting-load": "_broken_trusting_backend",
    "eqx-late-option-check": "_broken_late_backend",
}


@contextlib.contextmanager
def registered(root: Path) -> Iterator[None]:
    """Both broken backends on ``sys.path`` (and so on the kit's subprocesses' path)."""
    info = root / "pipekit_train_broken_toys-0.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pipekit-train-broken-toys\nVersion: 0.0.0\n"
    )
    lines = "".join(f"{name} = {module}\n" for name, module in ENTRY_POINTS.items())
    (info / "entry_points.txt").write_text(f"[pipekit_train.backends]\n{lines}")
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        sys.path.remove(str(root))


def trusting_loop() -> TrainingLoop:
    return dataclasses.replace(_equinox_loop(), backend="eqx-trusting-load")


def late_loop() -> TrainingLoop:
    return dataclasses.replace(_equinox_loop(), backend="eqx-late-option-check")


def as_equinox(loop: TrainingLoop, **options: object) -> TrainingLoop:
    """``loop`` with ``options`` merged in, for the real Equinox backend's ``run`` (the
    backend's name stays the broken one's, as a wrapping third party's would)."""
    return dataclasses.replace(loop, backend_options={**loop.backend_options, **options})
