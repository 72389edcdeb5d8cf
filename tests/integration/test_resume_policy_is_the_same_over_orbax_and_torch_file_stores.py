"""Core's resume policy (``pipekit_train.engine.resume_from_store``) behaves the same over the
Orbax store and the torch-file store: auto / force / never, quarantine of a damaged newest
step (with a collision guard), and an archive name that never merges into another.

Before, Lightning's store re-implemented the policy: its archive was
``archived-<second>/`` made with ``exist_ok=True`` (two ``never`` runs in one second merged,
a same-named file overwritten) and a second quarantine of a step number replaced the first
``.corrupt`` file. Real stores, real files; the damage is 8 inverted bytes (same size).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pipekit_train.engine import archive_checkpoints, resume_from_store
from pipekit_train.errors import CheckpointError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from checkpoint_damage import flip_bytes  # noqa: E402

FP = {"backend": "test", "seed": 0, "model_structure": "abc"}

# Noise, so that the saved bytes do not compress away and a flipped byte is a checksum
# mismatch, not a decompression error; each step's values are ``step + NOISE``.
NOISE = np.random.default_rng(0).normal(size=256).astype(np.float32) * 0.01


def _step_of(values: Any) -> float:
    return float(np.round(np.mean(np.asarray(values) - NOISE), 3))


class Orbax:
    """The Orbax store (every JAX backend and Keras)."""

    def open(self, d: Path) -> Any:
        from pipekit_train.jax.checkpoint import Checkpointer

        return Checkpointer(d, keep_last=None, fingerprint=FP, async_save=False)

    def save(self, store: Any, step: int, fp: dict[str, Any] = FP) -> None:
        import jax.numpy as jnp

        store.fingerprint = dict(fp)
        store.save(step, {"w": jnp.asarray(NOISE + step)}, {"note": step})
        store.wait()

    def template(self) -> Any:
        import jax
        import jax.numpy as jnp

        return {"w": jax.ShapeDtypeStruct((256,), jnp.float32)}

    def value(self, result: Any) -> float:
        return _step_of(result.state["w"])

    def damage(self, d: Path, step: int) -> None:
        from checkpoint_damage import biggest_data_file

        flip_bytes(biggest_data_file(d / str(step)))

    def names(self, d: Path, step: int) -> list[str]:
        return [str(step)]


class TorchFile:
    """The torch-file store (the Lightning backend)."""

    def open(self, d: Path) -> Any:
        from pipekit_train.adapters.lightning._checkpoint import TorchFileStore

        return TorchFileStore(d, keep_last=None)

    def save(self, store: Any, step: int, fp: dict[str, Any] = FP) -> None:
        import torch

        state = {"module": {"w": torch.from_numpy(NOISE + step)}}
        store.save(step, state, {"fingerprint": dict(fp), "note": step})

    def template(self) -> Any:
        return None

    def value(self, result: Any) -> float:
        return _step_of(result.module["w"].numpy())

    def damage(self, d: Path, step: int) -> None:
        flip_bytes(d / f"step-{step:09d}.pt")

    def names(self, d: Path, step: int) -> list[str]:
        return [f"step-{step:09d}.pt", f"step-{step:09d}.pt.crc32"]


STORES = {"orbax": Orbax(), "torch-file": TorchFile()}


@pytest.fixture(params=sorted(STORES))
def kind(request: pytest.FixtureRequest) -> Any:
    return STORES[request.param]


def _resume(kind: Any, d: Path, mode: str, fp: dict[str, Any] = FP) -> Any:
    return resume_from_store(kind.open(d), kind.template(), mode=mode, fingerprint=fp)


def _names(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


def test_auto_resumes_the_newest_step_and_refuses_another_run(kind: Any, tmp_path: Path) -> None:
    store = kind.open(tmp_path)
    for step in (1, 2, 3):
        kind.save(store, step)
    result = _resume(kind, tmp_path, "auto")
    assert kind.value(result) == 3.0 and result.meta["note"] == 3

    before = _names(tmp_path)
    with pytest.raises(CheckpointError, match="seed: checkpoint 0 != this run 1") as err:
        _resume(kind, tmp_path, "auto", {**FP, "seed": 1})
    assert 'backend_options={"resume": "force"}' in str(err.value)
    assert _names(tmp_path) == before  # a refused resume moves nothing


def test_force_resumes_another_run_with_a_warning(kind: Any, tmp_path: Path) -> None:
    store = kind.open(tmp_path)
    kind.save(store, 4)
    with pytest.warns(UserWarning, match=r"(?s)seed: checkpoint 0 != this run 1.*Resuming anyway"):
        result = _resume(kind, tmp_path, "force", {**FP, "seed": 1})
    assert kind.value(result) == 4.0


def test_a_damaged_newest_step_is_quarantined_twice_without_overwriting(
    kind: Any, tmp_path: Path
) -> None:
    store = kind.open(tmp_path)
    for step in (1, 2):
        kind.save(store, step)
    kind.damage(tmp_path, 2)
    with pytest.warns(UserWarning, match=r"step 2\b.*checksum mismatch.*falling back"):
        result = _resume(kind, tmp_path, "auto")
    assert kind.value(result) == 1.0
    first = {n: (tmp_path / f"{n}.corrupt").exists() for n in kind.names(tmp_path, 2)}
    assert all(first.values()), _names(tmp_path)

    # step 2 written again and damaged again: its quarantine must not replace the first one
    kind.save(kind.open(tmp_path), 2)
    kind.damage(tmp_path, 2)
    with pytest.warns(UserWarning, match=r"step 2\b.*corrupt\.1"):
        result = _resume(kind, tmp_path, "auto")
    assert kind.value(result) == 1.0
    for n in kind.names(tmp_path, 2):
        assert (tmp_path / f"{n}.corrupt").exists() and (tmp_path / f"{n}.corrupt.1").exists()


def test_no_readable_step_left_starts_fresh_with_a_warning(kind: Any, tmp_path: Path) -> None:
    store = kind.open(tmp_path)
    kind.save(store, 1)
    kind.damage(tmp_path, 1)
    with pytest.warns(UserWarning) as record:
        assert _resume(kind, tmp_path, "auto") is None
    assert "starting from scratch" in " ".join(str(w.message) for w in record)


def test_never_archives_into_a_new_folder_every_time(
    kind: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipekit_train.engine import _resume as policy

    (tmp_path / "notes.txt").write_text("mine")
    monkeypatch.setattr(policy, "utc_stamp", lambda: "20260101T000000000000Z")  # one instant
    archives = []
    for step in (1, 2):
        kind.save(kind.open(tmp_path), step)
        with pytest.warns(UserWarning, match="nothing deleted"):
            assert _resume(kind, tmp_path, "never") is None
        archives.append(sorted(p.name for p in tmp_path.glob("archived-*")))
    assert archives[1] == ["archived-20260101T000000000000Z", "archived-20260101T000000000000Z.1"]
    first, second = (tmp_path / name for name in archives[1])
    assert _names(first) == kind.names(tmp_path, 1)
    assert _names(second) == kind.names(tmp_path, 2)
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert kind.open(tmp_path).steps() == []


def test_never_on_a_folder_without_steps_is_quiet(
    kind: Any, tmp_path: Path, recwarn: pytest.WarningsRecorder
) -> None:
    kind.open(tmp_path)
    assert _resume(kind, tmp_path, "never") is None
    assert archive_checkpoints(kind.open(tmp_path)) is None
    assert not [w for w in recwarn if "archived" in str(w.message)]
    assert not list(tmp_path.glob("archived-*"))
