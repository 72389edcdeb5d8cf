"""Whether JAX compiled anything while a block ran, seen through ``jax.monitoring``.

``compiles()`` yields a list that collects every XLA compilation (``backend_compile``), MLIR
lowering and persistent-cache hit JAX reports while the block runs; abstract tracing
(``jax.eval_shape``) reports none. The bad-input tests assert it stays empty, and each of
their files has a positive control: a good run fills it. ``assert_refused_before_compiling``
is their one assertion: the error, its field, no compilation, ``checkpoint_dir`` untouched.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


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
        _unregister(mon, on_duration, on_event)


def _unregister(mon: Any, on_duration: Callable[..., None], on_event: Callable[..., None]) -> None:
    """``jax.monitoring``'s public unregister calls (JAX 0.9+), or JAX 0.8's by-callback ones."""
    if hasattr(mon, "unregister_event_duration_listener"):
        mon.unregister_event_duration_listener(on_duration)
        mon.unregister_event_listener(on_event)
        return
    from jax._src import monitoring as src  # JAX 0.8, the floor: no public unregister yet

    src._unregister_event_duration_listener_by_callback(on_duration)
    src._unregister_event_listener_by_callback(on_event)


def assert_refused_before_compiling(
    run: Callable[[], Any], error: type[BaseException], field: str, words: str, run_dir: Path
) -> None:
    """``run()`` raises ``error`` (a ``PipekitError``) whose ``field`` is ``field`` and whose
    message names it and holds ``words``; JAX compiled nothing meanwhile, and every file in
    ``run_dir`` (planted before) is as it was."""
    from user_files import snapshot

    from pipekit_train.errors import PipekitError

    before = snapshot(run_dir)
    with compiles() as seen, pytest.raises(error) as info:
        run()
    assert isinstance(info.value, PipekitError)
    assert info.value.field == field and field in str(info.value), info.value
    assert words in str(info.value), info.value
    assert not seen, f"compiled before the error: {seen}"
    assert snapshot(run_dir) == before
