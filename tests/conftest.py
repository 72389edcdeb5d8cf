"""Makes ``tests/`` importable so every suite can share its helpers (``posterior_checks``,
``resume_killer``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
