"""`pipekit-train inspect` reads a Lightning folder (torch step files) and an Orbax folder
from their files alone: it imports neither jax nor torch (nor numpy), so a torch-only
install inspects its own runs, and the command answers quickly.

Before, ``inspect`` imported ``pipekit_train.jax.checkpoint`` (jax and Orbax) for any
folder and refused a Lightning folder. Here both libraries are installed, so an import of
either would show in the child's ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = """
import json, sys
from pipekit_train.cli import main
code = main(["inspect", sys.argv[1], "--json"])
heavy = sorted(m for m in ("jax", "torch", "numpy", "orbax", "lightning") if m in sys.modules)
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


def _lightning_folder(d: Path) -> None:
    import torch

    from pipekit_train.adapters.lightning._checkpoint import TorchFileStore

    store = TorchFileStore(d, keep_last=None)
    for step in (3, 6):
        state = {"module": {"w": torch.ones(4) * step}, "optimizer": None}
        store.save(step, state, {"fingerprint": {"backend": "lightning"}, "metrics": {"loss": 0.5}})


def _orbax_folder(d: Path) -> None:
    import jax.numpy as jnp

    from pipekit_train.jax.checkpoint import Checkpointer

    with Checkpointer(d, keep_last=None, fingerprint={"backend": "equinox"}) as ck:
        for step in (3, 6):
            ck.save(step, {"w": jnp.ones(4) * step}, {"metrics": {"loss": 0.5}})


@pytest.mark.parametrize("store", ["lightning", "orbax"])
def test_inspect_lists_steps_and_meta_without_array_libraries(store: str, tmp_path: Path) -> None:
    {"lightning": _lightning_folder, "orbax": _orbax_folder}[store](tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report == {"code": 0, "heavy": []}, proc.stderr
    rows = json.loads(proc.stdout)
    assert [r["step"] for r in rows] == [3, 6] and all(r["valid"] for r in rows)
    assert rows[-1]["meta"]["fingerprint"]["backend"] == ("equinox" if store == "orbax" else store)
    assert rows[-1]["meta"]["metrics"] == {"loss": 0.5}
