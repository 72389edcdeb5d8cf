"""Two real JAX processes on localhost train one model through ``jax.distributed``.

    python scripts/multihost_sharding_smoke.py [--workdir DIR] [--timeout SECONDS]

What it does (CPU only; no accelerator, no network beyond 127.0.0.1):

1. Starts two worker processes, each with 2 local CPU devices
   (``XLA_FLAGS=--xla_force_host_platform_device_count=2``), joined by
   ``jax.distributed.initialize(coordinator_address="127.0.0.1:PORT",
   num_processes=2, process_id=i)`` into one global mesh of 4 devices
   (``Mesh(jax.devices(), ("data",))``; CPU collectives go through gloo), and a
   reference process: one device, no ``ShardingSpec``, the same global batch
   schedule, 40 steps.
2. In each worker: the bad inputs that only exist with several processes raise
   ``ConfigError`` naming the field (a streaming dataset; ``batch_size`` not
   divisible by the process count; a mesh whose devices give a process a
   non-contiguous block of rows), before anything is compiled. Then leg 1
   trains a 40-step loop with a checkpoint every 10 steps into one shared
   directory and is stopped at step 20 (like a pre-empted job); leg 2, a new
   ``TrainingLoop`` on the same directory, resumes from step 20 and is stopped at
   step 30. Metrics go to a JSON-lines file that only process 0 writes.
3. Leg 3, after both workers exit: ONE process with 2 devices resumes the
   checkpoint the two processes wrote at step 30 and finishes at step 40 (another
   process count and another mesh size).
4. The parent checks: both workers hold identical parameters at steps 20 and 30,
   and every leg equals the reference at its step within ``rtol=1e-5,
   atol=1e-6`` (cross-device reductions sum in another order, so bit equality is
   not expected); legs 2 and 3 report ``resumed_from_step`` 20 and 30; the
   metrics file holds one writer's lines. It prints a short report and exits 1
   on any mismatch.

The data order is the design of ``pipekit_train.engine.BatchSource``: process
``p`` reads the ``p``-th contiguous slice of each global batch, so the global
batches are those of a single-process run, whatever the process count.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RTOL, ATOL = 1e-5, 1e-6
_T0 = time.perf_counter()
LEG1, LEG2, MAX_STEPS, BATCH, ROWS = 20, 30, 40, 16, 96
STEPS = (LEG1, LEG2, MAX_STEPS)


# --------------------------------------------------------------------------- shared by all roles


def log(message: str) -> None:
    print(f"[{time.perf_counter() - _T0:6.1f} s] {message}", flush=True)


def make_data(n: int = ROWS) -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    y = (np.digitize(x[:, 0] + 0.5 * x[:, 1], [-0.5, 0.5]) % 3).astype(np.int32)
    return {"x": x, "y": y}


def make_model() -> Any:
    """A 4-16-3 ``eqx.nn.MLP`` with NumPy-drawn weights (the same on every process)."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    import numpy as np

    abstract = eqx.filter_eval_shape(lambda: eqx.nn.MLP(4, 3, 16, 1, key=jax.random.PRNGKey(0)))
    rng = np.random.default_rng(1)

    def fill(leaf: Any) -> Any:
        if not isinstance(leaf, jax.ShapeDtypeStruct):
            return leaf
        fan_in = leaf.shape[-1] if len(leaf.shape) == 2 else max(1, leaf.shape[0])
        return jnp.asarray(rng.uniform(-1, 1, size=leaf.shape) / np.sqrt(fan_in), leaf.dtype)

    return jax.tree_util.tree_map(fill, abstract)


def make_loop(**overrides: Any) -> Any:
    from pipekit_train import TrainingLoop

    kwargs: dict[str, Any] = {
        "model_op": make_model(),
        "dataset": make_data(),
        "val_dataset": make_data(24),
        "loss": "cross_entropy",
        "batch_size": BATCH,
        "max_steps": MAX_STEPS,
        "log_every_n_steps": 5,
        "optimizer_config": {"name": "adam", "lr": 1e-2},
        "seed": 0,
        "backend": "equinox",
        "backend_options": {"steps_per_call": 5},
    }
    kwargs.update(overrides)
    return TrainingLoop(**kwargs)


def stop_at(step: int) -> Any:
    from pipekit_train import Callback

    class StopAt(Callback):
        def on_step_end(self, loop: Any, state: Any) -> None:
            if state.step >= step:
                state.should_stop = True

    return StopAt()


