"""The BlackJAX benchmark cases 14-14c (see benchmarks/README.md). Each returns ``Row``s.

Eight schools noncentered (the NumPyro model through the bayes bridge), NUTS, 1 chain.

- 14: steady-state draws/s of ``backend="blackjax"`` (per-draw metrics on, a checkpoint
  every 500 draws, ``steps_per_call`` 500, log every 500) ÷ a raw BlackJAX NUTS loop in
  ``jax.lax.scan`` (``jax.jit`` of a scan over ``nuts.step``, the draws and info returned),
  same model, start, seed, precision and adapted step size / mass matrix (read from the
  backend's ``backend_info["adapted"]`` and ``["x64"]``, so both build the same
  trajectories' lengths in the same float width: the backend samples in float64 by default,
  decision 0124, where a raw script runs JAX's float32); interleaved rounds in this
  process, compilation outside the windows.
- 14i: the loop's cost at float32: the backend with ``x64: False`` ÷ the raw loop in float32.
- 14f: as 14 with ``Checkpoint()``'s default cadence (every 500 draws, no more often than
  25× a save's whole cost) over a window of 40,000 draws (long enough to hold several saves).
- 14b: the same backend rate ÷ the one-draw Python loop most users write
  (``step = jax.jit(nuts.step)``, one call per draw, positions kept in a list).
- 14c: a whole short run (500 warmup + 1,000 draws, compilation included, no checkpoint)
  in a fresh process ÷ a raw run in a fresh process (``window_adaptation(...).run`` then the
  scan loop); no persistent cache on either side.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from _bayes_common import Stamps, schools
from _cases import Row, Settings, _rotate, _say
from _common import median, paired_ratio
from _spawn import Proc, spawn

WORKER = Path(__file__).resolve().parent / "_blackjax_worker.py"
WARMUP, SEED, K = 500, 0, 500


def backend_loop(
    num_samples: int,
    *,
    checkpoint_dir: str | None,
    callbacks: list[Any],
    cache_dir: str | None = None,
    every: int | None = 500,
    x64: bool | None = None,
) -> Any:
    """The blackjax run of these cases (``cache_dir``: its persistent compilation cache;
    ``every=None``: the default checkpoint cadence; ``x64``: the option, None its default)."""
    import posteriordb_models as pdb

    from pipekit_train import Checkpoint, TrainingLoop
    from pipekit_train.adapters.bayes import NumpyroTask

    x, y = schools()
    task = NumpyroTask(model=pdb.eight_schools, num_warmup=WARMUP, num_samples=num_samples)
    cbs = list(callbacks) + ([Checkpoint(every_n_steps=every)] if checkpoint_dir else [])
    return TrainingLoop(
        task=task,
        dataset=(x, y),
        backend="blackjax",
        seed=SEED,
        backend_options={
            "sampler": "nuts",
            "target_accept": 0.9,
            "steps_per_call": K,
            **({"compilation_cache": cache_dir} if cache_dir else {}),
            **({"x64": x64} if x64 is not None else {}),
        },
        log_every_n_steps=K,
        checkpoint_dir=checkpoint_dir,
        callbacks=cbs,
    )


class RawNuts:
    """The raw BlackJAX loops on the same log density and start as the backend's.

    ``x64``: run in float64 (every array made and every program traced under
    ``jax.enable_x64``), as the backend does by default; False is a raw script's float32.
    """

    def __init__(self, step_size: Any = None, imm: Any = None, *, x64: bool = False) -> None:
        import blackjax
        import jax

        self.blackjax, self.jax, self.x64 = blackjax, jax, bool(x64)
        with self.precision():
            import jax.numpy as jnp
            import posteriordb_models as pdb

            from pipekit_train.adapters.bayes import log_density_from_model

            x, y = schools()
            init_key, self.key = jax.random.split(jax.random.PRNGKey(SEED))
            bridge = log_density_from_model(
                pdb.eight_schools, jnp.asarray(x), jnp.asarray(y), rng_key=init_key, num_chains=1
            )
            self.logdensity = bridge.logdensity_fn
            self.position = jax.tree_util.tree_map(lambda a: a[0], bridge.init_position)
            if step_size is not None:
                self.set_params(step_size, imm)

    def precision(self) -> Any:
        """The float width of this loop, as a context (``jax.enable_x64``)."""
        return self.jax.enable_x64(self.x64)

    def set_params(self, step_size: Any, imm: Any) -> None:
        with self.precision():  # nested in __init__ / whole_run: the same width, harmless
            jnp = self.jax.numpy
            nuts = self.blackjax.nuts(self.logdensity, jnp.asarray(step_size), jnp.asarray(imm))
            self.nuts = nuts
            self.state = nuts.init(self.position)

            def one(state: Any, key: Any) -> tuple[Any, Any]:
                state, info = nuts.step(key, state)
                return state, (state.position, info)

            self.scan = self.jax.jit(lambda s, keys: self.jax.lax.scan(one, s, keys))
            self.step = self.jax.jit(nuts.step)

    def scan_seconds(self, n: int) -> float:
        with self.precision():
            keys = self.jax.random.split(self.key, n)
            self.jax.block_until_ready(self.scan(self.state, keys))  # compile, untimed
            start = time.perf_counter()
            self.jax.block_until_ready(self.scan(self.state, keys))
            return time.perf_counter() - start

    def python_seconds(self, n: int) -> float:
        with self.precision():
            keys = self.jax.random.split(self.key, n)
            state, _ = self.step(keys[0], self.state)  # compile, untimed
            draws = []
            start = time.perf_counter()
            for i in range(n):
                state, info = self.step(keys[i], state)
                draws.append(state.position)
            self.jax.block_until_ready(draws)
            return time.perf_counter() - start

    def whole_run(self, num_samples: int) -> Any:
        """``window_adaptation(...).run`` then the scan loop: a raw user's whole run."""
        wa = self.blackjax.window_adaptation(
            self.blackjax.nuts, self.logdensity, target_acceptance_rate=0.9
        )
        with self.precision():
            warm_key, key = self.jax.random.split(self.key)
            (state, params), _ = wa.run(warm_key, self.position, num_steps=WARMUP)
            self.set_params(params["step_size"], params["inverse_mass_matrix"])
            self.state, self.key = state, key
            keys = self.jax.random.split(key, num_samples)
            return self.jax.device_get(self.scan(self.state, keys)[1][0])


