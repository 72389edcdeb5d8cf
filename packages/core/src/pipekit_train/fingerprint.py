"""The resume guard: what a checkpoint must match for a run to continue it.

Every backend stores a fingerprint in each checkpoint's metadata and compares it
with the current run's before resuming. A fingerprint is plain JSON built from
values, never from object reprs:

- ``model_structure``: a digest of the model's array leaves — key paths, shapes
  and dtypes (see ``pipekit_train.jax.structure_digest`` for pytrees). Static
  fields (activation functions, layer sizes held as ints) are not hashed by
  repr, so a static callable field does not make an honest resume look foreign.
- ``optimizer``: the *normalised* optimiser spec (numbers as numbers, so YAML's
  ``lr: 1e-3`` and Python's ``0.001`` agree; schedule lengths resolved, so a
  default ``decay_steps = max_steps`` is recorded as its value).
- ``max_steps``: recorded only when the learning-rate schedule takes its length
  from it; then a changed ``max_steps`` is refused (the schedule would change
  under the resumed run). Otherwise a larger ``max_steps`` simply trains longer.
- the data order (``dataset_length``, ``batch_size``, ``seed``) and the backend,
  plus whatever a backend adds in ``extra`` (sampler settings, chain count, …).

The user's own objects (issue 20) have no config to record, so their identity is
derived from what they compute: an ``optax.GradientTransformation`` given as
``optimizer_config`` is recorded under ``optimizer_config`` by the backend
(``pipekit_train.jax.optax_identity``: its state structure on the model, the
result of probe updates, and the user's ``optimizer_id``), and a schedule
callable as ``lr`` by its values at fixed steps. When an identity cannot be
derived, the fingerprint lists why under ``unverifiable`` and a resume is refused
(:func:`unverifiable_message`) unless ``resume="force"``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ._config_digest import digest_of
from .errors import CheckpointError
from .optimizers import (
    is_transformation,
    parse_optimizer_config,
    refuse_transformation,
    schedule_length_from_max_steps,
)

__all__ = [
    "digest_of",
    "fingerprint",
    "structure_digest",
    "fingerprint_diff",
    "mismatch_message",
    "check_fingerprint",
    "jsonable",
    "unverifiable_message",
    "OVERRIDE_HINT",
]

_MISSING = "<missing>"

OVERRIDE_HINT = (
    'To resume anyway pass backend_options={"resume": "force"}; to start fresh and move the '
    'old checkpoints aside pass backend_options={"resume": "never"}; or use a new checkpoint_dir.'
)


def structure_digest(entries: Iterable[tuple[str, Iterable[int], str]]) -> str:
    """A short digest of ``(key path, shape, dtype)`` triples, in the order given."""
    text = ";".join(
        f"{path}:{tuple(int(d) for d in shape)}:{dtype}" for path, shape, dtype in entries
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def fingerprint(
    loop: Any,
    *,
    backend: str,
    model_structure: str | None,
    dataset_length: int | None = None,
    optimizer: bool = True,
    extra: Mapping[str, Any] | None = None,
    optimizer_identity: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The resume guard of ``loop`` on ``backend`` (JSON-able).

    ``optimizer=False`` leaves the optimiser out (samplers have none).
    ``optimizer_identity`` is required when ``loop.optimizer_config`` is the user's
    own optax object: the backend derives it (``pipekit_train.jax.optax_identity``).
    """
    out: dict[str, Any] = {"backend": backend, "model_structure": model_structure}
    unverifiable: list[str] = []
    if optimizer and is_transformation(loop.optimizer_config):
        if optimizer_identity is None:  # a backend that does not derive one cannot take it
            refuse_transformation(loop.optimizer_config, backend=backend)
        out["optimizer_config"] = dict(optimizer_identity)
        if optimizer_identity.get("probe") is None and optimizer_identity.get("id") is None:
            unverifiable.append(
                "optimizer_config is an optax object whose identity could not be derived "
                f"({optimizer_identity.get('why', 'its probe update failed')}); name it with "
                'backend_options={"optimizer_id": "<a name you change whenever you change '
                'the optimiser>"}'
            )
    elif optimizer:
        spec = parse_optimizer_config(loop.optimizer_config, max_steps=loop.max_steps)
        out["optimizer"] = spec.to_dict()
        lr = out["optimizer"]["lr"]
        if isinstance(lr, Mapping) and lr.get("schedule") == "callable" and not lr["values"]:
            unverifiable.append(
                "optimizer_config.lr is a callable that could not be evaluated at a step "
                "number, so the resume guard cannot tell it from another schedule; give it "
                "as a schedule dict {'schedule': NAME, ...}"
            )
        depends = schedule_length_from_max_steps(loop.optimizer_config)
        if depends is not None:
            out["max_steps"] = int(loop.max_steps)
            out["max_steps_sets"] = depends
    if dataset_length is not None:
        out["dataset_length"] = int(dataset_length)
        out["batch_size"] = int(loop.batch_size)
    out["seed"] = int(loop.seed)
    if extra:
        out.update(dict(extra))
    if unverifiable:
        out["unverifiable"] = unverifiable
    result: dict[str, Any] = jsonable(out)
    return result


