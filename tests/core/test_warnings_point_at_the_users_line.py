"""A pipekit warning names the user's file and line, not a line inside pipekit-train (or a
library it drives), whatever the depth of the call that raised it."""

from __future__ import annotations

import warnings

from pipekit_train._warn import warn_user
from pipekit_train.engine._runner import _json_floats


def test_a_warning_from_inside_pipekit_points_here() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _json_floats({"ok": 1.0, "bad": object()})  # pipekit code, two frames down
    assert len(caught) == 1
    assert "'bad' is not a number" in str(caught[0].message)
    assert caught[0].filename == __file__


def test_a_direct_call_points_at_its_caller() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_user("direct")
    assert caught[0].filename == __file__ and caught[0].category is UserWarning
