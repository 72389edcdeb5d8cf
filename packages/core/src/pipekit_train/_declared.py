"""The version range an installed pipekit distribution declares for a library it uses.

An import-time check that finds a library outside what we test (a Keras without the
internals the keras backend reaches, an Orbax without the commit-future API the checksums
use) names the range that *is* supported. The range is read from the installed
distribution's own metadata, so the message and ``pyproject.toml`` cannot disagree.
Standard library only: core imports no array library.
"""

from __future__ import annotations

import importlib.metadata as md
import re

__all__ = ["declared_range", "supported"]

_REQ_RE = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(?P<spec>[^;]*)")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _lower_first(part: str) -> tuple[bool, str]:
    return (not part.startswith(">"), part)


def declared_range(dist: str, package: str) -> str | None:
    """``dist``'s requirement on ``package`` (e.g. ``">=3.10,<3.16"``), or None.

    None when ``dist`` is not installed or does not name ``package`` (without an extra's
    marker: the requirement every install of ``dist`` carries, or the one of an extra).
    """
    try:
        requires = md.requires(dist) or []
    except md.PackageNotFoundError:
        return None
    for text in requires:
        m = _REQ_RE.match(text)
        if m and _canonical(m["name"]) == _canonical(package):
            spec = m["spec"].strip().strip("()").strip()
            parts = sorted((p.strip() for p in spec.split(",") if p.strip()), key=_lower_first)
            return ",".join(parts) if parts else None
    return None


def supported(dist: str, package: str) -> str:
    """``"keras>=3.10,<3.16"``: what to install, for a message (``package`` alone if unknown)."""
    spec = declared_range(dist, package)
    return f"{package}{spec}" if spec else package
