"""``backend_options["compilation_cache"]`` pointed at a folder of user files deletes none.

Issue 24: with the cache at a folder holding ``train_data_2019.csv`` and ``features.bin``,
the 2 GiB bound's pruning deleted them, even on a run that then failed validation. Now a
folder pipekit did not create or mark is used but never pruned (a warning says so), only
JAX-named entries are ever deleted, and only after a run succeeded. A folder pipekit
created is still bounded (the bound shrunk here through its environment variable).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from _eqx_helpers import run_loop, tiny_loop
from user_files import assert_untouched, plant

from pipekit_train.errors import DataError
from pipekit_train.jax.compile_cache import MARKER_FILE, MAX_BYTES_ENV


@pytest.fixture(autouse=True)
def _tiny_bound(monkeypatch):
    monkeypatch.setenv(MAX_BYTES_ENV, "1")  # any pruning at all would delete everything


def test_a_successful_run_leaves_the_users_files(tmp_path):
    folder = tmp_path / "my_data"
    files = plant(folder)
    with pytest.warns(UserWarning, match="never pruned"):
        _, info = run_loop(tiny_loop(backend_options={"compilation_cache": str(folder)}))
    assert info["final_step"] == 10
    assert_untouched(folder, files)
    assert not (folder / MARKER_FILE).exists()  # not adopted: it is the user's folder


def test_a_run_failing_validation_leaves_the_users_files(tmp_path):
    folder = tmp_path / "my_data"
    files = plant(folder)
    bad = {"x": np.full((96, 4), np.nan, np.float32), "y": np.zeros(96, np.int32)}
    with pytest.warns(UserWarning, match="never pruned"), pytest.raises(DataError):
        run_loop(tiny_loop(dataset=bad, backend_options={"compilation_cache": str(folder)}))
    assert_untouched(folder, files)


def test_a_cache_pipekit_created_is_still_bounded(tmp_path):
    folder = tmp_path / "cache"  # does not exist: pipekit creates and marks it
    run_loop(tiny_loop(backend_options={"compilation_cache": str(folder)}))
    assert (folder / MARKER_FILE).is_file()
    stale = folder / f"jit_stale-{'ab' * 32}-cache"
    stale.write_bytes(b"x" * 4096)
    os.utime(stale, (1_000, 1_000))
    notes = plant(folder, {"notes.txt": b"mine, put here later"})
    run_loop(tiny_loop(backend_options={"compilation_cache": str(folder)}))
    assert not stale.exists()  # pruned: a JAX entry in pipekit's own folder
    assert_untouched(folder, notes)  # never: not a JAX entry name
    assert (folder / MARKER_FILE).is_file()
