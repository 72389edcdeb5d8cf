"""A folder of a user's own files, to prove that pipekit's pruning never deletes them.

``plant`` writes ``train_data_2019.csv`` and ``features.bin`` (issue 24's report) and
returns their bytes; ``assert_untouched`` checks that each is still there, byte-identical;
``snapshot`` (the contract kit's) records a whole folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from pipekit_train.testing import snapshot

__all__ = ["USER_FILES", "assert_untouched", "plant", "snapshot"]

USER_FILES = {
    "train_data_2019.csv": b"id,value\n1,0.5\n2,0.25\n",
    "features.bin": bytes(range(256)) * 64,
}


def plant(folder: Path, files: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """Write the user's files into ``folder`` (created), dated long ago (oldest first)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = dict(USER_FILES if files is None else files)
    for name, data in files.items():
        (folder / name).write_bytes(data)
        os.utime(folder / name, (1_000, 1_000))
    return files


def assert_untouched(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        assert (folder / name).is_file(), f"{name} was deleted or moved from {folder}"
        assert (folder / name).read_bytes() == data, f"{name} in {folder} was changed"
