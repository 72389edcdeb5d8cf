"""The user's own ``optax.GradientTransformation`` as ``optimizer_config`` (issue 20).

The object is used exactly as given: pipekit adds only what a loop field asks for
(``accumulate_steps`` wraps it in ``optax.MultiSteps``). What this module adds is
what a dict config would have given for free:

- a check, before anything compiles, that the object initialises and updates on
  the model's parameters (abstractly, ``jax.eval_shape``), and that no loop field
  contradicts it (an object that already accumulates, with ``accumulate_steps``);
- a stable **identity** for the resume guard. A function has no stable value
  (its repr holds a memory address), so the identity is derived from what the
  object computes: the structure of its state on the model's parameters, and a
  digest of ``PROBE_UPDATES`` updates run on a small probe tree with the model's
  tree structure (each leaf cut to at most 2 per axis), values rounded to 6
  significant digits. The user may add a name, ``backend_options["optimizer_id"]``;
  it is recorded and compared too, and it is what vouches for an object whose
  probe cannot run (then the identity is ``probe: None`` and, without a name, a
  resume is refused: ``pipekit_train.fingerprint.unverifiable_message``);
- whether the live learning rate can be logged: only an object built with
  ``optax.inject_hyperparams`` holds it in its state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from pipekit_train.errors import ConfigError
from pipekit_train.jax._deps import missing_jax_extra

try:
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax
except ImportError as _exc:  # pragma: no cover - exercised in a subprocess test
    raise missing_jax_extra(_exc) from _exc

from pipekit_train.jax.optim import current_learning_rate, optimizer_update
from pipekit_train.jax.structure import tree_structure_digest

__all__ = ["PROBE_UPDATES", "OwnOptimizer", "inspect_own_optimizer", "own_optimizer"]

#: Updates the identity probe runs (a schedule that differs only later is not told apart;
#: give ``backend_options["optimizer_id"]`` to name such a change).
PROBE_UPDATES = 64

_ROOT = "optimizer_config"
_KIND = "optax.GradientTransformation"


class OwnOptimizer:
    """What the loop learned about the user's optax object (identity, lr logging)."""

    def __init__(self, identity: dict[str, Any], logs_lr: bool) -> None:
        self.identity = identity
        self.logs_lr = logs_lr

    def info(self) -> dict[str, Any]:
        """The ``backend_info["optimizer"]`` entry: what was kept and what is logged."""
        note = (
            "the live learning rate is logged as 'lr' (the object is built with "
            "optax.inject_hyperparams)"
            if self.logs_lr
            else "no 'lr' metric: the object is not built with optax.inject_hyperparams, so "
            "its learning rate is not in its state (wrap it, e.g. "
            "optax.inject_hyperparams(optax.adam)(learning_rate=...), to log it)"
        )
        return {
            "kind": _KIND,
            "optimizer_id": self.identity.get("id"),
            "lr_logged": self.logs_lr,
            "note": note,
            "identity_derived": self.identity.get("probe") is not None,
        }


def _states(tree: Any, cls: tuple[type, ...]) -> list[Any]:
    leaves = jax.tree_util.tree_leaves(tree, is_leaf=lambda x: isinstance(x, cls))
    return [leaf for leaf in leaves if isinstance(leaf, cls)]


def inspect_own_optimizer(
    tx: Any,
    params: Any,
    *,
    optimizer_id: str | None,
    accumulate_steps: int = 1,
    passes_value: bool = False,
) -> OwnOptimizer:
    """Check ``tx`` against the model's trainable ``params`` and derive its identity.

    Raises :class:`ConfigError` naming ``optimizer_config`` when the object cannot
    initialise or update on the parameters, and naming both fields when
    ``accumulate_steps > 1`` meets an object that already accumulates
    (``optax.MultiSteps``). Nothing is compiled for the model: the check is
    abstract; the probe is a small jitted scan on a tree of at most 2 per axis.
    ``passes_value``: the backend's step passes the loss as ``value=``
    (:func:`~pipekit_train.jax.optim.optimizer_update`); where it does not, an object
    that needs it is a ``ConfigError`` saying so.
    """

    def one_update(p: Any, value: bool = passes_value) -> Any:
        state = tx.init(p)
        if value:
            return state, optimizer_update(tx, p, state, p, value=jnp.zeros((), jnp.float32))
        return state, tx.update(p, state, p)

    try:
        state, _ = jax.eval_shape(one_update, params)
    except Exception as exc:  # noqa: BLE001 - reported in the user's terms
        if not passes_value and _needs_value(one_update, params):
            raise ConfigError(
                f"{_ROOT}: the optax object reads the loss as the extra argument `value` "
                "(e.g. optax.contrib.reduce_on_plateau), and this backend's update does not "
                "pass one: it calls update(grads, state, params). Drop the transformation "
                "that reads `value` here, or train on the equinox backend, which passes "
                "the step's loss as `value`",
                field=_ROOT,
            ) from exc
        raise ConfigError(
            f"{_ROOT}: the optax object could not initialise and update on the model's "
            f"parameters: {type(exc).__name__}: {exc}",
            field=_ROOT,
        ) from exc
    if accumulate_steps > 1 and _states(state, (optax.MultiStepsState,)):
        raise ConfigError(
            f"TrainingLoop.accumulate_steps={accumulate_steps} contradicts {_ROOT}: the optax "
            "object already accumulates gradients (optax.MultiSteps); keep one: drop "
            "accumulate_steps, or pass the inner transformation",
            field="accumulate_steps",
        )
    probe, why = _probe_digest(tx, params, passes_value=passes_value)
    identity: dict[str, Any] = {
        "kind": _KIND,
        "id": optimizer_id,
        "state_structure": tree_structure_digest(state),
        "probe": probe,
        "hyperparams": _hyperparams(tx, params) if probe is not None else None,
    }
    if probe is None:
        identity["why"] = why
    return OwnOptimizer(identity, logs_lr=current_learning_rate(state) is not None)


