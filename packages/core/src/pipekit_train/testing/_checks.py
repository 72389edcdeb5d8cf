"""The backend contract, one named check each: what every backend promises its users.

Each check is a function ``check(case, tmp_path)`` whose docstring says what it proves; it
raises :class:`ContractFailure` (an ``AssertionError``) naming itself, the backend and what
was wrong. :data:`CHECKS` lists them in the order they are documented in
``docs/writing-a-backend.md``.
"""

from __future__ import annotations

import inspect as _inspect
import json
import random
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from .._refs import is_import_string
from ..callbacks import Callback
from ..errors import CheckpointError, ConfigError, FinishError
from ._callbacks import EventLog
from ._case import BackendCase
from ._compiles import compiles
from ._files import bit_differences, flip_bytes, newest_data_file, snapshot
from ._runs import cli, finished, jsonl_rows, reference, run_yaml, steps_on_disk, subprocess_env

__all__ = ["CHECKS", "Check", "ContractFailure"]


class ContractFailure(AssertionError):
    """A backend broke a named check of the contract."""

    def __init__(self, check: str, backend: str, why: str) -> None:
        self.check, self.backend, self.why = check, backend, why
        super().__init__(f"backend {backend!r} fails check {check!r}: {why}")


@dataclass(frozen=True)
class Check:
    """A named check of the contract; its documentation is its function's docstring."""

    name: str
    fn: Callable[[BackendCase, Path], None]

    @property
    def doc(self) -> str:
        return _inspect.getdoc(self.fn) or ""

    def run(self, case: BackendCase, tmp_path: Path) -> None:
        """Run the check on ``case`` in the empty folder ``tmp_path``."""
        try:
            self.fn(case, Path(tmp_path))
        except ContractFailure:
            raise
        except AssertionError as exc:
            raise ContractFailure(self.name, case.backend, str(exc)) from exc
        except Exception as exc:
            raise ContractFailure(self.name, case.backend, f"{type(exc).__name__}: {exc}") from exc


CHECKS: dict[str, Check] = {}


def _check(fn: Callable[[BackendCase, Path], None]) -> Callable[[BackendCase, Path], None]:
    CHECKS[fn.__name__] = Check(fn.__name__, fn)
    return fn


def _require(cond: Any, why: str) -> None:
    if not cond:
        raise AssertionError(why)


def _state(run_dir: Path) -> dict[str, Any]:
    from ..checkpoints import read_state

    return read_state(run_dir)


def _host_steps_after_first_checkpoint(case: BackendCase, final: int) -> list[int]:
    """Host-event steps with a committed checkpoint before them and steps left after them."""
    steps = [s for s in range(case.log_every, final, case.log_every) if s > case.checkpoint_every]
    _require(
        steps,
        f"the case's run ends at step {final}: too short for a host event after the first "
        f"checkpoint (step {case.checkpoint_every}) and before the end; make the run longer or "
        "the cadences shorter",
    )
    return steps


def _signal_entry(step: int, signal: str, hook: str = "step") -> dict[str, Any]:
    return {
        "factory": "pipekit_train.testing:SignalAt",
        "kwargs": {"step": step, "signal": signal, "hook": hook},
    }


def _compare_to_reference(case: BackendCase, resumed: Any, ref: Any, where: str) -> None:
    """The resumed run's final state equals the reference's bit for bit."""
    _require(
        resumed.report["final_step"] == ref.report["final_step"],
        f"{where}: ended at step {resumed.report['final_step']}, the uninterrupted run at "
        f"{ref.report['final_step']}",
    )
    diffs = bit_differences(_state(resumed.run_dir), _state(ref.run_dir))
    _require(not diffs, f"{where}: the final checkpoint differs from an uninterrupted run: {diffs}")


def _increasing(steps: list[int]) -> bool:
    return all(a < b for a, b in zip(steps, steps[1:], strict=False))


def _rows_after(rows: list[tuple[int, dict[str, Any]]], count: int) -> list[tuple[int, Any]]:
    return rows[count:]


