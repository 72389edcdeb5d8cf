"""``TorchModelOp``: the Operator (``pipekit_train.operator``) over a ``torch.nn.Module``.

Saved layout (a directory)::

    weights.pt   the module's state_dict, torch.save (read back with weights_only=True)
    op.json      format version, factory + kwargs, the state_dict summary (names, shapes, dtypes)

Nothing is pickled but tensors. Loading needs the module's *code*, given one of two ways:

1. ``TorchModelOp.load(path, like=module_or_zero_arg_callable)``;
2. the op was created as ``TorchModelOp(module, factory="pkg.mod:make_model",
   factory_kwargs={...})``: ``op.json`` records the import string and the JSON
   kwargs, and ``load(path, factory=make_model)`` calls ``make_model(**kwargs)``
   (which may return an ``nn.Module`` or a ``TorchModelOp``) and loads the saved
   weights into it with ``load_state_dict(strict=True)``. ``load(path,
   trusted=True)`` imports the *recorded* string instead — only for a folder you
   trust: ``op.json`` is data anyone could have edited, so without ``like=``,
   ``factory=`` or ``trusted=`` nothing recorded is imported or called
   (``pipekit_train._trust``, ``docs/security.md``).

The state_dict summary is compared first; a mismatch is a ``CheckpointError``
naming the first differing entry.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pipekit_train.errors import CheckpointError, ConfigError
from pipekit_train.fingerprint import structure_digest
from pipekit_train.operator import build_from_factory, check_factory_record, check_trust

__all__ = ["TorchModelOp", "state_summary", "module_structure_digest"]

FORMAT_VERSION = 1
WEIGHTS_FILE = "weights.pt"
META_FILE = "op.json"


def state_summary(module: torch.nn.Module) -> list[tuple[str, list[int], str]]:
    """``(name, shape, dtype)`` of every entry of ``module.state_dict()``, in order."""
    return [
        (name, [int(d) for d in t.shape], str(t.dtype).replace("torch.", ""))
        for name, t in module.state_dict().items()
    ]


def module_structure_digest(module: torch.nn.Module) -> str:
    """The resume guard's model digest: state_dict names, shapes and dtypes."""
    return structure_digest(state_summary(module))