def leaves(op: Any) -> list[Any]:
    import equinox as eqx
    import jax
    import numpy as np

    return [np.asarray(a) for a in jax.tree_util.tree_leaves(eqx.filter(op.module, eqx.is_array))]


def save_leaves(path: Path, op: Any) -> None:
    import numpy as np

    np.savez(path, **{f"leaf_{i}": a for i, a in enumerate(leaves(op))})


# --------------------------------------------------------------------------- roles


def reference(out: Path) -> None:
    """One process, one device, no ShardingSpec: the same global batch schedule."""
    import equinox as eqx
    import jax
    import numpy as np

    from pipekit_train import Callback

    class SaveAt(Callback):
        """Saves the parameters of the carry (``state.opt_state``) at steps 20 and 30."""

        def on_step_end(self, loop: Any, state: Any) -> None:
            if state.step in (LEG1, LEG2):
                model = eqx.filter(state.opt_state.model, eqx.is_array)
                arrays = [np.asarray(a) for a in jax.tree_util.tree_leaves(model)]
                np.savez(
                    out / f"reference_{state.step}.npz",
                    **{f"leaf_{i}": a for i, a in enumerate(arrays)},
                )

    op, info = make_loop(callbacks=[SaveAt()]).run()
    save_leaves(out / f"reference_{MAX_STEPS}.npz", op)
    log("reference done")


def expect_config_error(fn: Any, field: str, words: tuple[str, ...]) -> str:
    from pipekit_train.errors import ConfigError

    try:
        fn()
    except ConfigError as exc:
        message = str(exc)
        assert exc.field == field, (exc.field, field, message)
        for word in words:
            assert word in message, (word, message)
        return f"ConfigError(field={exc.field!r})"
    raise AssertionError(f"no ConfigError for field {field!r}")


def worker(index: int, port: int, out: Path) -> None:
    import jax

    log(f"process {index}: jax imported")
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
        coordinator_address=f"127.0.0.1:{port}",
        num_processes=2,
        process_id=index,
        initialization_timeout=120,
    )
    import numpy as np
    from jax.sharding import Mesh, PartitionSpec

    from pipekit_train import Checkpoint
    from pipekit_train.adapters.equinox import ShardingSpec
    from pipekit_train.adapters.equinox._sharding import validate_sharding

    log(f"process {index}: jax.distributed initialised")
    assert jax.process_count() == 2 and jax.device_count() == 4 and jax.local_device_count() == 2

    def spec(devices: Any) -> ShardingSpec:
        return ShardingSpec(
            Mesh(np.array(devices), ("data",)), PartitionSpec(), PartitionSpec("data")
        )

    sharding = spec(jax.devices())
    report: dict[str, Any] = {"process_index": jax.process_index()}

    # -- bad inputs that only exist with several processes (raised before compiling)
    def stream() -> Any:
        data = make_data()
        return ({"x": data["x"][i], "y": data["y"][i]} for i in range(ROWS))

    report["bad_stream"] = expect_config_error(
        lambda: make_loop(dataset=stream(), sharding=sharding).run(),
        "dataset",
        ("multi-process", "indexable"),
    )
    report["bad_batch"] = expect_config_error(
        lambda: make_loop(batch_size=15, sharding=sharding).run(),
        "batch_size",
        ("processes (2)",),
    )
    interleaved = [jax.devices()[i] for i in (0, 2, 1, 3)]
    report["bad_mesh"] = expect_config_error(
        lambda: validate_sharding(make_loop(), spec(interleaved)),
        "sharding.mesh",
        ("contiguous",),
    )
    # A mesh listing process 1's devices first: each process reads the other block.
    reversed_block = validate_sharding(make_loop(), spec(jax.devices()[::-1]))
    assert reversed_block == 1 - jax.process_index(), reversed_block
    report["reversed_mesh_block"] = reversed_block

    log("bad inputs checked")
    # -- leg 1: stopped at step 20 (like a pre-empted job), checkpointing into a shared dir
    ckpt = str(out / "ckpt")
    metrics = f"jsonl:{out / 'metrics.jsonl'}"
    op, info = make_loop(
        sharding=sharding,
        checkpoint_dir=ckpt,
        metric_writer=metrics,
        callbacks=[Checkpoint(every_n_steps=10), stop_at(LEG1)],
    ).run()
    report["leg1"] = {
        k: info[k] for k in ("final_step", "resumed_from_step", "process_count", "sharding")
    }
    save_leaves(out / f"p{index}_{LEG1}.npz", op)
    log("leg 1 done")

    # -- leg 2: a new loop on the same directory resumes from step 20, stopped at 30
    op, info = make_loop(
        sharding=sharding,
        checkpoint_dir=ckpt,
        metric_writer=metrics,
        # A time cadence too, whose clocks disagree (process 0: save at every event;
        # process 1: never): process 0's decision is broadcast, so both save step 25
        # together (a save is collective; a split decision would hang).
        callbacks=[
            Checkpoint(every_n_steps=10, every_n_seconds=1e-6 if index == 0 else 1e9),
            stop_at(LEG2),
        ],
    ).run()
    report["leg2"] = {k: info[k] for k in ("final_step", "resumed_from_step")}
    report["leg2_steps"] = sorted(int(p.name) for p in Path(ckpt).iterdir() if p.name.isdigit())
    report["val_loss"] = info["final_metrics"].get("val_loss")
    save_leaves(out / f"p{index}_{LEG2}.npz", op)
    log("leg 2 done")
    # The returned op is process-local: callable on this process alone.
    report["prediction"] = np.asarray(op(make_data(8)["x"])).tolist()
    (out / f"p{index}.json").write_text(json.dumps(report))
    jax.distributed.shutdown()
    log("shut down")