def unverifiable_message(current: Mapping[str, Any], where: str) -> str | None:
    """Why this run cannot vouch that it continues the checkpoint ``where`` (or ``None``).

    A fingerprint lists under ``unverifiable`` what it could not derive an identity
    for; resuming over it would be resuming blind, so the checkpointer refuses it.
    """
    reasons = current.get("unverifiable")
    if not reasons:
        return None
    lines = [f"Cannot vouch that this run continues the checkpoint {where}:"]
    lines += [f"  {r}" for r in reasons]
    return "\n".join(lines)


def jsonable(value: Any) -> Any:
    """JSON round-trip form of ``value`` (tuples become lists; numpy / jax scalars and arrays
    numbers and lists; anything else its ``str``)."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "tolist"):
        return jsonable(value.tolist())
    return str(value)


def fingerprint_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Fields whose values differ between two fingerprints: ``{field: (old, new)}``.

    Values are compared in their JSON form; a field present on one side only maps
    to ``"<missing>"`` on the other.
    """
    a = json.loads(json.dumps(jsonable(dict(old)), sort_keys=True))
    b = json.loads(json.dumps(jsonable(dict(new)), sort_keys=True))
    return {
        k: (a.get(k, _MISSING), b.get(k, _MISSING))
        for k in sorted(set(a) | set(b))
        if a.get(k, _MISSING) != b.get(k, _MISSING)
    }


def mismatch_message(
    diff: Mapping[str, tuple[Any, Any]], where: str, current: Mapping[str, Any] | None = None
) -> str:
    """A readable account of ``diff``, naming ``max_steps`` when a schedule depends on it."""
    lines = [f"The checkpoint {where} was written by a different run; these fields differ:"]
    for key, (old, new) in diff.items():
        if key == "max_steps_sets":
            continue
        lines.append(f"  {key}: checkpoint {old!r} != this run {new!r}")
    if "optimizer_config" in diff or "optimizer" in diff:
        old, new = diff.get("optimizer_config", diff.get("optimizer", (None, None)))
        if isinstance(old, Mapping) or isinstance(new, Mapping):
            kinds = {(v.get("kind") if isinstance(v, Mapping) else None) for v in (old, new)} - {
                None
            }
            if kinds:
                lines.append(
                    "optimizer_config: the optax object differs from the checkpoint's (its "
                    "derived identity — state structure, probe updates, optimizer_id — does "
                    "not match): resume with the same optimiser, or start fresh"
                )
    if "max_steps" in diff:
        old, new = diff["max_steps"]
        sets = [(current or {}).get("max_steps_sets"), *diff.get("max_steps_sets", (None, None))]
        field = next((s for s in sets if isinstance(s, str)), "the schedule length")
        lines.append(
            f"max_steps changed ({old} -> {new}) and the learning-rate schedule takes its length "
            f"from it ({field} defaults to max_steps), so resuming would change the schedule "
            f"mid-run. To train longer on the same schedule, set {field} explicitly to "
            f"{old}; to restart the schedule, start fresh."
        )
    return "\n".join(lines)


def check_fingerprint(
    saved: Mapping[str, Any], current: Mapping[str, Any], *, resume: str, where: str
) -> str | None:
    """Compare fingerprints: ``None`` if equal; raise or (``resume="force"``) return a warning.

    Raises :class:`CheckpointError` naming each differing field unless ``resume``
    is ``"force"``, in which case the message is returned for the caller to warn.
    """
    diff = fingerprint_diff(saved, current)
    if not diff:
        return None
    message = mismatch_message(diff, where, current)
    if resume == "force":
        return message + '\nResuming anyway (backend_options={"resume": "force"}).'
    raise CheckpointError(message + "\n" + OVERRIDE_HINT)
