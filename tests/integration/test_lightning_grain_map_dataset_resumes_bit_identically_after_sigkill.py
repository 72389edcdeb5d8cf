"""A ``grain.MapDataset`` read in its own order on Lightning resumes bit-identically after
SIGKILL (decision 0198).

The contract kit's own SIGKILL check (``pipekit_train.testing``) on the Lightning case with
its data as a shuffled, mapped MapDataset (``_lightning_map_dataset_case``): real
``pipekit-train run`` processes, one SIGKILLed at a random step after the first checkpoint,
then the same command again, whose final checkpoint and every metric row after the resume
must equal an uninterrupted run's bit for bit. The checkpointed data state is the position,
batch ``i`` of the pipeline a pure function of ``i``. Needs Grain beside torch, so it lives
here (tests/lightning's session has no Grain).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _lightning_map_dataset_case import CASE

from pipekit_train.testing import check_backend


@pytest.mark.slow
def test_map_dataset_sigkill_then_rerun_is_bit_identical(tmp_path: Path) -> None:
    check_backend(CASE, tmp_path, only=["sigkill_then_rerun_is_bit_identical"])
