"""Where case 5's cost lies: a checkpoint every 100 steps, written five ways, on the same run.

Usage: JAX_PLATFORMS=cpu python benchmarks/checkpoint_cost_floor.py [--repeats 8]
       [--window 2000] [--every 100]

Case 5 (``benchmarks/run.py``) times steps 550 … 550 + window of the digits MLP with a
checkpoint every 100 steps against the same run without ``checkpoint_dir``. This script
times that run with the store's ``save`` done five ways, in interleaved rounds (the order
rotating), and prints each one's step time over the run without checkpoints:

- ``shipped``: :class:`~pipekit_train.jax.checkpoint.Checkpointer` as the backend uses it
  (Orbax: ``state``, ``meta`` and ``checksums`` items, ``keep_last=2``);
- ``no_checksums``: the same without the checksum item (``checksums=False``);
- ``hand_off``: the state copied and packed, the meta built, the save thread handed a call
  that writes nothing (the training thread's part of every save);
- ``raw_npy``: the same, and the thread writes the packed arrays and the meta as ``.npy``
  and JSON files, each fsync'd, into a tmp folder it renames (the oldest of three deleted):
  a durable commit of the same bytes without Orbax.

One-off measurement for the bound of issue 34's row 5 (decision 0058 keeps every step an
Orbax checkpoint); the figures are recorded in docs/performance.md. The variants replace
the module's ``Checkpointer`` in this process only.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from _common import backend_seconds_per_step, median, paired_ratio
from _data import digits

import pipekit_train.jax.checkpoint as checkpoint_module
from pipekit_train.fingerprint import jsonable
from pipekit_train.jax._packing import pack

_START = 550
_MODES = ("shipped", "no_checksums", "hand_off", "raw_npy")


class _Variant(checkpoint_module.Checkpointer):
    """The backend's Checkpointer with its ``save`` done as ``mode`` says."""

    mode: ClassVar[str] = "shipped"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, checksums=self.mode == "shipped", **kwargs)
        self._raw_root = Path(tempfile.mkdtemp(prefix="pipekit-raw-", dir=self.directory.parent))
        self._raw_steps: list[Path] = []

    def save(self, step: int, state: Any, meta: Any, trace: Any = None) -> bool:
        if self.mode in ("shipped", "no_checksums"):
            return super().save(step, state, meta, trace)
        assert self._thread is not None, "the variants measure the asynchronous path"
        self._thread.settle()
        packed, layout = pack(state)
        full = jsonable({**dict(meta), "fingerprint": self.fingerprint, "step": int(step)})
        full["layout"] = layout
        if self.mode == "hand_off":
            self._thread.submit(lambda: None)
        else:
            self._thread.submit(self._write_raw, int(step), packed, full)
        return True

    def _write_raw(self, step: int, packed: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        final = self._raw_root / str(step)
        tmp = self._raw_root / f"{step}.tmp"
        tmp.mkdir()
        for name, array in packed.items():
            with open(tmp / f"{name}.npy", "wb") as f:
                np.save(f, array)
                f.flush()
                os.fsync(f.fileno())
        with open(tmp / "meta.json", "w") as f:
            json.dump(meta, f)
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, final)
        self._raw_steps.append(final)
        if len(self._raw_steps) > 2:
            shutil.rmtree(self._raw_steps.pop(0))

    def close(self) -> None:
        try:
            super().close()
        finally:
            shutil.rmtree(self._raw_root, ignore_errors=True)


def _timed(data: dict[str, np.ndarray], mode: str | None, window: int, every: int) -> float:
    _Variant.mode = mode or "shipped"
    return backend_seconds_per_step(
        data,
        steps_per_call=None,
        start=_START,
        window=window,
        checkpoint_every=None if mode is None else every,
    ).seconds_per_step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--window", type=int, default=2000)
    parser.add_argument("--every", type=int, default=100)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)  # Orbax's per-save OCDBT notice
    checkpoint_module.Checkpointer = _Variant  # type: ignore[misc]
    data = digits()
    names: list[str | None] = [None, *_MODES]
    times: dict[str | None, list[float]] = {name: [] for name in names}
    for r in range(args.repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            times[name].append(_timed(data, name, args.window, args.every))
            print(f"round {r + 1}: {name or 'none'} done", file=sys.stderr, flush=True)
    base = times[None]
    print(f"| save, every {args.every} steps | ms/step (median) | step time ÷ none, paired |")
    print("|---|---|---|")
    print(f"| no checkpoint_dir | {median(base) * 1e3:.3f} | — |")
    for name in _MODES:
        over = (1.0 / paired_ratio(base, times[name]) - 1.0) * 100.0
        print(f"| {name} | {median(times[name]) * 1e3:.3f} | {over:+.1f} % |")


if __name__ == "__main__":
    main()
