"""``import pipekit_train.sweep`` imports neither Optuna nor SQLAlchemy nor an array library;
running a sweep without Optuna is an ExtraNotInstalledError with the pip command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHECK = """
import sys
import pipekit_train.sweep, pipekit_train.cli
pipekit_train.cli.build_parser()
bad = sorted(m for m in sys.modules if m.split('.')[0] in
             ('optuna', 'sqlalchemy', 'jax', 'numpy', 'torch', 'matplotlib'))
print(bad)
"""

MISSING = """
import sys
sys.modules['optuna'] = None  # as in an install without the [sweep] extra
from pipekit_train.errors import ExtraNotInstalledError
from pipekit_train.sweep import Sweep
sweep = Sweep(loop={'dataset': 'm:d', 'loss': 'mse', 'model_op': 'm:f'},
              space={'seed': {'type': 'int', 'low': 0, 'high': 3}}, objective='loss',
              folder=sys.argv[1])
try:
    sweep.run()
except ExtraNotInstalledError as exc:
    print(exc)
"""


def test_import_is_free_of_optuna_and_array_libraries() -> None:
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_missing_optuna_names_the_sweep_extra(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", MISSING, str(tmp_path / "sw")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "pip install 'pipekit-train-core[sweep]'" in out.stdout
    assert not (tmp_path / "sw").exists()
