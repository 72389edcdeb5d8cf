"""Orbax's blocking save part runs on the save thread; its error is raised by the next call.

In a single-process run with asynchronous saves, ``Checkpointer.save`` copies the state
to host buffers and hands Orbax's ``save`` to one background thread, so the training
thread is not held while Orbax sets the step up (``jax/_save_thread.py``). The other
calls wait for it: a second save, ``saving()``, ``wait()``, ``close()``. A save that
fails in the thread raises its own error from the next of those calls, and the steps
committed before it stay. ``async_save=False`` and multi-process runs save on the
caller's thread as before.
"""

from __future__ import annotations

import threading

import pytest
from _ckpt_helpers import FINGERPRINT, assert_state_equal, make_state, template

from pipekit_train.jax import checkpoint as checkpoint_module
from pipekit_train.jax.checkpoint import Checkpointer


def _held_orbax_save(ck: Checkpointer) -> tuple[threading.Event, list[str]]:
    """Make ``ck``'s Orbax save wait for the returned event; record the thread it ran on."""
    release = threading.Event()
    threads: list[str] = []
    real = ck._mngr.save

    def held(*args, **kwargs):
        threads.append(threading.current_thread().name)
        assert release.wait(timeout=60), "the test never released the save"
        return real(*args, **kwargs)

    ck._mngr.save = held
    return release, threads


def test_save_returns_while_orbax_is_still_in_its_blocking_part(tmp_path):
    state = make_state(3.0)
    ck = Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT)
    release, threads = _held_orbax_save(ck)
    try:
        # Orbax's save cannot return before the event is set: save() returning proves
        # that it runs on another thread.
        assert ck.save(4, state, {"note": "handed off"})
        assert ck.saving()
        release.set()
        ck.wait()
        assert not ck.saving()
        assert ck.steps() == [4]
    finally:
        release.set()
        ck.close()
    assert threads and threads[0].startswith("pipekit_save") and threads[0] != "MainThread"

    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as again:
        result = again.restore(template())
    assert result is not None and result.step == 4 and result.meta["note"] == "handed off"
    assert_state_equal(result.state, state)


def test_a_save_that_fails_in_the_thread_raises_from_the_next_call_and_keeps_older_steps(
    tmp_path,
):
    ck = Checkpointer(tmp_path, keep_last=3, fingerprint=FINGERPRINT)
    ck.save(1, make_state(1.0), {})
    ck.wait()

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    real = ck._mngr.save
    ck._mngr.save = broken
    assert ck.save(2, make_state(2.0), {})  # handed off: the error is not known yet
    with pytest.raises(OSError, match="No space left"):
        ck.wait()
    ck._mngr.save = real
    ck.save(3, make_state(3.0), {})  # raised once: the checkpointer goes on
    ck.close()
    assert sorted(int(p.name) for p in tmp_path.iterdir() if p.name.isdigit()) == [1, 3]

    ck = Checkpointer(tmp_path, keep_last=3, fingerprint=FINGERPRINT)
    ck._mngr.save = broken
    ck.save(4, make_state(4.0), {})
    with pytest.raises(OSError, match="No space left"):
        ck.save(5, make_state(5.0), {})  # the next save raises the one before's error
    ck.save(6, make_state(6.0), {})
    with pytest.raises(OSError, match="No space left"):
        ck.close()  # and close() raises the last one's, after releasing Orbax
    assert sorted(int(p.name) for p in tmp_path.iterdir() if p.name.isdigit()) == [1, 3]


@pytest.mark.parametrize("why", ["async_save=False", "several processes"])
def test_a_synchronous_or_multi_process_checkpointer_saves_on_the_callers_thread(
    tmp_path, monkeypatch, why
):
    kwargs = {}
    if why == "async_save=False":
        kwargs["async_save"] = False
    else:
        monkeypatch.setattr(checkpoint_module, "_process_count", lambda: 2)
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT, **kwargs) as ck:
        threads: list[str] = []
        real = ck._mngr.save

        def recording(*args, **kw):
            threads.append(threading.current_thread().name)
            return real(*args, **kw)

        ck._mngr.save = recording
        ck.save(1, make_state(1.0), {})
        ck.wait()
    assert threads == [threading.current_thread().name]
