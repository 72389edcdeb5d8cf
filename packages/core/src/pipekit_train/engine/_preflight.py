"""Answer before anything is imported or compiled: from the config and the checkpoint files.

``pipekit-train run`` calls :func:`preflight` on the loop read from YAML, its factories
not built, before the backend is imported. It answers what the config and the newest
committed checkpoint's meta (plain JSON, read without jax or torch) can tell:

- a backend that is not installed: ``BackendNotInstalledError`` from the entry points;
- a bad ``backend_options`` value: ``ConfigError`` from the backend's light spec module
  (``pipekit_train.adapters._<module>_options``: the ``OPTION_SPECS`` the adapter checks
  against, importing no framework); the checks that need the library (a Lightning
  strategy's name, a Keras callback's type) stay with the adapter;
- a fingerprint field the config alone derives (``backend``, ``seed``, the normalised
  ``optimizer``, ``max_steps`` when the schedule takes its length from it,
  ``batch_size``) differing from the checkpoint's: the ``CheckpointError`` the full path
  raises (``fingerprint.mismatch_message`` + ``OVERRIDE_HINT``), under ``resume="auto"``;
- a finished run (``resume="auto"``, the newest step at or past the run's last step, and the
  checkpoint's ``config_digest`` equal to this config's, so the factories would build the
  same objects): an :class:`EarlyAnswer` with the step, the meta's final metrics and the
  checkpoint folder.

Anything else returns ``None`` and the full path runs (``resume="force"`` / ``"never"``, a
config without a digest, a step that cannot be read back, …): the preflight never writes,
never quarantines, and never answers what only the built objects can tell.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import CheckpointError
from ..fingerprint import OVERRIDE_HINT, fingerprint_diff, mismatch_message
from ._options import OptionSpec, parse_backend_options
from ._resume import parse_resume
from ._store import StepUnreadable

__all__ = ["EarlyAnswer", "preflight", "light_option_specs"]

_MISSING = "<missing>"


@dataclass(frozen=True)
class EarlyAnswer:
    """A finished run, told from its newest checkpoint's meta."""

    backend: str
    step: int
    checkpoint_dir: str
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def stop_reason(self) -> str:
        return f"already complete at step {self.step}"

    def info(self) -> dict[str, Any]:
        """What is known without the backend, in ``backend_info``'s keys."""
        metrics = self.meta.get("metrics")
        return {
            "backend": self.backend,
            "final_step": self.step,
            "resumed_from_step": self.step,
            "last_checkpoint_step": self.step,
            "stop_reason": self.stop_reason,
            "interrupted": None,
            "final_metrics": dict(metrics) if isinstance(metrics, Mapping) else {},
            "phase": self.meta.get("phase"),
            "answered_from": "checkpoint metadata (backend not imported)",
            "checkpoint_dir": self.checkpoint_dir,
        }


@dataclass(frozen=True)
class _LightSpecs:
    specs: Sequence[OptionSpec]
    keep_unknown: bool
    store: str
    light_checks: frozenset[str] = frozenset()


def light_option_specs(module: str) -> _LightSpecs | None:
    """The option specs of the backend whose adapter is ``module``, from its light module
    ``pipekit_train.adapters._<name>_options`` (``None`` when it ships none). A third-party
    backend registered as a top-level package ``pkg`` ships it as the top-level module
    ``_pkg_options`` (a sibling, so importing it does not import the adapter)."""
    head, _, name = module.rpartition(".")
    light = f"{head}._{name}_options" if head else f"_{name}_options"
    try:
        mod = importlib.import_module(light)
    except ModuleNotFoundError as e:
        if e.name == light:
            return None
        raise
    return _LightSpecs(
        specs=tuple(mod.OPTION_SPECS),
        keep_unknown=bool(getattr(mod, "KEEP_UNKNOWN", False)),
        store=str(getattr(mod, "CHECKPOINT_STORE", "orbax")),
        light_checks=frozenset(getattr(mod, "LIGHT_CHECKS", ())),
    )


