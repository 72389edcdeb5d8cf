"""``XLA_FLAGS`` for a child process with ``n`` simulated CPU devices, keeping the caller's flags.

A test that compares a child's bits against the parent's must run both under the same XLA
flags: a flag the caller set (``--xla_cpu_max_isa=AVX2``, say, to check the suite on a CPU
without AVX-512) changes the compiled code, so replacing ``XLA_FLAGS`` would compare two
instruction sets rather than two device layouts.
"""

from __future__ import annotations

import os

_DEVICE_COUNT = "--xla_force_host_platform_device_count"


def xla_flags_with_devices(devices: int) -> str:
    """The current ``XLA_FLAGS`` with the device-count flag set to ``devices``."""
    kept = [f for f in os.environ.get("XLA_FLAGS", "").split() if not f.startswith(_DEVICE_COUNT)]
    return " ".join([*kept, f"{_DEVICE_COUNT}={devices}"])