class TorchModelOp:
    """An Operator over a ``torch.nn.Module`` (see the module docstring).

    ``op(inputs)`` runs the module in eval mode under ``torch.no_grad()`` on a
    batch: numpy (or anything ``np.asarray`` takes; floats cast to the module's
    parameter dtype) or a tensor, moved to the module's device. It returns numpy
    unless ``as_tensor=True`` was given.
    """

    def __init__(
        self,
        module: torch.nn.Module,
        *,
        factory: str | None = None,
        factory_kwargs: dict[str, Any] | None = None,
        as_tensor: bool = False,
    ) -> None:
        if not isinstance(module, torch.nn.Module):
            raise ConfigError(
                f"TorchModelOp needs a torch.nn.Module, got {type(module).__name__}",
                field="TorchModelOp.module",
            )
        kwargs = check_factory_record("TorchModelOp", factory, factory_kwargs) or {}
        self.module = module
        self.factory = factory
        self.factory_kwargs = kwargs
        self.as_tensor = as_tensor

    def with_module(self, module: torch.nn.Module) -> TorchModelOp:
        """The same op (factory, options) around another module (e.g. the trained one)."""
        return TorchModelOp(
            module,
            factory=self.factory,
            factory_kwargs=self.factory_kwargs,
            as_tensor=self.as_tensor,
        )

    def _param(self) -> torch.Tensor | None:
        return next(iter(self.module.parameters()), None)

    def __call__(self, inputs: Any) -> Any:
        """Apply the module to a batch (see the class docstring)."""
        p = self._param()
        x = inputs if isinstance(inputs, torch.Tensor) else torch.as_tensor(np.asarray(inputs))
        if p is not None:
            x = x.to(p.device)
            if x.is_floating_point():
                x = x.to(p.dtype)
        was_training = self.module.training
        self.module.eval()
        try:
            with torch.no_grad():
                out = self.module(x)
        finally:
            self.module.train(was_training)
        if self.as_tensor:
            return out
        return out.detach().cpu().numpy()

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write ``weights.pt`` (state_dict) and ``op.json`` into the directory ``path``."""
        directory = Path(path)
        directory.mkdir(parents=True, exist_ok=True)
        state = {k: v.detach().cpu() for k, v in self.module.state_dict().items()}
        torch.save(state, directory / WEIGHTS_FILE)
        meta = {
            "format_version": FORMAT_VERSION,
            "op": "TorchModelOp",
            "factory": self.factory,
            "factory_kwargs": self.factory_kwargs,
            "state": [list(e) for e in state_summary(self.module)],
            "torch_version": torch.__version__,
        }
        (directory / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        like: Any = None,
        *,
        factory: Any = None,
        trusted: bool | Sequence[str] = False,
    ) -> TorchModelOp:
        """Rebuild an op written by :meth:`save`.

        The module comes from ``like`` (a module or zero-argument callable), or
        ``factory`` (a callable, called with the ``factory_kwargs`` recorded in
        ``op.json``), or — only with ``trusted=True`` or a list of module prefixes
        covering it — the factory import string recorded in ``op.json``. Without one
        of these nothing recorded is imported or called
        (:class:`~pipekit_train.errors.UntrustedCodeError`).
        """
        trusted = check_trust(trusted)
        if like is not None and factory is not None:
            raise ConfigError(
                "TorchModelOp.load: give like= (a module) or factory= (called with the "
                "recorded factory_kwargs), not both",
                field="factory",
            )
        directory = Path(path)
        try:
            meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CheckpointError(
                f"{directory} is not a saved TorchModelOp ({META_FILE} unreadable: {exc})"
            ) from exc
        module = _skeleton(like, factory, trusted, meta, directory)
        saved = [tuple(e) for e in meta.get("state", [])]
        current = [(n, list(s), d) for n, s, d in state_summary(module)]
        for old, new in zip(saved, current, strict=False):
            if tuple(old) != tuple(new):
                raise CheckpointError(
                    f"{directory}: the module given to load does not match the saved weights; "
                    f"first differing entry: saved {old}, module {new}"
                )
        if len(saved) != len(current):
            raise CheckpointError(
                f"{directory}: the module has {len(current)} state entries, the save "
                f"{len(saved)}; give the module the weights were saved from"
            )
        try:
            state = torch.load(directory / WEIGHTS_FILE, map_location="cpu", weights_only=True)
            module.load_state_dict(state, strict=True)
        except Exception as exc:  # noqa: BLE001 - truncated or corrupted file
            raise CheckpointError(
                f"{directory / WEIGHTS_FILE} cannot be read into the module: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        return cls(module, factory=meta.get("factory"), factory_kwargs=meta.get("factory_kwargs"))


def _unwrap(obj: Any, what: str) -> torch.nn.Module:
    if isinstance(obj, TorchModelOp):
        return obj.module
    if isinstance(obj, torch.nn.Module):
        return obj
    raise ConfigError(
        f"TorchModelOp.load: {what} must be a torch.nn.Module or a TorchModelOp, got "
        f"{type(obj).__name__}",
        field="like",
    )


def _skeleton(
    like: Any, factory: Any, trusted: Any, meta: dict[str, Any], directory: Path
) -> torch.nn.Module:
    """The module to load into: ``like``, ``factory(**recorded kwargs)``, or the recorded
    factory when ``trusted`` allows it (never imported otherwise)."""
    if like is not None:
        if isinstance(like, (torch.nn.Module, TorchModelOp)):
            return _unwrap(like, "like")
        return _unwrap(like(), "like()")
    recorded = meta.get("factory")
    if factory is None and not recorded:
        raise ConfigError(
            f"TorchModelOp.load({str(directory)!r}) needs the module's code and this save "
            f"records no factory: pass like=<nn.Module or zero-argument callable>, or create "
            f"the op as TorchModelOp(module, factory='pkg.module:function', "
            f"factory_kwargs={{...}}) before saving",
            field="like",
        )
    built = build_from_factory(
        factory,
        meta,
        trusted=trusted,
        source=directory / META_FILE,
        op="TorchModelOp",
        like_hint="<nn.Module or zero-arg callable>",
    )
    name = getattr(factory, "__qualname__", None) if factory is not None else recorded
    return _unwrap(built, f"the factory {name!r}'s result")
