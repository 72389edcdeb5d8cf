"""The ``MetricWriter`` protocol and the YAML form of writers."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..errors import ConfigError, closest


@runtime_checkable
class MetricWriter(Protocol):
    """Receives scalar metrics keyed by step.

    ``write`` may buffer; ``flush`` makes everything written so far durable;
    ``close`` flushes and releases the resource. Writers must accept being
    written to with a step lower than one seen before (a resumed run).
    """

    def write(self, step: int, metrics: dict[str, float]) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


def _kinds() -> dict[str, type]:
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


def resolve_writer(spec: Any, field: str = "metric_writer") -> Any:
    """Turn a writer object, ``{"kind": ..., **kwargs}`` dict or ``"kind:path"`` into a writer."""
    if spec is None:
        return None
    if isinstance(spec, str):
        kind, sep, path = spec.partition(":")
        if not sep:
            raise ConfigError(
                f"{field} string must look like 'jsonl:PATH', 'csv:PATH', "
                f"'tensorboard:DIR' or 'mlflow:TRACKING_URI', got {spec!r}",
                field=field,
            )
        spec = {"kind": kind, ("tracking_uri" if kind == "mlflow" else "path"): path}
    if isinstance(spec, dict):
        spec = dict(spec)
        kind = spec.pop("kind", None)
        kinds = _kinds()
        if kind not in kinds:
            raise ConfigError(
                f"{field}.kind must be one of {sorted(kinds)}, got {kind!r}"
                + closest(str(kind), kinds),
                field=f"{field}.kind",
            )
        try:
            return kinds[kind](**spec)
        except TypeError as exc:
            raise ConfigError(
                f"{field}: bad arguments for {kind} writer: {exc}", field=field
            ) from exc
    if isinstance(spec, MetricWriter):
        return spec
    raise ConfigError(
        f"{field} must be a MetricWriter (write/flush/close), a dict with 'kind', or "
        f"'kind:path'; got {type(spec).__name__}",
        field=field,
    )


def writer_to_config(writer: Any) -> Any:
    """The YAML form of a writer, if it has one."""
    if writer is None or isinstance(writer, (dict, str)):
        return writer
    to_config = getattr(writer, "to_config", None)
    if to_config is None:
        raise ConfigError(
            f"metric_writer {type(writer).__name__} cannot be written to YAML",
            field="metric_writer",
        )
    return to_config()
