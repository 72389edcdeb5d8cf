"""``pipekit_train._declared`` reads a range from the installed distribution's metadata.

The import-time checks of the Keras internals and of Orbax's commit-future API name the range
that is supported; it comes from the installed ``pipekit-train-*`` metadata, so the message
cannot disagree with ``pyproject.toml``. Lower bounds come first; a name is matched whole
(``numpy`` is not ``numpyro``); an unknown distribution or package gives None.
"""

from __future__ import annotations

import importlib.metadata as md

import pytest

from pipekit_train import _declared


def test_core_extra_range_is_read_with_the_lower_bound_first() -> None:
    spec = _declared.declared_range("pipekit-train-core", "orbax-checkpoint")
    assert spec is not None and spec.startswith(">=") and ",<" in spec
    assert _declared.supported("pipekit-train-core", "orbax-checkpoint") == (
        f"orbax-checkpoint{spec}"
    )


def test_names_match_whole_and_unknowns_are_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        md, "requires", lambda dist: ["numpyro<0.23,>=0.22", 'numpy>=2.0; extra == "jax"']
    )
    assert _declared.declared_range("x", "numpy") == ">=2.0"
    assert _declared.declared_range("x", "numpyro") == ">=0.22,<0.23"
    assert _declared.declared_range("x", "jax") is None
    assert _declared.supported("x", "jax") == "jax"


def test_a_distribution_that_is_not_installed_gives_none() -> None:
    assert _declared.declared_range("pipekit-train-no-such-dist", "jax") is None
