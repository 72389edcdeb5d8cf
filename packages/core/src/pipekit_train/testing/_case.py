"""What a backend author hands the kit: :class:`BackendCase`, a small loop by import string.

The loop comes from an import string (``"my_backend.contract:make_loop"``), not an object,
because several checks run it in fresh processes through ``pipekit-train run``: the factory
must be importable there and the loop must be writable as YAML (its model, data and task
given as ``'module:factory'`` strings, as in any YAML example). The kit owns the fields it
checks — ``checkpoint_dir``, the ``Checkpoint`` cadence, ``log_every_n_steps`` and the
writers — and sets them on a copy of the factory's loop.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._refs import resolve_import_string
from ..callbacks import Checkpoint
from ..errors import ConfigError

__all__ = ["BackendCase"]


@dataclass(frozen=True, eq=False)
class BackendCase:
    """One backend's loop for the contract checks.

    - ``backend``: the registered name (the ``pipekit_train.backends`` entry point).
    - ``make_loop``: ``"module:function"``; the function takes no argument and returns a
      small ``TrainingLoop`` on ``backend`` (a dozen or two steps, deterministic in its
      ``seed``), every object field an import string, with no ``checkpoint_dir``,
      ``Checkpoint`` or ``metric_writer`` of its own.
    - ``op_inputs``: ``"module:function"`` returning a batch the trained operator is called
      on (its outputs must survive save → load bit for bit), or ``None`` when the operator
      is not called on inputs (a posterior with no predictive function).
    - ``op_load_kwargs``: ``"module:function"`` returning the keyword arguments a user passes
      to the operator class's ``load`` when the structure is their code (Equinox's
      ``factory=``, a Lightning module class), or ``None`` when ``load(path)`` needs none.
    - ``bad_options``: ``{key: bad value}`` of the backend's own options to try besides the
      kit's unknown key; each must be a ``ConfigError`` naming the key.
    - ``checkpoint_every``, ``log_every``: the cadences the kit runs with (the run must be
      long enough for two checkpoints and a host event between them).
    - ``env``: environment variables the fresh processes need (``KERAS_BACKEND``).
    - ``timeout_s``: the limit for each fresh process.
    """

    backend: str
    make_loop: str
    op_inputs: str | None = None
    op_load_kwargs: str | None = None
    bad_options: Mapping[str, Any] = field(default_factory=dict)
    checkpoint_every: int = 4
    log_every: int = 2
    env: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 600.0

    def __post_init__(self) -> None:
        for name in ("checkpoint_every", "log_every"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(
                    f"BackendCase.{name} must be a positive integer, got {value!r}",
                    field=f"BackendCase.{name}",
                )

    def _resolve(self, name: str) -> Any:
        ref = getattr(self, name)
        try:
            fn = resolve_import_string(ref)
        except (ImportError, AttributeError, ValueError) as exc:
            raise ConfigError(
                f"BackendCase.{name} {ref!r} does not name an importable function "
                f"('package.module:function'): {exc}",
                field=f"BackendCase.{name}",
            ) from exc
        return fn()

    def base_loop(self) -> Any:
        """The factory's loop, checked: a ``TrainingLoop`` on ``backend``, YAML-writable."""
        from ..loop import TrainingLoop

        loop = self._resolve("make_loop")
        if not isinstance(loop, TrainingLoop):
            raise ConfigError(
                f"BackendCase.make_loop {self.make_loop!r} returned a {type(loop).__name__}, "
                "not a TrainingLoop",
                field="BackendCase.make_loop",
            )
        if loop.backend != self.backend:
            raise ConfigError(
                f"BackendCase.make_loop builds a loop on backend {loop.backend!r}, but the case "
                f"is for {self.backend!r}",
                field="BackendCase.make_loop",
            )
        return loop

    def inputs(self) -> Any:
        """The batch of ``op_inputs`` (``None`` when the case has none)."""
        return None if self.op_inputs is None else self._resolve("op_inputs")

    def load_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``op_load_kwargs`` (``{}`` when the case has none)."""
        return {} if self.op_load_kwargs is None else dict(self._resolve("op_load_kwargs"))

    def loop(
        self,
        run_dir: Path,
        *,
        callbacks: Sequence[Any] = (),
        metric_writer: Any = None,
        **fields: Any,
    ) -> Any:
        """The factory's loop with the kit's checkpoint folder, cadences, callbacks and writer."""
        base = self.base_loop()
        kept = [cb for cb in base.callbacks if not isinstance(cb, Checkpoint)]
        return dataclasses.replace(
            base,
            checkpoint_dir=str(run_dir),
            callbacks=[*kept, Checkpoint(every_n_steps=self.checkpoint_every), *callbacks],
            log_every_n_steps=self.log_every,
            metric_writer=metric_writer,
            **fields,
        )

    def yaml(self, run_dir: Path, *, callbacks: Sequence[Mapping[str, Any]] = ()) -> str:
        """The loop as the YAML file ``pipekit-train run`` reads, writing ``jsonl`` rows, with
        ``callbacks`` (YAML callback entries) appended."""
        import yaml

        data = self.loop(run_dir, metric_writer="jsonl").to_dict()
        data["callbacks"] = [*data["callbacks"], *callbacks]
        return yaml.safe_dump(data, sort_keys=False)

    def __str__(self) -> str:
        return self.backend
