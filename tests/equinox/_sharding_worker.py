"""Training scenarios run in a fresh interpreter with a fixed number of CPU devices.

Usage: python _sharding_worker.py SCENARIOS_JSON OUT_DIR

The parent sets ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` (the CPU
device count is fixed when JAX starts, so it cannot be changed inside one pytest
process). Each scenario is a dict:

- ``name``: key of its results;
- ``kind``: ``"train"`` (default) or ``"bad"`` (expects a ``PipekitError``);
- ``mesh``: ``None`` (no ``ShardingSpec``: the single-device path) or a list of
  ``[axis_name, size]`` pairs (a mesh over the first devices, row-major);
- ``model_pspec`` / ``data_pspec``: lists of axis names (or ``None``) for ``PartitionSpec``;
- ``steps_per_call``, ``max_steps``, ``batch_size``, ``n`` (dataset rows),
  ``checkpoint_dir`` (with a ``Checkpoint`` every ``checkpoint_every`` steps),
  ``stop_at`` (a callback stops the run there: a checkpoint is written and the
  run ends early, like a pre-empted job), ``dataset`` (``"stream"`` for a
  generator).

Training results go to ``OUT_DIR/<name>.npz`` (the trained leaves, ``leaf_0`` …)
and ``OUT_DIR/results.json`` (``backend_info["sharding"]``, ``resumed_from_step``,
``final_step``, the sharding of every trained leaf, and what ``Placement`` made of
the first training batch / chunk it placed). A bad scenario records the error's
class, ``field`` and message, and whether any training computation was traced.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import jax
import numpy as np
from _eqx_helpers import leaves, make_data, make_model, run_loop, tiny_loop  # noqa: E402
from jax.sharding import Mesh, PartitionSpec

from pipekit_train import Callback, Checkpoint
from pipekit_train.adapters.equinox import ShardingSpec, _placement, _program
from pipekit_train.errors import PipekitError


class StopAt(Callback):
    """Ask the driver to stop after step ``step`` (it checkpoints, then returns)."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, loop: Any, state: Any) -> None:
        if state.step >= self.step:
            state.should_stop = True


def _pspec(entries: list[Any] | None) -> PartitionSpec:
    return PartitionSpec(*[tuple(e) if isinstance(e, list) else e for e in (entries or [])])


def make_spec(sc: dict[str, Any]) -> ShardingSpec | None:
    if sc.get("mesh") is None:
        return None
    names = tuple(name for name, _ in sc["mesh"])
    sizes = tuple(int(size) for _, size in sc["mesh"])
    devices = np.array(jax.devices()[: int(np.prod(sizes))]).reshape(sizes)
    return ShardingSpec(
        mesh=Mesh(devices, names),
        model_pspec=_pspec(sc.get("model_pspec")),
        data_pspec=_pspec(sc.get("data_pspec", ["data"])),
    )


def describe_array(a: Any) -> dict[str, Any]:
    if not isinstance(a, jax.Array):  # the single-device path hands NumPy batches to jit
        return {"shape": list(np.shape(a)), "sharding": type(a).__name__}
    sharding = a.sharding
    return {
        "shape": list(a.shape),
        "sharding": type(sharding).__name__,
        "spec": repr(getattr(sharding, "spec", None)),
        "num_devices": len(sharding.device_set),
        "replicated": bool(sharding.is_fully_replicated),
        "shard_shapes": [list(s.data.shape) for s in a.addressable_shards],
    }


class PlacementProbe:
    """Records what ``Placement.batch`` / ``Placement.chunk`` hand to the compiled step."""

    def __init__(self) -> None:
        self.seen: dict[str, Any] = {}
        self._batch = _placement.Placement.batch
        self._chunk = _placement.Placement.chunk
        probe = self

        def batch(self: Any, b: Any) -> Any:
            out = probe._batch(self, b)
            probe.seen.setdefault("batch", {k: describe_array(v) for k, v in out.items()})
            return out

        def chunk(self: Any, b: Any) -> Any:
            out = probe._chunk(self, b)
            probe.seen.setdefault("chunk", {k: describe_array(v) for k, v in out.items()})
            return out

        _placement.Placement.batch = batch  # type: ignore[method-assign]
        _placement.Placement.chunk = chunk  # type: ignore[method-assign]

    def reset(self) -> None:
        self.seen = {}


