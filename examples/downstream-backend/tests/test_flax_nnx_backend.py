"""The flax-nnx backend, tested directly against the installed wheels.

Trains the contract's tiny MLP (``pipekit_train_flax.contract``) for a few steps: the loss
falls, a resumed run equals an uninterrupted one bit for bit, fused and single steps agree,
the trained op saves and loads as data, and every refusal is a ``PipekitError`` naming the
field before anything compiles.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jax
import numpy as np
import optax
import pytest
from flax import nnx
from pipekit_train_flax import NnxModelOp
from pipekit_train_flax.contract import make_data, make_loop, make_model, op_inputs

from pipekit_train import TrainingLoop
from pipekit_train.callbacks import Checkpoint
from pipekit_train.engine import REQUIRED_KEYS
from pipekit_train.errors import CheckpointError, ConfigError, DataError, UntrustedCodeError
from pipekit_train.registry import installed_backends


class Recorder:
    """A ``MetricWriter`` keeping every write in memory."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, dict[str, float]]] = []

    def write(self, step: int, metrics: dict[str, float]) -> None:
        self.rows.append((step, dict(metrics)))

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def losses(self) -> list[float]:
        return [m["loss"] for _, m in self.rows if "loss" in m]


def loop_with(**changes: Any) -> TrainingLoop:
    return dataclasses.replace(make_loop(), **changes)


def leaves(op: NnxModelOp) -> list[np.ndarray]:
    """The op's trained values (parameters and any other state), as host arrays."""
    state = nnx.state(op.module, nnx.Not(nnx.RngState))
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(state)]


