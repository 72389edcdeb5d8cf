"""Evaluation: ``val_dataset`` at every ``eval_every_n_steps`` (and at the end).

The metric writer's JSON lines show ``val_*`` rows exactly at the eval steps. A
custom task's ``eval_fn`` is used when it has one (its ``loss_fn`` otherwise); the
synthesised task reports loss + accuracy for ``cross_entropy`` and only loss for
``mse``.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _eqx_helpers import (
    make_data,
    make_module,
    make_regression,
    read_jsonl,
    run_loop,
    tiny_loop,
    watch_compilation,
)

from pipekit_train import ConfigError

VAL = make_data(20, seed=1)  # 16 + a partial batch of 4: the mean weighs every row once


def _val_rows(path):
    return [row for row in read_jsonl(path) if any(k.startswith("val_") for k in row)]


def test_val_metrics_at_every_eval_step_and_the_last(tmp_path):
    path = tmp_path / "m.jsonl"
    _, info = run_loop(
        tiny_loop(
            val_dataset=VAL,
            max_steps=20,
            eval_every_n_steps=6,
            log_every_n_steps=4,
            metric_writer={"kind": "jsonl", "path": str(path)},
            backend_options={"steps_per_call": 5},
        )
    )
    rows = _val_rows(path)
    assert [r["step"] for r in rows] == [6, 12, 18, 20]
    for row in rows:
        assert set(row) == {"step", "time", "val_loss", "val_accuracy"}
        assert 0.0 <= row["val_accuracy"] <= 1.0 and np.isfinite(row["val_loss"])
    # Training rows at the log steps, with no val_ keys mixed in.
    train_steps = [r["step"] for r in read_jsonl(path) if "loss" in r]
    assert train_steps == [4, 8, 12, 16, 20]
    assert info["final_metrics"]["val_loss"] == pytest.approx(rows[-1]["val_loss"])
    assert info["final_metrics"]["val_accuracy"] == pytest.approx(rows[-1]["val_accuracy"])


def _log_softmax_xent(logits, labels):
    logits = np.asarray(logits, np.float64)
    top = logits.max(-1, keepdims=True)
    lse = top[:, 0] + np.log(np.exp(logits - top).sum(-1))
    return float(np.mean(lse - logits[np.arange(len(labels)), labels]))


def test_val_metrics_match_a_manual_evaluation(tmp_path):
    op, info = run_loop(tiny_loop(val_dataset=VAL, max_steps=10))
    logits = np.asarray(op(VAL["x"]))
    manual_acc = float(np.mean(np.argmax(logits, -1) == VAL["y"]))
    assert info["final_metrics"]["val_accuracy"] == pytest.approx(manual_acc, abs=1e-6)
    assert info["final_metrics"]["val_loss"] == pytest.approx(
        _log_softmax_xent(logits, VAL["y"]), rel=1e-5
    )


def test_without_eval_cadence_val_dataset_is_evaluated_once_at_the_end(tmp_path):
    path = tmp_path / "m.jsonl"
    run_loop(tiny_loop(val_dataset=VAL, max_steps=10, metric_writer=f"jsonl:{path}"))
    assert [r["step"] for r in _val_rows(path)] == [10]


def test_mse_reports_only_val_loss():
    _, info = run_loop(
        tiny_loop(
            model_op=make_module(out_size=1),
            dataset=make_regression(),
            val_dataset=make_regression(16, seed=3),
            loss="mse",
            max_steps=10,
        )
    )
    val = {k for k in info["final_metrics"] if k.startswith("val_")}
    assert val == {"val_loss"}


def test_binary_cross_entropy_reports_accuracy():
    data = make_data(64)
    data["y"] = (data["y"] > 0).astype(np.float32)
    val = make_data(16, seed=2)
    val["y"] = (val["y"] > 0).astype(np.float32)
    _, info = run_loop(
        tiny_loop(
            model_op=make_module(out_size=1),
            dataset=data,
            val_dataset=val,
            loss="binary_cross_entropy",
            max_steps=10,
        )
    )
    assert {k for k in info["final_metrics"] if k.startswith("val_")} == {
        "val_loss",
        "val_accuracy",
    }


class TaskWithEval(eqx.Module):
    """A task whose eval_fn reports metrics its loss_fn does not."""

    def loss_fn(self, model, batch, key):
        logits = jax.vmap(model)(batch["x"])
        loss = jnp.mean(
            jax.nn.logsumexp(logits, -1)
            - jnp.take_along_axis(logits, batch["y"][:, None], -1)[:, 0]
        )
        return loss, {"mean_logit": jnp.mean(logits)}

    def eval_fn(self, model, batch, key):
        logits = jax.vmap(model)(batch["x"])
        return {
            "top1": jnp.mean(jnp.argmax(logits, -1) == batch["y"]),
            "rows_seen": jnp.asarray(batch["x"].shape[0], jnp.float32),
        }


class TaskWithoutEval(eqx.Module):
    def loss_fn(self, model, batch, key):
        return TaskWithEval().loss_fn(model, batch, key)


def test_custom_eval_fn_is_used(tmp_path):
    path = tmp_path / "m.jsonl"
    op, info = run_loop(
        tiny_loop(
            task=TaskWithEval(),
            loss=None,
            val_dataset=VAL,
            max_steps=10,
            eval_every_n_steps=5,
            metric_writer=f"jsonl:{path}",
        )
    )
    rows = _val_rows(path)
    assert [r["step"] for r in rows] == [5, 10]
    for row in rows:
        assert set(row) == {"step", "time", "val_top1", "val_rows_seen"}
    # Metrics are averaged over rows: batch sizes 16 and 4 → (16*16 + 4*4) / 20.
    assert rows[-1]["val_rows_seen"] == pytest.approx((16 * 16 + 4 * 4) / 20)
    logits = np.asarray(op(VAL["x"]))
    assert rows[-1]["val_top1"] == pytest.approx(float(np.mean(np.argmax(logits, -1) == VAL["y"])))
    # The task's training metric is logged too.
    assert "mean_logit" in info["final_metrics"]


def test_task_without_eval_fn_is_evaluated_with_its_loss_fn():
    _, info = run_loop(tiny_loop(task=TaskWithoutEval(), loss=None, val_dataset=VAL, max_steps=10))
    assert {k for k in info["final_metrics"] if k.startswith("val_")} == {
        "val_loss",
        "val_mean_logit",
    }


class EvalReturnsVector(eqx.Module):
    def loss_fn(self, model, batch, key):
        return TaskWithEval().loss_fn(model, batch, key)

    def eval_fn(self, model, batch, key):
        return {"per_row": jnp.argmax(jax.vmap(model)(batch["x"]), -1)}


class EvalFails(eqx.Module):
    def loss_fn(self, model, batch, key):
        return TaskWithEval().loss_fn(model, batch, key)

    def eval_fn(self, model, batch, key):
        return {"bad": batch["missing_key"].mean()}


@pytest.mark.parametrize(
    "task, fragment",
    [(EvalReturnsVector(), "'per_row' of shape"), (EvalFails(), "task.eval_fn failed")],
    ids=["non-scalar-metric", "raises"],
)
def test_broken_eval_fn_is_a_config_error_before_training(monkeypatch, task, fragment):
    with watch_compilation(monkeypatch) as watch:
        with pytest.raises(ConfigError) as info:
            run_loop(tiny_loop(task=task, loss=None, val_dataset=VAL, max_steps=10))
    assert not watch.anything, "the broken eval_fn was only found after training"
    assert info.value.field == "task" and fragment in str(info.value)
