"""Shared helpers for the Equinox backend's training tests.

Kept small and fast: a 4-feature, 3-class synthetic NumPy problem, MLPs a few
units wide, a few dozen steps, and one shared JAX compilation cache (see
:func:`compilation_cache_dir`). The CLI test runs the real digits example.
``make_model`` doubles as the ``JaxModelOp`` factory that ``op.json`` records
(``"_eqx_helpers:make_model"``), the way ``examples/digits_mlp.py`` does.

Running the tests from a source checkout whose venv did not install
``pipekit-train-equinox`` (so its ``pipekit_train.backends`` entry point is
absent) still works: :func:`backend_registered` puts a throw-away
``*.dist-info`` declaring only that entry point on ``sys.path`` for the duration
of the run (and :func:`subprocess_env` on ``PYTHONPATH``). Its distribution name
is not ``pipekit-train-equinox``, so the packaging test that checks the real
registration is not fooled by it. In an installed venv (every nox session) the
shim is never used.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import pipekit_train
from pipekit_train import TrainingLoop
from pipekit_train.adapters.equinox import JaxModelOp

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if str(REPO / "tests") not in sys.path:  # also for the workers run as subprocesses
    sys.path.insert(0, str(REPO / "tests"))

from compilation_cache import compilation_cache_dir as shared_compilation_cache_dir  # noqa: E402

FACTORY = "_eqx_helpers:make_model"

IN, OUT = 4, 3


# --------------------------------------------------------------------------- data


def make_data(n: int = 96, *, seed: int = 0, classes: int = OUT) -> dict[str, np.ndarray]:
    """``{"x": float32 [n, 4], "y": int32 [n]}``: a learnable 3-class problem."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, IN)).astype(np.float32)
    y = (np.digitize(x[:, 0] + 0.5 * x[:, 1], [-0.5, 0.5]) % classes).astype(np.int32)
    return {"x": x, "y": y}


def make_regression(n: int = 64, *, seed: int = 0) -> dict[str, np.ndarray]:
    """``{"x": float32 [n, 4], "y": float32 [n, 1]}`` for ``mse``."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, IN)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5, 0.0], np.float32))[:, None]
    return {"x": x, "y": y.astype(np.float32)}


# --------------------------------------------------------------------------- models


def make_module(
    in_size: int = IN, out_size: int = OUT, width: int = 8, depth: int = 1, seed: int = 0
) -> eqx.nn.MLP:
    """An ``eqx.nn.MLP`` with NumPy-drawn weights (deterministic in ``seed``).

    The structure comes from ``filter_eval_shape`` (tracing only), the values
    from NumPy: JAX's eager initialisers compile every primitive for every new
    shape, which costs seconds per model on a 2-core machine.
    """
    abstract = eqx.filter_eval_shape(
        lambda: eqx.nn.MLP(in_size, out_size, width, depth, key=jax.random.PRNGKey(0))
    )
    rng = np.random.default_rng(seed)

    def fill(leaf: Any) -> Any:
        if not isinstance(leaf, jax.ShapeDtypeStruct):
            return leaf
        fan_in = leaf.shape[-1] if len(leaf.shape) == 2 else max(1, leaf.shape[0])
        values = rng.uniform(-1.0, 1.0, size=leaf.shape) / np.sqrt(fan_in)
        return jnp.asarray(values, dtype=leaf.dtype)

    module: eqx.nn.MLP = jax.tree_util.tree_map(fill, abstract)
    return module


def make_model(
    in_size: int = IN, out_size: int = OUT, width: int = 8, depth: int = 1, seed: int = 0
) -> JaxModelOp:
    """A ``JaxModelOp`` that records this factory, so ``JaxModelOp.load(path)`` rebuilds it."""
    return JaxModelOp(
        make_module(in_size, out_size, width, depth, seed),
        factory=FACTORY,
        factory_kwargs={
            "in_size": in_size,
            "out_size": out_size,
            "width": width,
            "depth": depth,
            "seed": seed,
        },
    )


def compilation_cache_dir() -> str:
    """The JAX persistent compilation cache of these tests (``tests/compilation_cache.py``).

    Most runs here compile the same tiny programs; with the backend's own
    ``backend_options["compilation_cache"]`` a repeat costs ~0.4 s instead of
    ~1.6 s. Results do not depend on it (same HLO, same executable).
    """
    return shared_compilation_cache_dir("eqx")


def tiny_loop(**overrides: Any) -> TrainingLoop:
    """A valid loop that trains in well under a second once compiled.

    ``backend_options`` given here are merged over the shared compilation cache.
    """
    data = make_data()
    kwargs: dict[str, Any] = {
        "model_op": make_model(),
        "dataset": data,
        "loss": "cross_entropy",
        "batch_size": 16,
        "max_steps": 10,
        "log_every_n_steps": 5,
        "optimizer_config": {"name": "adam", "lr": 1e-2},
        "seed": 0,
    }
    options = overrides.pop("backend_options", {})
    kwargs.update(overrides)
    if isinstance(options, dict):
        options = {"compilation_cache": compilation_cache_dir(), **options}
    kwargs["backend_options"] = options
    return TrainingLoop(**kwargs)


def leaves(op_or_module: Any) -> list[np.ndarray]:
    """The array leaves of a trained op (or module) as host NumPy arrays."""
    module = getattr(op_or_module, "module", op_or_module)
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(eqx.filter(module, eqx.is_array))]


def assert_bit_identical(a: Any, b: Any) -> None:
    la, lb = leaves(a), leaves(b)
    assert len(la) == len(lb)
    for i, (x, y) in enumerate(zip(la, lb, strict=True)):
        assert x.dtype == y.dtype and x.shape == y.shape, i
        assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), f"leaf {i} differs"


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


# --------------------------------------------------------------------------- backend registration

_GROUP = "pipekit_train.backends"
_SHIM_DIR: str | None = None


def equinox_entry_point_installed() -> bool:
    return any(ep.name == "equinox" for ep in metadata.entry_points(group=_GROUP))


def _shim_dir() -> str:
    """A folder holding a minimal dist-info that registers the equinox entry point."""
    global _SHIM_DIR
    if _SHIM_DIR is None:
        root = tempfile.mkdtemp(prefix="pipekit-eqx-entrypoint-")
        atexit.register(shutil.rmtree, root, True)
        info = Path(root) / "pipekit_train_equinox_test_shim-0.0.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: pipekit-train-equinox-test-shim\nVersion: 0.0.0\n"
        )
        (info / "entry_points.txt").write_text(
            f"[{_GROUP}]\nequinox = pipekit_train.adapters.equinox\n"
        )
        _SHIM_DIR = root
    return _SHIM_DIR


@contextlib.contextmanager
def backend_registered() -> Iterator[None]:
    """Make ``TrainingLoop.run()`` find the equinox backend (see the module docstring)."""
    if equinox_entry_point_installed():
        yield
        return
    shim = _shim_dir()
    sys.path.insert(0, shim)
    try:
        yield
    finally:
        sys.path.remove(shim)


def run_loop(loop: TrainingLoop) -> tuple[Any, dict[str, Any]]:
    """``loop.run()`` — the public path — with the backend registered."""
    with backend_registered():
        return loop.run()


def child_json(code: str, timeout: float = 300) -> Any:
    """Run ``code`` in a fresh interpreter that finds this checkout (``subprocess_env``, JAX
    on the CPU); it must exit 0, and its last line of output is read as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=subprocess_env(JAX_PLATFORMS="cpu"),
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def subprocess_env(**extra: str) -> dict[str, str]:
    """An environment in which ``python -m pipekit_train.cli`` finds this checkout's code."""
    env = dict(os.environ)
    paths = [
        str(Path(pipekit_train.__file__).resolve().parents[1]),  # core's src / site-packages
        str(Path(sys.modules["pipekit_train.adapters.equinox"].__file__).resolve().parents[3])
        if "pipekit_train.adapters.equinox" in sys.modules
        else str(REPO / "packages" / "equinox" / "src"),
    ]
    if not equinox_entry_point_installed():
        paths.append(_shim_dir())
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env.update(extra)
    return env


