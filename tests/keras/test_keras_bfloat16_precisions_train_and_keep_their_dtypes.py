"""``precision`` on Keras: both bfloat16 modes train on CPU and keep the dtypes they promise.

- ``"mixed-bfloat16"``: the backend gives every layer the ``mixed_bfloat16`` policy for
  the run only. The variables and optimiser moments stay float32, the layers compute
  in bfloat16 during training (a probe layer records the dtype it is called with),
  the loss falls, and afterwards the layers' own policies and the global policy are
  the ones from before, so the trained model runs in float32.
- ``"bfloat16"``: a model built in bfloat16 (with ``sgd``) trains with bfloat16
  variables and moments. A float32 model, or an optimiser Keras cannot run in
  bfloat16 (adam: its ``beta_2`` rounds to 1.0 and it makes no update), is refused by
  name before ``fit``.
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
from _keras_helpers import digits

from pipekit_train import TrainingLoop
from pipekit_train.errors import ConfigError


class Probe(keras.layers.Layer):
    """Identity that records the dtype of what it is called with (at trace time)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.seen: list[str] = []

    def call(self, x):
        self.seen.append(str(x.dtype))
        return x


def _net(dtype: str | None = None):
    keras.utils.set_random_seed(0)
    probe = Probe(dtype=dtype)
    model = keras.Sequential(
        [
            keras.Input((64,)),
            keras.layers.Dense(32, activation="relu", dtype=dtype),
            probe,
            keras.layers.Dense(10, dtype=dtype),
        ]
    )
    return model, probe


def _run(model, precision: str, optimizer=None):
    return TrainingLoop(
        model_op=model, dataset=digits(512), loss="cross_entropy", batch_size=64, max_steps=60,
        log_every_n_steps=10, precision=precision, backend="keras",
        optimizer_config=optimizer or {"name": "adam", "lr": 1e-2},
    ).run()  # fmt: skip


def _first_loss(model) -> float:
    d = digits(512)
    logits = np.asarray(model(d["x"]), dtype=np.float32)
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-logp[np.arange(len(d["y"])), d["y"]].mean())


def test_mixed_bfloat16_computes_in_bfloat16_keeps_float32_and_leaks_nothing() -> None:
    model, probe = _net()
    before = _first_loss(model)
    probe.seen.clear()
    op, info = _run(model, "mixed-bfloat16")
    assert info["final_step"] == 60
    assert "bfloat16" in probe.seen  # the training step ran the layers in bfloat16
    assert {str(v.dtype) for v in model.trainable_variables} == {"float32"}
    moments = [v for v in model.optimizer.variables if "float" in str(v.dtype)]
    assert moments and {str(v.dtype) for v in moments} == {"float32"}
    assert info["final_metrics"]["loss"] < 0.6 * before
    # Nothing leaks: the layers' policies and the global policy are back to float32.
    assert keras.config.dtype_policy().name == "float32"
    assert {layer.dtype_policy.name for layer in model.layers} == {"float32"}
    assert str(op(digits(4)["x"]).dtype) == "float32"


def test_bfloat16_model_trains_with_bfloat16_variables_and_moments() -> None:
    model, probe = _net("bfloat16")
    before = _first_loss(model)
    op, info = _run(model, "bfloat16", {"name": "sgd", "lr": 0.3})
    assert {str(v.dtype) for v in model.trainable_variables} == {"bfloat16"}
    assert "bfloat16" in probe.seen
    assert info["final_metrics"]["loss"] < 0.7 * before
    assert str(op(digits(4)["x"]).dtype) == "bfloat16"


@pytest.mark.parametrize(
    ("dtype", "optimizer", "match"),
    [
        (None, {"name": "sgd", "lr": 0.1}, "needs a model built in bfloat16"),
        ("bfloat16", {"name": "adam", "lr": 1e-3}, "0.999 is 1.0"),
    ],
)
def test_bfloat16_that_keras_cannot_honour_is_refused_before_fit(dtype, optimizer, match) -> None:
    model, _ = _net(dtype)
    with pytest.raises(ConfigError, match=match) as e:
        _run(model, "bfloat16", optimizer)
    assert e.value.field == "precision"
    assert getattr(model, "optimizer", None) is None  # refused before compile


def test_mixed_bfloat16_refuses_a_bfloat16_model() -> None:
    with pytest.raises(ConfigError, match="keeps the parameters in float32") as e:
        _run(_net("bfloat16")[0], "mixed-bfloat16")
    assert e.value.field == "precision"
