"""From a ``metric_writer`` value to writer objects, with default locations beside the run.

``metric_writer`` accepts, alone or in a list:

- a writer *name* — ``"jsonl"``, ``"csv"``, ``"tensorboard"``, ``"mlflow"`` — written to
  its default location in the run folder (below);
- ``"kind:PATH"`` (``"mlflow:TRACKING_URI"``) — an explicit location;
- ``{"kind": …, **kwargs}`` — the writer's keyword arguments; without a ``path``
  (``tracking_uri`` for MLflow) the default location is used;
- any object with ``write`` / ``flush`` / ``close`` (a ``MetricWriter``).

The run folder is ``checkpoint_dir`` when the loop has one (so logs sit next to
the checkpoints they describe and a resumed run appends to them), otherwise a new
``runs/<backend>-<UTC time>/`` in the working directory. Logs of kind ``K`` live in
``<run folder>/logs/K`` — ``metrics.jsonl``, ``metrics.csv``, TensorBoard event
files, an MLflow SQLite database ``mlflow.db`` — which is where ``pipekit-train plot``
looks (for the first three). The MLflow default is SQLite, not a file store, because
MLflow 3 keeps file stores in maintenance mode and its client and ``mlflow ui`` refuse
them unless ``MLFLOW_ALLOW_FILE_STORE`` is set.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, closest
from ._base import MetricWriter
from ._extras import require_libraries

if TYPE_CHECKING:
    from ..protocols import LoopView

__all__ = [
    "WRITER_KINDS",
    "LOGS_DIR",
    "MLFLOW_DB",
    "check_writer_spec",
    "default_location",
    "resolve_writer",
    "resolve_writers",
    "run_dir_for",
    "writers_for_loop",
]

WRITER_KINDS: tuple[str, ...] = ("jsonl", "csv", "tensorboard", "mlflow")
"""The writer names ``metric_writer`` accepts."""

LOGS_DIR = "logs"
"""The folder of a run folder that holds one sub-folder of logs per writer kind."""

MLFLOW_DB = "mlflow.db"
"""The file name of the default MLflow store (SQLite) in ``<run folder>/logs/mlflow``."""

_LOCATION_KEY = {"jsonl": "path", "csv": "path", "tensorboard": "path", "mlflow": "tracking_uri"}
_FILE_NAME = {"jsonl": "metrics.jsonl", "csv": "metrics.csv"}
_FORMS = (
    "a writer name ('jsonl', 'csv', 'tensorboard', 'mlflow'), 'kind:PATH' "
    "('mlflow:TRACKING_URI'), {kind: …, …}, a MetricWriter object, or a list of these"
)


def _kinds() -> dict[str, Callable[..., Any]]:
    from .csv import CsvWriter
    from .jsonl import JsonlWriter
    from .mlflow import MlflowWriter
    from .tensorboard import TensorBoardWriter

    return {
        "jsonl": JsonlWriter,
        "csv": CsvWriter,
        "tensorboard": TensorBoardWriter,
        "mlflow": MlflowWriter,
    }


def _unknown_kind(kind: object, field: str, *, sub: bool = True) -> ConfigError:
    suffix = str(kind).rpartition(".")[2]
    if suffix in ("jsonl", "csv") and suffix != kind:  # a file name given for a writer
        hint = f" (did you mean '{suffix}:{kind}'?)"
    else:
        hint = closest(str(kind), WRITER_KINDS)
    return ConfigError(
        f"{field}: unknown writer {kind!r}; a writer is named one of "
        f"{', '.join(WRITER_KINDS)}{hint}. Forms: {_FORMS}",
        field=f"{field}.kind" if sub else field,
    )


def _normalise(spec: Any, field: str) -> dict[str, Any] | MetricWriter:
    """A writer object as it is, or ``{"kind": …, **kwargs}`` (location possibly absent)."""
    if isinstance(spec, str):
        kind, sep, location = spec.partition(":")
        if kind not in WRITER_KINDS:
            raise _unknown_kind(kind, field, sub=bool(sep))
        if not sep:
            return {"kind": kind}
        if not location:
            raise ConfigError(
                f"{field}={spec!r} names no location after ':'; write {kind!r} for the "
                f"default location or '{kind}:PATH'",
                field=field,
            )
        return {"kind": kind, _LOCATION_KEY[kind]: location}
    if isinstance(spec, dict):
        spec = dict(spec)
        kind = spec.get("kind")
        if kind not in WRITER_KINDS:
            raise _unknown_kind(kind, field)
        return spec
    if isinstance(spec, MetricWriter):
        return spec
    raise ConfigError(
        f"{field} must be {_FORMS}; got {type(spec).__name__}",
        field=field,
    )


def _items(spec: Any, field: str = "metric_writer") -> list[tuple[str, Any]]:
    """``(field name, single spec)`` for a single spec or each element of a list."""
    if spec is None:
        return []
    if isinstance(spec, (list, tuple)):
        out = []
        for i, item in enumerate(spec):
            if isinstance(item, (list, tuple)) or item is None:
                raise ConfigError(
                    f"{field}[{i}] must be {_FORMS.removesuffix(', or a list of these')}; "
                    f"got {type(item).__name__}",
                    field=f"{field}[{i}]",
                )
            out.append((f"{field}[{i}]", item))
        return out
    return [(field, spec)]


def _build(spec: dict[str, Any], field: str) -> Any:
    kwargs = dict(spec)
    kind = kwargs.pop("kind")
    try:
        return _kinds()[kind](**kwargs)
    except TypeError as exc:
        raise ConfigError(f"{field}: bad arguments for {kind} writer: {exc}", field=field) from exc


def check_writer_spec(spec: Any, field: str = "metric_writer") -> None:
    """Validate a ``metric_writer`` value without a run folder and without opening anything."""
    for name, item in _items(spec, field):
        normal = _normalise(item, name)
        if isinstance(normal, dict):
            key = _LOCATION_KEY[normal["kind"]]
            _build({key: "unused", **normal}, name)


def default_location(kind: str, run_dir: str | os.PathLike[str]) -> str:
    """Where a writer of ``kind`` writes in ``run_dir`` when no location is given.

    ``jsonl`` → ``<run_dir>/logs/jsonl/metrics.jsonl``, ``csv`` →
    ``<run_dir>/logs/csv/metrics.csv``, ``tensorboard`` → ``<run_dir>/logs/tensorboard``,
    ``mlflow`` → a SQLite store ``sqlite:///<run_dir>/logs/mlflow/mlflow.db`` (absolute),
    which MLflow 3's client and ``mlflow ui`` open without any setting.
    """
    folder = Path(run_dir) / LOGS_DIR / kind
    if kind == "mlflow":
        return f"sqlite:///{(folder / MLFLOW_DB).absolute()}"
    return str(folder / _FILE_NAME[kind]) if kind in _FILE_NAME else str(folder)


def run_dir_for(loop: LoopView, now: float | None = None) -> Path:
    """The run folder of ``loop``: its ``checkpoint_dir``, else a new ``runs/<backend>-<time>``."""
    if loop.checkpoint_dir is not None:
        return Path(loop.checkpoint_dir)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if now is None else now))
    base = Path("runs") / f"{loop.backend}-{stamp}"
    candidate, n = base, 1
    while candidate.exists():
        n += 1
        candidate = base.with_name(f"{base.name}-{n}")
    return candidate


def _writable_folder(location: str, kind: str, field: str) -> None:
    """Create the folder a writer will write into, or raise ``ConfigError`` saying why not."""
    if kind == "mlflow":
        from urllib.parse import unquote, urlparse

        parsed = urlparse(location)
        if parsed.scheme == "sqlite" and location.startswith("sqlite:///"):
            database = location.removeprefix("sqlite:///").partition("?")[0]
            if not database or database == ":memory:":
                return
            folder = Path(database).parent  # sqlite:////abs/x.db → /abs; sqlite:///x.db → .
        elif parsed.scheme not in ("", "file") or len(parsed.scheme) == 1:
            return  # a server or another database URI: MLflow reports its own errors
        else:
            folder = Path(unquote(parsed.path) if parsed.scheme == "file" else location)
    else:
        folder = Path(location) if kind == "tensorboard" else Path(location).parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        writable = os.access(folder, os.W_OK | os.X_OK)
    except OSError as exc:
        raise ConfigError(
            f"{field}: cannot write {kind} logs to {str(folder)!r} "
            f"({exc.strerror or exc}); give a writable location as '{kind}:PATH' or set "
            "checkpoint_dir to a writable folder",
            field=field,
        ) from exc
    if not writable:
        raise ConfigError(
            f"{field}: cannot write {kind} logs to {str(folder)!r} (permission denied); give "
            f"a writable location as '{kind}:PATH' or set checkpoint_dir to a writable folder",
            field=field,
        )


def _object_kind(writer: MetricWriter) -> str | None:
    """The kind of a pipekit writer object (``None`` for any other ``MetricWriter``)."""
    from .mlflow import MlflowWriter
    from .tensorboard import TensorBoardWriter

    if isinstance(writer, TensorBoardWriter):
        return "tensorboard"
    if isinstance(writer, MlflowWriter):
        return "mlflow"
    return None


def resolve_writers(
    spec: Any,
    run_dir: LoopView | str | os.PathLike[str] | None,
    field: str = "metric_writer",
) -> list[MetricWriter]:
    """Build every writer ``spec`` names; a name without a location goes to ``run_dir``.

    ``run_dir`` is the run folder, or a ``TrainingLoop`` (its ``run_dir_for``), or
    ``None`` when every writer has its own location. Each folder written into is
    created (and checked writable) now, before training starts, so a bad location
    is a ``ConfigError`` naming the field rather than a failure at the first log step;
    so is a TensorBoard or MLflow writer whose library is not installed (with the
    ``pip install`` line), found without importing it.
    """
    if run_dir is not None and not isinstance(run_dir, (str, os.PathLike)):
        run_dir = run_dir_for(run_dir)
    writers: list[MetricWriter] = []
    for name, item in _items(spec, field):
        normal = _normalise(item, name)
        if not isinstance(normal, dict):
            kind = _object_kind(normal)
            if kind is not None:  # a TensorBoardWriter / MlflowWriter built by the user
                require_libraries(kind, getattr(normal, "tracking_uri", None), name)
            writers.append(normal)
            continue
        kind = normal["kind"]
        key = _LOCATION_KEY[kind]
        if normal.get(key) is None:
            if run_dir is None:
                raise ConfigError(
                    f"{name}: writer {kind!r} has no location and there is no run folder; "
                    f"give '{kind}:PATH' or {{kind: {kind}, {key}: …}}",
                    field=name,
                )
            normal[key] = default_location(kind, run_dir)
            if kind == "mlflow":  # name the MLflow run after its run folder
                normal.setdefault("run_name", Path(run_dir).name)
                # Artifacts (none are logged today) beside the database, not in ./mlruns.
                artifacts = (Path(run_dir) / LOGS_DIR / kind / "artifacts").absolute()
                normal.setdefault("artifact_location", artifacts.as_uri())
        _writable_folder(str(normal[key]), kind, name)
        require_libraries(kind, str(normal[key]), name)
        writers.append(_build(normal, name))
    return writers


def resolve_writer(spec: Any, field: str = "metric_writer") -> MetricWriter | None:
    """One writer from a single explicit spec (``None`` stays ``None``).

    Kept for callers that hold a writer object or a spec with its location; names
    without a location need the loop: use ``writers_for_loop``. Opens nothing.
    """
    if spec is None:
        return None
    if isinstance(spec, (list, tuple)):
        raise ConfigError(
            f"{field}: resolve_writer takes one writer, got a list; use resolve_writers",
            field=field,
        )
    normal = _normalise(spec, field)
    if not isinstance(normal, dict):
        return normal
    if normal.get(_LOCATION_KEY[normal["kind"]]) is None:
        raise ConfigError(
            f"{field}: the {normal['kind']} writer has no location; give "
            f"'{normal['kind']}:PATH' or let the loop place it (writers_for_loop)",
            field=field,
        )
    writer: MetricWriter = _build(normal, field)
    return writer


def writers_for_loop(loop: LoopView) -> list[MetricWriter]:
    """The writers of ``loop.metric_writer``, placed in the loop's run folder.

    The run folder is computed once here (see ``run_dir_for``), so every writer of
    one run shares it. Call this once per run, on the process that writes metrics.
    """
    if loop.metric_writer is None:
        return []
    return resolve_writers(loop.metric_writer, run_dir_for(loop))
