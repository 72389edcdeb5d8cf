"""`import pipekit_train` must not import jax, torch, keras or numpyro (DESIGN §2).

Checked in a fresh interpreter so modules imported by other tests cannot hide a regression.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["jax", "jaxlib", "torch", "keras", "numpyro", "blackjax", "lightning", "equinox"]


def test_import_pipekit_train_imports_no_framework() -> None:
    code = (
        "import json, sys; import pipekit_train; "
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out.strip().splitlines()[-1]) == []
