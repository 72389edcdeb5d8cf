"""With the Equinox backend installed, a bad `TrainingLoop(backend="equinox", ...)` fails at
construction without loading the backend or JAX at all, so nothing can have been compiled.

Which messages name which field is core's test
(`tests/core/test_loop_validation_names_the_field.py`). This one proves, in a fresh
interpreter where the backend *is* importable, that construction never reaches it: neither
`jax`, `equinox` nor the adapter module is imported, for bad loops and a good one alike.
"""

from __future__ import annotations

import textwrap

from _eqx_helpers import child_json

CHILD = textwrap.dedent(
    """
    import json, sys
    from pipekit_train import Checkpoint, ConfigError, TrainingLoop
    import importlib.util
    assert importlib.util.find_spec("pipekit_train.adapters.equinox") is not None

    DATA = {"x": [[0.0], [1.0]], "y": [0, 1]}
    BAD = {
        "optimizer": {"optimizer_config": {"name": "adamm"}},
        "loss": {"loss": "crossentropy"},
        "max_steps": {"max_steps": 0},
        "checkpoint": {"callbacks": [Checkpoint(every_n_steps=5)]},
    }
    fields = {}
    for case, overrides in BAD.items():
        try:
            TrainingLoop(dataset=DATA, **{"loss": "mse", **overrides}, backend="equinox")
        except ConfigError as exc:
            fields[case] = exc.field
    TrainingLoop(dataset=DATA, loss="mse", backend="equinox")  # a good one, not run
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib", "equinox")
                    or m.startswith("pipekit_train.adapters.equinox"))
    print(json.dumps({"fields": fields, "loaded": loaded}))
    """
)


def test_construction_fails_without_importing_backend_or_jax() -> None:
    report = child_json(CHILD, timeout=120)
    assert report["fields"] == {
        "optimizer": "optimizer_config.name",
        "loss": "loss",
        "max_steps": "max_steps",
        "checkpoint": "checkpoint_dir",
    }
    assert report["loaded"] == [], f"construction imported {report['loaded']}"