def resume_on_one_process(out: Path) -> None:
    """Leg 3: one process, 2 devices, resumes the two processes' step-30 checkpoint."""
    import jax
    import numpy as np
    from jax.sharding import Mesh, PartitionSpec

    from pipekit_train import Checkpoint
    from pipekit_train.adapters.equinox import ShardingSpec

    assert jax.process_count() == 1 and jax.device_count() == 2
    sharding = ShardingSpec(
        Mesh(np.array(jax.devices()), ("data",)), PartitionSpec(), PartitionSpec("data")
    )
    op, info = make_loop(
        sharding=sharding,
        checkpoint_dir=str(out / "ckpt"),
        callbacks=[Checkpoint(every_n_steps=10)],
    ).run()
    save_leaves(out / f"p0_{MAX_STEPS}.npz", op)
    report = {k: info[k] for k in ("final_step", "resumed_from_step", "sharding")}
    (out / "leg3.json").write_text(json.dumps(report))
    log("leg 3 done")


# --------------------------------------------------------------------------- parent


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def child_env(devices: int) -> dict[str, str]:
    env = dict(os.environ)
    # Keep the caller's other XLA flags (an instruction-set cap, say): every process of the
    # comparison must compile under the same flags.
    kept = [f for f in env.get("XLA_FLAGS", "").split() if "device_count" not in f]
    env["XLA_FLAGS"] = " ".join([*kept, f"--xla_force_host_platform_device_count={devices}"])
    env["JAX_PLATFORMS"] = "cpu"
    env.pop("JAX_COORDINATOR_ADDRESS", None)
    return env


def compare(ours: Path, ref: Path) -> tuple[bool, float, bool]:
    """``(allclose, max abs difference, bit-identical)`` of two saved leaf sets."""
    import numpy as np

    a, b = np.load(ours), np.load(ref)
    if sorted(a.files) != sorted(b.files):
        return False, float("inf"), False
    close = all(np.allclose(a[k], b[k], rtol=RTOL, atol=ATOL) for k in a.files)
    diff = max(float(np.max(np.abs(a[k] - b[k]))) for k in a.files)
    same = all(np.array_equal(a[k], b[k]) for k in a.files)
    return close, diff, same


def _wait(procs: dict[str, subprocess.Popen[bytes]], deadline: float) -> list[str]:
    failures = []
    for name, proc in procs.items():
        try:
            code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for other in procs.values():
                if other.poll() is None:
                    other.kill()
            code = proc.wait()
            failures.append(f"{name}: timed out")
        if code != 0:
            failures.append(f"{name}: exit code {code}")
    return failures


def _start(out: Path, name: str, devices: int, *role: str) -> subprocess.Popen[bytes]:
    me = [sys.executable, str(Path(__file__).resolve()), "--workdir", str(out)]
    log_file = open(out / f"{name}.log", "w")  # noqa: SIM115 - closed when the child exits
    proc = subprocess.Popen(
        [*me, *role], env=child_env(devices), stdout=log_file, stderr=subprocess.STDOUT
    )
    log_file.close()  # the child holds its own descriptor
    return proc


