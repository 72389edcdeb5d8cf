"""Optuna, imported only when a sweep runs, and its samplers and pruners by name.

``import pipekit_train.sweep`` stays free of Optuna (and of any array library); a missing
Optuna is an ``ExtraNotInstalledError`` naming the extra that brings it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError, ExtraNotInstalledError, closest

__all__ = ["import_optuna", "make_sampler", "make_pruner", "open_storage", "spec_of"]

INSTALL = "pip install 'pipekit-train-core[sweep]'"


def import_optuna() -> Any:
    """The ``optuna`` module, or ``ExtraNotInstalledError`` with the install command."""
    try:
        import optuna
    except ImportError as exc:
        raise ExtraNotInstalledError(
            f"sweeps need Optuna, which is not installed; install it with: {INSTALL}"
        ) from exc
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def spec_of(value: Any, field: str) -> tuple[str, dict[str, Any]] | None:
    """``'Name'`` / ``{name: Name, kwargs: {...}}`` / ``None`` → ``(name, kwargs)`` or ``None``."""
    if value is None:
        return None
    if isinstance(value, str):
        return value, {}
    if isinstance(value, Mapping) and isinstance(value.get("name"), str):
        extra = set(value) - {"name", "kwargs"}
        kwargs = value.get("kwargs") or {}
        if extra or not isinstance(kwargs, Mapping):
            raise ConfigError(
                f"sweep {field} must be a name such as 'TPESampler' or {{name: ..., kwargs: "
                f"{{...}}}}; got {dict(value)!r}",
                field=field,
            )
        return str(value["name"]), dict(kwargs)
    raise ConfigError(
        f"sweep {field} must be a name such as 'TPESampler' or {{name: ..., kwargs: {{...}}}}; "
        f"got {value!r}",
        field=field,
    )


def _named(module: Any, base: type, name: str, field: str) -> Any:
    known = sorted(
        n
        for n in dir(module)
        if isinstance(getattr(module, n), type)
        and issubclass(getattr(module, n), base)
        and getattr(module, n) is not base
    )
    if name not in known:
        raise ConfigError(
            f"sweep {field}: unknown Optuna {field} {name!r}"
            + closest(name, known)
            + f"; known: {', '.join(known)}",
            field=field,
        )
    return getattr(module, name)


def check_names(sampler: tuple[str, dict[str, Any]], pruner: Any) -> None:
    """``ConfigError`` for an unknown sampler or pruner name (before anything runs)."""
    optuna = import_optuna()
    _named(optuna.samplers, optuna.samplers.BaseSampler, sampler[0], "sampler")
    if pruner is not None:
        _named(optuna.pruners, optuna.pruners.BasePruner, pruner[0], "pruner")


def make_sampler(spec: tuple[str, dict[str, Any]], seed: int) -> Any:
    """A fresh sampler of ``spec`` seeded with ``seed`` (when the sampler takes a seed).

    The sweep builds one before every trial with ``seed = sweep seed + trial number``, so a
    trial's suggestions depend only on the stored history and its number, never on the
    process that asks (a resumed sweep suggests what an uninterrupted one did).
    """
    optuna = import_optuna()
    cls = _named(optuna.samplers, optuna.samplers.BaseSampler, spec[0], "sampler")
    kwargs = dict(spec[1])
    import inspect

    if "seed" in inspect.signature(cls).parameters:
        kwargs["seed"] = seed
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ConfigError(f"sweep sampler {spec[0]}: bad kwargs: {exc}", field="sampler") from exc


def make_pruner(spec: tuple[str, dict[str, Any]] | None) -> Any:
    """The pruner of ``spec`` (``NopPruner`` for ``None``)."""
    optuna = import_optuna()
    if spec is None:
        return optuna.pruners.NopPruner()
    cls = _named(optuna.pruners, optuna.pruners.BasePruner, spec[0], "pruner")
    try:
        return cls(**spec[1])
    except TypeError as exc:
        raise ConfigError(f"sweep pruner {spec[0]}: bad kwargs: {exc}", field="pruner") from exc


def engine_kwargs(url: str) -> dict[str, Any]:
    """SQLAlchemy engine options: SQLite waits up to 60 s for a writer instead of failing."""
    if url.startswith("sqlite"):
        return {"connect_args": {"timeout": 60.0}}
    return {"pool_pre_ping": True}


def open_storage(url: str) -> Any:
    """Optuna's RDB storage at ``url`` (a SQLAlchemy URL).

    Two processes starting one sweep at once may both create Optuna's tables; the loser's
    error is retried (a few times, then reported as a ``ConfigError`` naming ``storage``).
    """
    import time

    optuna = import_optuna()
    for attempt in range(5):
        try:
            return optuna.storages.RDBStorage(url, engine_kwargs=engine_kwargs(url))
        except Exception as exc:  # a bad URL, an unreachable server, a creation race
            if attempt == 4:
                raise ConfigError(
                    f"sweep storage {url!r} cannot be opened: {exc}", field="storage"
                ) from exc
            time.sleep(0.5 + attempt)
    raise AssertionError("unreachable")
