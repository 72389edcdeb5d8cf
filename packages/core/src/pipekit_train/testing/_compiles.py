"""Whether JAX compiled anything while a block ran, seen through ``jax.monitoring``.

:func:`compiles` yields a list that collects every XLA compilation (``backend_compile``), MLIR
lowering and persistent-cache hit JAX reports while the block runs; abstract tracing
(``jax.eval_shape``) reports none. Where JAX is not installed (a Lightning-only install) the
list stays empty: the kit's other signals (no callback event, an untouched ``checkpoint_dir``)
then carry the "before anything compiles" claim alone. JAX is imported only when the block
starts, never when :mod:`pipekit_train.testing` is imported.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["compiles"]


@contextlib.contextmanager
def compiles() -> Iterator[list[str]]:
    """Collect the names of JAX's compile events while the block runs (empty without JAX)."""
    seen: list[str] = []
    if importlib.util.find_spec("jax") is None:
        yield seen
        return
    import jax.monitoring as mon

    def on_duration(event: str, duration_secs: float, **kwargs: str | int) -> None:
        if "backend_compile" in event or "mlir" in event:
            seen.append(event)

    def on_event(event: str, **kwargs: str | int) -> None:
        if "cache_hit" in event:
            seen.append(event)

    mon.register_event_duration_secs_listener(on_duration)
    mon.register_event_listener(on_event)
    try:
        yield seen
    finally:
        _unregister(mon, on_duration, on_event)


def _unregister(mon: Any, on_duration: Callable[..., None], on_event: Callable[..., None]) -> None:
    """``jax.monitoring``'s public unregister calls (JAX 0.9+), or JAX 0.8's by-callback ones."""
    if hasattr(mon, "unregister_event_duration_listener"):
        mon.unregister_event_duration_listener(on_duration)
        mon.unregister_event_listener(on_event)
        return
    from jax._src import monitoring as src  # JAX 0.8, the floor: no public unregister yet

    src._unregister_event_duration_listener_by_callback(on_duration)  # type: ignore[attr-defined]
    src._unregister_event_listener_by_callback(on_event)  # type: ignore[attr-defined]
