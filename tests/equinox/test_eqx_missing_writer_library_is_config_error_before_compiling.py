"""A writer named without its library installed: ConfigError with the pip line, nothing compiled.

``pip install pipekit-train-equinox`` brings no tensorboardX and no mlflow (they are core's
``[tensorboard]`` and ``[mlflow]`` extras). A run that names such a writer must stop with a
``ConfigError`` carrying the ``pip install`` line before the backend traces or compiles its
step — not a bare ``ModuleNotFoundError`` from the writer's first call. The library is
hidden with ``sys.modules[name] = None`` (``import`` raises ImportError, ``find_spec`` finds
nothing), so the test means the same in a venv that has it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _eqx_helpers import run_loop, tiny_loop, watch_compilation

from pipekit_train.errors import ConfigError


@pytest.mark.parametrize(
    ("writer", "module", "pip_line"),
    [
        ("tensorboard", "tensorboardX", "pip install 'pipekit-train-core[tensorboard]'"),
        ("mlflow", "mlflow", "pip install 'pipekit-train-core[mlflow]'"),
    ],
)
def test_missing_writer_library_stops_the_run_before_compiling(
    writer: str, module: str, pip_line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    loop = tiny_loop(checkpoint_dir=str(tmp_path / "run"), metric_writer=["jsonl", writer])
    with watch_compilation(monkeypatch) as watch, pytest.raises(ConfigError) as err:
        run_loop(loop)
    assert pip_line in str(err.value)
    assert err.value.field == "metric_writer[1]"
    assert not watch.anything, (watch.train_calls, watch.step_traces, watch.compiled)
