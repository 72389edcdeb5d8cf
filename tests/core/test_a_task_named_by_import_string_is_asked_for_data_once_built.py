"""A loop without a dataset whose task is an import string (as in YAML) is not refused before
the task is built: the task says whether it needs data (``needs_dataset``), and the loop asks
it once built (``TrainingLoop.resolved``). Before, a YAML BlackJAX loop over a raw log
density could not be written at all: "TrainingLoop.dataset is required"."""

from __future__ import annotations

import pytest

from pipekit_train import TrainingLoop
from pipekit_train.errors import ConfigError


def test_a_self_contained_task_by_import_string_needs_no_dataset() -> None:
    loop = TrainingLoop(task="_core_factories:make_self_contained_task", backend="blackjax")
    built = loop.resolved()
    assert built.dataset is None and built.task.needs_dataset is False


def test_a_task_that_needs_data_is_refused_once_built() -> None:
    loop = TrainingLoop(task="_core_factories:make_task", backend="blackjax")
    with pytest.raises(ConfigError, match="TrainingLoop.dataset is required") as info:
        loop.resolved()
    assert info.value.field == "dataset"


def test_an_object_task_that_needs_data_is_refused_at_once() -> None:
    from _core_factories import make_task

    with pytest.raises(ConfigError, match="TrainingLoop.dataset is required"):
        TrainingLoop(task=make_task(), backend="blackjax")
