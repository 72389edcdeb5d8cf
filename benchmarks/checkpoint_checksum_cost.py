"""What the checkpoint checksums cost: one save and one restore of a 1 MB and a 1 GB state.

Usage: JAX_PLATFORMS=cpu python benchmarks/checkpoint_checksum_cost.py [--sizes-mb 1 1024]
       [--repeats 3] [--dir DIR]

For each size, a state of float32 arrays (1 MB: 16 leaves of 64 KiB, packed into one
array; 1 GB: one leaf) is saved with ``Checkpointer`` (asynchronous, then ``wait()``)
with and without checksums, and restored. Reported, median of ``--repeats``:

- ``save_blocking``: the time ``save()`` holds the caller (the training thread);
- ``save_total``: until the step has committed (``save`` + ``wait``);
- ``restore``: a full restore (with checksums: read + verify);
- ``crc``: CRC-32 of the same bytes alone (the verify cost, in one thread).

One-off measurement (the 1 GB case needs ~4 GB of memory and 2 GB of disk); the
figures are recorded in docs/checkpointing.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from pipekit_train._checksum import array_checksum
from pipekit_train.jax.checkpoint import Checkpointer

_FP = {"bench": "checksum-cost"}


def _state(mb: int) -> dict[str, Any]:
    n = mb * (1 << 20) // 4
    if mb <= 1:
        leaves = 16
        return {f"w{i}": jnp.full((n // leaves,), float(i), jnp.float32) for i in range(leaves)}
    return {"w": jnp.arange(n, dtype=jnp.float32)}


def _template(state: dict[str, Any]) -> dict[str, Any]:
    return jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding), state
    )


def _one(root: Path, state: dict[str, Any], checksums: bool, step: int) -> dict[str, float]:
    directory = root / ("with" if checksums else "without")
    with Checkpointer(directory, keep_last=1, fingerprint=_FP, checksums=checksums) as ck:
        t0 = time.perf_counter()
        ck.save(step, state, {})
        t1 = time.perf_counter()
        ck.wait()
        t2 = time.perf_counter()
    with Checkpointer(directory, keep_last=1, fingerprint=_FP) as ck:
        t3 = time.perf_counter()
        result = ck.restore(_template(state))
        t4 = time.perf_counter()
    assert result is not None and result.step == step
    return {"save_blocking": t1 - t0, "save_total": t2 - t0, "restore": t4 - t3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", type=int, nargs="+", default=[1, 1024])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="pipekit-checksum-bench-"))
    report: dict[str, Any] = {}
    try:
        for mb in args.sizes_mb:
            state = _state(mb)
            jax.block_until_ready(state)
            host = [np.asarray(a) for a in jax.tree.leaves(state)]
            rows: dict[str, list[dict[str, float]]] = {"with": [], "without": []}
            crc: list[float] = []
            for r in range(args.repeats):
                for checksums in (False, True):  # alternate so drift hits both
                    rows["with" if checksums else "without"].append(
                        _one(root / f"{mb}mb", state, checksums, step=r + 1)
                    )
                t = time.perf_counter()
                for a in host:
                    array_checksum(a)
                crc.append(time.perf_counter() - t)
            report[f"{mb} MB"] = {
                kind: {k: statistics.median(x[k] for x in got) for k in got[0]}
                for kind, got in rows.items()
            } | {"crc": statistics.median(crc)}
            del state, host
            shutil.rmtree(root / f"{mb}mb", ignore_errors=True)
            print(json.dumps({f"{mb} MB": report[f"{mb} MB"]}), flush=True)
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
