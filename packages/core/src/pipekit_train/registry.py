"""Backend discovery through the ``pipekit_train.backends`` entry-point group.

A backend distribution registers ``name = "pipekit_train.adapters.<module>"``;
the module exposes ``run(loop) -> (trained_op, backend_info)`` and optionally
``library_versions() -> dict[str, str]``. Core never imports an adapter except
through ``load_backend``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib import metadata
from types import ModuleType

from .errors import BackendNotInstalledError, ConfigError, closest

__all__ = [
    "ENTRY_POINT_GROUP",
    "KNOWN_BACKENDS",
    "BackendInfo",
    "installed_backends",
    "known_backend_names",
    "load_backend",
    "distribution_version",
]

ENTRY_POINT_GROUP = "pipekit_train.backends"

KNOWN_BACKENDS: dict[str, str] = {
    "equinox": "pipekit-train-equinox",
    "numpyro-svi": "pipekit-train-numpyro",
    "numpyro-mcmc": "pipekit-train-numpyro",
    "blackjax": "pipekit-train-blackjax",
    "lightning": "pipekit-train-lightning",
    "keras": "pipekit-train-keras",
}
"""Backend name → the distribution that provides it (for install hints)."""


@dataclass(frozen=True)
class BackendInfo:
    """An installed backend: its name, module, and providing distribution."""

    name: str
    module: str
    distribution: str | None
    version: str | None


def _entry_points() -> list[metadata.EntryPoint]:
    return list(metadata.entry_points(group=ENTRY_POINT_GROUP))


def installed_backends() -> list[BackendInfo]:
    """Backends registered by installed distributions, sorted by name."""
    found = []
    for ep in _entry_points():
        dist = getattr(ep, "dist", None)
        found.append(
            BackendInfo(
                name=ep.name,
                module=ep.value,
                distribution=dist.metadata["Name"] if dist is not None else None,
                version=dist.version if dist is not None else None,
            )
        )
    return sorted(found, key=lambda b: b.name)


def known_backend_names() -> list[str]:
    """Names pipekit-train knows about, installed or not, plus third-party ones."""
    return sorted(set(KNOWN_BACKENDS) | {ep.name for ep in _entry_points()})


def check_backend_name(name: object, field: str = "backend") -> str:
    """Raise ``ConfigError`` listing the known names if ``name`` is not one of them."""
    known = known_backend_names()
    if not isinstance(name, str) or name not in known:
        raise ConfigError(
            f"{field}={name!r} is not a known backend; known backends: {', '.join(known)}"
            + closest(str(name), known),
            field=field,
        )
    return name


def load_backend(name: str) -> ModuleType:
    """Import the adapter module registered for ``name``.

    Raises ``ConfigError`` for an unknown name and ``BackendNotInstalledError``
    (with the exact install command) when its distribution is missing.
    """
    check_backend_name(name)
    for ep in _entry_points():
        if ep.name == name:
            module = importlib.import_module(ep.value)
            if not callable(getattr(module, "run", None)):
                raise BackendNotInstalledError(
                    f"backend {name!r} is registered by {ep.value} but that module has no "
                    "run(loop) function; reinstall its distribution"
                )
            return module
    dist = KNOWN_BACKENDS.get(name, f"the distribution providing {name!r}")
    raise BackendNotInstalledError(
        f"backend {name!r} is not installed. Install it with:\n\n    pip install {dist}\n\n"
        f"(installed backends: {', '.join(b.name for b in installed_backends()) or 'none'})"
    )


def distribution_version(name: str) -> str | None:
    """Installed version of distribution ``name``, or ``None``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
