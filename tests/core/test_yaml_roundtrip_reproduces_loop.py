"""`TrainingLoop.from_yaml(loop.to_yaml()) == loop` for loops with every field set, from
text and from a file; a loop holding a raw Python object cannot be written and the
ConfigError names the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import _core_factories
import pytest
import yaml

from pipekit_train import (
    Callback,
    Checkpoint,
    ConfigError,
    EarlyStopping,
    JsonlWriter,
    ProgressBar,
    TerminateOnNaN,
    TrainingLoop,
)
from pipekit_train._refs import FactoryRef


def _full_loop(tmp_path: Path, **overrides: Any) -> TrainingLoop:
    kwargs: dict[str, Any] = {
        "model_op": FactoryRef("_core_factories:make_model", {"width": 16}),
        "dataset": FactoryRef("_core_factories:make_dataset", {"n": 32}),
        "val_dataset": "_core_factories:make_val",
        "loss": "cross_entropy",
        "task": "_core_factories:make_task",
        "batch_size": 16,
        "max_steps": 200,
        "optimizer_config": {
            "name": "adamw",
            "lr": {
                "schedule": "warmup_cosine_decay",
                "init_value": 0.0,
                "peak_value": 1e-3,
                "warmup_steps": 10,
                "decay_steps": 200,
                "end_value": 1e-5,
            },
            "clip_norm": 1.0,
            "weight_decay": 0.01,
            "b2": 0.98,
        },
        "callbacks": [
            Checkpoint(every_n_steps=50, keep_last=2),
            EarlyStopping(monitor="val_loss", patience=3, mode="min", min_delta=0.01),
            TerminateOnNaN(monitor="loss"),
            ProgressBar(leave=False),
            "_core_factories:make_callback",
        ],
        "checkpoint_dir": str(tmp_path / "ckpt"),
        "log_every_n_steps": 10,
        "eval_every_n_steps": 20,
        "metric_writer": {"kind": "jsonl", "path": str(tmp_path / "metrics.jsonl")},
        "seed": 7,
        "backend": "keras",
        "sharding": None,
        "backend_options": {
            "steps_per_call": 10,
            "worker_count": 0,
            "resume": "auto",
            "trainer": {"precision": "32-true", "devices": [0, 1]},
        },
        "accumulate_steps": 4,
        "ema_decay": 0.999,
        "precision": "mixed-bfloat16",
    }
    kwargs.update(overrides)
    return TrainingLoop(**kwargs)


LOOP_VARIANTS = {
    "full": {},
    "writer_as_string": {"metric_writer": "csv:/tmp/pipekit/metrics.csv"},
    "mlflow_writer_dict": {
        "metric_writer": {"kind": "mlflow", "tracking_uri": "file:/tmp/mlruns", "experiment": "e"}
    },
    "loss_callable_ref": {"loss": "_core_factories:my_loss", "task": None},
    "piecewise_schedule_int_keys": {
        "optimizer_config": {
            "name": "sgd",
            "lr": {
                "schedule": "piecewise_constant",
                "init_value": 0.1,
                "boundaries_and_scales": {50: 0.5, 150: 0.1},
            },
            "momentum": 0.9,
        }
    },
    "exponential_schedule": {
        "optimizer_config": {
            "name": "adam",
            "lr": {
                "schedule": "exponential_decay",
                "init_value": 1e-3,
                "transition_steps": 100,
                "decay_rate": 0.5,
                "staircase": True,
            },
        }
    },
    "defaults_only": None,
}


def _variant(name: str, tmp_path: Path) -> TrainingLoop:
    if LOOP_VARIANTS[name] is None:
        return TrainingLoop(dataset="_core_factories:make_dataset", loss="mse")
    return _full_loop(tmp_path, **LOOP_VARIANTS[name])


@pytest.mark.parametrize("name", sorted(LOOP_VARIANTS))
def test_from_yaml_of_to_yaml_equals_the_loop(name: str, tmp_path: Path) -> None:
    loop = _variant(name, tmp_path)
    text = loop.to_yaml()
    again = TrainingLoop.from_yaml(text)
    assert again == loop
    # Field by field too, so a weak __eq__ cannot hide a difference.
    assert again.to_dict() == loop.to_dict()
    assert again.to_yaml() == text
    # What is written is plain YAML that safe_load reads back to the same mapping.
    assert yaml.safe_load(text) == loop.to_dict()


@pytest.mark.parametrize("as_path", [True, False], ids=["pathlib.Path", "str"])
def test_from_yaml_reads_a_file_path(tmp_path: Path, as_path: bool) -> None:
    loop = _full_loop(tmp_path)
    path = tmp_path / "loop.yaml"
    path.write_text(loop.to_yaml(), encoding="utf-8")
    again = TrainingLoop.from_yaml(path if as_path else str(path))
    assert again == loop


def test_every_field_appears_in_the_yaml(tmp_path: Path) -> None:
    from dataclasses import fields

    data = yaml.safe_load(_full_loop(tmp_path).to_yaml())
    assert list(data) == [f.name for f in fields(TrainingLoop)]
    assert data["model_op"] == {"factory": "_core_factories:make_model", "kwargs": {"width": 16}}
    assert data["val_dataset"] == "_core_factories:make_val"
    assert data["callbacks"][0] == {"Checkpoint": {"every_n_steps": 50, "keep_last": 2}}
    assert data["callbacks"][-1] == "_core_factories:make_callback"


def test_a_loop_read_from_yaml_resolves_its_factories(tmp_path: Path) -> None:
    loop = TrainingLoop.from_yaml(_full_loop(tmp_path).to_yaml())
    _core_factories.CALLS.clear()
    built = loop.resolved()
    assert built.model_op == {"kind": "toy-model", "width": 16}
    assert built.dataset["x"] == [float(i) for i in range(32)]
    assert built.val_dataset == {"x": [0.5, 1.5], "y": [1.0, 3.0]}
    assert isinstance(built.task, _core_factories.ToyTask)
    assert isinstance(built.callbacks[-1], _core_factories.CountingCallback)
    assert _core_factories.CALLS == ["make_model(width=16)", "make_dataset(n=32)", "make_val"]
    # A loss reference is the function itself, not a call of it.
    loss_loop = TrainingLoop.from_yaml(
        _full_loop(tmp_path, loss="_core_factories:my_loss", task=None).to_yaml()
    )
    assert loss_loop.resolved().loss is _core_factories.my_loss


def test_factory_next_to_the_yaml_file_is_importable(tmp_path: Path) -> None:
    """Relative import strings resolve against the YAML file's folder."""
    (tmp_path / "sibling_factories_for_yaml.py").write_text(
        "def data():\n    return {'x': [1.0], 'y': [2.0]}\n", encoding="utf-8"
    )
    path = tmp_path / "loop.yaml"
    path.write_text(
        "dataset: 'sibling_factories_for_yaml:data'\nloss: mse\nbackend: keras\n", encoding="utf-8"
    )
    loop = TrainingLoop.from_yaml(path)
    assert loop.resolved().dataset == {"x": [1.0], "y": [2.0]}


