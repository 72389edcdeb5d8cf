"""A backend's own callbacks (``run_driver(hooks=...)``, a sampler's end-of-warmup check) see
every host event after the loop's callbacks, and keep nothing in the checkpoint's metadata:
the meta's callback states stay one per ``TrainingLoop.callbacks`` entry."""

from __future__ import annotations

from _core_toy_backend import Recorder, RecordingCheckpointer, ToyData, ToyProgram, toy_loop

from pipekit_train import Checkpoint
from pipekit_train.engine import run_driver


def test_hooks_run_after_the_loops_callbacks_and_are_not_checkpointed(tmp_path) -> None:
    events: list[tuple] = []
    user, hook = Recorder("user", events), Recorder("hook", events)
    loop = toy_loop(
        max_steps=20,
        log_every_n_steps=10,
        callbacks=[user, Checkpoint(every_n_steps=20)],
        checkpoint_dir=str(tmp_path),
    )
    ckpt = RecordingCheckpointer(events=events)
    run_driver(
        loop, ToyProgram(), 0.0, data=ToyData(), checkpointer=ckpt, steps_per_call=5, hooks=[hook]
    )
    at_10 = [e for e in events if e[2] == 10]
    assert at_10 == [("user", "step_end", 10), ("hook", "step_end", 10)]
    assert ("hook", "run_end", 20) in events
    (saved,) = ckpt.saves
    assert saved.step == 20 and len(saved.meta["callbacks"]) == len(loop.callbacks) == 2