def _raw_like(info: dict[str, Any]) -> RawNuts:
    """The raw loops with a backend run's adapted parameters, in its float width."""
    adapted = info["adapted"]  # per chain: one chain here
    return RawNuts(
        adapted["step_size"][0], adapted["inverse_mass_matrix"][0], x64=bool(info["x64"])
    )


def case_backend_vs_raw_nuts(s: Settings) -> list[Row]:
    """14, 14a, 14b, 14i: steady-state draws/s, interleaved rounds in this process."""
    window = 2500  # draws 1000..3500 of the sampling phase, between two host events
    first, last = WARMUP + 500, WARMUP + 500 + window
    ours: list[float] = []
    no_ckpt: list[float] = []
    scan: list[float] = []
    python: list[float] = []
    f32: list[float] = []
    scan32: list[float] = []
    raw: RawNuts | None = None
    raw32: RawNuts | None = None

    def backend(checkpoint: bool = True) -> None:
        nonlocal raw
        stamps = Stamps()
        with tempfile.TemporaryDirectory(prefix="pipekit-bench-bjx-") as tmp:
            ckpt = tmp if checkpoint else None
            _, info = backend_loop(last - WARMUP, checkpoint_dir=ckpt, callbacks=[stamps]).run()
        (ours if checkpoint else no_ckpt).append((stamps.at[last] - stamps.at[first]) / window)
        if raw is None:
            raw = _raw_like(info)

    def backend_f32() -> None:
        nonlocal raw32
        stamps = Stamps()
        _, info = backend_loop(
            last - WARMUP, checkpoint_dir=None, callbacks=[stamps], x64=False
        ).run()
        f32.append((stamps.at[last] - stamps.at[first]) / window)
        if raw32 is None:
            raw32 = _raw_like(info)

    def scan_loop() -> None:
        assert raw is not None
        scan.append(raw.scan_seconds(window) / window)

    def scan32_loop() -> None:
        assert raw32 is not None
        scan32.append(raw32.scan_seconds(window) / window)

    def python_loop() -> None:
        assert raw is not None
        python.append(raw.python_seconds(500) / 500)

    backend()  # the first backend runs also set the raw loops' parameters and precision
    backend_f32()
    ours.clear()
    f32.clear()
    runs = [backend, lambda: backend(False), scan_loop, python_loop, backend_f32, scan32_loop]
    for r in range(s.repeats):
        for f in _rotate(runs, r):
            f()
        _say(
            f"  case 14 round {r + 1}: backend {1 / ours[-1]:,.0f} draws/s (no checkpoint "
            f"{1 / no_ckpt[-1]:,.0f}, float32 {1 / f32[-1]:,.0f}), scan "
            f"{1 / scan[-1]:,.0f} draws/s (float32 {1 / scan32[-1]:,.0f}), python loop "
            f"{1 / python[-1]:,.0f} draws/s"
        )
    r_scan, r_py = paired_ratio(scan, ours), paired_ratio(python, ours)
    r_bare = paired_ratio(scan, no_ckpt)
    width = "float64" if raw is not None and raw.x64 else "float32"
    rate = f"{1 / median(ours):,.0f} draws/s"
    return [
        Row(
            "14",
            "blackjax NUTS (per-draw metrics, checkpoint every 500, K=500) ÷ raw BlackJAX NUTS "
            f"in `jax.lax.scan`, eight schools, 1 chain, steady state, both {width} (the "
            "backend's default)",
            rate,
            f"{1 / median(scan):,.0f} draws/s",
            f"{r_scan:.2f}",
            "≥ 0.9",
            r_scan >= 0.9,
            {"ours": ours, "reference": scan},
        ),
        Row(
            "14a",
            "as 14 without `checkpoint_dir` (per-draw metrics and the trace still on) ÷ the same "
            "scan loop",
            f"{1 / median(no_ckpt):,.0f} draws/s",
            f"{1 / median(scan):,.0f} draws/s",
            f"{r_bare:.2f}",
            "report",
            None,
            {"ours": no_ckpt, "reference": scan},
        ),
        Row(
            "14b",
            "blackjax NUTS (as 14) ÷ the one-draw Python loop (`jax.jit(nuts.step)` per draw)",
            rate,
            f"{1 / median(python):,.0f} draws/s",
            f"{r_py:.2f}",
            "report",
            None,
            {"ours": ours, "reference": python},
        ),
        Row(
            "14i",
            "as 14a with `x64: False` ÷ the scan loop in float32 (a raw script's default): the "
            "loop's cost at float32",
            f"{1 / median(f32):,.0f} draws/s",
            f"{1 / median(scan32):,.0f} draws/s",
            f"{paired_ratio(scan32, f32):.2f}",
            "report",
            None,
            {"ours": f32, "reference": scan32},
        ),
    ]


