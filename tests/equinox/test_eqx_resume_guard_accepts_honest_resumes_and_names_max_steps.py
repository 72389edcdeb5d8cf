"""The resume guard, across real processes: honest resumes go through, a changed schedule does not.

- A model with a static callable field (``jax.nn.gelu``, whose repr holds a memory
  address) trains 10 steps; the same model in a new process with ``max_steps=20``
  resumes (the model digest uses key paths, shapes and dtypes, never reprs), and a
  constant learning rate means a longer ``max_steps`` simply trains longer.
- The first run comes from YAML (``lr: 1e-3`` is a string to PyYAML), the second
  from Python (``0.001``): the normalised optimiser spec makes them the same run.
- Under a cosine schedule that decays over ``max_steps``, changing ``max_steps`` is a
  ``CheckpointError`` naming ``max_steps`` and the schedule field; ``resume: force``
  still overrides it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from _eqx_helpers import subprocess_env

WORKER = str(Path(__file__).with_name("_guard_worker.py"))


def _run(ckpt: Path, max_steps: int, form: str, schedule: str, resume: str = "auto"):
    proc = subprocess.run(
        [sys.executable, WORKER, str(ckpt), str(max_steps), form, schedule, resume],
        capture_output=True,
        text=True,
        env=subprocess_env(JAX_PLATFORMS="cpu"),
        timeout=300,
        cwd=str(Path(WORKER).parent),
    )
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.slow
def test_static_callable_model_from_yaml_resumes_from_python(tmp_path):
    code, out = _run(tmp_path, 10, "yaml", "constant")
    assert code == 0 and "RESULT None 10" in out, out
    code, out = _run(tmp_path, 20, "python", "constant")
    assert code == 0 and "RESULT 10 20" in out, out
    assert "forced" not in out


@pytest.mark.slow
def test_changed_max_steps_under_a_max_steps_schedule_is_refused_then_forced(tmp_path):
    code, out = _run(tmp_path, 10, "python", "cosine")
    assert code == 0 and "RESULT None 10" in out, out
    code, out = _run(tmp_path, 20, "python", "cosine")
    assert code == 3 and "CHECKPOINT_ERROR" in out, out
    assert "max_steps changed (10 -> 20)" in out
    assert "optimizer_config.lr.decay_steps" in out
    assert '"resume": "force"' in out
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.isdigit()) == ["10"]  # kept
    code, out = _run(tmp_path, 20, "python", "cosine", resume="force")
    assert code == 0 and "RESULT 10 20 forced" in out, out
