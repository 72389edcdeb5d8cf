"""The runs the checks share: one finished run in this process, one reference run through the
CLI in a fresh process, and the fresh-process CLI calls themselves.

A check that only reads a finished run (its report, its events, its rows) or continues from a
copy of its folder uses :func:`finished`; a check that compares bits across processes uses
:func:`reference`, made the same way as the runs it is compared with (``pipekit-train run`` in
a fresh interpreter). Each is made once per case and process, in a folder of its own that the
checks never write to.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._callbacks import EventLog, RowLog
from ._case import BackendCase
from ._files import committed_steps

__all__ = ["Finished", "CliRun", "finished", "reference", "cli", "run_yaml", "jsonl_rows"]

#: Row keys that hold wall-clock readings, not results: never compared across runs.
_CLOCK_WORDS = ("time", "seconds", "per_second", "per_sec", "throughput")


@dataclass
class Finished:
    """A run of the case to its end, in this process."""

    run_dir: Path
    op: Any
    info: dict[str, Any]
    events: EventLog
    writer: RowLog


@dataclass
class CliRun:
    """One ``pipekit-train run`` in a fresh process."""

    run_dir: Path
    returncode: int
    stdout: str
    stderr: str
    info: dict[str, Any] | None

    @property
    def report(self) -> dict[str, Any]:
        """``backend_info`` as the run wrote it (``--info-json``); a run that wrote none fails."""
        if self.info is None:
            raise AssertionError(f"the run wrote no backend_info: {self.failure()}")
        return self.info

    def failure(self) -> str:
        return f"exit {self.returncode}; stderr ends:\n{self.stderr[-3000:]}"


_FINISHED: dict[tuple[str, str], Finished | BaseException] = {}
_REFERENCE: dict[tuple[str, str], CliRun | BaseException] = {}
_ROOT: list[Path] = []


def _root() -> Path:
    if not _ROOT:
        _ROOT.append(Path(tempfile.mkdtemp(prefix="pipekit-contract-")))
    return _ROOT[0]


def _key(case: BackendCase) -> tuple[str, str]:
    return (case.backend, case.make_loop)


def finished(case: BackendCase) -> Finished:
    """The case run to its end in this process (made once), with an event log and a row log."""
    key = _key(case)
    if key not in _FINISHED:
        run_dir = Path(tempfile.mkdtemp(prefix="finished-", dir=_root())) / "run"
        events, writer = EventLog(), RowLog()
        try:
            op, info = case.loop(run_dir, callbacks=[events], metric_writer=writer).run()
        except Exception as exc:  # kept: the next check says so without running it again
            _FINISHED[key] = exc
            raise
        _FINISHED[key] = Finished(run_dir, op, info, events, writer)
    return _shared(_FINISHED[key], "the run to the end in this process")


def reference(case: BackendCase) -> CliRun:
    """The case run to its end by ``pipekit-train run`` in a fresh process (made once)."""
    key = _key(case)
    if key not in _REFERENCE:
        folder = Path(tempfile.mkdtemp(prefix="reference-", dir=_root()))
        run = run_yaml(case, folder)
        if run.returncode != 0 or run.info is None:
            failed = AssertionError(f"the uninterrupted reference run failed: {run.failure()}")
            _REFERENCE[key] = failed
            raise failed
        _REFERENCE[key] = run
    return _shared(_REFERENCE[key], "the uninterrupted reference run")


def _shared(value: Any, what: str) -> Any:
    """A shared run, or the error it failed with (raised again, not run again)."""
    if isinstance(value, BaseException):
        raise AssertionError(f"{what} failed earlier: {type(value).__name__}: {value}")
    return value


def subprocess_env(case: BackendCase) -> dict[str, str]:
    """This interpreter's import path and the case's variables, for a fresh process.

    Every fresh process gets the same ``PYTHONHASHSEED`` (0 unless set): a library that sums
    terms in the order of a ``set`` of names (NumPyro's ``Trace_ELBO``) otherwise differs in
    the last bit between two processes, and the checks compare processes bit for bit.
    """
    env = dict(os.environ)
    env.setdefault("PYTHONHASHSEED", "0")
    paths = [p for p in sys.path if p and Path(p).exists()]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env.update(case.env)
    return env


def compilation_cache() -> str:
    """The JAX compilation cache the fresh processes share: the session's, else the kit's."""
    return os.environ.get("JAX_COMPILATION_CACHE_DIR") or str(_root() / "jax-cache")


def cli(case: BackendCase, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``pipekit-train ARGS`` in a fresh interpreter (this one's), in ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "pipekit_train.cli", *args],
        capture_output=True,
        text=True,
        timeout=case.timeout_s,
        env=subprocess_env(case),
        cwd=str(cwd),
    )


def run_yaml(
    case: BackendCase,
    folder: Path,
    *,
    callbacks: tuple[dict[str, Any], ...] = (),
    name: str = "loop.yaml",
) -> CliRun:
    """Write the case's YAML (run folder ``folder/run``) and ``pipekit-train run`` it."""
    run_dir = folder / "run"
    path = folder / name
    path.write_text(case.yaml(run_dir, callbacks=callbacks))
    info_path = folder / (name + ".info.json")
    info_path.unlink(missing_ok=True)
    proc = cli(
        case,
        "run",
        str(path),
        "--no-progress",
        "--info-json",
        str(info_path),
        "--compilation-cache",
        compilation_cache(),
        cwd=folder,
    )
    info = json.loads(info_path.read_text()) if info_path.is_file() else None
    return CliRun(run_dir, proc.returncode, proc.stdout, proc.stderr, info)


def jsonl_rows(run_dir: Path) -> list[tuple[int, dict[str, Any]]]:
    """The ``jsonl`` writer's rows of ``run_dir`` as ``(step, metrics)``, clock keys left out."""
    path = run_dir / "logs" / "jsonl" / "metrics.jsonl"
    if not path.is_file():
        return []
    out = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        step = int(row.pop("step"))
        out.append((step, {k: v for k, v in row.items() if not _is_clock(k)}))
    return out


def _is_clock(key: str) -> bool:
    return any(word in key for word in _CLOCK_WORDS)


def steps_on_disk(run_dir: Path) -> list[int]:
    """The committed checkpoint steps of ``run_dir`` (re-exported for the checks)."""
    return committed_steps(run_dir)
