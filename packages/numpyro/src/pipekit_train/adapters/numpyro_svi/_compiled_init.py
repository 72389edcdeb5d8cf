"""``SVI.init`` as one compiled program, with the guide's prototype made concrete after it.

NumPyro's ``SVI.init`` runs eagerly: an autoguide's prototype (``initialize_model``: the
median start's draws, ``find_valid_initial_params``' value and gradient) is one compiled
primitive after another, ~140 small compilations that take most of a cold run's first
seconds. Under ``jax.jit`` the same work is one program, but ``init`` leaves state on the
guide and on ``svi`` (``prototype_trace`` with its distributions, ``_init_locs``, the seeded
``_postprocess_fn``, ``svi.constrain_fn``'s transforms) that would then hold tracers of that
trace: a ``Uniform(0, tau)`` site's support, for one, holds ``tau``.

:func:`compiled_init` therefore collects every tracer that state reaches, returns them as
the program's outputs beside the ``SVIState``, and rebuilds the state with those concrete
arrays in their places. What it cannot rebuild (a tracer inside a closure's cell), a start
whose ELBO is not finite, and a guide that fails under ``jit`` fall back to NumPyro's own
eager ``SVI.init``, which then raises its own error for a start that is not valid.

The compiled program may round a constant's transform differently from the eager op (an
autoguide's initial scale through the softplus inverse: 1 ulp), so its start is not the
bits of ``SVI.init``; ``backend_options={"init": "eager"}`` keeps NumPyro's own.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

__all__ = ["compiled_init", "reaches_tracer"]

#: Objects whose attributes are never walked (their identity is kept as is).
_OPAQUE = (type, type(functools), type(len))


def _is_tracer(obj: Any) -> bool:
    import jax

    return isinstance(obj, jax.core.Tracer)


def _is_function(obj: Any) -> bool:
    """A plain function or lambda: its closure is not walked or rebuilt (only checked)."""
    return callable(obj) and hasattr(obj, "__code__")


def _children(obj: Any) -> list[Any] | None:
    """The objects ``obj`` holds that may hold tracers, or None for a leaf."""
    import jax

    if isinstance(obj, dict):
        return list(obj.values())
    if isinstance(obj, list | tuple | set | frozenset):
        return list(obj)
    if isinstance(obj, functools.partial):
        return [obj.func, *obj.args, *obj.keywords.values()]
    if isinstance(obj, _OPAQUE) or _is_function(obj):
        return None
    leaves, _ = jax.tree_util.tree_flatten(obj)
    if not (len(leaves) == 1 and leaves[0] is obj):
        return leaves  # a registered pytree (a distribution, a transform)
    if hasattr(obj, "__dict__"):
        return list(vars(obj).values())
    return None


def _collect(obj: Any, found: dict[int, Any], seen: set[int]) -> None:
    """Every tracer ``obj`` reaches, by id (containers, partials, pytrees, attributes)."""
    if _is_tracer(obj):
        found.setdefault(id(obj), obj)
        return
    if id(obj) in seen:
        return
    seen.add(id(obj))
    for child in _children(obj) or ():
        _collect(child, found, seen)


def _rebuild(obj: Any, concrete: dict[int, Any], memo: dict[int, Any]) -> Any:
    """``obj`` with each tracer replaced by its concrete array; untouched parts kept as is."""
    import jax

    if _is_tracer(obj):
        return concrete[id(obj)]
    if id(obj) in memo:
        return memo[id(obj)]
    memo[id(obj)] = obj  # a cycle comes back to the original
    out = obj
    if isinstance(obj, dict):
        values = {k: _rebuild(v, concrete, memo) for k, v in obj.items()}
        if any(values[k] is not v for k, v in obj.items()):
            out = copy.copy(obj)
            out.update(values)
    elif isinstance(obj, list | tuple):
        items = [_rebuild(v, concrete, memo) for v in obj]
        if any(a is not b for a, b in zip(items, obj, strict=True)):
            if isinstance(obj, list):
                out = items
            elif hasattr(obj, "_fields"):
                out = type(obj)(*items)
            else:
                out = type(obj)(items)
    elif isinstance(obj, functools.partial):
        func = _rebuild(obj.func, concrete, memo)
        args = [_rebuild(v, concrete, memo) for v in obj.args]
        kw = {k: _rebuild(v, concrete, memo) for k, v in obj.keywords.items()}
        old = [*obj.args, *obj.keywords.values()]
        changed = func is not obj.func or any(
            a is not b for a, b in zip([*args, *kw.values()], old, strict=True)
        )
        if changed:
            out = functools.partial(func, *args, **kw)
    elif not (isinstance(obj, _OPAQUE) or _is_function(obj)):
        leaves, treedef = jax.tree_util.tree_flatten(obj)
        if not (len(leaves) == 1 and leaves[0] is obj):
            new = [_rebuild(v, concrete, memo) for v in leaves]
            if any(a is not b for a, b in zip(new, leaves, strict=True)):
                out = jax.tree_util.tree_unflatten(treedef, new)
        elif hasattr(obj, "__dict__"):
            attrs = {k: _rebuild(v, concrete, memo) for k, v in vars(obj).items()}
            if any(attrs[k] is not v for k, v in vars(obj).items()):
                out = copy.copy(obj)
                vars(out).update(attrs)
    memo[id(obj)] = out
    return out


def reaches_tracer(obj: Any) -> bool:
    """Whether ``obj`` reaches a tracer, closures' cells included (the check after a rebuild)."""
    stack, seen = [obj], set()
    while stack:
        cur = stack.pop()
        if _is_tracer(cur):
            return True
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if _is_function(cur):
            cells = getattr(cur, "__closure__", None) or ()
            for cell in cells:
                try:
                    stack.append(cell.cell_contents)
                except ValueError:  # an empty cell
                    pass
            continue
        stack.extend(_children(cur) or ())
    return False


