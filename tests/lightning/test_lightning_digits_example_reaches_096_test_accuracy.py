"""The digits example (``examples/digits_lightning.py``) trains to >= 0.96 on its held-out split.

The example's own model and data split, a shorter schedule (400 steps) so the test
stays fast; the accuracy is measured with the returned ``TorchModelOp`` on the
test split, which is also saved and loaded back through its recorded factory
(``trusted=True``: the test's own folder).
Also checks ``backend_info`` and that the metric writer wrote through the runner.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from pipekit_train import Checkpoint, TrainingLoop

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture()
def example(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import digits_lightning

    yield digits_lightning
    sys.modules.pop("digits_lightning", None)


def test_digits_example_reaches_096_on_the_held_out_split(example, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    test = example.load_split("test")
    loop = TrainingLoop(
        backend="lightning",
        model_op=example.make_model(),
        dataset=example.load_split("train"),
        val_dataset=test,
        loss="cross_entropy",
        batch_size=128,
        max_steps=400,
        optimizer_config={
            "name": "adamw",
            "lr": {"schedule": "cosine_decay", "init_value": 3e-3},
            "weight_decay": 1e-2,
        },
        eval_every_n_steps=200,
        checkpoint_dir=str(tmp_path / "ckpt"),
        callbacks=[Checkpoint(every_n_steps=200, keep_last=1)],
        metric_writer=f"jsonl:{tmp_path / 'metrics.jsonl'}",
        backend_options={"accelerator": "cpu"},
    )
    op, info = loop.run()
    accuracy = float((op(test["x"]).argmax(-1) == test["y"]).mean())
    print(f"digits test accuracy {accuracy:.4f} in {info['total_seconds']:.1f} s")
    assert accuracy >= 0.96
    assert info["final_metrics"]["val_accuracy"] == pytest.approx(accuracy, abs=1e-6)

    for key in (
        "backend",
        "versions",
        "final_step",
        "resumed_from_step",
        "final_metrics",
        "stop_reason",
        "interrupted",
        "total_seconds",
    ):
        assert key in info, key
    assert info["backend"] == "lightning" and info["final_step"] == 400
    assert info["resumed_from_step"] is None and info["interrupted"] is None
    assert {"pipekit-train-core", "pipekit-train-lightning", "torch", "lightning"} <= set(
        info["versions"]
    )

    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert any("val_accuracy" in json.dumps(r) for r in rows)
    assert sorted(p.name for p in (tmp_path / "ckpt").glob("step-*.pt")) == ["step-000000400.pt"]

    op.save(tmp_path / "model")
    back = type(op).load(tmp_path / "model", trusted=True)
    np.testing.assert_array_equal(back(test["x"]), op(test["x"]))
