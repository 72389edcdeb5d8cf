"""A digest of a loop's plain config: what lets a rerun be answered from the checkpoint alone.

Part of a run's resume fingerprint (``model_structure``, ``dataset_length``, a sampler's
data digest, …) is known only once the ``module:factory`` references are built, which
imports the user's libraries. So that ``pipekit-train run`` can say "already complete"
without building them, every checkpoint's meta records ``config_digest``: a SHA-256 of
the loop's identity-relevant fields as written (import strings and their kwargs, numbers,
backend options) plus the source bytes of every module a factory names, read from disk
without importing it (and of the modules beside it that it imports, read from its
``import`` statements, when it is the user's code rather than an installed library). A
rerun whose digest equals the checkpoint's builds the same objects from the same code, so
the checkpoint's fingerprint is its own.

Fields that do not change what a step computes (callbacks, logging and evaluation
cadence, writers, the checkpoint folder, ``backend_options.resume`` and
``compilation_cache``) are left out. A loop holding a live Python object (a model, an
array, a ``ShardingSpec``) has no digest (``None``): only the full path can judge it.
"""

from __future__ import annotations

import ast
import hashlib
import json
import sys
from dataclasses import fields
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

from ._refs import FactoryRef

__all__ = ["config_digest", "digest_of", "attach_digest"]

#: Fields a step does not depend on: a rerun that changes only these is the same run.
_IGNORED_FIELDS = frozenset(
    {"callbacks", "checkpoint_dir", "log_every_n_steps", "eval_every_n_steps", "metric_writer"}
)
#: ``backend_options`` keys that change how a run is kept, not what it computes.
_IGNORED_OPTIONS = frozenset({"resume", "compilation_cache"})

_ATTRIBUTE = "_pipekit_config_digest"


class _NotPlain(Exception):
    """A value with no plain form (a live object): the loop has no digest."""


def _module_file(name: str, search_path: tuple[str, ...]) -> Path | None:
    """The source file of module ``name``, found as ``import`` would find it, not executed
    (a package's ``__init__`` is not run to find its submodule)."""
    parts = name.split(".")
    path: list[str] = [*search_path, *sys.path]
    spec = None
    for i in range(len(parts)):
        spec = PathFinder.find_spec(".".join(parts[: i + 1]), path)
        if spec is None:
            return None
        if i < len(parts) - 1:
            path = list(spec.submodule_search_locations or [])
            if not path:
                return None
    origin = getattr(spec, "origin", None)
    if not origin or not Path(origin).is_file():
        return None
    return Path(origin)


def _local_imports(file: Path) -> list[Path]:
    """The user's modules beside ``file`` that it imports (by its ``import`` statements,
    read with ``ast``, never run), and theirs in turn: a factory's helpers in its folder."""
    seen: dict[Path, None] = {}
    todo = [file]
    while todo and len(seen) < 64:
        current = todo.pop()
        if current in seen:
            continue
        seen[current] = None
        try:
            tree = ast.parse(current.read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        for name in sorted(names):
            for candidate in (current.parent / f"{name}.py", current.parent / name / "__init__.py"):
                if candidate.is_file() and candidate not in seen:
                    todo.append(candidate)
    return list(seen)[1:]


def _sources(ref: FactoryRef) -> str:
    """A digest of the code a factory reference runs: its module's file and, for the user's
    own code (not under site-packages), the modules beside it that it imports."""
    module = ref.target.partition(":")[0]
    found = _module_file(module, ref.search_path)
    if found is None:
        raise _NotPlain(module)
    files = [found]
    if not {"site-packages", "dist-packages"} & set(found.parts):
        files += sorted(_local_imports(found))
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _plain(value: Any) -> Any:
    if isinstance(value, FactoryRef):
        return {
            "factory": value.target,
            "kwargs": _plain(value.kwargs),
            "call": value.call,
            "code": _sources(value),
        }
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    raise _NotPlain(type(value).__name__)


def config_digest(loop: Any) -> str | None:
    """The digest of ``loop``'s plain config (``None`` when it holds a live object)."""
    try:
        plain: dict[str, Any] = {}
        for f in fields(loop):
            if f.name in _IGNORED_FIELDS:
                continue
            value = getattr(loop, f.name)
            if f.name == "backend_options":
                value = {k: v for k, v in value.items() if k not in _IGNORED_OPTIONS}
            plain[f.name] = _plain(value)
    except (_NotPlain, OSError):
        return None
    text = json.dumps(plain, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def attach_digest(loop: Any, digest: str | None) -> None:
    """Carry ``digest`` on the resolved loop a backend receives (its store writes it)."""
    object.__setattr__(loop, _ATTRIBUTE, digest)


def digest_of(loop: Any) -> str | None:
    """The digest :func:`attach_digest` put on ``loop`` (``None`` if none)."""
    value = getattr(loop, _ATTRIBUTE, None)
    return value if isinstance(value, str) else None
