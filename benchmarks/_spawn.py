"""Fresh-process runs for the whole-run cases: spawn a worker, read its marks, its peak RSS.

Standard library only, so a worker that imports it pays nothing for it. Both sides of a
whole-run comparison are spawned the same way:

- the parent takes ``time.monotonic()`` just before it spawns the child (``spawned``);
- the worker records ``time.monotonic()`` at the steps it can observe (:class:`Marks`) and
  prints one JSON line at the end (:func:`emit`); ``CLOCK_MONOTONIC`` is one clock for every
  process of the machine, so the parent can subtract its spawn time from the child's marks;
- the parent reaps the child with ``os.wait4``, whose ``ru_maxrss`` is the child's peak
  resident set size (KiB on Linux), and takes ``time.monotonic()`` again (``exited``).

From these: time to the first step (spawn → the first mark at a step ≥ ``first_step``),
whole-run wall (spawn → exit), steady-state steps/s (between the first mark at or after
half of the last marked step and the last mark) and peak RSS.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any


class Marks:
    """The worker side: ``time.monotonic()`` at each observed step, and the in-run timer."""

    def __init__(self) -> None:
        self.at: dict[int, float] = {}
        self.started: float | None = None

    def start(self) -> None:
        """The start of the run proper (after imports and data): the old ``seconds``."""
        self.started = time.perf_counter()

    def step(self, step: int) -> None:
        self.at.setdefault(int(step), time.monotonic())


def emit(marks: Marks, **extra: Any) -> None:
    """Print the worker's one JSON line: its marks and ``seconds`` since :meth:`Marks.start`."""
    out: dict[str, Any] = {"marks": {str(k): v for k, v in marks.at.items()}, **extra}
    if marks.started is not None and "seconds" not in out:
        out["seconds"] = time.perf_counter() - marks.started
    print(json.dumps(out), flush=True)


@dataclass
class Proc:
    """One fresh-process run, as the parent saw it. Times in seconds, RSS in KiB."""

    wall: float  # spawn → exit
    rss_kib: int  # ru_maxrss of the child
    seconds: float | None  # the worker's own in-run timer (imports and data excluded)
    first: float | None  # spawn → the first mark at a step ≥ first_step
    rate: float | None  # steps/s between two marks in the second half of the run
    marks: dict[int, float] = field(default_factory=dict)  # step → seconds since spawn


def _rate(marks: dict[int, float]) -> float | None:
    if len(marks) < 2:
        return None
    last = max(marks)
    a = min(s for s in marks if s >= last / 2)
    if a == last:
        a = sorted(marks)[-2]
    dt = marks[last] - marks[a]
    return (last - a) / dt if dt > 0 else None


def spawn(args: list[str], *, first_step: int = 1, timeout: float = 600.0) -> Proc:
    """Run ``python *args`` in a fresh interpreter (``PYTHONHASHSEED=0``) and measure it.

    ``PYTHONHASHSEED=0``: NumPyro's ``Trace_ELBO`` sums sites in ``set`` order, which is in
    the traced program and so in the persistent-cache key
    (docs/decisions/0123-svi-losses-and-pythonhashseed.md).
    """
    env = dict(os.environ, PYTHONHASHSEED="0")
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        spawned = time.monotonic()
        child = subprocess.Popen([sys.executable, *args], stdout=out, stderr=err, env=env)
        deadline = spawned + timeout
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                child.kill()
                pid, status, usage = os.wait4(child.pid, 0)
                break
            time.sleep(0.005)
        exited = time.monotonic()
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped: Popen must not wait
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({child.returncode}):\n{stderr[-3000:]}")
    line = json.loads(stdout.strip().splitlines()[-1])
    marks = {int(k): float(v) - spawned for k, v in line.get("marks", {}).items()}
    firsts = [t for s, t in marks.items() if s >= first_step]
    return Proc(
        wall=exited - spawned,
        rss_kib=int(usage.ru_maxrss),
        seconds=line.get("seconds"),
        first=min(firsts) if firsts else None,
        rate=_rate(marks),
        marks=marks,
    )
