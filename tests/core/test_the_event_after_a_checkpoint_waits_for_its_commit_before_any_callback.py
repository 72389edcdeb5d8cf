"""The host event after a checkpoint waits for that checkpoint to commit before any callback.

A checkpoint is asynchronous (its commit, and with the Orbax store even Orbax's own blocking
part, runs in the background), so without this rule what a callback does at the next event
could outrun the checkpoint: a sweep tells its study a pruned member's result in
``on_eval_end``, and a kill right after must find the population's last checkpoint on disk
(``tests/integration/test_sweep_population_killed_mid_population_resumes_the_same_population.py``).
The driver's ``EventSite.settle`` is the store's ``wait``: called once at the event after each
save, before ``on_step_end``; an event with no save before it does not wait.
"""

from __future__ import annotations

from _core_toy_backend import Recorder, RecordingCheckpointer, ToyData, ToyProgram, toy_loop

from pipekit_train import Checkpoint
from pipekit_train.engine import run_driver


class WaitRecordingCheckpointer(RecordingCheckpointer):
    def wait(self) -> None:
        super().wait()
        assert self.events is not None
        self.events.append(("checkpointer", "wait", None))


def test_each_event_after_a_save_waits_for_it_first_and_no_other_event_waits(tmp_path) -> None:
    events: list[tuple] = []
    loop = toy_loop(
        max_steps=60,
        log_every_n_steps=10,
        eval_every_n_steps=20,
        val_dataset={"x": [0.0], "y": [1.0]},
        callbacks=[Checkpoint(every_n_steps=20), Recorder("rec", events)],
        checkpoint_dir=str(tmp_path),
    )
    ckpt = WaitRecordingCheckpointer(events=events)
    run_driver(loop, ToyProgram(), 0.0, data=ToyData(), checkpointer=ckpt, steps_per_call=5)

    order = [e for e in events if e[1] != "run_start"]
    saves = [step for _, hook, step in order if hook == "save"]
    assert saves == [20, 40, 60]
    # Each event's first entry: a wait exactly where the event before it saved.
    waits_before: dict[int, bool] = {}
    previous = None
    for _, hook, step in order:
        if hook == "wait":
            previous = "wait"
            continue
        if hook == "step_end":
            waits_before[step] = previous == "wait"
        previous = hook
    assert waits_before == {10: False, 20: False, 30: True, 40: False, 50: True, 60: False}
    # No other wait while training: the rest come after the last event (the run's end).
    last_event = max(i for i, (_, hook, _) in enumerate(order) if hook == "step_end")
    during = [i for i, (_, hook, _) in enumerate(order[:last_event]) if hook == "wait"]
    assert len(during) == 2
    assert any(hook == "wait" for _, hook, _ in order[last_event:])
