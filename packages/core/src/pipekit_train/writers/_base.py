"""The ``MetricWriter`` protocol and the YAML form of writers."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..errors import ConfigError

__all__ = ["MetricWriter", "writer_to_config"]


@runtime_checkable
class MetricWriter(Protocol):
    """Receives scalar metrics keyed by step.

    ``write`` may buffer; ``flush`` makes everything written so far durable;
    ``close`` flushes and releases the resource. Writers must accept being
    written to with a step lower than one seen before (a resumed run).

    Two methods are optional (``LogToExperiment`` calls them when a writer has
    them): ``log_config(config)`` receives the loop's configuration once at the
    start of a run (TensorBoard hparams, MLflow params) and ``log_info(info)``
    facts about the run such as the backend and library versions (MLflow tags,
    a TensorBoard text summary). Both take flat or nested ``dict``s of plain
    values.
    """

    def write(self, step: int, metrics: dict[str, float]) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


def writer_to_config(writer: Any) -> Any:
    """The YAML form of a ``metric_writer`` value (names, dicts, lists, writer objects)."""
    if writer is None or isinstance(writer, (dict, str)):
        return writer
    if isinstance(writer, (list, tuple)):
        return [writer_to_config(w) for w in writer]
    to_config = getattr(writer, "to_config", None)
    if to_config is None:
        raise ConfigError(
            f"metric_writer {type(writer).__name__} cannot be written to YAML; give it as a "
            "name ('jsonl', 'tensorboard', …), 'kind:PATH' or {kind: …, …} instead",
            field="metric_writer",
        )
    return to_config()