def _state_of(svi: Any) -> dict[str, Any]:
    """What ``SVI.init`` leaves behind: the guide's attributes and ``svi.constrain_fn``."""
    guide = svi.guide
    attrs = dict(vars(guide)) if hasattr(guide, "__dict__") else {}
    return {"guide": attrs, "constrain_fn": svi.constrain_fn}


def _restore(svi: Any, saved: dict[str, Any]) -> None:
    if hasattr(svi.guide, "__dict__"):
        vars(svi.guide).clear()
        vars(svi.guide).update(saved["guide"])
    svi.constrain_fn = saved["constrain_fn"]


def compiled_init(svi: Any, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``svi.init(key, *args, **kwargs)`` compiled as one program; the eager one where the
    compiled one cannot stand in (see the module's docstring). Sets the guide's and
    ``svi``'s state as ``SVI.init`` does."""
    import jax
    import numpy as np

    # Each attribute copied one level: the prototype fills dicts such as _event_dims in place.
    saved = {
        "guide": {k: copy.copy(v) for k, v in _state_of(svi)["guide"].items()},
        "constrain_fn": svi.constrain_fn,
    }
    found: dict[int, Any] = {}

    def program(k: Any, a: tuple[Any, ...], kw: dict[str, Any]) -> Any:
        state = svi.init(k, *a, **kw)
        loss = svi.loss.loss(state.rng_key, svi.get_params(state), svi.model, svi.guide, *a, **kw)
        _collect(_state_of(svi), found, set())
        return state, loss, list(found.values())

    try:
        state, loss, arrays = jax.jit(program)(key, args, kwargs)
    except Exception:  # noqa: BLE001 - NumPyro's eager init raises the user's error, if any
        _restore(svi, saved)
        return svi.init(key, *args, **kwargs)
    # The unconstrained params (the optimiser's), and the ELBO at the start: NumPyro's eager
    # checks (a valid start, validated distributions) do not run on tracers.
    leaves = jax.tree_util.tree_leaves((loss, svi.optim.get_params(state.optim_state)))
    finite = all(
        bool(np.all(np.isfinite(a)))
        for a in map(np.asarray, leaves)
        if np.issubdtype(a.dtype, np.inexact)
    )
    concrete = dict(zip(found, arrays, strict=True))
    try:
        rebuilt = _rebuild(_state_of(svi), concrete, {})
        left = reaches_tracer(rebuilt)
    except Exception:  # noqa: BLE001 - a pytree that does not unflatten: NumPyro's own init
        rebuilt, left = None, True
    if not finite or left:
        _restore(svi, saved)
        return svi.init(key, *args, **kwargs)
    _restore(svi, rebuilt)
    return state