DEFAULT_WINDOW = 40_000


def case_default_cadence(s: Settings) -> list[Row]:
    """14f: the default checkpoint cadence ÷ the raw scan over a long window, interleaved."""
    first = WARMUP + 500
    last = first + DEFAULT_WINDOW
    ours: list[float] = []
    bare: list[float] = []
    scan: list[float] = []
    raw: RawNuts | None = None

    def backend(checkpoint: bool = True) -> None:
        nonlocal raw
        stamps = Stamps()
        with tempfile.TemporaryDirectory(prefix="pipekit-bench-bjx-") as tmp:
            _, info = backend_loop(
                last - WARMUP,
                checkpoint_dir=tmp if checkpoint else None,
                callbacks=[stamps],
                every=None,
            ).run()
        (ours if checkpoint else bare).append((stamps.at[last] - stamps.at[first]) / DEFAULT_WINDOW)
        if raw is None:
            raw = _raw_like(info)

    def scan_loop() -> None:
        assert raw is not None
        scan.append(raw.scan_seconds(DEFAULT_WINDOW) / DEFAULT_WINDOW)

    backend()
    ours.clear()
    for r in range(s.repeats):
        for f in _rotate([backend, lambda: backend(False), scan_loop], r):
            f()
        _say(
            f"  case 14f round {r + 1}: backend {1 / ours[-1]:,.0f} draws/s (no checkpoint "
            f"{1 / bare[-1]:,.0f}), scan {1 / scan[-1]:,.0f} draws/s"
        )
    ratio = paired_ratio(scan, ours)
    return [
        Row(
            "14f",
            "blackjax NUTS (per-draw metrics, `Checkpoint()`'s default cadence, K=500) ÷ raw "
            f"BlackJAX NUTS in `jax.lax.scan`, eight schools, 1 chain, {DEFAULT_WINDOW:,} draws, "
            f"both {'float64' if raw is not None and raw.x64 else 'float32'}",
            f"{1 / median(ours):,.0f} draws/s",
            f"{1 / median(scan):,.0f} draws/s",
            f"{ratio:.2f}",
            "≥ 0.9",
            ratio >= 0.9,
            {"ours": ours, "reference": scan},
        ),
        Row(
            "14g",
            "as 14f without `checkpoint_dir` ÷ the same scan loop (what 14f owes the sampler "
            "loop rather than its checkpoints)",
            f"{1 / median(bare):,.0f} draws/s",
            f"{1 / median(scan):,.0f} draws/s",
            f"{paired_ratio(scan, bare):.2f}",
            "report",
            None,
            {"ours": bare, "reference": scan},
        ),
    ]