def test_writer_object_is_written_as_its_dict_form(tmp_path: Path) -> None:
    loop = _full_loop(tmp_path, metric_writer=JsonlWriter(tmp_path / "m.jsonl"))
    again = TrainingLoop.from_yaml(loop.to_yaml())
    assert again.metric_writer == {"kind": "jsonl", "path": str(tmp_path / "m.jsonl")}
    from pipekit_train.writers import resolve_writer

    assert resolve_writer(again.metric_writer) == loop.metric_writer


class _NotYamlCallback(Callback):
    """A user callback given as an object: it has no YAML form."""


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"model_op": object()}, "model_op"),
        ({"dataset": {"x": [1.0, 2.0], "y": [1.0, 2.0]}}, "dataset"),
        ({"val_dataset": ([1.0], [2.0])}, "val_dataset"),
        ({"task": _core_factories.ToyTask()}, "task"),
        ({"loss": _core_factories.my_loss, "task": None}, "loss"),
        ({"backend_options": {"hook": object()}}, "backend_options"),
        ({"callbacks": [_NotYamlCallback()]}, "callbacks"),
    ],
    ids=["model_op", "dataset", "val_dataset", "task", "loss", "backend_options", "callbacks"],
)
def test_to_yaml_of_a_raw_python_object_names_the_field(
    tmp_path: Path, overrides: dict[str, Any], field: str
) -> None:
    loop = _full_loop(tmp_path, **overrides)
    with pytest.raises(ConfigError) as info:
        loop.to_yaml()
    assert info.value.field == field
    assert field in str(info.value)


def test_to_yaml_of_a_writer_without_yaml_form_names_metric_writer(tmp_path: Path) -> None:
    class Writer:
        def write(self, step: int, metrics: dict[str, float]) -> None: ...

        def flush(self) -> None: ...

        def close(self) -> None: ...

    loop = _full_loop(tmp_path, metric_writer=Writer())
    with pytest.raises(ConfigError) as info:
        loop.to_yaml()
    assert info.value.field == "metric_writer"
    assert "metric_writer" in str(info.value)