def make_loop(sc: dict[str, Any]) -> Any:
    data: Any = make_data(int(sc.get("n", 128)))
    if sc.get("dataset") == "stream":
        rows = data
        data = ({"x": rows["x"][i], "y": rows["y"][i]} for i in range(len(rows["x"])))
    options: dict[str, Any] = {"steps_per_call": int(sc.get("steps_per_call", 1))}
    kwargs: dict[str, Any] = {
        "model_op": make_model(width=int(sc.get("width", 8))),
        "dataset": data,
        "batch_size": int(sc.get("batch_size", 32)),
        "max_steps": int(sc.get("max_steps", 30)),
        "log_every_n_steps": int(sc.get("log_every", 10)),
        "sharding": make_spec(sc),
        "backend_options": options,
    }
    callbacks: list[Any] = []
    if sc.get("checkpoint_dir"):
        kwargs["checkpoint_dir"] = sc["checkpoint_dir"]
        callbacks.append(Checkpoint(every_n_steps=int(sc.get("checkpoint_every", 10))))
    if sc.get("stop_at"):
        callbacks.append(StopAt(int(sc["stop_at"])))
    kwargs["callbacks"] = callbacks
    return tiny_loop(**kwargs)


def train(sc: dict[str, Any], out_dir: Path, probe: PlacementProbe) -> dict[str, Any]:
    probe.reset()
    op, info = run_loop(make_loop(sc))
    module = op.module
    arrays = [leaf for leaf in jax.tree_util.tree_leaves(module) if isinstance(leaf, jax.Array)]
    np.savez(out_dir / f"{sc['name']}.npz", **{f"leaf_{i}": a for i, a in enumerate(leaves(op))})
    return {
        "sharding": info["sharding"],
        "resumed_from_step": info["resumed_from_step"],
        "final_step": info["final_step"],
        "final_loss": info["final_metrics"].get("loss"),
        "leaves": [describe_array(a) for a in arrays],
        "placed": probe.seen,
        # the trained op is usable as is (its leaves live on the mesh)
        "prediction": np.asarray(op(make_data(8, seed=1)["x"])).tolist(),
    }


class CompileProbe:
    """Counts traces of the step and calls of the compiled training program."""

    def __init__(self) -> None:
        self.count = 0
        original_step = _program.step_impl
        original_chunk = _program.EquinoxProgram.train_chunk
        probe = self

        def step_impl(*args: Any, **kwargs: Any) -> Any:
            probe.count += 1
            return original_step(*args, **kwargs)

        def train_chunk(self: Any, *args: Any, **kwargs: Any) -> Any:
            probe.count += 1
            return original_chunk(self, *args, **kwargs)

        _program.step_impl = step_impl
        _program.EquinoxProgram.train_chunk = train_chunk  # type: ignore[method-assign]


def bad(sc: dict[str, Any], compiles: CompileProbe) -> dict[str, Any]:
    before = compiles.count
    try:
        loop = make_loop(sc)  # ShardingSpec / TrainingLoop construction may already raise
        run_loop(loop)
    except PipekitError as exc:
        return {
            "error": type(exc).__name__,
            "field": getattr(exc, "field", None),
            "message": str(exc),
            "trained": compiles.count != before,
        }
    return {"error": None, "trained": compiles.count != before}


def main() -> None:
    scenarios = json.loads(sys.argv[1])
    out_dir = Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    probe = PlacementProbe()
    compiles = CompileProbe()
    results: dict[str, Any] = {"device_count": jax.device_count()}
    for sc in scenarios:
        if sc.get("kind") == "bad":
            results[sc["name"]] = bad(sc, compiles)
        else:
            results[sc["name"]] = train(sc, out_dir, probe)
    (out_dir / "results.json").write_text(json.dumps(results, indent=1))
    print("WORKER OK", os.getpid())


if __name__ == "__main__":
    main()
