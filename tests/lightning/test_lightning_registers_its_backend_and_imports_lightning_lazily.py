"""The distribution registers backend ``lightning``; importing it (or listing backends) is cheap.

Lightning takes 9-11 s to import, so neither ``import pipekit_train``, nor importing the
adapter package, nor ``pipekit-train backends`` may import it (checked in a fresh
interpreter); ``load_backend("lightning")`` finds the adapter's ``run``.
"""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

from pipekit_train.registry import backend_states, load_backend


def test_entry_point_and_registry() -> None:
    eps = [
        ep for ep in metadata.entry_points(group="pipekit_train.backends") if ep.name == "lightning"
    ]
    assert [ep.value for ep in eps] == ["pipekit_train.adapters.lightning"]
    state = next(s for s in backend_states() if s.name == "lightning")
    assert state.state == "installed" and state.distribution == "pipekit-train-lightning"
    assert {"torch", "lightning"} <= set(state.libraries)
    assert callable(load_backend("lightning").run)


def test_import_and_backends_listing_do_not_import_lightning() -> None:
    code = (
        "import sys, pipekit_train, pipekit_train.adapters.lightning as a\n"
        "from pipekit_train.registry import backend_states\n"
        "backend_states()\n"
        "assert 'lightning' not in sys.modules, 'lightning imported'\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        "assert a.TorchModelOp.__name__ == 'TorchModelOp'\n"
        "assert 'lightning' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
