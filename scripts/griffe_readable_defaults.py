"""A griffe extension for the API reference: a dataclass field's default as its value.

Statically, ``optimizer_config: dict = field(default_factory=lambda: dict(DEFAULT_OPTIMIZER))``
renders as the default ``(lambda: dict(DEFAULT_OPTIMIZER))()``, which says nothing to a
reader. For every class attribute defined with ``field(default_factory=…)`` this imports
the class, calls the factory and shows ``repr`` of what it returns
(``{'name': 'adam', 'lr': 0.001}``, ``[]``). Anything that cannot be imported keeps
griffe's static text. Loaded by mkdocs.yml (``mkdocstrings … extensions``).
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import griffe


class ReadableDefaults(griffe.Extension):
    """Replace ``field(default_factory=f)`` values by ``repr(f())``."""

    def on_attribute_instance(self, *, attr: griffe.Attribute, **kwargs: Any) -> None:
        if "default_factory" not in str(attr.value or "") or not attr.parent:
            return
        cls_path = attr.parent.path
        module_path, _, cls_name = cls_path.rpartition(".")
        try:
            cls = getattr(importlib.import_module(module_path), cls_name)
            by_name = {f.name: f for f in dataclasses.fields(cls)}
            factory = by_name[attr.name].default_factory
            if factory is dataclasses.MISSING:
                return
            attr.value = repr(factory())
        except Exception:  # a page shows griffe's own text rather than failing the build
            return
