"""Test ids that every pytest-xdist worker computes alike.

``str()`` of an object without its own ``__repr__`` holds its memory address (``<… object at
0x7f…>``), which differs between the workers' processes; xdist then refuses the run ("Different
tests were collected between gw0 and gw1"). ``case_id`` drops the address.
"""

from __future__ import annotations

import re
from typing import Any

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def case_id(value: Any) -> str:
    """``str(value)`` without memory addresses: the same in every process."""
    return _ADDRESS.sub("", str(value))