#: Every fresh-process run of :func:`case_whole_run` (``backend``, ``backend_warm``, ``raw``),
#: read by the whole-run suite (``_whole_cases``).
PROCS: dict[str, list[Proc]] = {}


def _proc(mode: str, cache: str, key: str) -> float:
    p = spawn([str(WORKER), mode, cache], first_step=1)
    PROCS.setdefault(key, []).append(p)
    assert p.seconds is not None
    return p.seconds


#: Whole-run targets (issue 34: with checkpoints, at least 0.95 of the raw run).
WHOLE_RUN_TARGETS = {"14h": 0.95}


def case_whole_run(s: Settings) -> list[Row]:
    """14c: a whole 500 + 1,000 run, fresh processes, compilation included (14h: with a
    ``checkpoint_dir``).

    The backend starts from an empty persistent compilation cache (a fresh temporary folder),
    the raw run with none (JAX's default); 14d runs the backend again in a fresh process that
    finds that cache warm.
    """
    ours: list[float] = []
    warm: list[float] = []
    ckpt: list[float] = []
    ref: list[float] = []
    for r in range(s.repeats):
        with tempfile.TemporaryDirectory(prefix="pipekit-bench-cache-") as cache:

            def backend(c: str = cache) -> None:
                ours.append(_proc("backend", c, "backend"))
                warm.append(_proc("backend", c, "backend_warm"))

            def checkpointed() -> None:
                ckpt.append(_proc("backend_ckpt", "off", "backend_ckpt"))

            runs = [backend, checkpointed, lambda: ref.append(_proc("raw", "off", "raw"))]
            for f in _rotate(runs, r):
                f()
        _say(
            f"  case 14c round {r + 1}: backend {ours[-1]:.2f} s (warm {warm[-1]:.2f} s, "
            f"with checkpoint_dir {ckpt[-1]:.2f} s), raw {ref[-1]:.2f} s"
        )
    rows = []
    for case, what, side in (
        (
            "14c",
            "blackjax, a whole run (500 warmup + 1,000 draws, compilation included, empty "
            "persistent cache) ÷ raw `window_adaptation(...).run` + scan loop (no cache), "
            "fresh processes",
            ours,
        ),
        ("14d", "as 14c, the backend in a fresh process that finds the cache of 14c warm", warm),
        (
            "14h",
            "as 14c with a `checkpoint_dir` (`Checkpoint()`'s default cadence) and no "
            "compilation cache, like the raw run",
            ckpt,
        ),
    ):
        ratio = paired_ratio(ref, side)
        target = WHOLE_RUN_TARGETS.get(case)
        rows.append(
            Row(
                case,
                what,
                f"{median(side):.2f} s",
                f"{median(ref):.2f} s",
                f"{ratio:.2f}",
                "report" if target is None else f"≥ {target:g}",
                None if target is None else ratio >= target,
                {"ours": side, "reference": ref},
            )
        )
    return rows
