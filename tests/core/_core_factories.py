"""Tiny factories that YAML loops name as ``'_core_factories:attr'`` import strings.

Plain Python values only: core's tests run without numpy or any array library.
"""

from __future__ import annotations

from typing import Any

from pipekit_train import Callback

CALLS: list[str] = []


def make_dataset(n: int = 8) -> dict[str, list[float]]:
    CALLS.append(f"make_dataset(n={n})")
    return {"x": [float(i) for i in range(n)], "y": [float(2 * i) for i in range(n)]}


def make_val() -> dict[str, list[float]]:
    CALLS.append("make_val")
    return {"x": [0.5, 1.5], "y": [1.0, 3.0]}


def make_model(width: int = 4) -> dict[str, Any]:
    CALLS.append(f"make_model(width={width})")
    return {"kind": "toy-model", "width": width}


class ToyTask:
    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale


def make_task(scale: float = 1.0) -> ToyTask:
    return ToyTask(scale)


def my_loss(pred: float, target: float) -> float:
    return (pred - target) ** 2


class CountingCallback(Callback):
    def __init__(self) -> None:
        self.steps: list[int] = []

    def on_step_end(self, loop: Any, state: Any) -> None:
        self.steps.append(state.step)


def make_callback() -> CountingCallback:
    return CountingCallback()


def make_needs_width(width: int) -> dict[str, int]:
    return {"width": width}


NOT_CALLABLE = {"x": [1.0], "y": [2.0]}


class SelfContainedTask:
    """A task that brings its own target (a raw log density would): it needs no dataset."""

    needs_dataset = False


def make_self_contained_task() -> SelfContainedTask:
    return SelfContainedTask()