# --------------------------------------------------------------------------- "before compilation"


class CompileWatch:
    """Records whether the backend traced or compiled any training computation.

    Three independent signals, so that renaming one internal does not make the
    check vacuous (and the positive-control test proves each one fires on a good
    run):

    - ``train_calls``: calls of ``EquinoxProgram.train_chunk`` / ``evaluate``
      (the only ways the driver runs compiled code);
    - ``step_traces``: traces of ``step_impl`` (the step's math; traced only
      when the step is compiled);
    - ``compiled``: names of the jitted computations XLA compiled, from JAX's
      ``jax_log_compiles`` records, keeping those that are not a single eager
      primitive (building a PRNG key or an MLP runs a few such primitives).
    """

    def __init__(self) -> None:
        self.train_calls = 0
        self.step_traces = 0
        self.compiled: list[str] = []

    @property
    def anything(self) -> bool:
        return bool(self.train_calls or self.step_traces or self.training_compiles)

    @property
    def training_compiles(self) -> list[str]:
        return [name for name in self.compiled if name in _TRAINING_NAMES]


_TRAINING_NAMES = {"one", "chunk", "evaluate", "train_step", "step_impl"}


class _CompileLog(logging.Handler):
    def __init__(self, watch: CompileWatch) -> None:
        super().__init__(level=logging.DEBUG)
        self.watch = watch

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if msg.startswith("Compiling jit(") or msg.startswith("Compiling "):
            name = msg.split("(", 1)[1].split(")", 1)[0] if "jit(" in msg else msg.split()[1]
            self.watch.compiled.append(name)


@contextlib.contextmanager
def watch_compilation(monkeypatch: Any) -> Iterator[CompileWatch]:
    from pipekit_train.adapters.equinox import _program

    watch = CompileWatch()
    original_chunk = _program.EquinoxProgram.train_chunk
    original_eval = _program.EquinoxProgram.evaluate
    original_step = _program.step_impl

    def train_chunk(self: Any, *args: Any, **kwargs: Any) -> Any:
        watch.train_calls += 1
        return original_chunk(self, *args, **kwargs)

    def evaluate(self: Any, *args: Any, **kwargs: Any) -> Any:
        watch.train_calls += 1
        return original_eval(self, *args, **kwargs)

    def step_impl(*args: Any, **kwargs: Any) -> Any:
        watch.step_traces += 1
        return original_step(*args, **kwargs)

    monkeypatch.setattr(_program.EquinoxProgram, "train_chunk", train_chunk)
    monkeypatch.setattr(_program.EquinoxProgram, "evaluate", evaluate)
    monkeypatch.setattr(_program, "step_impl", step_impl)

    handler = _CompileLog(watch)
    loggers = [logging.getLogger(n) for n in ("jax._src.interpreters.pxla", "jax._src.dispatch")]
    saved = [(lg, lg.level) for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
    previous = jax.config.jax_log_compiles
    jax.config.update("jax_log_compiles", True)
    try:
        yield watch
    finally:
        jax.config.update("jax_log_compiles", previous)
        for lg, level in saved:
            lg.removeHandler(handler)
            lg.setLevel(level)
