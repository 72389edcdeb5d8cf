"""Backend discovery through the ``pipekit_train.backends`` entry-point group.

A backend distribution registers ``name = "pipekit_train.adapters.<module>"``;
the module exposes ``run(loop) -> (trained_op, backend_info)``. The versions a run
reports (``backend_info["versions"]``) are read from distribution metadata by
:func:`distribution_versions`, never by importing the backend. Core never imports an
adapter except through ``load_backend``.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from dataclasses import dataclass, field
from importlib import metadata
from types import ModuleType

from ._declared import declared_range, supported
from .errors import BackendNotInstalledError, ConfigError, closest

__all__ = [
    "declared_range",
    "supported",
    "ENTRY_POINT_GROUP",
    "KNOWN_BACKENDS",
    "BackendInfo",
    "BackendState",
    "backend_states",
    "installed_backends",
    "known_backend_names",
    "load_backend",
    "backend_module_name",
    "distribution_version",
    "distribution_versions",
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


#: The last scan of the entry points, and the ``sys.path`` state it was read under.
_SCANNED: tuple[tuple[tuple[str, int], ...], list[metadata.EntryPoint]] | None = None


def _path_state() -> tuple[tuple[str, int], ...]:
    """Each ``sys.path`` folder with its modification time: a distribution installed,
    removed or put on the path changes it (a new ``*.dist-info`` changes its folder's)."""
    state = []
    for entry in sys.path:
        try:
            state.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            state.append((entry, -1))
    return tuple(state)


def _entry_points() -> list[metadata.EntryPoint]:
    """The group's entry points. Reading them parses every installed distribution's
    metadata (~10 ms with a few hundred installed, and a run asks several times), so the
    scan is kept until ``sys.path`` or one of its folders changes."""
    global _SCANNED
    state = _path_state()
    if _SCANNED is None or _SCANNED[0] != state:
        _SCANNED = (state, list(metadata.entry_points(group=ENTRY_POINT_GROUP)))
    return list(_SCANNED[1])


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


def backend_module_name(name: str) -> str:
    """The adapter module registered for ``name``, read from the entry points (nothing
    imported): what :func:`load_backend` imports, and what the preflight checks first.

    Raises ``ConfigError`` for an unknown name and ``BackendNotInstalledError``
    (with the exact install command) when its distribution is missing.
    """
    check_backend_name(name)
    for ep in _entry_points():
        if ep.name == name:
            return str(ep.value)
    dist = KNOWN_BACKENDS.get(name, f"the distribution providing {name!r}")
    raise BackendNotInstalledError(
        f"backend {name!r} is not installed. Install it with:\n\n    pip install {dist}\n\n"
        f"(installed backends: {', '.join(b.name for b in installed_backends()) or 'none'})"
    )


def load_backend(name: str) -> ModuleType:
    """Import the adapter module registered for ``name``.

    Raises ``ConfigError`` for an unknown name and ``BackendNotInstalledError``
    (with the exact install command) when its distribution is missing.
    """
    value = backend_module_name(name)
    module = importlib.import_module(value)
    if not callable(getattr(module, "run", None)):
        raise BackendNotInstalledError(
            f"backend {name!r} is registered by {value} but that module has no "
            "run(loop) function; reinstall its distribution"
        )
    return module


def distribution_version(name: str) -> str | None:
    """Installed version of distribution ``name``, or ``None``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class BackendState:
    """What ``pipekit-train backends`` reports for one backend name.

    ``state`` is ``"installed"`` (an entry point registers it), ``"placeholder"``
    (its distribution is installed but registers no backend yet) or
    ``"not installed"``; ``libraries`` maps each third-party library the
    distribution depends on (directly or through pipekit distributions and their
    extras; core's own pure-Python dependencies left out) to its installed version.
    """

    name: str
    state: str
    distribution: str | None
    version: str | None
    libraries: dict[str, str] = field(default_factory=dict)

    @property
    def install_command(self) -> str:
        """The ``pip install`` line that provides this backend."""
        return f"pip install {self.distribution or KNOWN_BACKENDS.get(self.name, self.name)}"


_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def distribution_versions(distribution: str) -> dict[str, str]:
    """``{distribution name: version}`` of ``distribution``, the pipekit distributions it
    needs and the libraries they run on: ``backend_info["versions"]``, one shape for every
    backend (e.g. ``{"pipekit-train-core": …, "pipekit-train-equinox": …, "jax": …}``).

    Read from metadata only (nothing is imported); a distribution that is not installed
    is left out.
    """
    pipekit: dict[str, str] = {}
    for name in ("pipekit-train-core", *_pipekit_requirements(distribution), distribution):
        version = distribution_version(name)
        if version is not None:
            pipekit[name] = version
    return {**pipekit, **_library_versions(distribution)}


def _pipekit_requirements(distribution: str) -> list[str]:
    """The pipekit distributions ``distribution`` requires, directly or not (metadata only)."""
    out: list[str] = []
    todo = [distribution]
    while todo:
        try:
            requires = metadata.requires(todo.pop()) or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            match = _REQUIREMENT.match(line.partition(";")[0])
            req = _canonical(match.group(1)) if match is not None else ""
            if req.startswith("pipekit-train") and req not in out and req != distribution:
                out.append(req)
                todo.append(req)
    return sorted(out)


def _library_versions(distribution: str) -> dict[str, str]:
    """Installed versions of the third-party libraries ``distribution`` runs on.

    Read from ``Requires-Dist`` metadata only (nothing is imported): pipekit
    distributions are followed, with the extras they are required with, and
    every other requirement is reported by its installed version.
    """
    found: dict[str, str] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    todo: list[tuple[str, frozenset[str]]] = [(distribution, frozenset())]
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            spec, _, marker = line.partition(";")
            extra = _EXTRA_MARKER.search(marker)
            if extra is not None and extra.group(1) not in extras:
                continue
            if extra is None and name == "pipekit-train-core":
                continue  # core's own pure-Python dependencies are not a backend's libraries
            match = _REQUIREMENT.match(spec)
            if match is None:
                continue
            req = _canonical(match.group(1))
            wanted = frozenset(e.strip() for e in (match.group(2) or "").split(",") if e.strip())
            if req.startswith("pipekit-train"):
                todo.append((req, wanted))
            elif req not in found:
                version = distribution_version(req)
                if version is not None:
                    found[req] = version
    return dict(sorted(found.items()))


def backend_states() -> list[BackendState]:
    """Every backend pipekit-train knows (plus third-party ones), with its install state.

    Reads entry points and distribution metadata only, so it imports no backend
    and no array library.
    """
    registered = {ep.name: ep for ep in _entry_points()}
    states: list[BackendState] = []
    for name in sorted(set(KNOWN_BACKENDS) | set(registered)):
        ep = registered.get(name)
        if ep is not None:
            dist = getattr(ep, "dist", None)
            dist_name = dist.metadata["Name"] if dist is not None else None
            states.append(
                BackendState(
                    name,
                    "installed",
                    dist_name,
                    dist.version if dist is not None else None,
                    _library_versions(dist_name) if dist_name else {},
                )
            )
            continue
        dist_name = KNOWN_BACKENDS[name]
        version = distribution_version(dist_name)
        state = "placeholder" if version is not None else "not installed"
        states.append(BackendState(name, state, dist_name, version))
    return states
