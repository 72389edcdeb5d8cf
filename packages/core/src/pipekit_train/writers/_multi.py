"""``MultiWriter``: several writers behind one ``MetricWriter``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._base import MetricWriter

__all__ = ["MultiWriter"]


class MultiWriter:
    """Forward every call to each writer in order (``metric_writer: [tensorboard, jsonl]``).

    ``log_config`` / ``log_info`` reach the writers that have them. ``close`` closes
    every writer even when one of them fails, then re-raises the first failure.
    """

    def __init__(self, writers: Iterable[MetricWriter]) -> None:
        self.writers: list[MetricWriter] = list(writers)

    def write(self, step: int, metrics: dict[str, float]) -> None:
        for writer in self.writers:
            writer.write(step, metrics)

    def flush(self) -> None:
        for writer in self.writers:
            writer.flush()

    def log_config(self, config: dict[str, Any]) -> None:
        self._forward("log_config", config)

    def log_info(self, info: dict[str, Any]) -> None:
        self._forward("log_info", info)

    def _forward(self, method: str, payload: dict[str, Any]) -> None:
        for writer in self.writers:
            call = getattr(writer, method, None)
            if callable(call):
                call(payload)

    def close(self) -> None:
        first: BaseException | None = None
        for writer in self.writers:
            try:
                writer.close()
            except Exception as exc:  # close the others before reporting
                first = first or exc
        if first is not None:
            raise first

    def __len__(self) -> int:
        return len(self.writers)

    def __repr__(self) -> str:
        return f"MultiWriter({self.writers!r})"