def check(out: Path, lines: list[str]) -> list[str]:
    """Compare what the legs wrote; return the failures."""
    failures: list[str] = []
    reports = [json.loads((out / f"p{i}.json").read_text()) for i in (0, 1)]
    leg3 = json.loads((out / "leg3.json").read_text())
    for i, rep in enumerate(reports):
        lines.append(
            f"  process {i}: bad inputs {rep['bad_stream']}, {rep['bad_batch']}, "
            f"{rep['bad_mesh']}; leg 1 stopped at {rep['leg1']['final_step']}; leg 2 resumed "
            f"from {rep['leg2']['resumed_from_step']} to {rep['leg2']['final_step']}"
        )
        if (rep["leg2"]["resumed_from_step"], rep["leg2"]["final_step"]) != (LEG1, LEG2):
            failures.append(f"process {i}: leg 2 did not resume from {LEG1} to {LEG2}")
        if LEG1 + 5 not in rep["leg2_steps"]:
            failures.append(f"process {i}: no time-based save at {LEG1 + 5}: {rep['leg2_steps']}")
        if rep["leg1"]["process_count"] != 2 or rep["leg1"]["sharding"]["num_devices"] != 4:
            failures.append(f"process {i} backend_info: {rep['leg1']}")
    lines.append(
        f"  leg 3 (1 process, 2 devices): resumed from {leg3['resumed_from_step']} to "
        f"{leg3['final_step']}"
    )
    if (leg3["resumed_from_step"], leg3["final_step"]) != (LEG2, MAX_STEPS):
        failures.append(f"leg 3 did not resume from {LEG2} to {MAX_STEPS}")
    for step in STEPS:
        if step != MAX_STEPS:
            _, diff, same = compare(out / f"p0_{step}.npz", out / f"p1_{step}.npz")
            lines.append(f"  step {step}: process 0 vs 1: max |diff| {diff:.3g}, identical {same}")
            if not same:
                failures.append(f"step {step}: the two processes hold different parameters")
        close, diff, same = compare(out / f"p0_{step}.npz", out / f"reference_{step}.npz")
        lines.append(
            f"  step {step}: vs the single-device reference: max |diff| {diff:.3g} "
            f"(rtol={RTOL}, atol={ATOL}: {'ok' if close else 'MISMATCH'}), bit-identical {same}"
        )
        if not close:
            failures.append(f"step {step}: parameters differ from the reference")
    if reports[0]["prediction"] != reports[1]["prediction"]:
        failures.append("the trained ops predict differently on the two processes")
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines() if x]
    train_steps = [r.get("step") for r in records if "loss" in r]
    lines.append(f"  metrics.jsonl: {len(records)} records, train steps {train_steps}")
    if train_steps != sorted(set(train_steps)):
        failures.append("metrics were written by more than one process")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--workdir", help="keep outputs here (default: a temp dir, removed)")
    parser.add_argument("--timeout", type=float, default=300.0, help="for all legs together")
    roles = ["worker", "reference", "resume"]
    parser.add_argument("--role", choices=roles, help=argparse.SUPPRESS)
    parser.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.role == "reference":
        reference(Path(args.workdir))
        return 0
    if args.role == "worker":
        worker(args.index, args.port, Path(args.workdir))
        return 0
    if args.role == "resume":
        resume_on_one_process(Path(args.workdir))
        return 0

    started = time.perf_counter()
    deadline = time.monotonic() + args.timeout
    out = Path(args.workdir or tempfile.mkdtemp(prefix="pipekit-multihost-"))
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    lines = [f"multihost sharding smoke: 2 processes x 2 CPU devices, port {port}, {out}"]
    names = ["p0", "p1", "reference"]
    procs = {
        "p0": _start(out, "p0", 2, "--role", "worker", "--index", "0", "--port", str(port)),
        "p1": _start(out, "p1", 2, "--role", "worker", "--index", "1", "--port", str(port)),
        "reference": _start(out, "reference", 1, "--role", "reference"),
    }
    failures = _wait(procs, deadline)
    if not failures:
        names.append("leg3")
        failures = _wait({"leg3": _start(out, "leg3", 2, "--role", "resume")}, deadline)
    if not failures:
        failures = check(out, lines)
    else:
        for name in names:
            tail = (out / f"{name}.log").read_text()[-3000:]
            lines.append(f"----- {name}.log (tail) -----\n{tail}")
    outcome = "FAILED: " + "; ".join(failures) if failures else "OK"
    lines.append(f"  {outcome} ({time.perf_counter() - started:.1f} s)")
    print("\n".join(lines))
    if not args.workdir and not failures:
        shutil.rmtree(out, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
