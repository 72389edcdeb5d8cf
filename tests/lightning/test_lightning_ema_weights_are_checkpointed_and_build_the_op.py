"""``ema_decay`` on Lightning: the average is checkpointed, resumed, evaluated, and is the op.

The loop's rule (the average starts at the initial parameters, then ``ema = d * ema +
(1 - d) * params`` once per optimiser step, through torch's ``get_ema_multi_avg_fn``)
checked against the bits on disk: after one step the checkpoint's ``"ema"`` is
``d * p0 + (1 - d) * p1`` of the initial weights and the checkpoint's own last iterate;
a run continued from that checkpoint to step 2 (a fresh module, as a new process would
have) holds ``d * ema1 + (1 - d) * p2``. The checkpoint keeps the last iterate; the
returned ``TorchModelOp`` holds the average, and ``val_loss`` is the op's loss on the
validation rows, which the last iterate does not give. With ``accumulate_steps=2``
the average moves once per optimiser step, not per micro-batch.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from _lightning_helpers import data, loop, mlp

from pipekit_train import Checkpoint

D = 0.8


def _run(ckpt: Path, max_steps: int, **kw):
    return loop(
        model_op=mlp(), max_steps=max_steps, ema_decay=D, val_dataset=data(48, seed=1),
        optimizer_config={"name": "adam", "lr": 5e-2}, checkpoint_dir=str(ckpt),
        callbacks=[Checkpoint(every_n_steps=1)], **kw,
    ).run()  # fmt: skip


def _saved(ckpt: Path, step: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(module parameters, EMA) of checkpoint ``step``."""
    payload = torch.load(ckpt / f"step-{step:09d}.pt", weights_only=True)
    ema = {k: v.numpy() for k, v in payload["ema"].items()}
    return {k: payload["module"][k].numpy() for k in ema}, ema


def _ce(logits: np.ndarray, y: np.ndarray) -> float:
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-logp[np.arange(len(y)), y].mean())


def test_average_is_in_the_checkpoint_resumes_and_is_the_op(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    p0 = {k: v.detach().numpy().copy() for k, v in mlp().named_parameters()}
    _run(ckpt, 1)
    p1, ema1 = _saved(ckpt, 1)
    assert sorted(ema1) == sorted(p0)
    for k in p0:
        assert not np.allclose(p0[k], p1[k])
        np.testing.assert_allclose(ema1[k], D * p0[k] + (1 - D) * p1[k], rtol=1e-6, atol=1e-7)

    op, info = _run(ckpt, 2)
    assert info["resumed_from_step"] == 1 and info["final_step"] == 2
    p2, ema2 = _saved(ckpt, 2)
    for k in p0:
        np.testing.assert_allclose(ema2[k], D * ema1[k] + (1 - D) * p2[k], rtol=1e-6, atol=1e-7)
    # The op holds the average; the checkpoint keeps the last iterate.
    for k, v in op.module.named_parameters():
        assert v.detach().numpy().tobytes() == ema2[k].tobytes()
        assert not np.allclose(ema2[k], p2[k])
    # Evaluation used the average: val_loss is the op's loss on the validation rows.
    val = data(48, seed=1)
    op_loss = _ce(np.asarray(op(val["x"])), val["y"])
    np.testing.assert_allclose(info["final_metrics"]["val_loss"], op_loss, rtol=1e-5)
    raw = mlp()
    raw.load_state_dict({k: torch.from_numpy(v) for k, v in p2.items()})
    with torch.no_grad():
        raw_loss = _ce(raw(torch.from_numpy(val["x"])).numpy(), val["y"])
    assert abs(raw_loss - op_loss) > 1e-4


def test_with_accumulation_the_average_moves_once_per_update(tmp_path: Path) -> None:
    p0 = {k: v.detach().numpy().copy() for k, v in mlp().named_parameters()}
    _, info = _run(tmp_path / "ckpt", 1, accumulate_steps=2)
    assert info["final_step"] == 1
    p1, ema1 = _saved(tmp_path / "ckpt", 1)
    for k in p0:
        np.testing.assert_allclose(ema1[k], D * p0[k] + (1 - D) * p1[k], rtol=1e-6, atol=1e-7)
