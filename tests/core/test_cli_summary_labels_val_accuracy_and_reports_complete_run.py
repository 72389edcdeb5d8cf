"""The CLI's end-of-run summary: accuracy measured on `val_dataset` is labelled as such, and a
run whose checkpoint was already at `max_steps` (0 steps run) says so instead of looking like
a normal run."""

from __future__ import annotations

from pipekit_train.cli import _print_summary

INFO = {
    "backend": "equinox",
    "final_step": 1500,
    "resumed_from_step": None,
    "total_seconds": 3.0,
    "final_metrics": {"loss": 0.01, "val_loss": 0.1, "val_accuracy": 0.975},
}


def test_accuracy_is_labelled_as_measured_on_val_dataset(capsys) -> None:
    _print_summary(INFO)
    out = capsys.readouterr().out
    assert "test accuracy" not in out
    assert "val_accuracy (on val_dataset): 0.9750" in out


def test_already_complete_run_says_so_with_the_final_metrics(capsys) -> None:
    _print_summary({**INFO, "resumed_from_step": 1500}, "runs/digits")
    out = capsys.readouterr().out
    assert "run already complete at step 1500 in runs/digits" in out
    assert "val_accuracy=0.975" in out
    assert "wall time" not in out


def test_resumed_run_that_trained_further_is_a_normal_summary(capsys) -> None:
    _print_summary({**INFO, "resumed_from_step": 500}, "runs/digits")
    out = capsys.readouterr().out
    assert "already complete" not in out and "final_step: 1500" in out
