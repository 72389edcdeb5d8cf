"""Run in a subprocess (simulated CPU devices come from XLA_FLAGS, read at JAX start-up).

Usage: python _keras_data_parallel_worker.py OUT DATA_PARALLEL(0/1) [BATCH [MAX_STEPS CKPT_DIR]]

Trains the digits MLP 30 steps (evaluating at the end) and writes every model variable,
the final metrics and how many devices each variable lives on; a ``PipekitError`` is printed as
``{"error": TYPE, "field": …}``.
"""

from __future__ import annotations

import json
import sys

import numpy as np
from _keras_helpers import digits, mlp

from pipekit_train import Checkpoint, TrainingLoop
from pipekit_train.errors import PipekitError


def main() -> None:
    out, data_parallel = sys.argv[1], sys.argv[2] == "1"
    batch_size = int(sys.argv[3]) if len(sys.argv) > 3 else 32
    max_steps = int(sys.argv[4]) if len(sys.argv) > 4 else 30
    ckpt = sys.argv[5] if len(sys.argv) > 5 else None
    model = mlp(hidden=32)
    loop = TrainingLoop(
        model_op=model,
        dataset=digits(512),
        val_dataset=digits(100, offset=1500),
        loss="cross_entropy",
        batch_size=batch_size,
        max_steps=max_steps,
        checkpoint_dir=ckpt,
        callbacks=[Checkpoint(every_n_steps=10)] if ckpt else [],
        log_every_n_steps=10,
        backend="keras",
        backend_options={"data_parallel": data_parallel},
    )
    try:
        op, info = loop.run()
    except PipekitError as e:
        print(json.dumps({"error": type(e).__name__, "field": getattr(e, "field", None)}))
        return
    placed = [len(v.value.sharding.device_set) for v in model.variables]
    np.savez(out, *[np.array(v.value) for v in model.variables])
    x = digits(8)["x"]
    logits = np.asarray(op(x))
    summary = {
        "devices": len(info["devices"]),
        "distribution": info["distribution"],
        "placed_on": sorted(set(placed)),
        "final_metrics": info["final_metrics"],
        "logits_finite": bool(np.isfinite(logits).all()),
        "resumed_from_step": info["resumed_from_step"],
        "final_step": info["final_step"],
    }
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
