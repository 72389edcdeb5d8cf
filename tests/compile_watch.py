"""Whether JAX compiled anything while a block ran, seen through ``jax.monitoring``.

``compiles()`` (the contract kit's, ``pipekit_train.testing``) yields a list that collects
every XLA compilation (``backend_compile``), MLIR lowering and persistent-cache hit JAX
reports while the block runs; abstract tracing
(``jax.eval_shape``) reports none. The bad-input tests assert it stays empty, and each of
their files has a positive control: a good run fills it. ``assert_refused_before_compiling``
is their one assertion: the error, its field, no compilation, ``checkpoint_dir`` untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipekit_train.testing import compiles

__all__ = ["assert_refused_before_compiling", "compiles"]


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
