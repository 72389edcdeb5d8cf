"""resume="never" moves old checkpoints into archived-<UTC time>/, deletes nothing, starts fresh."""

from __future__ import annotations

import pytest
from _ckpt_helpers import FINGERPRINT, make_state, template

from pipekit_train.errors import ConfigError
from pipekit_train.jax.checkpoint import Checkpointer


def test_never_archives_and_saving_starts_over(tmp_path):
    with Checkpointer(tmp_path, keep_last=3, fingerprint=FINGERPRINT) as ck:
        for step in (5, 10):
            ck.save(step, make_state(float(step)), {})
    (tmp_path / "notes.txt").write_text("user file")  # not ours: stays put
    other = {**FINGERPRINT, "model": "something-else"}
    with Checkpointer(tmp_path, keep_last=3, fingerprint=other, resume="never") as ck:
        with pytest.warns(UserWarning, match="archived-"):
            assert ck.restore(template()) is None
        assert ck.all_steps() == []
        ck.save(1, make_state(1.0), {})
        ck.wait()
        assert ck.all_steps() == [1]
    archives = list(tmp_path.glob("archived-*"))
    assert len(archives) == 1
    assert sorted(p.name for p in archives[0].iterdir()) == ["10", "5"]
    assert (tmp_path / "notes.txt").read_text() == "user file"


def test_never_on_an_empty_dir_is_quiet(tmp_path, recwarn):
    with Checkpointer(tmp_path, keep_last=3, fingerprint=FINGERPRINT, resume="never") as ck:
        assert ck.restore(template()) is None
    assert not [w for w in recwarn if "archived" in str(w.message)]
    assert not list(tmp_path.iterdir())


def test_unknown_resume_mode_names_the_option(tmp_path):
    with pytest.raises(ConfigError, match="resume") as info:
        Checkpointer(tmp_path, keep_last=3, fingerprint=FINGERPRINT, resume="sometimes")
    assert info.value.field == "backend_options.resume"