def assert_same_bits(a: NnxModelOp, b: NnxModelOp) -> None:
    for x, y in zip(leaves(a), leaves(b), strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the runs/ folder each run writes lands here


def test_the_entry_point_registers_flax_nnx_from_this_distribution() -> None:
    (found,) = [b for b in installed_backends() if b.name == "flax-nnx"]
    assert found.distribution == "pipekit-train-flax"
    assert found.module == "pipekit_train_flax.backend"


def test_trains_the_mlp_and_the_loss_goes_down() -> None:
    writer = Recorder()
    op, info = loop_with(metric_writer=writer, max_steps=48).run()
    losses = writer.losses()
    assert [step for step, _ in writer.rows] == list(range(2, 49, 2))  # log_every_n_steps=2
    assert np.mean(losses[-4:]) < 0.7 * np.mean(losses[:4])
    assert isinstance(op, NnxModelOp)
    out = np.asarray(op(op_inputs()))
    assert out.shape == (5, 3) and out.dtype == np.float32
    for key, types in REQUIRED_KEYS.items():
        assert isinstance(info[key], types), key
    assert info["backend"] == "flax-nnx" and info["final_step"] == 48
    assert {"pipekit-train-core", "pipekit-train-flax", "flax", "jax"} <= set(info["versions"])


def test_the_loop_is_yaml_expressible() -> None:
    loop = make_loop()
    again = TrainingLoop.from_yaml(loop.to_yaml())
    assert again == loop and again.backend == "flax-nnx"


def test_the_seed_reaches_dropout_and_a_rerun_is_identical() -> None:
    first, _ = make_loop().run()
    again, _ = make_loop().run()
    other, _ = loop_with(seed=1).run()
    assert_same_bits(first, again)
    assert not np.array_equal(np.asarray(first(op_inputs())), np.asarray(other(op_inputs())))


def test_fused_steps_equal_single_steps_bit_for_bit() -> None:
    fused, _ = loop_with(backend_options={"steps_per_call": 8}).run()
    single, _ = loop_with(backend_options={"steps_per_call": 1}).run()
    assert_same_bits(fused, single)


def test_resume_from_a_checkpoint_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    whole_writer = Recorder()
    whole, _ = loop_with(metric_writer=whole_writer).run()

    ckpt = str(tmp_path / "ckpt")
    every4 = [Checkpoint(every_n_steps=4)]
    _, first = loop_with(max_steps=8, checkpoint_dir=ckpt, callbacks=every4).run()
    assert first["last_checkpoint_step"] == 8
    resumed_writer = Recorder()
    resumed, info = loop_with(
        checkpoint_dir=ckpt, callbacks=every4, metric_writer=resumed_writer
    ).run()
    assert info["resumed_from_step"] == 8 and info["final_step"] == 16
    assert_same_bits(resumed, whole)
    assert resumed_writer.rows == [row for row in whole_writer.rows if row[0] > 8]
    assert np.array_equal(np.asarray(resumed(op_inputs())), np.asarray(whole(op_inputs())))


class BatchNormMLP(nnx.Module):
    """A model whose forward pass updates state (``nnx.BatchStat``): the carried ``rest``."""

    def __init__(self, rngs: nnx.Rngs) -> None:
        self.hidden = nnx.Linear(4, 8, rngs=rngs)
        self.norm = nnx.BatchNorm(8, rngs=rngs)
        self.out = nnx.Linear(8, 3, rngs=rngs)

    def __call__(self, x: Any) -> Any:
        return self.out(nnx.relu(self.norm(self.hidden(x))))


def test_state_updated_in_the_forward_pass_is_carried_and_resumed(tmp_path: Path) -> None:
    whole, _ = loop_with(model_op=BatchNormMLP(nnx.Rngs(0))).run()
    stats = nnx.state(whole.module, nnx.BatchStat)
    assert any(np.any(np.asarray(x) != 0) for x in jax.tree_util.tree_leaves(stats))
    ckpt = str(tmp_path / "ckpt")
    every4 = [Checkpoint(every_n_steps=4)]
    loop_with(model_op=BatchNormMLP(nnx.Rngs(0)), max_steps=8, checkpoint_dir=ckpt,
              callbacks=every4).run()  # fmt: skip
    resumed, info = loop_with(
        model_op=BatchNormMLP(nnx.Rngs(0)), checkpoint_dir=ckpt, callbacks=every4
    ).run()
    assert info["resumed_from_step"] == 8
    assert_same_bits(resumed, whole)


def test_the_options_module_core_preflight_reads_imports_no_framework() -> None:
    script = (
        "import sys\n"
        "from pipekit_train_flax._backend_options import OPTION_SPECS\n"
        "assert {'steps_per_call', 'compilation_cache'} <= {s.name for s in OPTION_SPECS}\n"
        "heavy = sorted({'jax', 'flax', 'optax', 'numpy'} & set(sys.modules))\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_validation_runs_at_the_eval_cadence() -> None:
    writer = Recorder()
    _, info = loop_with(
        metric_writer=writer, val_dataset=make_data(32, seed=5), eval_every_n_steps=4
    ).run()
    evals = [step for step, m in writer.rows if "val_loss" in m]
    assert evals == [4, 8, 12, 16]
    assert 0.0 <= info["final_metrics"]["val_accuracy"] <= 1.0


def test_a_users_own_optax_object_trains() -> None:
    own = optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(0.05, momentum=0.9))
    op, info = loop_with(optimizer_config=own).run()
    assert info["optimizer"] and np.all(np.isfinite(np.asarray(op(op_inputs()))))


# -- the trained op as files --------------------------------------------------------------


def test_op_save_and_load_give_identical_outputs(tmp_path: Path) -> None:
    op, _ = make_loop().run()
    op.save(tmp_path / "op")
    meta = json.loads((tmp_path / "op" / "op.json").read_text())
    assert meta["module_class"] == "pipekit_train_flax.contract.MLP"  # a description
    assert {e["type"] for e in meta["leaves"]} == {"Param"}
    assert {e["type"] for e in meta["rng_leaves"]} == {"RngKey", "RngCount"}
    assert meta["inputs"] == [[4], "float32"]
    want = np.asarray(op(op_inputs()))
    from_data = NnxModelOp.load(tmp_path / "op")  # the saved forward pass: no user code
    assert np.asarray(from_data(op_inputs())).tobytes() == want.tobytes()
    with pytest.raises(ConfigError) as no_module:
        from_data.module  # noqa: B018 - the property raises
    assert no_module.value.field == "like"
    from_data.save(tmp_path / "again")  # a data-only op saves the same files
    assert NnxModelOp.load(tmp_path / "again", like=make_model).module is not None
    for loaded in (
        NnxModelOp.load(tmp_path / "op", like=make_model),
        NnxModelOp.load(tmp_path / "op", like=make_model(seed=3)),  # only its structure counts
    ):
        assert_same_bits(loaded, op)
        assert np.asarray(loaded(op_inputs())).tobytes() == want.tobytes()
    bigger = np.concatenate([op_inputs()] * 3)  # the exported batch size is symbolic
    assert np.asarray(from_data(bigger)).shape == (15, 3)


def test_loading_from_data_imports_no_code_of_the_users(tmp_path: Path) -> None:
    op, _ = make_loop().run()
    op.save(tmp_path / "op")
    script = (
        "import sys, numpy as np\n"
        "from pipekit_train_flax import NnxModelOp\n"
        f"op = NnxModelOp.load({str(tmp_path / 'op')!r})\n"
        "print(op(np.ones((2, 4), np.float32)).shape)\n"
        "assert 'pipekit_train_flax.contract' not in sys.modules, 'contract imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "(2, 3)" in done.stdout


def test_a_recorded_factory_is_imported_only_when_trusted(tmp_path: Path) -> None:
    recorded = NnxModelOp(
        make_model(seed=4),
        example_inputs=op_inputs(),
        factory="pipekit_train_flax.contract:make_model",
        factory_kwargs={"hidden": 16},
    )
    recorded.save(tmp_path / "op")
    meta_path = tmp_path / "op" / "op.json"
    meta = json.loads(meta_path.read_text())
    meta["factory"] = "os:system"  # an edited folder: the string is never imported untrusted
    meta_path.write_text(json.dumps(meta))
    assert NnxModelOp.load(tmp_path / "op").factory == "os:system"  # loads, runs nothing
    with pytest.raises(UntrustedCodeError) as refused:
        NnxModelOp.load(tmp_path / "op", trusted=["pipekit_train_flax"])
    assert "os:system" in str(refused.value)
    meta["factory"] = "pipekit_train_flax.contract:make_model"
    meta_path.write_text(json.dumps(meta))
    for loaded in (
        NnxModelOp.load(tmp_path / "op", trusted=True),
        NnxModelOp.load(tmp_path / "op", trusted=["pipekit_train_flax"]),
        NnxModelOp.load(tmp_path / "op", factory=make_model),
    ):
        assert_same_bits(loaded, recorded)
        assert loaded.factory == recorded.factory


def test_loading_into_another_structure_names_the_first_differing_leaf(tmp_path: Path) -> None:
    NnxModelOp(make_model(), example_inputs=op_inputs()).save(tmp_path / "op")
    with pytest.raises(CheckpointError) as info:
        NnxModelOp.load(tmp_path / "op", like=lambda: make_model(hidden=8))
    assert "first differing leaf" in str(info.value) and "hidden" in str(info.value)
    with pytest.raises(CheckpointError) as unsaved:
        NnxModelOp(make_model()).save(tmp_path / "never-called")
    assert "example_inputs" in str(unsaved.value)


def test_inputs_that_do_not_fit_the_op_are_a_data_error() -> None:
    op = NnxModelOp(make_model(), example_inputs=op_inputs())
    with pytest.raises(DataError) as info:
        op(np.ones((2, 7), np.float32))
    assert "float32[batch,4]" in str(info.value)


# -- refusals before anything compiles ----------------------------------------------------


@pytest.fixture
def no_compilation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the backend reaches its program builder."""
    import pipekit_train_flax._run as run_module

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the program was built: a refusal came too late")

    monkeypatch.setattr(run_module, "nnx_program", refuse)


@pytest.mark.parametrize(
    ("options", "key"),
    [
        ({"step_per_call": 4}, "step_per_call"),
        ({"steps_per_call": 0}, "steps_per_call"),
        ({"steps_per_call": "4"}, "steps_per_call"),
        ({"compilation_cache": 5}, "compilation_cache"),
        ({"shuffle": "yes"}, "shuffle"),
    ],
)
@pytest.mark.parametrize("entry", ["TrainingLoop.run", "backend.run"])
def test_a_bad_option_is_refused_naming_its_key(
    options: dict[str, Any], key: str, entry: str, tmp_path: Path, no_compilation: None
) -> None:
    """Through core's preflight (``loop.run()``) and the backend's own check alike."""
    from pipekit_train_flax.backend import run

    ckpt = tmp_path / "ckpt"
    loop = loop_with(backend_options=options, checkpoint_dir=str(ckpt))
    with pytest.raises(ConfigError) as info:
        loop.run() if entry == "TrainingLoop.run" else run(loop.resolved())
    assert info.value.field == f"backend_options.{key}"
    assert key in str(info.value)
    assert not ckpt.exists()


@pytest.mark.parametrize(
    ("changes", "error", "field"),
    [
        ({"model_op": "pipekit_train_flax.contract:make_data"}, ConfigError, "model_op"),
        ({"task": "pipekit_train_flax.contract:op_inputs"}, ConfigError, "task"),
        ({"ema_decay": 0.99}, ConfigError, "ema_decay"),
        ({"loss": "no_such_loss"}, ConfigError, "loss"),
    ],
)
def test_a_wrong_field_is_refused_naming_it(
    changes: dict[str, Any], error: type, field: str, tmp_path: Path, no_compilation: None
) -> None:
    ckpt = tmp_path / "ckpt"
    with pytest.raises(error) as info:
        loop_with(checkpoint_dir=str(ckpt), **changes).run()
    assert field in (getattr(info.value, "field", "") or "") or field in str(info.value)
    assert not ckpt.exists()


def test_labels_outside_the_head_are_a_data_error(no_compilation: None) -> None:
    data = make_data()
    with pytest.raises(DataError) as info:
        loop_with(dataset={"x": data["x"], "y": data["y"] + 3}).run()
    assert "3 wide" in str(info.value)


def test_a_module_that_does_not_fit_the_data_is_refused(no_compilation: None) -> None:
    data = make_data()
    with pytest.raises(ConfigError) as info:
        loop_with(dataset={"x": np.ones((96, 7), np.float32), "y": data["y"]}).run()
    assert info.value.field == "model_op"
