"""Shared setup for core's tests (core alone: pyyaml and tqdm, no array library).

``tests/core`` goes on ``sys.path`` so that the helper modules here
(``_core_factories``, ``_core_toy_backend``) are importable, the factories also as
``'module:attr'`` strings from a ``TrainingLoop``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
