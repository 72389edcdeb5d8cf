"""``examples/digits_cnn.py`` imported as the module ``digits_cnn`` (its op's factory)."""

from __future__ import annotations

import sys

from _eqx_helpers import REPO

_EXAMPLES = str(REPO / "examples")
if _EXAMPLES not in sys.path:
    sys.path.insert(0, _EXAMPLES)

import digits_cnn  # noqa: E402

__all__ = ["digits_cnn"]