# ----------------------------------------------------------------------------- the checks


@_check
def run_returns_an_operator_and_the_documented_report(case: BackendCase, tmp_path: Path) -> None:
    """``loop.run()`` returns ``(operator, backend_info)``: the operator is callable, has
    ``save`` and a class-level ``load``; ``backend_info`` holds every key of
    ``docs/run-report.md`` with its documented type, names the backend, reports the installed
    ``pipekit-train-core`` version, and says the run went to its end from scratch with its
    last step checkpointed in ``checkpoint_dir``."""
    from ..engine import REQUIRED_KEYS

    fin = finished(case)
    op, info = fin.op, fin.info
    _require(callable(op), f"the operator {type(op).__name__} is not callable")
    _require(callable(getattr(op, "save", None)), f"{type(op).__name__} has no save(path)")
    _require(
        callable(getattr(type(op), "load", None)), f"{type(op).__name__} has no classmethod load"
    )
    missing = sorted(set(REQUIRED_KEYS) - set(info))
    _require(not missing, f"backend_info lacks {missing}")
    wrong = {
        k: type(info[k]).__name__
        for k, types in REQUIRED_KEYS.items()
        if not isinstance(info[k], types)
    }
    _require(not wrong, f"backend_info keys of the wrong type: {wrong}")
    _require(info["backend"] == case.backend, f"backend_info['backend'] is {info['backend']!r}")
    core = metadata.version("pipekit-train-core")
    _require(
        info["versions"].get("pipekit-train-core") == core,
        f"backend_info['versions'] does not report pipekit-train-core {core}: {info['versions']}",
    )
    _require(info["final_step"] > 0, f"final_step is {info['final_step']}")
    _require(info["resumed_from_step"] is None, "a fresh run reports resumed_from_step")
    _require(info["interrupted"] is None, f"interrupted is {info['interrupted']!r}")
    _require(
        info["last_checkpoint_step"] == info["final_step"],
        f"last_checkpoint_step {info['last_checkpoint_step']} != final_step {info['final_step']}",
    )
    _require(
        info["run_dir"] is not None and Path(info["run_dir"]) == fin.run_dir,
        f"run_dir {info['run_dir']!r} is not the checkpoint_dir {str(fin.run_dir)!r}",
    )
    _require(
        all(isinstance(v, float) for v in info["final_metrics"].values()),
        f"final_metrics values must be floats: {info['final_metrics']}",
    )


@_check
def bad_options_are_refused_before_anything_compiles(case: BackendCase, tmp_path: Path) -> None:
    """An unknown ``backend_options`` key, and each of the case's ``bad_options``, is a
    ``ConfigError`` whose message names the key — raised before any step runs or anything
    compiles (no callback hook is called, JAX reports no compilation where JAX is installed),
    with every file already in ``checkpoint_dir`` as it was."""
    bad = {"pipekit_contract_no_such_option": 1, **dict(case.bad_options)}
    for i, (key, value) in enumerate(bad.items()):
        run_dir = tmp_path / f"bad-{i}"
        run_dir.mkdir()
        (run_dir / "notes.txt").write_text("the user's own file\n")
        before = snapshot(run_dir)
        events = EventLog()
        base = case.base_loop()
        options = {**base.backend_options, key: value}
        error: BaseException | None = None
        seen: list[str] = []
        try:
            loop = case.loop(run_dir, callbacks=[events], backend_options=options).resolved()
            with compiles() as seen:
                loop.run()
        except ConfigError as exc:
            error = exc
        except Exception as exc:  # the wrong kind of refusal
            raise AssertionError(
                f"backend_options[{key!r}] = {value!r} raised {type(exc).__name__}: {exc}; "
                "expected a ConfigError naming the key"
            ) from exc
        _require(error is not None, f"backend_options[{key!r}] = {value!r} was accepted")
        _require(key in str(error), f"the ConfigError does not name {key!r}: {error}")
        hooks = [e for e in events.events if e[0] != "reset"]
        _require(not hooks, f"backend_options[{key!r}]: hooks ran before the refusal: {hooks}")
        _require(not seen, f"backend_options[{key!r}]: JAX compiled before the refusal: {seen}")
        _require(
            snapshot(run_dir) == before,
            f"backend_options[{key!r}]: the refused run changed checkpoint_dir {run_dir}",
        )