def _check_options(loop: Any, light: _LightSpecs | None) -> str:
    """The resume mode; a bad ``backend_options`` value is a ``ConfigError`` (checks that
    need the backend's library are left to the adapter)."""
    options = loop.backend_options
    if light is not None:
        specs = [s if s.name in light.light_checks else replace(s, check=None) for s in light.specs]
        parse_backend_options(options, specs, backend=loop.backend, keep_unknown=light.keep_unknown)
    return parse_resume(options.get("resume", "auto"))


def _derivable(loop: Any, saved: Mapping[str, Any]) -> dict[str, Any] | None:
    """The fingerprint fields this config alone determines, as the full path writes them
    (``None`` when the checkpoint records an optimiser the config cannot be compared to)."""
    from ..optimizers import (
        is_transformation,
        parse_optimizer_config,
        schedule_length_from_max_steps,
    )

    current: dict[str, Any] = {"backend": loop.backend, "seed": int(loop.seed)}
    if "optimizer" in saved or "optimizer_config" in saved:
        if is_transformation(loop.optimizer_config):
            return None
        spec = parse_optimizer_config(loop.optimizer_config, max_steps=loop.max_steps)
        current["optimizer"] = spec.to_dict()
        current["optimizer_config"] = _MISSING
        depends = schedule_length_from_max_steps(loop.optimizer_config)
        current["max_steps"] = int(loop.max_steps) if depends is not None else _MISSING
        current["max_steps_sets"] = depends if depends is not None else _MISSING
    if "batch_size" in saved:
        current["batch_size"] = int(loop.batch_size)
    return current


def _refuse_if_foreign(loop: Any, saved: Mapping[str, Any], where: str) -> None:
    """The full path's ``CheckpointError`` when a derivable field differs from ``saved``."""
    current = _derivable(loop, saved)
    if current is None:
        return
    new = {k: v for k, v in current.items() if v != _MISSING}
    old = {k: saved[k] for k in current if k in saved}
    diff = fingerprint_diff(old, new)
    if diff:
        raise CheckpointError(mismatch_message(diff, where, new) + "\n" + OVERRIDE_HINT)


def preflight(loop: Any, *, config_digest: str | None) -> EarlyAnswer | None:
    """Check what ``loop`` (factories unbuilt) and its checkpoint files can tell.

    Raises ``BackendNotInstalledError`` / ``ConfigError`` / ``CheckpointError`` as the
    full path would, before any framework import; returns an :class:`EarlyAnswer` for a
    finished run it can vouch for, else ``None`` (run the full path).
    """
    from ..registry import backend_module_name
    from ._inspect import open_checkpoint_files

    module = backend_module_name(loop.backend)
    light = light_option_specs(module)
    mode = _check_options(loop, light)
    if loop.checkpoint_dir is None or mode != "auto":
        return None
    root = Path(loop.checkpoint_dir).expanduser()
    if not root.is_dir():
        return None
    try:
        files = open_checkpoint_files(root)
    except CheckpointError:
        return None
    expected = light.store if light is not None else "orbax"
    if files is None or files.kind != expected:
        return None
    steps = files.steps()
    if not steps:
        return None
    step = steps[-1]
    try:
        meta = files.read_meta(step)
    except StepUnreadable:
        return None  # the full path quarantines it and tries the next one
    saved = meta.get("fingerprint")
    if not isinstance(saved, Mapping):
        return None
    _refuse_if_foreign(loop, saved, f"at step {step} in {files.directory}")
    total = meta.get("total_steps", loop.max_steps)
    if (
        config_digest is None
        or meta.get("config_digest") != config_digest
        or not isinstance(total, int)
        or step < total
    ):
        return None
    return EarlyAnswer(backend=loop.backend, step=step, checkpoint_dir=str(root), meta=meta)
