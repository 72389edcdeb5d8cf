"""An Orbax without the commit-future API is refused at import, naming core's Orbax range.

The checkpoint checksums are written through ``orbax.checkpoint.future`` (not a stable
public API), so core caps orbax-checkpoint at the newest minor its matrix runs; an Orbax
that lacks the API gets a ``BackendNotInstalledError`` with the range read from core's own
installed metadata, instead of an ``AttributeError`` in the middle of a save.
"""

from __future__ import annotations

import pytest
from orbax.checkpoint import future

from pipekit_train._declared import declared_range
from pipekit_train.errors import BackendNotInstalledError
from pipekit_train.jax import _checksum_item


def test_installed_orbax_has_the_api() -> None:
    _checksum_item.check_orbax_api()  # the locked and the lowest Orbax both have it


def test_missing_commit_future_api_names_the_declared_range(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(future, "CommitFutureAwaitingContractedSignals")
    with pytest.raises(BackendNotInstalledError) as err:
        _checksum_item.check_orbax_api()
    spec = declared_range("pipekit-train-core", "orbax-checkpoint")
    assert spec is not None and spec.startswith(">=") and "<0." in spec
    assert f"orbax-checkpoint{spec}" in str(err.value)
    assert "CommitFutureAwaitingContractedSignals" in str(err.value)
