"""``"module:attr"`` import strings: the one resolver, and ``FactoryRef``.

:func:`resolve_import_string` (``pkgutil.resolve_name`` on the ``module:attr`` form) is
the only place pipekit turns an import string into an object: a YAML loop's factories
(``FactoryRef``), a saved folder's recorded factory or model (``_trust``, only when
trusted) and the Bayesian tasks' functions all go through it, and
:func:`is_import_string` is the one check of the form.

YAML cannot hold a model or a dataset, so a YAML loop names the factory that
builds it. The reference stays unresolved inside ``TrainingLoop`` (so
``from_yaml(to_yaml())`` round-trips) and is resolved when ``run()`` starts.
"""

from __future__ import annotations

import pkgutil
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigError

__all__ = ["FactoryRef", "IMPORT_STRING_RE", "is_import_string", "resolve_import_string"]

#: ``package.module:attr.path``: dotted identifiers, one colon.
IMPORT_STRING_RE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def is_import_string(value: Any) -> bool:
    """Whether ``value`` is a ``"package.module:attr"`` string (nothing is imported)."""
    return isinstance(value, str) and IMPORT_STRING_RE.match(value) is not None


def resolve_import_string(ref: str, search_path: Sequence[str] = ()) -> Any:
    """The object ``"package.module:attr.path"`` names (``pkgutil.resolve_name``).

    ``search_path`` folders are put in front of ``sys.path`` for the import only.
    Raises what ``pkgutil.resolve_name`` raises — ``ImportError`` when the module
    cannot be imported, ``AttributeError`` when it lacks the attribute,
    ``ValueError`` when ``ref`` is not of that form — so that each caller words the
    error for its own field.
    """
    if not is_import_string(ref):
        raise ValueError(f"{ref!r} is not an import string 'package.module:name'")
    added = [p for p in search_path if p not in sys.path]
    sys.path[:0] = added
    try:
        return pkgutil.resolve_name(ref)
    finally:
        for p in added:
            if p in sys.path:
                sys.path.remove(p)


@dataclass(frozen=True)
class FactoryRef:
    """An import string plus keyword arguments.

    Resolution imports ``module``, looks up ``attr`` (dots allowed), and calls
    it with ``kwargs`` if it is callable and ``call`` is true; otherwise uses
    the attribute itself (e.g. a module-level dataset or loss function).
    """

    target: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    call: bool = True
    search_path: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        module, sep, attr = self.target.partition(":")
        if not sep or not module or not attr:
            raise ConfigError(
                f"{self.target!r} is not an import string; write it as 'package.module:name'"
            )
        if not isinstance(self.kwargs, dict):
            raise ConfigError(f"kwargs of {self.target!r} must be a mapping")

    def __hash__(self) -> int:
        return hash(self.target)

    def resolve(self, field_name: str) -> Any:
        """Import and (if callable) call the target; errors name ``field_name``."""
        module_name, _, attr = self.target.partition(":")
        try:
            obj = resolve_import_string(self.target, self.search_path)
        except AttributeError as exc:
            raise ConfigError(
                f"{field_name}: module {module_name!r} has no attribute {attr!r}",
                field=field_name,
            ) from exc
        except (ImportError, ValueError) as exc:
            raise ConfigError(
                f"{field_name}: cannot import module {module_name!r} of {self.target!r} "
                f"({exc}); is it on PYTHONPATH?",
                field=field_name,
            ) from exc
        if self.call and callable(obj):
            try:
                return obj(**self.kwargs)
            except TypeError as exc:
                raise ConfigError(
                    f"{field_name}: calling {self.target}(**{self.kwargs!r}) failed: {exc}",
                    field=field_name,
                ) from exc
        return obj

    def to_config(self, default_call: bool = True) -> Any:
        if not self.kwargs and self.call == default_call:
            return self.target
        out: dict[str, Any] = {"factory": self.target}
        if self.kwargs:
            out["kwargs"] = dict(self.kwargs)
        if self.call != default_call:
            out["call"] = self.call
        return out

    @classmethod
    def _build(
        cls,
        field_name: str,
        target: str,
        kwargs: dict[str, Any],
        call: bool,
        search_path: tuple[str, ...],
    ) -> FactoryRef:
        try:
            return cls(target, kwargs, call, search_path=search_path)
        except ConfigError as exc:  # name the field the malformed string was given for
            raise ConfigError(f"{field_name}: {exc}", field=field_name) from exc

    @classmethod
    def from_config(
        cls,
        value: Any,
        field_name: str,
        search_path: tuple[str, ...] = (),
        call: bool = True,
    ) -> FactoryRef:
        if isinstance(value, str):
            return cls._build(field_name, value, {}, call, search_path)
        if isinstance(value, dict) and "factory" in value:
            unknown = set(value) - {"factory", "kwargs", "call"}
            if unknown:
                raise ConfigError(
                    f"{field_name}: unknown key(s) {sorted(unknown)} in a factory reference; "
                    "allowed: factory, kwargs, call",
                    field=field_name,
                )
            kwargs = value.get("kwargs") or {}
            if not isinstance(kwargs, dict):
                raise ConfigError(
                    f"{field_name}: kwargs of a factory reference must be a mapping, "
                    f"got {kwargs!r}",
                    field=field_name,
                )
            if not isinstance(value["factory"], str):
                raise ConfigError(
                    f"{field_name}: factory must be a 'module:attr' string, "
                    f"got {value['factory']!r}",
                    field=field_name,
                )
            return cls._build(
                field_name,
                value["factory"],
                dict(kwargs),
                bool(value.get("call", call)),
                search_path,
            )
        raise ConfigError(
            f"{field_name} must be 'module:attr' or {{factory: 'module:attr', kwargs: {{...}}}}",
            field=field_name,
        )
