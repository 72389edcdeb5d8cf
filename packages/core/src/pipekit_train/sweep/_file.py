"""A sweep YAML file → ``Sweep``.

::

    loop: digits_mlp.yaml          # a loop YAML (relative to this file), or a mapping inline
    folder: runs/digits_sweep      # default: runs/<this file's stem>
    objective: val_accuracy
    direction: maximize
    n_trials: 12
    sampler: TPESampler            # or {name: TPESampler, kwargs: {n_startup_trials: 4}}
    pruner: MedianPruner           # or null
    storage: null                  # a SQLAlchemy URL; default sqlite <folder>/study.db
    space:
      optimizer_config.lr: {type: float, low: 1.0e-4, high: 1.0e-2, log: true}
      model_op.kwargs.hidden: {type: int, low: 16, high: 64, step: 16}
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError, closest
from ._sweep import Sweep

__all__ = ["load_sweep", "sweep_from_dict", "SWEEP_KEYS"]

SWEEP_KEYS = (
    "loop",
    "space",
    "objective",
    "direction",
    "n_trials",
    "timeout",
    "sampler",
    "pruner",
    "storage",
    "folder",
    "seed",
    "population",
    "population_rule",
    "study_name",
    "grace_s",
)


def _read_yaml(path: Path, what: str) -> Any:
    if not path.is_file():
        raise ConfigError(f"{what} {str(path)!r} does not exist", field="loop")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML in {path}: {exc}") from exc


def sweep_from_dict(
    data: Any, base_dir: str | os.PathLike[str] = ".", default_folder: str = "runs/sweep"
) -> Sweep:
    """Build a ``Sweep`` from a sweep file's mapping; paths resolve against ``base_dir``."""
    if not isinstance(data, Mapping):
        raise ConfigError("a sweep file must hold a mapping (loop, space, objective, …)")
    for key in data:
        if key not in SWEEP_KEYS:
            raise ConfigError(
                f"unknown sweep field {key!r}"
                + closest(str(key), SWEEP_KEYS)
                + f"; valid fields: {', '.join(SWEEP_KEYS)}",
                field=str(key),
            )
    for key in ("loop", "space", "objective"):
        if data.get(key) is None:
            raise ConfigError(
                f"sweep file has no {key!r}: give "
                + {
                    "loop": "the base loop (a loop YAML path or a mapping)",
                    "space": "the search space ({dotted.path: {type: float, low, high}})",
                    "objective": "the metric to optimise, such as val_accuracy",
                }[key],
                field=key,
            )
    base = Path(base_dir).resolve()
    loop = data["loop"]
    search: tuple[str, ...] = (str(base), os.getcwd())
    if isinstance(loop, str):
        path = (base / loop) if not Path(loop).is_absolute() else Path(loop)
        search = (str(path.resolve().parent), *search)
        loop = _read_yaml(path, "sweep loop file")
    if not isinstance(loop, Mapping):
        raise ConfigError(
            "sweep loop must be a loop YAML path or a mapping of TrainingLoop fields", field="loop"
        )
    kwargs = {k: v for k, v in data.items() if k not in ("loop",)}
    kwargs.setdefault("folder", default_folder)
    return Sweep(loop=dict(loop), search_path=search, **kwargs)


def load_sweep(path: str | os.PathLike[str]) -> Sweep:
    """Read a sweep YAML file (``folder`` defaults to ``runs/<file stem>``)."""
    file = Path(path)
    data = _read_yaml(file, "sweep file")
    return sweep_from_dict(data, file.parent, default_folder=f"runs/{file.stem}")
