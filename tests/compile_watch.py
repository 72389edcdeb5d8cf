"""Whether JAX compiled anything while a block ran, seen through ``jax.monitoring``.

``compiles()`` yields a list that collects every XLA compilation (``backend_compile``), MLIR
lowering and persistent-cache hit JAX reports while the block runs; abstract tracing
(``jax.eval_shape``) reports none. The bad-input tests assert it stays empty, and each of
their files has a positive control: a good run fills it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def compiles() -> Iterator[list[str]]:
    import jax.monitoring as mon

    seen: list[str] = []

    def on_duration(name: str, secs: float, **kw: Any) -> None:
        if "backend_compile" in name or "mlir" in name:
            seen.append(name)

    def on_event(name: str, **kw: Any) -> None:
        if "cache_hit" in name:
            seen.append(name)

    mon.register_event_duration_secs_listener(on_duration)
    mon.register_event_listener(on_event)
    try:
        yield seen
    finally:
        mon.unregister_event_duration_listener(on_duration)
        mon.unregister_event_listener(on_event)
