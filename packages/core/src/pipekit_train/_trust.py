"""May a load resolve an import string it read from a saved folder? One answer for every op.

A saved operator folder (``op.json``), a checkpoint or a run folder is *data*: it may have
come from someone else, and anything in it may have been edited. An import string read from
such a file (``"pkg.module:function"``) is code: importing the module runs its top level and
calling the function runs whatever it is (``os:system``). So a load never imports or calls a
recorded string unless its caller says so, either by passing the code itself (``factory=``,
``like=``, ``model=``, ``predict_fn=``) or by trusting the folder (``trusted=True``, or a list
of module prefixes). This module is that decision, shared by ``JaxModelOp``,
``TorchModelOp`` and ``NumpyroPredictiveOp``; ``docs/security.md`` explains it to users.

Import strings a user wrote in a YAML loop they run themselves are not affected: that is code
they chose (``pipekit_train._refs``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeAlias

from ._refs import is_import_string, resolve_import_string
from .errors import CheckpointError, ConfigError, UntrustedCodeError

__all__ = ["Trust", "build_from_factory", "check_trust", "is_trusted", "resolve_recorded"]

#: ``False`` (the default: resolve nothing), ``True`` (resolve any recorded string: "this
#: folder can run code"), or module prefixes whose recorded strings may be resolved.
Trust: TypeAlias = bool | Sequence[str]

_PREFIX_RE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def check_trust(trusted: Any, *, field: str = "trusted") -> Trust:
    """``trusted`` validated: a bool, or a list/tuple of dotted module prefixes.

    A bare string is refused (``trusted="False"`` would otherwise read as a prefix).
    """
    if isinstance(trusted, bool):
        return trusted
    if isinstance(trusted, (list, tuple)) and all(
        isinstance(p, str) and _PREFIX_RE.match(p) for p in trusted
    ):
        return tuple(trusted)
    hint = f"; for one module write {field}=[{trusted!r}]" if isinstance(trusted, str) else ""
    raise ConfigError(
        f"{field} must be False, True (this folder can run code) or a list of module "
        f"prefixes such as ['mypkg', 'mypkg.models'], got {trusted!r}{hint}",
        field=field,
    )


def is_trusted(ref: str, trusted: Trust) -> bool:
    """Whether ``trusted`` allows resolving ``ref``: ``True``, or its module is under a prefix.

    A prefix matches whole dotted components: ``"mypkg"`` allows ``mypkg`` and
    ``mypkg.models``, not ``mypkg_evil``.
    """
    if isinstance(trusted, bool):
        return trusted
    module = ref.partition(":")[0]
    return any(module == p or module.startswith(p + ".") for p in trusted)


def resolve_recorded(
    ref: Any,
    *,
    trusted: Any,
    field: str,
    source: object,
    instead: str,
) -> Any:
    """Import the object ``ref`` names, if the caller trusts where it was read from.

    Args:
        ref: the import string as read from disk (``"pkg.module:attr"``).
        trusted: the caller's ``trusted=`` argument (see :data:`Trust`).
        field: the file field that held ``ref`` (``"factory"``, ``"model"``), for messages.
        source: the file it was read from (``<folder>/op.json``), for messages.
        instead: how to pass the code directly, e.g. ``"JaxModelOp.load(path,
            factory=make_model)"``.

    Raises:
        UntrustedCodeError: ``trusted`` does not allow ``ref``; nothing was imported.
        CheckpointError: ``ref`` is not an import string, or it cannot be imported.
    """
    trust = check_trust(trusted)
    if not is_import_string(ref):
        raise CheckpointError(
            f"{source}: field {field!r} must be an import string 'pkg.module:name', got "
            f"{ref!r}; pass the code yourself: {instead}"
        )
    if not is_trusted(ref, trust):
        top = ref.partition(":")[0].split(".")[0]
        allowed = "" if isinstance(trust, bool) else f" (trusted={list(trust)!r} does not cover it)"
        raise UntrustedCodeError(
            f"{source}: field {field!r} records the import string {ref!r}{allowed}. Loading "
            f"it would import and run that code, and a saved folder is data, so it was not "
            f"imported. Either pass the code yourself: {instead}; or, only if you trust this "
            f"folder (it can run code), pass trusted=True, or trusted=[{top!r}] to allow "
            f"modules under {top!r}. See docs/security.md."
        )
    try:
        obj: Any = resolve_import_string(ref)
    except (ImportError, AttributeError) as exc:
        raise CheckpointError(
            f"{source}: the recorded {field} {ref!r} cannot be imported "
            f"({type(exc).__name__}: {exc}); make it importable, or pass the code yourself: "
            f"{instead}"
        ) from exc
    return obj


def build_from_factory(
    factory: Any,
    meta: dict[str, Any],
    *,
    trusted: Any,
    source: Any,
    op: str,
    like_hint: str,
) -> Any:
    """The object an op folder records how to build: ``factory(**factory_kwargs)``.

    ``factory`` is the caller's callable; without one, the import string recorded in
    ``meta["factory"]`` is resolved only as ``trusted`` allows (:func:`resolve_recorded`).
    ``factory_kwargs`` are JSON data from ``meta``. ``source`` is the metadata file (for
    messages), ``op`` the op's class name and ``like_hint`` what its ``like=`` takes.

    Raises:
        UntrustedCodeError: the recorded factory is not trusted; nothing was imported.
        CheckpointError: the kwargs are not a JSON object, the factory is not callable, or
            it failed (its error is chained).
    """
    kwargs = meta.get("factory_kwargs") or {}
    if not isinstance(kwargs, dict):
        raise CheckpointError(f"{source}: factory_kwargs must be a JSON object, got {kwargs!r}")
    if factory is not None:
        fn, name = factory, str(getattr(factory, "__qualname__", repr(factory)))
    else:
        name = str(meta.get("factory"))
        fn = resolve_recorded(
            meta.get("factory"),
            trusted=trusted,
            field="factory",
            source=source,
            instead=(
                f"{op}.load(path, factory=<the function>) (called with the recorded "
                f"factory_kwargs) or {op}.load(path, like={like_hint})"
            ),
        )
    if not callable(fn):
        raise CheckpointError(f"{source}: the factory {name!r} is not callable")
    try:
        return fn(**kwargs)
    except Exception as exc:  # noqa: BLE001 - user code, reported with context
        raise CheckpointError(
            f"{source}: the factory {name}(**{kwargs!r}) failed: {type(exc).__name__}: {exc}"
        ) from exc
