"""``pipekit_train.writers`` stands alone: importing it and writing plain dicts through it
imports nothing of the loop, the registry, the callbacks, the config or any adapter (the
import circle callbacks → writers → registry → loop is gone).

Checked in a fresh interpreter, so modules other tests imported cannot hide a regression.
"""

from __future__ import annotations

import json
from pathlib import Path

from _core_helpers import run_python

FORBIDDEN = (
    "pipekit_train.loop",
    "pipekit_train.registry",
    "pipekit_train.callbacks",
    "pipekit_train.config",
    "pipekit_train.engine",
    "pipekit_train.adapters",
)


def test_writers_used_with_plain_dicts_import_no_loop_registry_or_adapter(tmp_path: Path) -> None:
    result = run_python(
        f"""
        import json, sys
        from pipekit_train.writers import CsvWriter, JsonlWriter, flatten, viewing_hints
        from pipekit_train.writers import resolve_writers

        run_dir = {str(tmp_path)!r}
        writers = resolve_writers(["jsonl", "csv"], run_dir)
        for w in writers:
            w.write(1, {{"loss": 0.5}})
            w.flush()
            w.close()
        assert flatten({{"versions": {{"jax": "0.1"}}, "final_step": 3}}) == {{
            "versions.jax": "0.1", "final_step": 3}}
        hints = viewing_hints(["jsonl", "tensorboard"], run_dir)
        loaded = sorted(m for m in sys.modules if m.startswith("pipekit_train"))
        print(json.dumps({{"loaded": loaded, "hints": hints}}))
        """
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    leaked = [m for m in out["loaded"] if m.startswith(FORBIDDEN)]
    assert leaked == [], leaked
    assert any(line.startswith("TensorBoard:") for line in out["hints"])
    assert (tmp_path / "logs" / "jsonl" / "metrics.jsonl").read_text().strip()
