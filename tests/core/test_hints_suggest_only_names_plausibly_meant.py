"""A "did you mean" hint suggests a name only when the user plausibly meant it: a misspelling
(one edit, a swap, a close spelling) or the same words with some left out. A different option
that merely shares letters is not suggested (``step_size`` is not a typo of ``num_steps``)."""

from __future__ import annotations

import pytest

from pipekit_train.errors import closest


@pytest.mark.parametrize(
    ("name", "valid", "meant"),
    [
        ("lerning_rate", ["learning_rate", "lr"], "learning_rate"),
        ("sdg", ["sgd", "adam"], "sgd"),
        ("adamW", ["adam", "adamw"], "adamw"),
        ("num_chain", ["num_chains", "num_warmup"], "num_chains"),
        ("target_accept_prob", ["target_accept", "max_tree_depth"], "target_accept"),
        ("dense_mass", ["dense_mass_matrix", "num_steps"], "dense_mass_matrix"),
        ("beta1", ["b1", "b2", "eps"], "b1"),
        ("learning_rate", ["lr", "clip_norm"], "lr"),
    ],
)
def test_misspellings_are_suggested(name: str, valid: list[str], meant: str) -> None:
    assert closest(name, valid) == f" (did you mean {meant!r}?)"


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("step_size", ["num_steps", "num_warmup", "chain_method"]),
        ("epochs", ["max_steps", "batch_size"]),
        ("x", ["y", "z"]),
        ("max_tree_depth", ["max_num_doublings"]),
    ],
)
def test_other_options_are_not_suggested(name: str, valid: list[str]) -> None:
    assert closest(name, valid) == ""