@_check
def sigkill_then_rerun_is_bit_identical(case: BackendCase, tmp_path: Path) -> None:
    """A real ``pipekit-train run`` process killed by SIGKILL at a random host-event step
    (chosen anew each time, at the step's host event or right after its checkpoint), then the
    same command again, resumes from a committed checkpoint at or before the kill, ends at the
    same step, and its final checkpoint and every metric row it logged after resuming equal an
    uninterrupted run's bit for bit."""
    ref = reference(case)
    final = int(ref.report["final_step"])
    candidates = _host_steps_after_first_checkpoint(case, final)
    tried: list[str] = []
    # An asynchronous save may still be in flight when the kill lands; a kill that left no
    # committed step proves nothing about resuming, so the kit kills again later.
    for attempt in range(4):
        step = random.choice(candidates[len(candidates) * attempt // 4 :])
        hook = (
            random.choice(("step", "checkpoint")) if step % case.checkpoint_every == 0 else "step"
        )
        where = f"killed at step {step} ({hook} hook)"
        shutil.rmtree(tmp_path / "run", ignore_errors=True)
        killed = run_yaml(case, tmp_path, callbacks=(_signal_entry(step, "SIGKILL", hook),))
        _require(
            killed.returncode == -9, f"{where}: the process was not killed: {killed.failure()}"
        )
        committed = steps_on_disk(killed.run_dir)
        if committed:
            break
        tried.append(where)
    _require(committed, f"no checkpoint was committed before any of these kills: {tried}")
    _require(max(committed) <= step, f"{where}: a step after the kill was committed: {committed}")
    logged = len(jsonl_rows(killed.run_dir))

    resumed = run_yaml(case, tmp_path)
    _require(
        resumed.returncode == 0 and resumed.info, f"{where}: rerun failed: {resumed.failure()}"
    )
    start = resumed.report["resumed_from_step"]
    _require(
        start in committed,
        f"{where}: the rerun resumed from {start!r}, not a committed step of {committed}",
    )
    _compare_to_reference(case, resumed, ref, where)
    want = dict(jsonl_rows(ref.run_dir))
    rows = _rows_after(jsonl_rows(resumed.run_dir), logged)
    _require(rows, f"{where}: the rerun logged no row")
    _require(
        [s for s, _ in rows] == [s for s in sorted(want) if s > start],
        f"{where}: the rerun logged steps {[s for s, _ in rows]}, the uninterrupted run "
        f"{[s for s in sorted(want) if s > start]} after step {start}",
    )
    differ = [s for s, row in rows if row != want[s]]
    _require(not differ, f"{where}: logged metrics differ at steps {differ}")


@_check
def sigterm_checkpoints_and_the_cli_exits_143(case: BackendCase, tmp_path: Path) -> None:
    """SIGTERM at a host-event step makes ``pipekit-train run`` checkpoint that step, say how
    to resume, report ``interrupted: SIGTERM`` and exit 143; the same command again resumes
    from that step and ends bit-identical to an uninterrupted run."""
    ref = reference(case)
    final = int(ref.report["final_step"])
    steps = _host_steps_after_first_checkpoint(case, final)
    off_cadence = [s for s in steps if s % case.checkpoint_every] or steps
    step = random.choice(off_cadence)
    where = f"SIGTERM at step {step}"
    stopped = run_yaml(case, tmp_path, callbacks=(_signal_entry(step, "SIGTERM"),))
    _require(stopped.returncode == 143, f"{where}: expected exit 143, got {stopped.failure()}")
    _require(
        "resume with: pipekit-train run" in stopped.stderr,
        f"{where}: the CLI did not say how to resume: {stopped.stderr[-1500:]}",
    )
    _require(stopped.report["interrupted"] == "SIGTERM", f"{where}: info {stopped.info}")
    committed = steps_on_disk(stopped.run_dir)
    _require(
        committed and max(committed) == step,
        f"{where}: the newest checkpoint is not of step {step}: {committed}",
    )
    resumed = run_yaml(case, tmp_path)
    _require(
        resumed.returncode == 0 and resumed.info, f"{where}: rerun failed: {resumed.failure()}"
    )
    _require(
        resumed.report["resumed_from_step"] == step,
        f"{where}: the rerun resumed from {resumed.report['resumed_from_step']!r}",
    )
    _compare_to_reference(case, resumed, ref, where)


def _copy_finished(case: BackendCase, tmp_path: Path) -> tuple[Any, Path]:
    fin = finished(case)
    run_dir = tmp_path / "run"
    shutil.copytree(fin.run_dir, run_dir)
    return fin, run_dir


@_check
def changed_config_is_refused_by_the_resume_guard(case: BackendCase, tmp_path: Path) -> None:
    """Running a changed config (another ``seed``) on a run's ``checkpoint_dir`` is a
    ``CheckpointError`` naming ``seed``, from Python and from ``pipekit-train run``, and every
    file in the folder is left as it was."""
    fin, run_dir = _copy_finished(case, tmp_path)
    before = snapshot(run_dir)
    seed = int(case.base_loop().seed) + 1
    try:
        case.loop(run_dir, seed=seed).run()
    except CheckpointError as exc:
        _require("seed" in str(exc), f"the CheckpointError does not name 'seed': {exc}")
    else:
        raise AssertionError(f"a run with seed={seed} continued a checkpoint made with another")
    _require(snapshot(run_dir) == before, "the refused resume changed checkpoint_dir")

    path = tmp_path / "loop.yaml"
    path.write_text(case.yaml(run_dir))
    proc = cli(case, "run", str(path), "--no-progress", "--set", f"seed={seed}", cwd=tmp_path)
    _require(proc.returncode not in (0, -9), f"the CLI continued it: exit {proc.returncode}")
    _require(
        "seed" in proc.stderr, f"the CLI's refusal does not name 'seed': {proc.stderr[-1500:]}"
    )


@_check
def finished_run_is_answered_already_complete(case: BackendCase, tmp_path: Path) -> None:
    """Running a finished run again runs no step: from Python, ``backend_info`` says
    ``stop_reason: "already complete at step N"`` with ``resumed_from_step == final_step ==
    N``; ``pipekit-train run`` says "already complete" and exits 0."""
    fin, run_dir = _copy_finished(case, tmp_path)
    final = int(fin.info["final_step"])
    _, info = case.loop(run_dir).run()
    want = f"already complete at step {final}"
    _require(info["stop_reason"] == want, f"stop_reason is {info['stop_reason']!r}, not {want!r}")
    _require(
        info["resumed_from_step"] == final and info["final_step"] == final,
        f"resumed_from_step {info['resumed_from_step']}, final_step {info['final_step']}",
    )
    path = tmp_path / "loop.yaml"
    path.write_text(case.yaml(run_dir))
    proc = cli(case, "run", str(path), "--no-progress", cwd=tmp_path)
    _require(proc.returncode == 0, f"the CLI exited {proc.returncode}: {proc.stderr[-1500:]}")
    _require(
        "already complete" in proc.stdout + proc.stderr,
        f"the CLI did not say 'already complete': {proc.stdout[-1500:]}",
    )


class _ReportFailsAtTheEnd(Callback):
    """A user callback whose end-of-run report raises."""

    def on_run_end(self, loop: Any, state: Any, info: dict[str, Any]) -> None:
        raise LookupError("the end-of-run report is broken")


@_check
def failure_after_the_last_step_keeps_the_run(case: BackendCase, tmp_path: Path) -> None:
    """A failure after the last step keeps the run: on a finished run's folder, a callback
    whose ``on_run_end`` raises makes ``run()`` raise ``FinishError`` (``stage == "report"``,
    the callback named, its error as ``__cause__``, the final checkpoint at step N said to
    be safe), every committed step left as it was; the rerun without it runs no step and
    answers "already complete at step N"."""
    fin, run_dir = _copy_finished(case, tmp_path)
    final = int(fin.info["final_step"])
    steps, state = steps_on_disk(run_dir), _state(run_dir)
    try:
        case.loop(run_dir, callbacks=[_ReportFailsAtTheEnd()]).run()
    except FinishError as exc:
        text = str(exc)
        _require(exc.stage == "report", f"the FinishError names stage {exc.stage!r}: {text}")
        _require(isinstance(exc.__cause__, LookupError), f"its cause is {exc.__cause__!r}")
        _require("_ReportFailsAtTheEnd.on_run_end" in text, f"the call is not named: {text}")
        _require(
            exc.checkpoint_step == final and f"step {final}" in text and "is safe" in text,
            f"the FinishError does not say the checkpoint of step {final} is safe: {text}",
        )
    else:
        raise AssertionError("a callback's on_run_end raised, but run() returned")
    _require(
        steps_on_disk(run_dir) == steps, f"the steps on disk changed: {steps_on_disk(run_dir)}"
    )
    _require(not bit_differences(_state(run_dir), state), "the final checkpoint's arrays changed")
    _, info = case.loop(run_dir).run()
    want = f"already complete at step {final}"
    _require(info["stop_reason"] == want, f"the rerun's stop_reason is {info['stop_reason']!r}")


@_check
def inspect_reads_the_run_folder(case: BackendCase, tmp_path: Path) -> None:
    """``pipekit-train inspect RUN_DIR`` (table and ``--json``) lists every committed step of
    a run, each valid with its meta, the final step among them."""
    ref = reference(case)
    proc = cli(case, "inspect", str(ref.run_dir), "--json", cwd=tmp_path)
    _require(
        proc.returncode == 0, f"inspect --json exited {proc.returncode}: {proc.stderr[-1500:]}"
    )
    rows = json.loads(proc.stdout)
    on_disk = steps_on_disk(ref.run_dir)
    _require([r["step"] for r in rows] == on_disk, f"inspect lists {rows}, the folder {on_disk}")
    bad = [r for r in rows if not r["valid"] or r["meta"] is None]
    _require(not bad, f"inspect calls these steps invalid: {bad}")
    _require(ref.report["final_step"] in on_disk, "the final step is not listed")
    table = cli(case, "inspect", str(ref.run_dir), cwd=tmp_path)
    _require(table.returncode == 0, f"inspect exited {table.returncode}: {table.stderr[-1500:]}")
    _require(
        str(ref.report["final_step"]) in table.stdout, f"table lacks the final step: {table.stdout}"
    )


@_check
def damaged_newest_step_is_caught_and_the_run_falls_back(case: BackendCase, tmp_path: Path) -> None:
    """Eight inverted bytes in the newest step's biggest data file (same size, same mtime) are
    caught on the next run: a warning names the step and the checksum, the step is renamed
    ``<name>.corrupt``, the run resumes from the step before and ends with the same final
    checkpoint, bit for bit."""
    fin, run_dir = _copy_finished(case, tmp_path)
    steps = steps_on_disk(run_dir)
    _require(len(steps) >= 2, f"the run kept {steps}: it needs two checkpoints to fall back")
    newest, main, data = newest_data_file(run_dir)
    want = _state(fin.run_dir)
    flip_bytes(data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, info = case.loop(run_dir).run()
    said = [str(w.message) for w in caught]
    _require(
        any(f"step {newest}" in m and "checksum" in m for m in said),
        f"no warning named step {newest} and its checksum: {said}",
    )
    _require(
        main.with_name(main.name + ".corrupt").exists(),
        f"{main.name} was not quarantined as {main.name}.corrupt",
    )
    _require(
        info["resumed_from_step"] == steps[-2],
        f"resumed from {info['resumed_from_step']!r}, not the step before ({steps[-2]})",
    )
    diffs = bit_differences(_state(run_dir), want)
    _require(not diffs, f"the recovered run's final checkpoint differs: {diffs}")


_LOAD_SCRIPT = """\
import json, sys
sys.path.insert(0, {markers!r})
from importlib import import_module
from pipekit_train.errors import PipekitError
cls = getattr(import_module({module!r}), {qualname!r})
before = set(sys.modules)
outcomes = []
for folder in {folders!r}:
    try:
        cls.load(folder)
        outcomes.append("loaded")
    except PipekitError as exc:
        outcomes.append("refused: " + type(exc).__name__ + ": " + str(exc))
    except Exception as exc:
        outcomes.append("failed: " + type(exc).__name__ + ": " + str(exc))
print(json.dumps({{"modules": sorted(set(sys.modules) - before), "outcomes": outcomes}}))
"""


@_check
def operator_saves_and_loads_without_importing_recorded_code(
    case: BackendCase, tmp_path: Path
) -> None:
    """The trained operator saves to a folder and its class loads it back (given the case's
    ``load_kwargs``, the user's own code where the structure is code): outputs on the case's
    ``op_inputs`` equal bit for bit. In a fresh process, ``load(folder)`` with nothing else
    either loads or refuses with a ``PipekitError`` (``UntrustedCodeError``: the folder names
    code; ``ConfigError``: pass the structure), and imports no module named by an
    import string recorded in the folder's JSON files — also after every such string is
    rewritten to name a module whose import would leave a marker file."""
    fin = finished(case)
    op = fin.op
    folder = tmp_path / "op"
    op.save(folder)
    loaded = type(op).load(folder, **case.load_kwargs())
    _require(type(loaded) is type(op), f"load returned a {type(loaded).__name__}")
    inputs = case.inputs()
    if inputs is not None:
        diffs = bit_differences(_leaves(loaded(inputs)), _leaves(op(inputs)))
        _require(not diffs, f"the loaded operator's outputs differ: {diffs}")

    recorded = _recorded_modules(folder)
    edited = tmp_path / "op-edited"
    shutil.copytree(folder, edited)
    markers = tmp_path / "markers"
    markers.mkdir()
    marker = tmp_path / "imported.marker"
    name = "pipekit_contract_recorded_code"
    (markers / f"{name}.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n"
        "def make(*a, **k):\n    raise RuntimeError('called')\n"
    )
    _rewrite_import_strings(edited, f"{name}:make")
    script = _LOAD_SCRIPT.format(
        markers=str(markers),
        module=type(op).__module__,
        qualname=type(op).__qualname__,
        folders=[str(folder), str(edited)],
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=case.timeout_s,
        env=subprocess_env(case),
        cwd=str(tmp_path),
    )
    _require(not marker.exists(), "loading ran code that an edited op folder named")
    _require(proc.returncode == 0, f"the fresh loading process failed: {proc.stderr[-2000:]}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    leaked = sorted(recorded & set(report["modules"]))
    _require(not leaked, f"loading imported modules recorded in the folder: {leaked}")
    failed = [o for o in report["outcomes"] if o.startswith("failed")]
    _require(not failed, f"load(folder) in a fresh process neither loaded nor refused: {failed}")


def _leaves(value: Any) -> dict[str, Any]:
    """``{path: array}`` of a nested output (mappings, sequences, arrays)."""
    out: dict[str, Any] = {}

    def walk(v: Any, path: str) -> None:
        if isinstance(v, dict):
            for k in sorted(v, key=str):
                walk(v[k], f"{path}/{k}")
        elif isinstance(v, (list, tuple)):
            for i, item in enumerate(v):
                walk(item, f"{path}/{i}")
        else:
            out[path or "/"] = v

    walk(value, "")
    return out


def _json_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.json") if p.is_file())


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _recorded_modules(folder: Path) -> set[str]:
    """The modules named by import strings in the folder's JSON files (and their parents
    that are not already this kit's own)."""
    found: set[str] = set()
    for path in _json_files(folder):
        try:
            data = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        for s in _strings(data):
            if is_import_string(s):
                found.add(s.split(":", 1)[0])
    return found


def _rewrite_import_strings(folder: Path, replacement: str) -> None:
    def swap(value: Any) -> Any:
        if isinstance(value, str) and is_import_string(value):
            return replacement
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swap(v) for v in value]
        return value

    for path in _json_files(folder):
        try:
            data = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        path.write_text(json.dumps(swap(data)))


@_check
def callbacks_see_the_events_in_order(case: BackendCase, tmp_path: Path) -> None:
    """A callback sees ``reset``, then ``on_run_start`` at step 0, then ``on_step_end`` at
    strictly increasing steps covering every multiple of ``log_every_n_steps`` and the final
    step, each ``on_checkpoint`` right after its step's ``on_step_end`` (at every multiple of
    the checkpoint cadence and at the end), and ``on_run_end`` at the final step last; never
    ``on_exception``."""
    fin = finished(case)
    events = fin.events.events
    final = int(fin.info["final_step"])
    names = [n for n, _ in events]
    _require(names[:2] == ["reset", "on_run_start"], f"the run began with {events[:3]}")
    _require(events[1][1] == 0, f"on_run_start at step {events[1][1]}, not 0")
    _require(events[-1] == ("on_run_end", final), f"the run ended with {events[-3:]}")
    _require("on_exception" not in names, "on_exception was called in a good run")
    step_ends = [int(s or 0) for n, s in events if n == "on_step_end"]
    _require(_increasing(step_ends), f"on_step_end steps {step_ends}")
    expected = set(range(case.log_every, final + 1, case.log_every)) | {final}
    missing = sorted(expected - set(step_ends))
    _require(not missing, f"no on_step_end at the log steps {missing}")
    last_step_end: int | None = None
    checkpoints = []
    for name, step in events:
        if name == "on_step_end":
            last_step_end = step
        elif name == "on_checkpoint":
            checkpoints.append(step)
            _require(
                step == last_step_end,
                f"on_checkpoint({step}) came after on_step_end of step {last_step_end}",
            )
    want = set(range(case.checkpoint_every, final + 1, case.checkpoint_every)) | {final}
    _require(set(checkpoints) == want, f"checkpoints at {checkpoints}, expected {sorted(want)}")


@_check
def writers_get_rows_at_the_log_steps(case: BackendCase, tmp_path: Path) -> None:
    """The metric writer gets one row at every multiple of ``log_every_n_steps`` (and at most
    the final step besides), in step order, each a non-empty mapping of finite floats that
    agrees with what callbacks saw in ``state.metrics`` at that step; it is closed at the
    end."""
    fin = finished(case)
    writer = fin.writer
    final = int(fin.info["final_step"])
    steps = [s for s, _ in writer.rows]
    expected = set(range(case.log_every, final + 1, case.log_every))
    _require(_increasing(steps), f"rows at steps {steps}")
    _require(
        expected <= set(steps) <= expected | {final},
        f"rows at steps {steps}, expected the multiples of {case.log_every}: {sorted(expected)}",
    )
    empty = [s for s, row in writer.rows if not row]
    _require(not empty, f"empty rows at steps {empty}")
    _require(not writer.non_finite(), f"non-finite values: {writer.non_finite()}")
    seen = fin.events.metrics
    disagree = [
        (s, k)
        for s, row in writer.rows
        for k, v in row.items()
        if k in seen.get(s, {}) and seen[s][k] != v
    ]
    _require(not disagree, f"rows and state.metrics disagree at {disagree}")
    _require(writer.closes >= 1, "the writer was never closed")
