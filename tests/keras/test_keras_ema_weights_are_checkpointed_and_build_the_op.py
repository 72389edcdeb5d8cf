"""``ema_decay`` on Keras: the average is checkpointed, resumed, evaluated, and is the op.

The field maps onto the optimiser's ``use_ema=True, ema_momentum=d``, with the loop's
rule (the average starts at the initial weights; ``ema = d * ema + (1 - d) * params``
once per optimiser update, as on the Equinox backend). Checked against the bits on
disk: after one update the checkpoint's average is ``d * p0 + (1 - d) * p1`` of the
initial weights and the checkpoint's own last iterate; a run continued to two steps
from that checkpoint has ``d * ema1 + (1 - d) * p2``. The checkpoint keeps the last
iterate while the returned op holds the average; ``val_loss`` is the op's loss on the
validation rows (evaluation uses the average), which the last iterate does not give.
With ``accumulate_steps=2`` the average moves once per update, not per micro-batch.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from _keras_helpers import digits, mlp

from pipekit_train import Checkpoint, TrainingLoop
from pipekit_train.adapters.keras._state import state_template
from pipekit_train.jax.checkpoint import Checkpointer

D = 0.8


def _loop(model, ckpt: Path, max_steps: int, **kw) -> TrainingLoop:
    return TrainingLoop(
        model_op=model, dataset=digits(256), val_dataset=digits(128, offset=1500),
        loss="cross_entropy", batch_size=32, max_steps=max_steps, ema_decay=D,
        optimizer_config={"name": "adam", "lr": 5e-2}, checkpoint_dir=str(ckpt),
        callbacks=[Checkpoint(every_n_steps=1)], backend="keras", **kw,
    )  # fmt: skip


def _newest(model, ckpt: Path) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(last iterate, average) of the trainable variables in the newest checkpoint."""
    with warnings.catch_warnings():  # resume="force" warns that {} is another fingerprint
        warnings.simplefilter("ignore")
        reader = Checkpointer(ckpt, keep_last=None, fingerprint={}, resume="force")
        restored = reader.restore(state_template(model))
        reader.close()
    assert restored is not None
    opt_vars = list(model.optimizer.variables)
    averages = [
        next(i for i, v in enumerate(opt_vars) if v is a)
        for a in model.optimizer._model_variables_moving_average
    ]
    model_keys, opt_keys = sorted(restored.state["model"]), sorted(restored.state["optimizer"])
    trainable = [
        next(i for i, v in enumerate(model.variables) if v is t) for t in model.trainable_variables
    ]
    params = [np.asarray(restored.state["model"][model_keys[i]]) for i in trainable]
    return params, [np.asarray(restored.state["optimizer"][opt_keys[i]]) for i in averages]


def _ce(logits: np.ndarray, y: np.ndarray) -> float:
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-logp[np.arange(len(y)), y].mean())


def test_average_is_in_the_checkpoint_resumes_and_is_the_op(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    model = mlp(hidden=16)
    p0 = [np.array(v.value) for v in model.trainable_variables]
    _loop(model, ckpt, 1).run()
    p1, ema1 = _newest(model, ckpt)
    for a, w0, w1 in zip(ema1, p0, p1, strict=True):
        assert not np.allclose(w0, w1)
        np.testing.assert_allclose(a, D * w0 + (1 - D) * w1, rtol=1e-6, atol=1e-7)

    model2 = mlp(hidden=16)  # a fresh process's model: resumes from step 1
    op, info = _loop(model2, ckpt, 2).run()
    assert info["resumed_from_step"] == 1 and info["final_step"] == 2
    p2, ema2 = _newest(model2, ckpt)
    for a, e1, w2 in zip(ema2, ema1, p2, strict=True):
        np.testing.assert_allclose(a, D * e1 + (1 - D) * w2, rtol=1e-6, atol=1e-7)
    # The op holds the average; the checkpoint keeps the last iterate.
    for v, a, w2 in zip(op.model.trainable_variables, ema2, p2, strict=True):
        assert np.asarray(v.value).tobytes() == a.tobytes()
        assert not np.allclose(a, w2)
    # Evaluation used the average: val_loss is the op's loss on the validation rows.
    val = digits(128, offset=1500)
    op_loss = _ce(np.asarray(op(val["x"])), val["y"])
    np.testing.assert_allclose(info["final_metrics"]["val_loss"], op_loss, rtol=1e-5)
    for v, w2 in zip(model2.trainable_variables, p2, strict=True):
        v.assign(w2)
    assert abs(_ce(np.asarray(model2(val["x"])), val["y"]) - op_loss) > 1e-4


def test_with_accumulation_the_average_moves_once_per_update(tmp_path: Path) -> None:
    model = mlp(hidden=16)
    p0 = [np.array(v.value) for v in model.trainable_variables]
    _loop(model, tmp_path / "ckpt", 1, accumulate_steps=2).run()
    p1, ema1 = _newest(model, tmp_path / "ckpt")
    for a, w0, w1 in zip(ema1, p0, p1, strict=True):
        np.testing.assert_allclose(a, D * w0 + (1 - D) * w1, rtol=1e-6, atol=1e-7)
