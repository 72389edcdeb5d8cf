"""A run whose length is not ``max_steps`` (a sampler: warmup + draws) still has its last step
written by ``LogToExperiment``, even when it is no multiple of ``log_every_n_steps``."""

from __future__ import annotations

from typing import Any

from _core_toy_backend import ToyData, ToyProgram, toy_loop

from pipekit_train import LogToExperiment
from pipekit_train.engine import Phase, run_driver


class Recorder:
    def __init__(self) -> None:
        self.steps: list[int] = []

    def write(self, step: int, metrics: dict[str, Any]) -> None:
        if "loss" in metrics or any(k.endswith("/loss") for k in metrics):
            self.steps.append(step)

    def flush(self) -> None: ...

    def close(self) -> None: ...


class PhasedToy(ToyProgram):
    phases = [Phase("warmup", 30, collect=False), Phase("sampling", 45, collect=True)]


def test_the_last_step_of_a_phased_run_is_written() -> None:
    rec = Recorder()
    loop = toy_loop(max_steps=100, log_every_n_steps=20, callbacks=[LogToExperiment(rec)])
    result = run_driver(loop, PhasedToy(), 0.0, data=ToyData(), checkpointer=None)
    assert result.final_step == 75
    assert rec.steps == [20, 40, 60, 75]
