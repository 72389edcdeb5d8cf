"""ProgressBar: a tqdm bar on a terminal (a real pty here), plain lines elsewhere.

On a TTY it draws a bar over `max_steps` with steps/s, ETA and the latest metrics, and
shows a sampler's `state.phase` in its description. On a non-TTY stream (a StringIO, a
log file) or under `CI`, it prints one plain line per `log_every_n_steps` instead.
"""

from __future__ import annotations

import io
import os
import pty
import re
import select

import pytest
from _core_toy_backend import ToyData, ToyProgram, toy_loop

from pipekit_train import ProgressBar, TrainerCarryState, TrainingLoop
from pipekit_train.engine import run_driver


@pytest.fixture(autouse=True)
def _no_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)


def _loop(**kw: object) -> TrainingLoop:
    args: dict[str, object] = {
        "dataset": {"x": [0.0], "y": [0.0]},
        "loss": "mse",
        "max_steps": 40,
        "log_every_n_steps": 10,
    }
    args.update(kw)
    return TrainingLoop(**args)  # type: ignore[arg-type]


def _drive(bar: ProgressBar, loop: TrainingLoop, state: TrainerCarryState) -> None:
    bar.on_run_start(loop, state)
    for step in range(state.step + 5, loop.max_steps + 1, 5):
        state.step = step
        state.metrics = {"loss": 1.0 / step, "val_loss": 2.0 / step, "name": "x"}  # type: ignore[dict-item]
        bar.on_step_end(loop, state)
    bar.on_run_end(loop, state, {"final_step": state.step})


def test_plain_lines_on_a_non_tty_stream() -> None:
    stream = io.StringIO()
    loop = _loop(backend="keras")
    _drive(ProgressBar(file=stream), loop, TrainerCarryState())
    lines = stream.getvalue().splitlines()
    # One line per log step (10, 20, 30, 40), none for the steps in between, no \r.
    assert [int(re.search(r"step (\d+)/40", x).group(1)) for x in lines] == [10, 20, 30, 40]  # type: ignore[union-attr]
    assert "\r" not in stream.getvalue()
    assert lines[-1].startswith("train[keras] step 40/40 (100%)")
    assert "loss=0.025" in lines[-1] and "val_loss=0.05" in lines[-1] and "name=" not in lines[-1]
    assert re.search(r"steps/s \| ETA \d+s", lines[0])


def test_ci_variable_forces_plain_lines_even_on_a_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as tty:
        assert tty.isatty()
        bar = ProgressBar(file=tty)
        _drive(bar, _loop(), TrainerCarryState())
        assert bar._bar is None
    out = _read_all(master)
    assert "\r" not in out.replace("\r\n", "\n")
    assert out.count("step ") == 4


def _read_all(fd: int) -> str:
    chunks = []
    while select.select([fd], [], [], 0.2)[0]:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_bar_on_a_terminal_with_rate_eta_metrics_and_phase() -> None:
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as tty:
        loop = _loop(max_steps=100, backend="keras")
        bar = ProgressBar(file=tty)
        state = TrainerCarryState(step=60)  # a resumed run starts the bar at its step
        bar.on_run_start(loop, state)
        assert bar._bar is not None and bar._bar.n == 60 and bar._bar.total == 100
        state.phase = "warmup"  # type: ignore[attr-defined]  # a sampler's carry
        state.step, state.metrics = 80, {"loss": 0.125, "accept_prob": 0.8}
        bar.on_step_end(loop, state)
        assert bar._bar.desc.startswith("warmup[keras]")
        assert bar._bar.postfix is not None and "loss=0.125" in bar._bar.postfix
        state.phase = "sample"  # type: ignore[attr-defined]
        state.step = 100
        bar.on_step_end(loop, state)
        bar.on_run_end(loop, state, {})
        assert bar._bar is None
    out = _read_all(master)
    assert "\r" in out  # redrawn in place
    assert "sample[keras]" in out and "100/100" in out
    assert "step/s" in out  # tqdm's rate; the ETA is the "<…" part of its bar
    assert re.search(r"<\d\d:\d\d", out)
    assert "accept_prob=0.8" in out


def test_ending_twice_and_a_step_after_the_end_are_harmless() -> None:
    stream = io.StringIO()
    loop = _loop()
    bar = ProgressBar(file=stream)
    state = TrainerCarryState()
    _drive(bar, loop, state)
    n = len(stream.getvalue().splitlines())
    bar.on_run_end(loop, state, {})
    bar.on_step_end(loop, state)
    assert len(stream.getvalue().splitlines()) == n


def test_progress_bar_in_a_driver_run(capsys: pytest.CaptureFixture[str]) -> None:
    loop = toy_loop(max_steps=50, log_every_n_steps=10, callbacks=[ProgressBar()])
    run_driver(loop, ToyProgram(), 0.0, data=ToyData(), checkpointer=None, steps_per_call=7)
    err = capsys.readouterr().err  # captured stderr is not a terminal: plain lines
    assert "train[equinox] step 50/50 (100%)" in err
    assert err.count("\n") == 5


def test_yaml_form() -> None:
    assert ProgressBar(leave=False).to_config() == {"ProgressBar": {"leave": False}}
    assert ProgressBar() == ProgressBar()
    assert ProgressBar(file=io.StringIO()) == ProgressBar()


def test_a_sized_terminal_sets_the_bar_width() -> None:
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 60, 0, 0))
    with os.fdopen(slave, "w") as tty:
        _drive(ProgressBar(file=tty), _loop(), TrainerCarryState())
    lines = [x for x in _read_all(master).replace("\r\n", "\r").split("\r") if x.strip()]
    assert lines and max(len(x) for x in lines) <= 60
    assert any("40/40" in x for x in lines)
