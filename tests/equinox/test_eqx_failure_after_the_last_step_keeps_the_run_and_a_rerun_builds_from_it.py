"""A failure after the last step never loses the run (issue 36, item 7).

The example's own pattern: a ``JaxModelOp`` subclass (``op.with_module`` builds the trained
op, as in ``docs/jax-model-op.md``) and a user callback that writes a report in
``on_run_end``. When either raises after the last step:

- ``loop.run()`` raises ``FinishError`` naming the stage (operator / report), the call
  that failed and the final checkpoint, with the original exception as ``__cause__``;
- the final checkpoint (step 10) is committed on disk, nothing is lost;
- a rerun trains nothing (``resumed_from_step == final_step``, no new step folder) and
  builds the op from that checkpoint: once the cause is gone it returns the op a run that
  never failed returns, bit for bit; while it persists the rerun says it was already
  complete and failed again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _eqx_helpers import assert_bit_identical, make_module, tiny_loop

from pipekit_train import Callback, Checkpoint, EarlyStopping
from pipekit_train.adapters.equinox import JaxModelOp
from pipekit_train.checkpoints import read_state
from pipekit_train.errors import FinishError


class FlakyExportOp(JaxModelOp):
    """Building the trained op calls an export service that is down ``failures`` times."""

    failures = 0

    def with_module(self, module: Any, state: Any = None) -> JaxModelOp:
        if FlakyExportOp.failures > 0:
            FlakyExportOp.failures -= 1
            raise ConnectionError("model registry unreachable")
        return super().with_module(module, state)


class ReportAtEnd(Callback):
    """Writes a one-line report at the end; broken while ``broken`` is set."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.broken = True
        self.teardowns = 0

    def on_run_end(self, loop: Any, state: Any, info: dict[str, Any]) -> None:
        if self.broken:
            raise KeyError("final_accuracy")
        self.path.write_text(f"final_step={info['final_step']}\n")

    def on_exception(self, loop: Any, state: Any, error: BaseException) -> None:
        self.teardowns += 1


def _loop(ckpt: Path, **kw: Any) -> Any:
    return tiny_loop(
        model_op=FlakyExportOp(make_module()),
        checkpoint_dir=str(ckpt),
        callbacks=[Checkpoint(every_n_steps=4), *kw.pop("callbacks", [])],
        **kw,
    )


def _steps(ckpt: Path) -> list[str]:
    return sorted((p.name for p in ckpt.iterdir() if p.name.isdigit()), key=int)


def test_an_op_that_fails_to_build_keeps_the_final_checkpoint_and_the_rerun_builds_it(tmp_path):
    FlakyExportOp.failures = 0
    reference, _ = _loop(tmp_path / "reference").run()  # a run that never fails

    ckpt = tmp_path / "ckpt"
    FlakyExportOp.failures = 2
    with pytest.raises(FinishError) as caught:
        _loop(ckpt).run()
    err = caught.value
    assert isinstance(err.__cause__, ConnectionError)
    assert (err.stage, err.final_step, err.checkpoint_step) == ("operator", 10, 10)
    text = str(err)
    assert "building the trained operator failed after the last step" in text, text
    assert "ConnectionError: model registry unreachable" in text
    assert "FlakyExportOp.with_module" in text  # the call that failed
    assert f"The final checkpoint, step 10 in {ckpt}" in text and "is safe" in text
    assert "runs no steps" in text and "nothing is trained again" in text
    assert _steps(ckpt) == ["4", "8", "10"]
    assert read_state(ckpt, step=10)  # committed, readable and its checksums verified

    # The cause persists: the rerun trains nothing and says it failed again.
    with pytest.raises(FinishError) as again:
        _loop(ckpt).run()
    assert "was already complete at step 10 (no steps run now)" in str(again.value)
    assert "failed again" in str(again.value)
    assert _steps(ckpt) == ["4", "8", "10"]

    # The cause is gone (it was transient): the rerun answers from the checkpoint.
    op, info = _loop(ckpt).run()
    assert isinstance(op, FlakyExportOp)
    assert info["resumed_from_step"] == info["final_step"] == 10
    assert info["stop_reason"] == "already complete at step 10"
    assert info["steps_per_second"] is None  # no step ran
    assert _steps(ckpt) == ["4", "8", "10"]
    assert_bit_identical(op, reference)


def test_a_report_callback_that_fails_at_the_end_is_named_and_the_rerun_writes_it(tmp_path):
    FlakyExportOp.failures = 0
    ckpt = tmp_path / "ckpt"
    report = ReportAtEnd(tmp_path / "report.txt")
    with pytest.raises(FinishError) as caught:
        _loop(ckpt, callbacks=[report]).run()
    err = caught.value
    assert isinstance(err.__cause__, KeyError)
    assert err.stage == "report"
    assert "building the run report (ReportAtEnd.on_run_end) failed" in str(err), str(err)
    assert "The final checkpoint, step 10" in str(err)
    assert report.teardowns == 1  # the callbacks' teardown ran
    assert _steps(ckpt) == ["4", "8", "10"]

    report.broken = False
    op, info = _loop(ckpt, callbacks=[report]).run()
    assert info["resumed_from_step"] == info["final_step"] == 10
    assert report.path.read_text() == "final_step=10\n"
    assert _steps(ckpt) == ["4", "8", "10"]


def test_without_a_checkpoint_dir_the_error_says_a_rerun_trains_again(tmp_path):
    FlakyExportOp.failures = 1
    with pytest.raises(FinishError) as caught:
        tiny_loop(model_op=FlakyExportOp(make_module())).run()
    assert "checkpoint_dir is not set" in str(caught.value)
    assert "a rerun trains again from step 0" in str(caught.value)
    assert caught.value.checkpoint_step is None


def test_after_an_early_stop_the_error_names_the_step_it_stopped_at(tmp_path):
    FlakyExportOp.failures = 1
    ckpt = tmp_path / "ckpt"
    stop = EarlyStopping(monitor="loss", mode="max", min_delta=100.0, patience=0)
    with pytest.raises(FinishError) as caught:
        _loop(ckpt, max_steps=20, callbacks=[stop]).run()
    err = caught.value
    assert err.final_step == err.checkpoint_step < 20
    assert f"the step the run stopped at, step {err.final_step} in {ckpt}" in str(err)
    assert "stopped before its last step, 20" in str(err)
    assert int(_steps(ckpt)[-1]) == err.final_step
