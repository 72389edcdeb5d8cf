"""``keep_last``, ``resume="never"`` archiving and quarantine touch only pipekit's step layout.

User files in ``checkpoint_dir`` (notes, a ``.pt`` file, a folder of data, issue 24's
``train_data_2019.csv``) stay in place, byte-identical, however many steps are pruned.
"""

from __future__ import annotations

import pytest
from _ckpt_helpers import FINGERPRINT, make_state, template
from user_files import assert_untouched, plant

from pipekit_train.jax.checkpoint import Checkpointer

FILES = {"notes.txt": b"lr sweep notes", "my_model.pt": b"not a step", "step-1.txt": b"mine"}


def test_keep_last_and_archive_leave_user_files(tmp_path):
    files = plant(tmp_path, FILES)
    files.update(plant(tmp_path / "data", None))
    with Checkpointer(tmp_path, keep_last=1, fingerprint=FINGERPRINT) as ck:
        for step in range(1, 4):
            ck.save(step, make_state(float(step)), {})
        ck.wait()
        assert ck.all_steps() == [3]
    assert_untouched(tmp_path, FILES)
    assert_untouched(tmp_path / "data", {k: v for k, v in files.items() if k not in FILES})
    with Checkpointer(tmp_path, keep_last=1, fingerprint=FINGERPRINT, resume="never") as ck:
        with pytest.warns(UserWarning, match="nothing deleted"):
            assert ck.restore(template()) is None  # archived: starts fresh
    assert_untouched(tmp_path, FILES)
    archived = [p for p in tmp_path.iterdir() if p.name.startswith("archived-")]
    assert len(archived) == 1 and sorted(p.name for p in archived[0].iterdir()) == ["3"]
