"""Sweeps: many configurations of one loop, searched by Optuna, resumable trial by trial.

``Sweep(loop, space, objective=…)`` (or a sweep YAML file, ``load_sweep`` /
``pipekit-train sweep FILE``) runs every trial as a normal run in
``<folder>/trials/<number>``; the study lives in Optuna's RDB storage, so a killed sweep
resumes where it stopped and several processes may share one study. Importing this
package imports neither Optuna nor any array library (the ``[sweep]`` extra brings Optuna).
"""

from __future__ import annotations

from ._file import load_sweep, sweep_from_dict
from ._space import Param
from ._sweep import INJECTABLE, Sweep
from ._table import format_rows, study_rows

__all__ = [
    "Sweep",
    "Param",
    "INJECTABLE",
    "load_sweep",
    "sweep_from_dict",
    "study_rows",
    "format_rows",
]
