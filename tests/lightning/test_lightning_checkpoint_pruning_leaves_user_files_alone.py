"""The Lightning checkpoint store prunes (``keep_last``) and archives only ``step-<9 digits>.pt``.

User files in ``checkpoint_dir`` (``notes.txt``, a ``my_model.pt`` that is not a step file,
``step-1.pt`` with the wrong digit count) stay in place, byte-identical.
"""

from __future__ import annotations

from user_files import assert_untouched, plant

from pipekit_train.adapters.lightning._checkpoint import TorchFileStore
from pipekit_train.engine import archive_checkpoints

FILES = {"notes.txt": b"mine", "my_model.pt": b"not a step file", "step-1.pt": b"mine too"}


def test_keep_last_and_archive_leave_user_files(tmp_path):
    files = plant(tmp_path, FILES)
    store = TorchFileStore(tmp_path, keep_last=1)
    for step in (1, 2, 3):
        store.save(step, {"module": {}}, {"fingerprint": {}})
    assert store.steps() == [3]
    assert_untouched(tmp_path, files)
    archive = archive_checkpoints(store)
    assert archive is not None
    # the step file and its checksum record move together; nothing else does
    assert sorted(p.name for p in archive.iterdir()) == [
        "step-000000003.pt",
        "step-000000003.pt.crc32",
    ]
    assert_untouched(tmp_path, files)
