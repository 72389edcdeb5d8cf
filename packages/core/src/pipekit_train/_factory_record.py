"""The factory an operator records for its structure: checked once, for every backend.

An operator built from a user's code may record how to rebuild it — an import string
``"pkg.module:function"`` and JSON keyword arguments — in its ``op.json``. What may be recorded
is the same on every backend (Equinox's ``JaxModelOp``, Lightning's ``TorchModelOp``, a third
party's), so the check lives here and names the operator's own field.
"""

from __future__ import annotations

import json
from typing import Any

from ._refs import is_import_string
from .errors import ConfigError

__all__ = ["check_factory_record"]


def check_factory_record(
    op: str, factory: Any, factory_kwargs: Any, *, written_to: str = "op.json"
) -> dict[str, Any] | None:
    """``factory_kwargs`` as a plain dict (``None`` when there is no ``factory``), or a
    ``ConfigError`` naming ``<op>.factory`` / ``<op>.factory_kwargs``: the factory must be an
    import string, and its keyword arguments a JSON-serialisable dict with string keys (they
    are written to ``written_to``); keyword arguments without a factory are a mistake."""
    if factory is None:
        if factory_kwargs:
            raise ConfigError(
                f"{op}: factory_kwargs given without factory; pass "
                "factory='pkg.module:function' as well",
                field=f"{op}.factory",
            )
        return None
    if not isinstance(factory, str) or not is_import_string(factory):
        raise ConfigError(
            f"{op}: factory must be an import string 'pkg.module:function', got {factory!r}",
            field=f"{op}.factory",
        )
    kwargs = {} if factory_kwargs is None else factory_kwargs
    if not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
        raise ConfigError(
            f"{op}: factory_kwargs must be a dict with string keys, got {kwargs!r}",
            field=f"{op}.factory_kwargs",
        )
    try:
        json.dumps(kwargs, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"{op}: factory_kwargs must be JSON-serialisable (numbers, strings, bools, None, "
            f"lists, dicts) because they are written to {written_to}: {exc}",
            field=f"{op}.factory_kwargs",
        ) from exc
    return dict(kwargs)