def own_optimizer(
    loop: Any, params: Any, *, optimizer_id: str | None, passes_value: bool = False
) -> OwnOptimizer | None:
    """The user's optax object in ``loop.optimizer_config``, checked; ``None`` for a dict.

    ``passes_value``: whether the backend's step gives the update the loss as ``value=``
    (see :func:`inspect_own_optimizer`).

    ``optimizer_id`` with a dict config is a ``ConfigError``: a dict's identity is its
    values, and a name that changes nothing must not look as if it did.
    """
    from pipekit_train.optimizers import is_transformation

    if not is_transformation(loop.optimizer_config):
        if optimizer_id is not None:
            raise ConfigError(
                "backend_options.optimizer_id names your own optax object, but "
                "optimizer_config is a dict (the resume guard records its values); drop "
                "optimizer_id, or pass an optax.GradientTransformation as optimizer_config",
                field="backend_options.optimizer_id",
            )
        return None
    return inspect_own_optimizer(
        loop.optimizer_config,
        params,
        optimizer_id=optimizer_id,
        accumulate_steps=int(getattr(loop, "accumulate_steps", 1)),
        passes_value=passes_value,
    )


def _needs_value(one_update: Any, params: Any) -> bool:
    """True when the update fails without ``value`` and succeeds with it."""
    try:
        jax.eval_shape(lambda p: one_update(p, True), params)
    except Exception:  # noqa: BLE001 - it fails for another reason
        return False
    return True


def _probe_tree(params: Any) -> Any:
    """``params``' tree with every leaf cut to at most 2 per axis and filled deterministically."""
    leaves, treedef = jax.tree_util.tree_flatten(params)
    small = []
    for i, leaf in enumerate(leaves):
        shape = tuple(min(int(d), 2) for d in np.shape(leaf))
        n = int(np.prod(shape)) if shape else 1
        values = (np.arange(n, dtype=np.float64) + 1.0 + i) / (n + 1.0 + i)
        small.append(jnp.asarray(values.reshape(shape), dtype=leaf.dtype))
    return jax.tree_util.tree_unflatten(treedef, small)


def _probe_digest(
    tx: Any, params: Any, *, passes_value: bool = False
) -> tuple[str | None, str | None]:
    """Digest of ``PROBE_UPDATES`` updates on the probe tree, or ``(None, why)``."""
    try:
        p0 = _probe_tree(params)

        def run(p: Any) -> Any:
            def body(carry: Any, t: Any) -> Any:
                p, s = carry
                g = jax.tree_util.tree_map(
                    lambda a: (jnp.sin(a * (t + 1)) + 0.1 * a).astype(a.dtype), p
                )
                if passes_value:
                    value = (1.0 + jnp.cos(t.astype(jnp.float32))) / (t + 1.0)
                    u, s = optimizer_update(tx, g, s, p, value=value)
                else:
                    u, s = tx.update(g, s, p)
                return (optax.apply_updates(p, u), s), None

            (p, s), _ = jax.lax.scan(body, (p, tx.init(p)), jnp.arange(PROBE_UPDATES))
            return p, s

        final = jax.device_get(jax.jit(run)(p0))
    except Exception as exc:  # noqa: BLE001 - an object that only fits the real tree
        return None, f"{type(exc).__name__} in its probe update"
    text = []
    for path, leaf in jax.tree_util.tree_flatten_with_path(final)[0]:
        a = np.asarray(leaf)
        if a.dtype.kind in "biuf":
            values = ",".join(f"{float(v):.6g}" for v in a.astype(np.float64).reshape(-1))
            text.append(f"{jax.tree_util.keystr(path)}={values}")
    return hashlib.sha256(";".join(text).encode()).hexdigest()[:16], None


def _hyperparams(tx: Any, params: Any) -> dict[str, Any] | None:
    """The scalar hyper-parameters an ``inject_hyperparams`` state holds at init (readable)."""
    from pipekit_train.jax.optim import _INJECT_STATES

    state = tx.init(_probe_tree(params))
    out: dict[str, Any] = {}
    for i, inject in enumerate(_states(state, _INJECT_STATES)):
        hyper = getattr(inject, "hyperparams", None)
        if isinstance(hyper, Mapping):
            for name, value in sorted(hyper.items()):
                if np.ndim(value) == 0:
                    key = name if i == 0 else f"{i}.{name}"
                    out[key] = f"{float(np.asarray(value)):.6g}"
    return out or None
